from tinyconf import get, load, parse


def test_sections_and_dotted_get():
    config = parse("[db]\nhost = localhost  # dev\nport = 5432\n")
    assert get(config, "db.host") == "localhost"
    assert get(config, "db.port") == "5432"


def test_get_default_for_missing_nested_key():
    assert get({"a": "x"}, "a.b.c", 0) == 0


def test_empty_file_loads_as_empty(tmp_path):
    path = tmp_path / "empty.conf"
    path.write_text("")
    assert load(str(path)) == {}


def test_env_override(tmp_path, monkeypatch):
    path = tmp_path / "app.conf"
    path.write_text("[db]\nhost = localhost\n")
    monkeypatch.setenv("APP_DB_HOST", "db.internal")
    assert get(load(str(path), env_prefix="APP"), "db.host") == "db.internal"
