"""The `tests` grader on real outcomes: reference patch passes, empty patch fails, hangs are killed."""

from __future__ import annotations

import time

import pytest

from passhat._sandbox import prepare_base
from passhat._tasks import load_task
from passhat.graders import grade_promptfoo

from conftest import SHIPPED_TASKS, TASKS


def _context(tmp_path, task_id, patch: bytes, config: dict) -> dict:
    task = load_task(TASKS / task_id)
    base = prepare_base(task, tmp_path / "cache")
    trial = tmp_path / "trial"
    trial.mkdir(exist_ok=True)
    (trial / "patch.diff").write_bytes(patch)
    metadata = {"task_dir": str(task.dir), "base_dir": str(base.path), "patch_path": str(trial / "patch.diff"),
                "trial_dir": str(trial)}
    return {"config": config, "providerResponse": {"metadata": metadata}}


@pytest.mark.parametrize("task_id", SHIPPED_TASKS)
def test_reference_solution_passes_and_empty_patch_fails(task_id, tmp_path):
    task = load_task(TASKS / task_id)
    config = next(g for g in task.graders if g["type"] == "tests")
    solved = grade_promptfoo("tests", _context(tmp_path, task_id, task.solution.read_bytes(), config))
    assert solved["pass"] is True, solved["reason"]
    assert solved["score"] == 1.0
    empty = grade_promptfoo("tests", _context(tmp_path, task_id, b"", config))
    assert empty["pass"] is False and empty["score"] == 0.0
    assert "failed (exit" in empty["reason"]
    assert list((tmp_path / "trial").glob("grade-*")) == []  # scratch copies are removed


def test_a_hanging_test_command_is_killed_at_its_timeout(tmp_path):
    started = time.monotonic()
    result = grade_promptfoo("tests", _context(tmp_path, "py-median", b"", {"command": "sleep 60", "timeout_s": 1}))
    assert time.monotonic() - started < 20
    assert result["pass"] is False
    assert "ran past 1 s and was killed" in result["reason"]


def test_missing_trial_metadata_fails_with_a_reason_not_a_crash():
    result = grade_promptfoo("tests", {"config": {"command": "true"}, "providerResponse": {"metadata": {}}})
    assert result["pass"] is False
    assert "provider metadata lacks task_dir, base_dir, patch_path, trial_dir" in result["reason"]
