"""What the app does: unchanged by the restructuring."""

import pytest

from notes.app import NoteNotFound, NotesApp, Settings, normalize_title
from notes.cli import main


@pytest.fixture
def app(tmp_path):
    return NotesApp(tmp_path / "notes")


def test_a_note_reads_back_by_any_spelling_of_its_title(app):
    assert app.add("My First Note!", "hello world") == "my-first-note"
    assert app.get("  my FIRST note ") == "hello world"


@pytest.mark.parametrize(
    ("title", "key"),
    [
        pytest.param("Groceries", "groceries", id="word"),
        pytest.param("  Trip: Paris -> Rome (2026) ", "trip-paris-rome-2026", id="punctuation"),
        pytest.param("x" * 50, "x" * 40, id="long"),
    ],
)
def test_titles_become_keys(title, key):
    assert normalize_title(title) == key


def test_a_title_without_letters_is_refused():
    with pytest.raises(ValueError, match="has no letters or digits"):
        normalize_title("?!")


def test_a_missing_note_raises_note_not_found(app):
    with pytest.raises(NoteNotFound) as caught:
        app.get("nothing here")
    assert isinstance(caught.value, KeyError)
    assert str(caught.value) == "no note titled 'nothing-here'"


def test_removed_notes_are_gone_from_storage_and_search(app):
    app.add("Plan", "buy milk")
    app.remove("plan")
    assert app.titles() == []
    assert app.search("milk") == []
    with pytest.raises(NoteNotFound):
        app.remove("plan")


def test_search_finds_notes_holding_every_word(app):
    app.add("a", "red apple pie")
    app.add("b", "green apple")
    app.add("c", "red cherry")
    assert app.search("apple") == ["a", "b"]
    assert app.search("Red APPLE") == ["a"]
    assert app.search("banana") == []
    assert app.search("  ") == []


def test_search_shows_five_results_unless_told_otherwise(app):
    for n in range(7):
        app.add(f"note {n}", "common words")
    assert app.search("common") == [f"note-{n}" for n in range(5)]
    assert len(app.search("common", limit=2)) == 2
    assert len(app.search("common", limit=10)) == 7


def test_notes_survive_a_restart(tmp_path):
    NotesApp(tmp_path).add("Kept", "still searchable")
    again = NotesApp(tmp_path)
    assert again.titles() == ["kept"]
    assert again.search("searchable") == ["kept"]


def test_title_words_are_searchable_before_and_after_a_restart(tmp_path):
    NotesApp(tmp_path).add("Weekly Review", "done")
    assert NotesApp(tmp_path).search("review") == ["weekly-review"]


def test_two_apps_keep_their_own_index(tmp_path):
    home, work = NotesApp(tmp_path / "home"), NotesApp(tmp_path / "work")
    home.add("Garden", "plant tulips")
    work.add("Standup", "ship the release")
    assert home.search("tulips") == ["garden"]
    assert work.search("release") == ["standup"]
    assert work.search("tulips") == []
    home.remove("garden")
    assert home.search("tulips") == []


def test_settings_choose_the_file_extension_and_title_length(tmp_path):
    app = NotesApp(tmp_path, Settings(extension=".md", max_title_length=5))
    assert app.add("Long title here", "x") == "long"
    assert (tmp_path / "long.md").read_text(encoding="utf-8") == "x"


def test_cli_round_trip(tmp_path, capsys):
    root = str(tmp_path)
    assert main(["--root", root, "add", "Shopping list", "eggs and flour"]) == 0
    assert main(["--root", root, "show", "shopping list"]) == 0
    assert main(["--root", root, "search", "flour"]) == 0
    assert main(["--root", root, "ls"]) == 0
    assert capsys.readouterr().out == "shopping-list\neggs and flour\nshopping-list\nshopping-list\n"


def test_cli_reports_a_missing_note(tmp_path, capsys):
    assert main(["--root", str(tmp_path), "show", "nope"]) == 1
    assert capsys.readouterr().err == "notes: no note titled 'nope'\n"
