"""The tests grader finds a task's test.patch from task.yaml once per version of task.yaml (issue 33: a trial's
grading neither imports nor runs a YAML parser for that one field); a changed task.yaml is read again."""

from __future__ import annotations

import sys
from types import SimpleNamespace

from passhat.graders._auto import test_patch_of as _test_patch


def _outcome(tmp_path):
    task = tmp_path / "task"
    task.mkdir()
    return SimpleNamespace(task_dir=task, cache_root=tmp_path / "cache")


def test_the_answer_is_kept_and_a_changed_task_yaml_is_read_again(tmp_path, monkeypatch):
    outcome = _outcome(tmp_path)
    (outcome.task_dir / "task.yaml").write_text("id: task\ntest_patch: tests.diff\n")
    (outcome.task_dir / "tests.diff").write_bytes(b"the tests")
    assert _test_patch(outcome) == b"the tests"
    assert len(list((outcome.cache_root / "test-patch-names").glob("*.json"))) == 1

    monkeypatch.setitem(sys.modules, "yaml", None)  # any YAML parse now raises ImportError
    (outcome.task_dir / "tests.diff").write_bytes(b"the tests, edited")
    assert _test_patch(outcome) == b"the tests, edited"  # the file is read each time, task.yaml is not

    monkeypatch.delitem(sys.modules, "yaml")
    (outcome.task_dir / "task.yaml").write_text("id: task\nshow_tests: true\n")
    assert _test_patch(outcome) is None  # another task.yaml (size, mtime): read again


def test_a_default_test_patch_that_appears_later_is_found(tmp_path):
    outcome = _outcome(tmp_path)
    (outcome.task_dir / "task.yaml").write_text("id: task\n")
    assert _test_patch(outcome) is None
    (outcome.task_dir / "test.patch").write_bytes(b"added")
    assert _test_patch(outcome) == b"added"  # the kept answer is the name, not whether the file was there
