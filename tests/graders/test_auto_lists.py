"""`fail_to_pass: auto` / `pass_to_pass: auto`: sorting runs into FAIL_TO_PASS, PASS_TO_PASS, flaky and broken
(pure), computing them from real runs of a git-based task (tests/graders/git_task.py) once per task version,
the cache the tests grader and check-task reuse, and what check-task shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from calc_task import run as run_grader
from git_task import PYTEST, TEST_ADD, TEST_BROKEN, TEST_FLAKY, make_git_task, make_origin

from passhat.cli import main
from passhat.graders import TestLists, compute_test_lists, load_graded_task
from passhat.graders._auto import cache_file, classify
from passhat.tasks import load_task
from passhat.trial._sandbox import prepare_base

AUTO = f"  - type: tests\n    command: {PYTEST}\n    fail_to_pass: auto\n    pass_to_pass: auto\n"


def runs_counted(counter: Path, runs: Path) -> str:
    """The auto grader, unconfined so that test_flaky can count its runs in `counter`; `runs` counts commands."""
    return (
        f"  - type: tests\n    command: echo run >> {runs} && {PYTEST}\n"
        f"    env: {{COUNTER: {counter}}}\n    fail_to_pass: auto\n    pass_to_pass: auto\n"
    )


def run_count(runs: Path) -> int:
    return len(runs.read_text().splitlines()) if runs.exists() else 0


# --- classify: the rule, on made-up runs ---------------------------------------------------------------------


def test_classify_sorts_tests_by_their_four_runs():
    before = [
        {"fixed": "failed", "kept": "passed", "flaky": "passed", "broken": "failed", "skip": "skipped"},
        {"fixed": "error", "kept": "passed", "flaky": "failed", "broken": "failed", "skip": "skipped"},
    ]
    after = [
        {
            "fixed": "passed",
            "kept": "passed",
            "flaky": "passed",
            "broken": "failed",
            "new": "passed",
            "skip": "skipped",
        },
        {
            "fixed": "passed",
            "kept": "passed",
            "flaky": "passed",
            "broken": "failed",
            "new": "passed",
            "skip": "skipped",
        },
    ]
    # "fixed": failed then errored before (both bad), passed twice after → FAIL_TO_PASS;
    # "new": absent before (test.patch's test in a module that fails to import) → FAIL_TO_PASS
    lists = classify(before, after, None)
    assert lists == TestLists(("fixed", "new"), ("kept",), ("flaky",), ("broken",), None)


def test_a_test_that_flips_only_after_the_fix_is_flaky_not_fail_to_pass():
    before = [{"t": "failed"}, {"t": "failed"}]
    after = [{"t": "passed"}, {"t": "failed"}]
    assert classify(before, after, None).flaky == ("t",)
    assert classify(before, after, None).fail_to_pass == ()


def test_the_cache_file_follows_the_command_not_the_graders_name(tmp_path, monkeypatch):
    origin, commit = make_origin(tmp_path / "origin")
    task = load_task(make_git_task(tmp_path / "tasks", origin, commit, AUTO))
    grader = dict(task.graders[0])
    file = cache_file(task, grader, tmp_path)
    assert file.parent == tmp_path / "test-lists" and file.name.startswith(f"calc-{task.version}-")
    assert cache_file(task, {**grader, "name": "unit tests"}, tmp_path) == file
    assert cache_file(task, {**grader, "command": grader["command"] + " -x"}, tmp_path) != file


# --- computed from real runs ------------------------------------------------------------------------------------


def test_auto_lists_leave_out_flaky_and_broken_tests_and_are_computed_once(tmp_path, monkeypatch):
    monkeypatch.setenv("PASSHAT_GRADER_ISOLATION", "none")  # test_flaky writes its counter outside the tree
    counter, runs = tmp_path / "counter", tmp_path / "runs"
    origin, commit = make_origin(tmp_path / "origin")
    graders = runs_counted(counter, runs)
    folder = make_git_task(tmp_path / "tasks", origin, commit, graders, TEST_ADD + TEST_FLAKY + TEST_BROKEN)
    task, state = load_task(folder), tmp_path / "state"

    lists = compute_test_lists(task, task.graders[0], state)
    # test_flaky passes on odd runs: runs 1, 2 (before) differ and so do 3, 4 (after)
    assert lists.fail_to_pass == ("tests.test_calc::test_add",)
    assert lists.pass_to_pass == ("tests.test_calc::test_sub",)
    assert lists.flaky == ("tests.test_calc::test_flaky",)
    assert lists.broken == ("tests.test_calc::test_broken",)
    assert run_count(runs) == 4
    assert lists.cache_file is not None and lists.cache_file.parent == state / "cache" / "test-lists"
    assert json.loads(lists.cache_file.read_text())["flaky"] == ["tests.test_calc::test_flaky"]

    assert compute_test_lists(load_task(folder), task.graders[0], state) == lists
    assert run_count(runs) == 4  # read from the cache: the command did not run again

    base = prepare_base(task, state / "cache")  # a trial's grade resolves `auto` from the same cache
    patch = tmp_path / "solution.diff"
    patch.write_bytes(task.solution.read_bytes())
    metadata = {"task_dir": str(folder), "base_dir": str(base.path), "patch_path": str(patch)}

    def not_loaded(path: Path) -> None:
        raise AssertionError(f"the task at {path} was loaded: the lists are found by the trial's base folder")

    monkeypatch.setattr("passhat.tasks.load_task", not_loaded)  # a cache hit reads no task.yaml, hashes no repo
    result = run_grader(task.graders[0], metadata)
    assert result["pass"] is True, result["reason"]
    assert "FAIL_TO_PASS 1/1, PASS_TO_PASS 1/1" in result["reason"]
    assert run_count(runs) == 5  # the grading run only


def test_check_task_shows_the_auto_lists_and_reuses_them(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PASSHAT_GRADER_ISOLATION", "none")
    counter, runs = tmp_path / "counter", tmp_path / "runs"
    origin, commit = make_origin(tmp_path / "origin")
    graders = runs_counted(counter, runs)
    folder = make_git_task(tmp_path / "tasks", origin, commit, graders, TEST_ADD + TEST_FLAKY + TEST_BROKEN)
    argv = ["check-task", str(folder), "--state-dir", str(tmp_path / "state")]

    assert main(argv) == 0
    out = capsys.readouterr().out
    file = next((tmp_path / "state" / "cache" / "test-lists").glob("calc-*.json"))
    assert "calc: computing the auto test lists" in out
    assert "ok      calc: reference passes all 1 graders; empty patch fails tests#0" in out
    assert f"tests#0 auto: FAIL_TO_PASS 1, PASS_TO_PASS 1, flaky 1, broken 1 (cached in {file})" in out
    assert "tests#0 FAIL_TO_PASS: tests.test_calc::test_add\n" in out
    assert "tests#0 flaky, left out: tests.test_calc::test_flaky\n" in out
    assert "tests#0 broken (fail even with solution.patch), left out: tests.test_calc::test_broken\n" in out
    assert run_count(runs) == 4 + 2  # computed, then the reference and the empty patch graded

    assert main(argv) == 0
    assert "computing the auto test lists" not in capsys.readouterr().out
    assert run_count(runs) == 6 + 2


def test_an_empty_fail_to_pass_makes_the_task_broken(tmp_path, capsys):
    # Confined runs (the default); test.patch adds a test that already passes at the base.
    origin, commit = make_origin(tmp_path / "origin")
    already = "\n\ndef test_sub_again():\n    assert sub(4, 4) == 0\n"
    folder = make_git_task(tmp_path / "tasks", origin, commit, AUTO, already)
    assert main(["check-task", str(folder), "--state-dir", str(tmp_path / "state")]) == 1
    out = capsys.readouterr().out
    assert (
        "BROKEN  calc: grader tests#0: fail_to_pass: auto is empty: no test failed in both runs at the base "
        "(+ test.patch) and passed in both with solution.patch (2 passed every time, 0 flaky, 0 broken)"
    ) in out
    assert "tests#0 auto: FAIL_TO_PASS 0, PASS_TO_PASS 2, flaky 0, broken 0" in out
    assert "0 of 1 task(s) valid; 1 broken: calc" in out


def test_lists_that_cannot_be_computed_break_the_task_and_fail_a_trial(tmp_path, capsys):
    origin, commit = make_origin(tmp_path / "origin")
    folder = make_git_task(tmp_path / "tasks", origin, commit, AUTO)
    stale = folder.joinpath("test.patch").read_text().replace("assert sub(5, 3) == 2", "assert sub(5, 3) == 9")
    folder.joinpath("test.patch").write_text(stale)
    assert main(["check-task", str(folder), "--state-dir", str(tmp_path / "state")]) == 1
    out = capsys.readouterr().out
    assert "BROKEN  calc: grader tests#0: the auto test lists cannot be computed: " in out
    assert "test.patch does not apply" in out and "make test.patch against the base commit" in out

    task = load_task(folder)
    base = prepare_base(task, tmp_path / "state" / "cache")
    patch = tmp_path / "solution.diff"
    patch.write_bytes(task.solution.read_bytes())
    metadata = {"task_dir": str(folder), "base_dir": str(base.path), "patch_path": str(patch)}
    result = run_grader(task.graders[0], metadata)
    assert result["pass"] is False
    assert "tests grader could not run: " in result["reason"] and "test.patch does not apply" in result["reason"]


@pytest.mark.parametrize("command", ["python -m pytest -q", "echo no tests"], ids=["pytest-no-report", "no-tests"])
def test_auto_without_a_report_is_refused_at_load(tmp_path, command):
    from passhat.common._errors import TaskError

    origin, commit = make_origin(tmp_path / "origin")
    graders = f"  - type: tests\n    command: {command}\n    fail_to_pass: auto\n"
    with pytest.raises(TaskError, match=r"field 'graders\[0\]': fail_to_pass / pass_to_pass are read from a JUnit"):
        load_graded_task(make_git_task(tmp_path / "tasks", origin, commit, graders))
