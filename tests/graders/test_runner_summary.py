"""graders._junit: the runner's own summary, read from its output, and when a JUnit report disagrees with it.

Summary lines as pytest 8, node 20/22 --test (spec and tap reporters) and jest 29 print them.
"""

from __future__ import annotations

import pytest

from passhat.graders._junit import Report, Summary, disagreement, junit_id, runner_summaries


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        pytest.param(
            "F..    [100%]\n1 failed, 2 passed in 0.05s\n",
            [Summary("pytest", "1 failed, 2 passed in 0.05s", 2, 1)],
            id="pytest-quiet",
        ),
        pytest.param(
            "===== 2 failed, 3 passed, 1 skipped, 1 xfailed, 1 xpassed, 2 errors, 1 warning in 65.12s (0:01:05) =====",
            # passed 3 + xpassed 1; failed 2 + errors 2
            [
                Summary(
                    "pytest",
                    "2 failed, 3 passed, 1 skipped, 1 xfailed, 1 xpassed, 2 errors, 1 warning in 65.12s (0:01:05)",
                    4,
                    4,
                )
            ],
            id="pytest-full",
        ),
        pytest.param("no tests ran in 0.01s", [Summary("pytest", "no tests ran in 0.01s", 0, 0)], id="pytest-none"),
        pytest.param(
            "ℹ tests 3\nℹ suites 0\nℹ pass 2\nℹ fail 1\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\nℹ duration_ms 51.2\n",
            [Summary("node --test", "tests 3, suites 0, pass 2, fail 1, cancelled 0, skipped 0, todo 0", 2, 1)],
            id="node-spec",
        ),
        pytest.param(
            "# tests 2\n# pass 1\n# fail 0\n# cancelled 1\n# duration_ms 9\n",
            [Summary("node --test", "tests 2, pass 1, fail 0, cancelled 1", 1, 1)],  # cancelled counts as failed
            id="node-tap",
        ),
        pytest.param(
            "Tests:       1 failed, 1 skipped, 2 passed, 4 total\n",
            [Summary("jest", "Tests:       1 failed, 1 skipped, 2 passed, 4 total", 2, 1)],
            id="jest",
        ),
        pytest.param("all good\n3 tests passed\n", [], id="no-known-runner"),
    ],
)
def test_runner_summaries(output, expected):
    assert runner_summaries(output) == expected


@pytest.mark.parametrize(
    ("nodeid", "junit"),
    [
        ("tests/test_calc.py::test_add", "tests.test_calc::test_add"),
        ("test_a.py::TestK::test_p[c - d]", "test_a.TestK::test_p[c - d]"),
        ("tests/test_x.py", "tests.test_x"),  # a collection error: pytest names the module
    ],
)
def test_junit_id_is_how_pytest_names_a_node_in_its_report(nodeid, junit):
    assert junit_id(nodeid) == junit


# pytest 8 on a module with a test that fails and errors in teardown, one that passes and errors in teardown,
# an xfail, an xpass, a skip, and a parametrized class test (one case fails): what it printed and reported.
PYTEST_QUIRKS = """\
FAILED test_a.py::test_fail_and_td - assert 0
FAILED test_a.py::TestK::test_p[c - d] - AssertionError: assert 'c - d' == 'a b'
ERROR test_a.py::test_fail_and_td - RuntimeError: td
ERROR test_a.py::test_pass_td - RuntimeError: td
2 failed, 3 passed, 1 skipped, 1 xfailed, 1 xpassed, 2 errors in 0.06s
"""
QUIRKS_REPORT = Report(
    {
        "test_a::test_ok": "passed",
        "test_a::test_fail_and_td": "error",
        "test_a::test_pass_td": "error",
        "test_a::test_xf": "skipped",
        "test_a::test_xp": "passed",
        "test_a::test_sk": "skipped",
        "test_a.TestK::test_p[a b]": "passed",
        "test_a.TestK::test_p[c - d]": "failed",
    },
    passed=3,
    bad=4,  # <failure> and <error> of test_fail_and_td, <error> of test_pass_td, <failure> of test_p[c - d]
)


@pytest.mark.parametrize(
    ("report", "output", "code", "problem"),
    [
        pytest.param(QUIRKS_REPORT, PYTEST_QUIRKS, 1, None, id="pytest-teardown-errors-xfail-xpass-agree"),
        pytest.param(Report({"t": "passed"}, 1, 0), "1 passed in 0.01s", 0, None, id="clean-pass"),
        pytest.param(Report({"t": "failed"}, 0, 1), "", 1, None, id="no-summary-failure-and-exit-1"),
        pytest.param(
            Report({"t": "passed"}, 1, 0),
            "1 failed in 0.01s",
            0,
            "report: 1 passed, 0 failed or errors; runner: pytest printed `1 failed in 0.01s`",
            id="fewer-failures-than-printed",
        ),
        pytest.param(
            Report({"a": "passed", "b": "passed"}, 2, 0),
            "ℹ tests 2\nℹ pass 1\nℹ fail 0\nℹ duration_ms 3",
            0,
            "runner: node --test printed `tests 2, pass 1, fail 0`",
            id="more-passes-than-printed",
        ),
        pytest.param(
            Report({"t": "passed"}, 1, 0),
            "",
            1,
            "runner: the command exited 1, yet the report has no failure or error",
            id="clean-report-failed-exit",
        ),
    ],
)
def test_disagreement(report, output, code, problem):
    found = disagreement(report, output, code)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found and "The report is not believed" in found
