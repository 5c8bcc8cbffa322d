"""Graders on real outcomes of a tiny Python task: tests (exit code, SWE-bench FAIL_TO_PASS /
PASS_TO_PASS from JUnit, protected test files), files, diff-scope, health, and the shared
materialization of one trial's outcome."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from calc_task import JUNIT_TESTS, PYTEST, fix_add, make_trial, run

from passhat.graders._globs import matches
from passhat.graders._junit import parse_junit


@pytest.fixture
def trial(tmp_path):
    return make_trial(tmp_path)


def test_reference_fix_passes_every_listed_test(trial):
    result = run(JUNIT_TESTS, trial(fix_add))
    assert result["pass"] is True and result["score"] == 1.0
    assert "FAIL_TO_PASS 1/1, PASS_TO_PASS 2/2" in result["reason"]


def test_empty_patch_fails_fail_to_pass(trial):
    result = run(JUNIT_TESTS, trial())
    # 2 of 3 listed tests pass (sub, mul): score 2/3
    assert result["pass"] is False and result["score"] == pytest.approx(2 / 3)
    assert "FAIL_TO_PASS tests.test_calc::test_add: failed" in result["reason"]


def test_breaking_a_pass_to_pass_test_fails_even_when_fail_to_pass_is_fixed(trial):
    def fix_add_break_mul(work):
        fix_add(work)
        (work / "calc.py").write_text((work / "calc.py").read_text().replace("a * b", "a ** b"))

    result = run(JUNIT_TESTS, trial(fix_add_break_mul))
    assert result["pass"] is False and result["score"] == pytest.approx(2 / 3)
    assert "PASS_TO_PASS tests.test_calc::test_mul: failed" in result["reason"]


def test_editing_the_tests_to_pass_is_caught(trial):
    def cheat(work):
        test_file = work / "tests" / "test_calc.py"
        test_file.write_text(test_file.read_text().replace("assert add(2, 3) == 5", "assert True"))
        (work / "tests" / "conftest.py").write_text("# an added conftest could patch anything\n")

    metadata = trial(cheat)
    result = run(JUNIT_TESTS, metadata)
    assert result["pass"] is False
    assert (
        "touched protected test files (restored from the base before running): tests/conftest.py, tests/test_calc.py"
        in result["reason"]
    )
    # the same cheat passes a plain exit-code grader when nothing is protected: protection is what catches it
    assert run({"type": "tests", "command": PYTEST, "protected": []}, metadata)["pass"] is True


def test_exit_code_mode_without_lists(trial):
    assert run({"type": "tests", "command": PYTEST}, trial(fix_add))["pass"] is True
    failed = run({"type": "tests", "command": PYTEST}, trial())
    assert failed["pass"] is False and "failed (exit 1)" in failed["reason"]


def test_missing_junit_report_is_a_failure_with_the_reason(trial):
    grader = {**JUNIT_TESTS, "command": "true"}
    result = run(grader, trial(fix_add))
    assert result["pass"] is False and "no JUnit report at report.xml" in result["reason"]


def test_a_patch_that_does_not_apply_fails_every_grader_with_the_reason(trial, tmp_path):
    metadata = trial()
    Path(metadata["patch_path"]).write_text(
        "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-nope\n+x\n"
    )
    for grader in (JUNIT_TESTS, {"type": "files", "checks": [{"path": "calc.py", "exists": True}]}):
        result = run(grader, metadata)
        assert result["pass"] is False
        assert "the patch does not apply to the base" in result["reason"]


def test_a_hanging_test_command_is_killed_at_its_timeout(trial):
    started = time.monotonic()
    result = run({"type": "tests", "command": "sleep 60", "timeout_s": 1}, trial())
    assert time.monotonic() - started < 20
    assert result["pass"] is False and "ran past 1 s and was killed" in result["reason"]


def test_junit_mixed_results(tmp_path):
    report = tmp_path / "r.xml"
    report.write_text(
        '<testsuites><testsuite name="s">'
        '<testcase classname="a" name="ok"/>'
        '<testcase classname="a" name="bad"><failure message="x"/></testcase>'
        '<testcase classname="a" name="boom"><error message="x"/></testcase>'
        '<testcase classname="a" name="skip"><skipped/></testcase>'
        '<testcase name="no-class"/>'
        '<testcase classname="a" name="twice"/><testcase classname="a" name="twice"><failure/></testcase>'
        "</testsuite></testsuites>"
    )
    assert parse_junit(report.read_bytes(), "r.xml").results == {
        "a::ok": "passed",
        "a::bad": "failed",
        "a::boom": "error",
        "a::skip": "skipped",
        "no-class": "passed",
        "a::twice": "failed",  # a repeated test keeps its worst result
    }


@pytest.mark.parametrize(
    ("check", "passes"),
    [
        pytest.param({"path": "calc.py", "exists": True}, True, id="exists"),
        pytest.param({"path": "nope.py", "exists": False}, True, id="absent"),
        pytest.param({"path": "calc.py", "contains": "a + b"}, True, id="contains"),
        pytest.param({"path": "calc.py", "not_contains": "a ** b"}, True, id="not-contains"),
        pytest.param({"path": "calc.py", "regex": r"^def mul\("}, True, id="regex"),
        pytest.param({"path": "data.json", "key": "version", "equals": "1.2.4"}, True, id="json-key"),
        pytest.param({"path": "data.json", "key": "deps.0", "equals": "x"}, True, id="json-list-index"),
        pytest.param({"path": "data.toml", "key": "tool.name", "equals": "calc"}, True, id="toml-key"),
        pytest.param({"path": "data.yaml", "key": "a.b", "equals": 3}, True, id="yaml-key"),
        pytest.param({"path": "tests/test_calc.py", "unchanged": True}, True, id="unchanged"),
        pytest.param({"path": "calc.py", "unchanged": True}, False, id="changed"),
        pytest.param({"path": "data.json", "key": "version", "equals": "1.2.3"}, False, id="wrong-value"),
        pytest.param({"path": "data.json", "key": "missing", "equals": 1}, False, id="missing-key"),
        pytest.param({"path": "calc.py", "contains": "a - b - c"}, False, id="not-contained"),
    ],
)
def test_files_checks(trial, check, passes):
    def edits(work):
        fix_add(work)
        (work / "data.json").write_text(json.dumps({"version": "1.2.4", "deps": ["x"]}))
        (work / "data.toml").write_text('[tool]\nname = "calc"\n')
        (work / "data.yaml").write_text("a:\n  b: 3\n")

    result = run({"type": "files", "checks": [check]}, trial(edits))
    assert result["pass"] is passes, result["reason"]


def test_files_score_is_the_fraction_of_checks_that_hold(trial):
    checks = [{"path": "calc.py", "contains": "a + b"}, {"path": "calc.py", "unchanged": True}]
    result = run({"type": "files", "checks": checks}, trial(fix_add))
    assert (result["pass"], result["score"]) == (False, 0.5)
    assert "calc.py changed but must stay as in the base" in result["reason"]


def test_diff_scope_names_the_stray_paths(trial):
    def sprawl(work):
        fix_add(work)
        (work / "tests" / "test_calc.py").write_text("x = 1\n")
        (work / "notes.md").write_text("one\ntwo\n")

    metadata = trial(sprawl)
    denied = run({"type": "diff-scope", "deny": ["tests/**"]}, metadata)
    assert denied["pass"] is False and "denied by ['tests/**']: tests/test_calc.py" in denied["reason"]
    outside = run({"type": "diff-scope", "allow": ["calc.py", "tests/**"]}, metadata)
    assert outside["pass"] is False and "outside allow ['calc.py', 'tests/**']: notes.md" in outside["reason"]
    limits = run({"type": "diff-scope", "max_files": 2, "max_lines": 3}, metadata)
    assert "3 files changed, max 2" in limits["reason"]
    assert run({"type": "diff-scope", "allow": ["calc.py"], "max_lines": 2}, trial(fix_add))["pass"] is True


@pytest.mark.parametrize(
    ("run_record", "config", "passes", "reason"),
    [
        pytest.param(
            {"status": "ok", "is_error": False, "num_turns": 4, "subtype": "success"},
            {},
            True,
            "clean exit",
            id="clean",
        ),
        pytest.param(
            {"status": "timeout", "is_error": True, "subtype": "timeout"}, {}, False, "status timeout", id="timeout"
        ),
        pytest.param(
            {"status": "max_turns", "subtype": "error_max_turns"}, {}, False, "status max_turns", id="max-turns"
        ),
        pytest.param({"status": "ok", "permission_denials": 2}, {}, False, "2 permission denial(s)", id="denials"),
        pytest.param(
            {"status": "ok", "permission_denials": 2},
            {"max_permission_denials": 2},
            True,
            "clean",
            id="denials-allowed",
        ),
        pytest.param({"status": "ok", "num_turns": 30}, {"max_turns": 20}, False, "30 turns > 20", id="turn-limit"),
        pytest.param(
            {"status": "ok", "cost_usd": 1.5}, {"max_cost_usd": 1.0}, False, "cost $1.5000 > $1.0", id="cost-limit"
        ),
    ],
)
def test_health_is_the_run_not_the_outcome(trial, run_record, config, passes, reason):
    result = run({"type": "health", **config}, trial(fix_add, run=run_record))
    assert result["pass"] is passes and reason in result["reason"]


def test_several_grader_processes_of_one_trial_build_the_outcome_once(trial, tmp_path):
    metadata = trial(fix_add)
    graders = [
        JUNIT_TESTS,
        {"type": "files", "checks": [{"path": "calc.py", "contains": "a + b"}]},
        {"type": "tests", "command": PYTEST},
        {"type": "files", "checks": [{"path": "calc.py", "exists": True}]},
    ]
    code = "import json, sys; from passhat.graders._live import grade_one_promptfoo as g; c = json.loads(sys.argv[1]); print(json.dumps(g('', c)))"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, json.dumps({"config": grader, "providerResponse": {"metadata": metadata}})],
            stdout=subprocess.PIPE,
            text=True,
        )
        for grader in graders
    ]  # like Promptfoo: one process each
    results = [json.loads(proc.communicate()[0]) for proc in procs]
    assert [r["pass"] for r in results] == [True, True, True, True]
    builds = (tmp_path / "state" / "cache" / "outcomes" / "builds.log").read_text().splitlines()
    assert len(builds) == 1


@pytest.mark.parametrize(
    ("path", "glob", "hit"),
    [
        ("tests/test_a.py", "tests/**", True),
        ("tests/sub/x.py", "tests/**", True),
        ("a/tests/x.py", "tests/**", False),
        ("a/tests/x.py", "**/tests/**", True),
        ("test_a.py", "**/test_*.py", True),
        ("pkg/test_a.py", "**/test_*.py", True),
        ("src/a.py", "src/*.py", True),
        ("src/b/a.py", "src/*.py", False),
        ("package.json", "package.json", True),
        ("x.test.js", "**/*.test.js", True),
        ("a.py", "?.py", True),
    ],
)
def test_globs(path, glob, hit):
    assert matches(path, [glob]) is hit


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (make system-deps)")
def test_the_agents_code_runs_confined_while_graded(trial, tmp_path, monkeypatch):
    escaped = tmp_path / "escaped-from-grader.txt"

    def hostile(work):
        fix_add(work)
        with (work / "calc.py").open("a") as handle:  # runs when the tests import calc
            handle.write(f"\ntry:\n    open({str(escaped)!r}, 'w').write('x')\nexcept OSError:\n    pass\n")

    metadata = trial(hostile)
    assert run(JUNIT_TESTS, metadata)["pass"] is True  # graded as usual …
    assert not escaped.exists()  # … but the write outside its directory never reached the host
    monkeypatch.setenv("PASSHAT_GRADER_ISOLATION", "none")
    run(JUNIT_TESTS, metadata)
    assert escaped.exists()  # unconfined, the same patch does write there: confinement is what stops it
