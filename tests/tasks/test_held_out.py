"""Held-out tests: shipped tasks whose FAIL_TO_PASS tests live only in test.patch — not in the base the agent
starts from, not readable from a confined trial — and that the tests grader applies before it runs.
`show_tests: true` is the opposite choice: test.patch becomes part of the agent's base.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
import yaml
from conftest import TASKS

from passhat.cli import main
from passhat.graders import TrialOutcome, grade
from passhat.tasks import load_task, load_tasks
from passhat.trial._isolation import confinement
from passhat.trial._provider import call_api
from passhat.trial._sandbox import prepare_base

CLEAN_RUN = {"status": "ok", "is_error": False, "subtype": "success", "permission_denials": 0}
needs_bwrap = pytest.mark.skipif(confinement("auto").bwrap is None, reason="bwrap cannot build a sandbox here")


def _held_out() -> list[str]:
    return [t.id for t in load_tasks(TASKS) if t.test_patch and not t.show_tests and t.expect == "possible"]


def _tests_grader(task) -> dict:
    return next(g for g in task.graders if g["type"] == "tests")


def _tree_text(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(root.rglob("*.py")) if ".git" not in p.parts)


def test_at_least_three_shipped_tasks_hold_out_their_fail_to_pass_tests():
    assert len(_held_out()) >= 3, _held_out()


@pytest.mark.parametrize("task_id", _held_out())
def test_the_base_lacks_the_fail_to_pass_tests_and_test_patch_has_them(task_id, tmp_path):
    task = load_task(TASKS / task_id)
    base = prepare_base(task, tmp_path / "cache")  # what every trial of the task starts from
    tree, patch = _tree_text(base.path), task.test_patch.read_text()  # type: ignore[union-attr]
    for test_id in _tests_grader(task)["fail_to_pass"]:
        function, _, param = test_id.partition("::")[2].partition("[")
        row = f'id="{param[:-1]}"'
        assert f"def {function}(" in patch or row in patch, f"{task_id}: {test_id} is not in test.patch"
        in_tree = f"def {function}(" in tree and (not param or row in tree or f"def {function}(" not in patch)
        assert not in_tree, f"{task_id}: {test_id} is in the agent's base"


@pytest.mark.parametrize("task_id", _held_out())
@pytest.mark.parametrize("with_patch", [True, False], ids=["graded-with-test-patch", "without-it-they-never-run"])
def test_grading_applies_the_held_out_tests(task_id, with_patch, task_copy, tmp_path):
    """The empty patch: with test.patch applied, every FAIL_TO_PASS test ran and failed; without it (the
    protection off) they are missing from the report — the grade then proves nothing about them."""
    folder = task_copy(task_id)
    if not with_patch:
        (folder / "test.patch").unlink()
    task = load_task(folder)
    base = prepare_base(task, tmp_path / "state" / "cache")
    result = grade(TrialOutcome(task.dir, base.path, b"", CLEAN_RUN), _tests_grader(task))
    assert not result.passed
    for test_id in _tests_grader(task)["fail_to_pass"]:
        shown = re.search(rf"FAIL_TO_PASS {re.escape(test_id)}: (.*)", result.reason)
        assert shown is not None, result.reason
        assert (shown[1] == "missing from the report") is not with_patch, shown[0]
    if with_patch:
        solved = grade(TrialOutcome(task.dir, base.path, task.solution.read_bytes(), CLEAN_RUN), _tests_grader(task))
        assert solved.passed, solved.reason


@pytest.mark.parametrize(
    ("isolation", "hidden"),
    [
        pytest.param("auto", True, id="confined-trial-cannot-read-them", marks=needs_bwrap),
        pytest.param("none", False, id="unconfined-trial-could"),
    ],
)
def test_a_trial_of_a_held_out_task_never_sees_its_tests(task_copy, tmp_path, fake_model, isolation, hidden):
    """A real trial (scripted model, real CLI) of py-median that looks for the held-out rows: not in its tree,
    and the task's test.patch not readable — unless the trial is not confined (the attack is real)."""
    folder = task_copy("py-median")
    secret = f"PASSHAT-HELD-OUT-{uuid.uuid4().hex}"
    (folder / "test.patch").write_text((folder / "test.patch").read_text() + f"# {secret}\n")
    commands = [f"cat {folder / 'test.patch'}", "grep -rn even-unsorted . || echo the rows are not in the tree"]
    options = {
        "config": {
            "basePath": str(tmp_path),
            "tasks_dir": str(folder.parent),
            "state_dir": str(tmp_path / "state"),
            "fake_model_url": fake_model.url,
            "fake_script": "commands",
            "isolation": isolation,
            "timeout_s": 120,
        }
    }
    prompt = "".join(f"RUN: {command}\n" for command in commands)
    response = call_api(prompt, options, {"vars": {"task_id": "py-median"}, "repeatIndex": 0, "evaluationId": "t"})
    assert response["metadata"]["status"] == "ok", response
    sent = "\n".join(str(request["body"]) for request in fake_model.requests)
    assert (secret in sent) is not hidden
    assert "the rows are not in the tree" in sent


def test_show_tests_puts_test_patch_in_the_base_and_the_grader_does_not_apply_it_again(task_copy, tmp_path, capsys):
    folder = task_copy("py-median")
    data = yaml.safe_load((folder / "task.yaml").read_text())
    (folder / "task.yaml").write_text(yaml.safe_dump({**data, "show_tests": True}, sort_keys=False))
    task = load_task(folder)
    base = prepare_base(task, tmp_path / "state" / "cache")
    assert 'id="even-unsorted"' in (base.path / "tests" / "test_median.py").read_text()  # the agent sees it
    assert main(["check-task", str(folder), "--state-dir", str(tmp_path / "state")]) == 0, capsys.readouterr().out
    assert "ok      py-median: reference passes all 3 graders" in capsys.readouterr().out


def test_show_tests_without_a_test_patch_is_one_clear_error(task_copy, capsys):
    folder = task_copy("py-rename-var")
    data = yaml.safe_load((folder / "task.yaml").read_text())
    (folder / "task.yaml").write_text(yaml.safe_dump({**data, "show_tests": True}, sort_keys=False))
    assert main(["check-task", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "field 'show_tests': true, but the task has no test.patch to show" in err and len(err.splitlines()) == 1
