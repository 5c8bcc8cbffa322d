"""The executor fields of the provider config: defaults, and one clear error per bad value."""

from __future__ import annotations

import pytest

from passhat.cluster import Executor, parse_executor
from passhat.common._errors import PasshatError
from passhat.trial._config import parse_config


def test_local_is_the_default_and_stays_local():
    assert parse_executor({}) == Executor("local")
    assert parse_config({}).executor == Executor("local")


def test_ray_fields_are_read():
    raw = {"executor": "ray", "ray_address": "127.0.0.1:6379", "ray_num_cpus": 0.5, "ray_memory_mb": 2048}
    executor = parse_config(raw).executor
    assert executor == Executor("ray", "127.0.0.1:6379", 0.5, 2048)
    assert executor.loopback


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        pytest.param({"executor": "rya"}, r"'executor': 'rya': did you mean 'ray'\? use local", id="typo"),
        pytest.param({"executor": 1}, r"'executor': 1: use local", id="not-a-string"),
        pytest.param({"executor": "ray", "ray_address": "head"}, r"'ray_address': 'head': use auto", id="no-port"),
        pytest.param({"executor": "ray", "ray_address": "h:70000"}, r"'ray_address': 'h:70000'", id="bad-port"),
        pytest.param({"executor": "ray", "ray_num_cpus": 0}, r"'ray_num_cpus': 0: use the CPUs", id="zero-cpus"),
        pytest.param({"executor": "ray", "ray_memory_mb": 1.5}, r"'ray_memory_mb': 1.5: use the MB", id="memory"),
        pytest.param({"ray_address": "auto"}, r"'ray_address': 'auto': only read with `executor: ray`", id="stray"),
    ],
)
def test_bad_executor_fields_are_named_with_the_fix(raw, match):
    with pytest.raises(PasshatError, match=match):
        parse_config(raw)


def test_executor_ray_without_ray_installed_says_how_to_install(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(PasshatError, match=r"Ray is not installed.*pip install 'passhat\[ray\]'"):
        parse_executor({"executor": "ray"})


def test_validate_names_the_file_and_field_and_exits_2(tmp_path, capsys):
    from passhat.cli import main

    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: ['{{prompt}}']\nproviders:\n  - id: file://p/claude_code.py\n    config: {executor: rya}\n"
    )
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "claude_code.py").write_text("from passhat.promptfoo import call_api\n")
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err
    assert str(config) in err and "'executor': 'rya': did you mean 'ray'?" in err
