"""Patches written against the harness, graded the normal way (git diff of the agent's tree → git apply).

The agent under test is an adversary: each patch here is an attack that worked before its defence —
symlinks that make the grader write to or read from the host, names git quotes so the scope check
missed them, an atexit hook that rewrites the JUnit report, code that reads passhat's secrets.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest
from calc_task import CALC, JUNIT_TESTS, PYTEST, fix_add, make_trial, run

from passhat.common._errors import TaskError
from passhat.graders import load_graded_task
from passhat.graders.runner import GUARD_ENV

SECRET = "sk-ant-FAKE-passhat-test-secret"


@pytest.fixture
def trial(tmp_path):
    return make_trial(tmp_path)


@pytest.fixture
def host(tmp_path):
    """A host folder the agent aims at, with a file it wants overwritten."""
    folder = tmp_path / "host"
    folder.mkdir()
    (folder / "victim.txt").write_text("precious\n")
    return folder


# --- 1. restoring protected tests never writes through the agent's symlinks --------------------------------


def _test_file_to_host_file(work: Path, host: Path) -> None:
    (work / "tests" / "test_calc.py").unlink()
    (work / "tests" / "test_calc.py").symlink_to(host / "victim.txt")


def _tests_folder_to_host_folder(work: Path, host: Path) -> None:
    shutil.rmtree(work / "tests")
    (work / "tests").symlink_to(host)


@pytest.mark.parametrize(
    ("attack", "protected"),
    [
        pytest.param(_test_file_to_host_file, None, id="test-file-is-a-link-to-a-host-file"),
        pytest.param(_tests_folder_to_host_folder, None, id="tests-folder-is-a-link-to-a-host-folder"),
        pytest.param(
            _tests_folder_to_host_folder, ["tests/test_calc.py"], id="only-the-file-protected-its-folder-a-link"
        ),
    ],
)
def test_restoring_protected_tests_never_writes_through_a_symlink(trial, host, attack, protected):
    def edits(work):
        fix_add(work)
        attack(work, host)

    grader = {**JUNIT_TESTS, **({"protected": protected} if protected else {})}
    result = run(grader, trial(edits))
    assert sorted(p.name for p in host.iterdir()) == ["victim.txt"]  # nothing dropped into the host folder
    assert (host / "victim.txt").read_text() == "precious\n"  # nor written over the host file
    # the real tests were put back in the tree and ran: the fix passes them
    assert result["pass"] is True, result["reason"]
    assert "FAIL_TO_PASS 1/1, PASS_TO_PASS 2/2" in result["reason"]


# --- 2. the files grader reads no symlink that leaves the tree -----------------------------------------------

MARKER = "REFERENCE-SOLUTION-MARKER"


@pytest.mark.parametrize(
    ("link", "target", "path", "reason"),
    [
        pytest.param(
            "notes.txt",
            lambda tmp: str(tmp / "tasks" / "calc" / "solution.patch"),
            "notes.txt",
            "notes.txt is a symlink to {tmp}/tasks/calc/solution.patch outside the tree (not followed)",
            id="absolute-link-to-the-reference-solution",
        ),
        pytest.param(
            "notes.txt",
            # the outcome tree is <tmp>/state/cache/outcomes/<name>/: four folders up is <tmp>
            lambda tmp: "../../../../tasks/calc/solution.patch",
            "notes.txt",
            "notes.txt is a symlink to ../../../../tasks/calc/solution.patch outside the tree (not followed)",
            id="relative-link-climbing-out",
        ),
        pytest.param(
            "docs",
            lambda tmp: str(tmp / "tasks" / "calc"),
            "docs/solution.patch",
            "docs/solution.patch leads to docs, a symlink to {tmp}/tasks/calc outside the tree (not followed)",
            id="folder-link-to-the-task-folder",
        ),
    ],
)
def test_files_checks_do_not_follow_a_symlink_out_of_the_tree(trial, tmp_path, link, target, path, reason):
    (tmp_path / "tasks" / "calc" / "solution.patch").write_text(f"+{MARKER}\n")
    result = run(
        {"type": "files", "checks": [{"path": path, "contains": MARKER}]},
        trial(lambda work: (work / link).symlink_to(target(tmp_path))),
    )
    assert result["pass"] is False
    assert result["reason"] == "0/1 file checks hold; " + reason.format(tmp=tmp_path)


def test_files_checks_follow_a_symlink_that_stays_in_the_tree(trial):
    def alias(work):
        fix_add(work)
        (work / "lib").mkdir()
        (work / "lib" / "alias.py").symlink_to("../calc.py")

    checks = [{"path": "lib/alias.py", "contains": "a + b"}, {"path": "lib/alias.py", "exists": True}]
    assert run({"type": "files", "checks": checks}, trial(alias))["pass"] is True


# --- 3. diff-scope sees the names git quotes -----------------------------------------------------------------


def _write(rel: str):
    def change(work: Path) -> None:
        fix_add(work)
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text("def test_x():\n    pass\n")

    return change


@pytest.mark.parametrize(
    ("rel", "grader", "reason"),
    [
        pytest.param(
            "tests/tést_extra.py",
            {"deny": ["tests/**"]},
            "denied by ['tests/**']: tests/tést_extra.py",
            id="non-ascii-name-denied",
        ),
        pytest.param(
            "tests/a\nb.py",
            {"deny": ["tests/**"]},
            "denied by ['tests/**']: 'tests/a\\nb.py'",
            id="newline-in-name-denied",
        ),
        pytest.param(
            "évil.py",
            {"allow": ["calc.py"]},
            "outside allow ['calc.py']: évil.py",
            id="non-ascii-name-outside-allow",
        ),
        pytest.param(
            'sp ace/"quoted"\tname.py',
            {"allow": ["calc.py"], "max_files": 1},
            "outside allow ['calc.py']: 'sp ace/\"quoted\"\\tname.py'; 2 files changed, max 1",
            id="quote-tab-and-space-counted",
        ),
    ],
)
def test_diff_scope_sees_names_git_quotes(trial, rel, grader, reason):
    result = run({"type": "diff-scope", **grader}, trial(_write(rel)))
    assert result["pass"] is False
    assert reason in result["reason"]


# --- 4. code under test cannot turn its failing run into a passing JUnit report ------------------------------

_HOOK = """
import atexit as _atexit, os as _os, re as _re, sys as _sys


def _edit(xml):
EDIT
    return xml


def _forge():
    for arg in _sys.argv:
        if arg.startswith("--junitxml="):
            path = arg.split("=", 1)[1]
            with open(path) as report:
                xml = report.read()
            with open(path, "w") as report:
                report.write(_edit(xml))
FINISH


_atexit.register(_forge)
"""
_PASS_ALL = """\
xml = _re.sub(r"<failure.*?</failure>", "", xml, flags=_re.S)
xml = xml.replace('failures="1"', 'failures="0"')
"""
_SWAP = """\
failure = _re.search(r"<failure.*?</failure>", xml, _re.S).group(0)
xml = xml.replace(failure, "")
xml = _re.sub(r'(name="test_mul"[^>]*?)\\s*/>', lambda m: m.group(1) + ">" + failure + "</testcase>", xml)
"""  # test_add's failure moved onto test_mul: still 1 failed, 2 passed


def _hook(edit: str, finish: str):
    """calc.py as in the base (add still broken) plus an atexit hook: rewrite the report, then `finish`."""
    code = _HOOK.replace("EDIT", textwrap.indent(edit, "    ")).replace("FINISH", textwrap.indent(finish, "    "))

    def change(work: Path) -> None:
        (work / "calc.py").write_text(CALC + code)

    return change


@pytest.mark.parametrize(
    ("hook", "command", "reason"),
    [
        pytest.param(
            _hook(_PASS_ALL, "_os._exit(0)"),
            PYTEST,
            "report: 3 passed, 0 failed or errors; runner: pytest printed `1 failed, 2 passed in ",
            id="report-rewritten-and-exit-0",
        ),
        pytest.param(
            _hook(_PASS_ALL, "_os._exit(0)"),
            f"{PYTEST} -rN",  # no FAILED lines: the counts alone give it away
            "report: 3 passed, 0 failed or errors; runner: pytest printed `1 failed, 2 passed in ",
            id="report-rewritten-and-exit-0-counts-only",
        ),
        pytest.param(
            _hook(_PASS_ALL, 'print("3 passed in 0.01s", flush=True); _os._exit(0)'),
            PYTEST,
            "pytest printed `1 failed, 2 passed in ",
            id="report-rewritten-and-a-passing-summary-printed-after",
        ),
        pytest.param(
            _hook(_PASS_ALL, "pass"),
            f"{PYTEST} > /dev/null 2>&1",
            "runner: the command exited 1, yet the report has no failure or error",
            id="report-rewritten-no-summary-to-compare-exit-status-kept",
        ),
        pytest.param(
            _hook(_SWAP, "pass"),
            PYTEST,
            "pytest printed `FAILED tests/test_calc.py::test_add - ",
            id="failure-moved-to-another-test-counts-kept",
        ),
    ],
)
def test_a_rewritten_junit_report_is_not_believed(trial, monkeypatch, hook, command, reason):
    # the report-vs-summary check on its own: the runner guard (on by default) catches these first, from its
    # own channel (test_runner_guard.py); here it is off, so the counts are the task's alone
    monkeypatch.setenv(GUARD_ENV, "off")
    result = run({**JUNIT_TESTS, "command": command}, trial(hook))  # add() is still broken
    assert result["pass"] is False and result["score"] == 0.0
    assert "the JUnit report and the runner disagree" in result["reason"]
    assert reason in result["reason"]


def test_an_honest_run_with_an_unlisted_failure_is_believed(trial):
    def fix_add_break_mul(work):
        fix_add(work)
        (work / "calc.py").write_text((work / "calc.py").read_text().replace("a * b", "a ** b"))

    grader = {**JUNIT_TESTS, "pass_to_pass": ["tests.test_calc::test_sub"]}  # test_mul is not listed
    result = run(grader, trial(fix_add_break_mul))  # exit 1, 1 failed in the report and in the summary
    assert result["pass"] is True, result["reason"]
    assert "FAIL_TO_PASS 1/1, PASS_TO_PASS 1/1" in result["reason"]


# --- 5. the test command gets none of passhat's environment --------------------------------------------------

_SHOW_ENV = """
if __name__ == "__main__":
    import os
    print("names:", sorted(os.environ))
    print("TASK_FLAG:", os.environ.get("TASK_FLAG"), "PASSED_THROUGH:", os.environ.get("PASSED_THROUGH"))
    print("HOME:", os.environ["HOME"])
"""


@pytest.mark.parametrize("isolation", [pytest.param(None, id="default"), pytest.param("none", id="unconfined")])
def test_the_test_command_gets_none_of_passhats_environment(trial, monkeypatch, isolation):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("PASSED_THROUGH", "from-the-host")
    if isolation:
        monkeypatch.setenv("PASSHAT_GRADER_ISOLATION", isolation)
    grader = {
        "type": "tests",
        "command": "python calc.py",
        "env": {"TASK_FLAG": "on"},
        "pass_env": ["PASSED_THROUGH", "NOT_SET_ANYWHERE"],
    }
    result = run(grader, trial(lambda work: (work / "calc.py").write_text(CALC + _SHOW_ENV)))
    reason = result["reason"]
    assert result["pass"] is True, reason
    assert SECRET not in reason and "ANTHROPIC_API_KEY" not in reason and "AWS_SECRET_ACCESS_KEY" not in reason
    assert "TASK_FLAG: on PASSED_THROUGH: from-the-host" in reason
    for name in ("'CI'", "'HOME'", "'LANG'", "'PATH'", "'PYTHONDONTWRITEBYTECODE'"):
        assert name in reason
    assert "NOT_SET_ANYWHERE" not in reason
    home = reason.split("HOME: ", 1)[1].splitlines()[0]
    assert home.endswith("/home") and "/scratch/grade-" in home  # the private HOME beside the work dir


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        pytest.param('env: {"TASK-FLAG": "on"}', "field 'graders[0].env': 'TASK-FLAG' does not match", id="env-name"),
        pytest.param("env: {TASK_FLAG: 1}", "field 'graders[0].env.TASK_FLAG': 1 is not a string", id="env-value"),
        pytest.param("pass_env: HOME", "field 'graders[0].pass_env': 'HOME' is not a list", id="pass-env-list"),
        pytest.param("pass_env: [A B]", "field 'graders[0].pass_env[0]': 'A B' does not match", id="pass-env-name"),
    ],
)
def test_env_and_pass_env_are_validated_with_the_task(tmp_path, fields, message):
    folder = tmp_path / "t"
    (folder / "repo").mkdir(parents=True)
    (folder / "solution.patch").write_text("")
    (folder / "task.yaml").write_text(
        f"id: t\ndescription: d\ntier: simple\nprompt: p\ngraders:\n  - type: tests\n    command: x\n    {fields}\n"
    )
    with pytest.raises(TaskError, match=re.escape(f"task.yaml: {message}")):
        load_graded_task(folder)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        pytest.param({"env": {"A": 1}}, "tests grader field 'env': {'A': 1}: give a mapping", id="env"),
        pytest.param({"pass_env": "HOME"}, "tests grader field 'pass_env': 'HOME': give a list", id="pass-env"),
    ],
)
def test_a_bad_env_reaching_the_grader_is_a_failed_grade_saying_why(trial, fields, message):
    result = run({"type": "tests", "command": "true", **fields}, trial())
    assert result["pass"] is False
    assert message in result["reason"]
