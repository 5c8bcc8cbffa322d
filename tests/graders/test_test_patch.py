"""The tests grader and a task's test.patch (SWE-bench style): applied to the grader's private copy after the
protected files are restored and every path it touches is reset to the base; a test.patch that does not apply
fails the grade (and check-task) with the reason. And `{junit}`: the report path passhat fills in.

The task is git-based (tests/graders/git_task.py: a repository made here with real git)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from calc_task import F2P, P2P, fix_add, make_trial
from calc_task import run as run_grader
from git_task import PYTEST, TEST_ADD, TESTS, diff, make_git_task, make_origin
from test_hostile_patches import _PASS_ALL, _hook

from passhat.cli import main
from passhat.tasks import load_task
from passhat.trial._isolation import confinement
from passhat.trial._provider import call_api
from passhat.trial._sandbox import prepare_base

needs_bwrap = pytest.mark.skipif(confinement("auto").bwrap is None, reason="bwrap cannot build a sandbox here")
LISTED = (
    f"  - type: tests\n    command: {PYTEST}\n    protected: PROTECTED\n"
    "    fail_to_pass: [tests.test_calc::test_add]\n    pass_to_pass: [tests.test_calc::test_sub]\n"
)
NEW_TEST = (
    "diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n--- /dev/null\n"
    "+++ b/tests/test_new.py\n@@ -0,0 +1,2 @@\n+def test_new():\n+    pass\n"
)


@pytest.fixture
def calc(tmp_path):
    """(origin repository, base commit, tasks folder)."""
    origin, commit = make_origin(tmp_path / "origin")
    return origin, commit, tmp_path / "tasks"


def grade(folder: Path, state: Path, patch: str) -> dict:
    """Grade `patch` (the agent's, against the base) with the task's tests grader, as a trial's assertion would."""
    task = load_task(folder)
    base = prepare_base(task, state / "cache")
    patch_path = state / f"patch-{len(list(state.glob('patch-*')))}.diff"
    patch_path.write_text(patch)
    metadata = {"task_dir": str(folder), "base_dir": str(base.path), "patch_path": str(patch_path)}
    return run_grader(task.graders[0], metadata)


def test_test_patch_is_applied_before_the_command_runs(calc, tmp_path):
    origin, commit, tasks = calc
    folder = make_git_task(tasks, origin, commit, LISTED.replace("PROTECTED", "[]"))
    reference = grade(folder, tmp_path, folder.joinpath("solution.patch").read_text())
    assert reference["pass"] is True, reference["reason"]
    assert "FAIL_TO_PASS 1/1, PASS_TO_PASS 1/1" in reference["reason"]
    empty = grade(folder, tmp_path, "")  # test_add exists only in test.patch: it ran, and failed
    assert empty["pass"] is False
    assert "FAIL_TO_PASS tests.test_calc::test_add: failed" in empty["reason"]


@pytest.mark.parametrize(
    ("agent_edit", "test_patch_adds"),
    [
        pytest.param(
            lambda origin: diff(origin, "tests/test_calc.py", TESTS.replace("== 2", "== 2  # agent")),
            TEST_ADD,
            id="agent-edited-a-file-test-patch-changes",
        ),
        pytest.param(lambda origin: NEW_TEST, None, id="agent-created-a-file-test-patch-adds"),
    ],
)
def test_paths_the_test_patch_touches_are_reset_to_the_base_first(calc, tmp_path, agent_edit, test_patch_adds):
    # Nothing protected: only the reset stands between the agent's edit and a test.patch that does not apply.
    origin, commit, tasks = calc
    folder = make_git_task(tasks, origin, commit, LISTED.replace("PROTECTED", "[]"))
    if test_patch_adds is None:
        folder.joinpath("test.patch").write_text(folder.joinpath("test.patch").read_text() + NEW_TEST)
    solution = folder.joinpath("solution.patch").read_text()
    result = grade(folder, tmp_path, solution + agent_edit(origin))
    assert result["pass"] is True, result["reason"]


def test_a_test_patch_that_does_not_apply_fails_the_grade_and_check_task(calc, tmp_path, capsys):
    origin, commit, tasks = calc
    folder = make_git_task(tasks, origin, commit, LISTED.replace("PROTECTED", "[]"))
    stale = folder.joinpath("test.patch").read_text().replace("assert sub(5, 3) == 2", "assert sub(5, 3) == 9")
    folder.joinpath("test.patch").write_text(stale)
    result = grade(folder, tmp_path, folder.joinpath("solution.patch").read_text())
    assert result["pass"] is False
    assert "tests grader: test.patch does not apply: " in result["reason"]
    assert main(["check-task", str(folder), "--state-dir", str(tmp_path / "check")]) == 1
    out = capsys.readouterr().out
    assert "BROKEN  calc: solution.patch fails grader tests#0: tests grader: test.patch does not apply" in out


# --- {junit} ----------------------------------------------------------------------------------------------

JUNIT_PLACEHOLDER = {
    "type": "tests",
    "command": "python -m pytest -q -p no:cacheprovider --junitxml={junit}",
    "fail_to_pass": F2P,
    "pass_to_pass": P2P,
}


def test_the_junit_placeholder_is_filled_in_and_read(tmp_path):
    trial = make_trial(tmp_path)
    result = run_grader(JUNIT_PLACEHOLDER, trial(fix_add))
    assert result["pass"] is True, result["reason"]
    assert "FAIL_TO_PASS 1/1, PASS_TO_PASS 2/2" in result["reason"]
    shown = run_grader({**JUNIT_PLACEHOLDER, "command": "echo report at {junit}; false"}, trial(fix_add))
    path = shown["reason"].rsplit("report at ", 1)[1].split()[0]  # in the output tail, after the command
    assert Path(path).name == "junit.xml" and "/report/" in path  # beside the work tree, not in it


def test_a_report_rewritten_at_the_placeholder_path_is_not_believed(tmp_path):
    trial = make_trial(tmp_path)
    result = run_grader(JUNIT_PLACEHOLDER, trial(_hook(_PASS_ALL, "_os._exit(0)")))  # add() still broken
    assert result["pass"] is False and result["score"] == 0.0
    assert "the JUnit report and the runner disagree" in result["reason"]


# --- never shown to the agent ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("isolation", "hidden"),
    [
        pytest.param("auto", True, id="confined-trial-cannot-read-it", marks=needs_bwrap),
        pytest.param("none", False, id="unconfined-trial-could"),
    ],
)
def test_a_trial_cannot_read_the_test_patch(calc, tmp_path, fake_model, isolation, hidden):
    origin, commit, tasks = calc
    folder = make_git_task(tasks, origin, commit, LISTED.replace("PROTECTED", "[]"))
    secret = f"PASSHAT-TEST-PATCH-{uuid.uuid4().hex}"
    folder.joinpath("test.patch").write_text(folder.joinpath("test.patch").read_text() + f"# {secret}\n")
    commands = [f"cat {folder / 'test.patch'}", "grep -rn test_add . || echo no test_add in the tree"]
    options = {
        "config": {
            "basePath": str(tmp_path),
            "tasks_dir": str(tasks),
            "state_dir": str(tmp_path / "state"),
            "fake_model_url": fake_model.url,
            "fake_script": "commands",
            "isolation": isolation,
            "timeout_s": 120,
        }
    }
    prompt = "".join(f"RUN: {command}\n" for command in commands)
    response = call_api(prompt, options, {"vars": {"task_id": "calc"}, "repeatIndex": 0, "evaluationId": "t"})
    assert response["metadata"]["status"] == "ok", response
    sent = "\n".join(str(request["body"]) for request in fake_model.requests)
    assert (secret in sent) is not hidden
    assert "no test_add in the tree" in sent  # test.patch is not part of the base the agent starts from
