"""Per-test results from a JUnit XML report (pytest --junitxml, node --test-reporter=junit), and whether
to believe them.

A test id is `classname::name`, or `name` when the runner writes no classname.

The report is written by the process that runs the agent's code, so that code can rewrite it: an atexit
hook that edits the file and calls os._exit(0) turns a failing run into a clean report and exit 0. So
the report is checked against what the runner printed before any such hook ran — its summary on
stdout (pytest's `1 failed, 2 passed in 0.05s` and its `FAILED <test>` lines; node --test's `ℹ pass 2`
or `# pass 2`; jest's `Tests: 1 failed, 2 passed, 3 total`) — and against the exit status. A report
with fewer failures or more passes than the runner printed, one that marks passed a test the runner
printed as FAILED, or one with no failure while the command exited non-zero, is not believed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Literal

Status = Literal["passed", "failed", "error", "skipped"]
_STATUS_OF: dict[str, Status] = {"failure": "failed", "error": "error", "skipped": "skipped"}  # child tag → status
_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}

_PYTEST = re.compile(r"^=*\s*(?P<body>\d+ [a-z]+(?:, \d+ [a-z]+)*|no tests ran) in [\d.]+s\b[^=]*=*$")
_PYTEST_BAD = {"failed", "error", "errors"}
_PYTEST_PASSED = {"passed", "xpassed"}
_PYTEST_FAILED_LINE = re.compile(r"^(?:FAILED|ERROR) (?P<id>\S+?(?:\[.*?\])?)(?: - .*)?$")
_NODE = re.compile(r"^[#ℹ] (?P<key>tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [\d.]+$")
_JEST = re.compile(r"^Tests:\s+(?P<body>.*\d+ total)$")


class JUnitError(Exception):
    pass


@dataclass(frozen=True)
class Report:
    results: dict[str, Status]  # test id → its worst status
    passed: int  # <testcase> elements with no failure, error or skipped child
    bad: int  # <failure> and <error> elements


@dataclass(frozen=True)
class Summary:
    """A runner's own count, as it printed it."""

    runner: str
    line: str
    passed: int
    bad: int  # failed + errors


def test_id(case: ET.Element) -> str:
    classname, name = case.get("classname") or "", case.get("name") or ""
    return f"{classname}::{name}" if classname else name


def parse_junit(data: bytes, name: str) -> Report:
    """Map test id → status (a test that appears twice keeps its worst status), with the report's counts."""
    if not data.strip():
        msg = f"no JUnit report at {name}: the test command did not write it"
        raise JUnitError(msg)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as error:
        msg = f"the JUnit report {name} is not valid XML ({error})"
        raise JUnitError(msg) from None
    results: dict[str, Status] = {}
    passed = bad = 0
    for case in root.iter("testcase"):
        status: Status = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                bad += child.tag != "skipped"
                status = status if _RANK[status] >= _RANK[_STATUS_OF[child.tag]] else _STATUS_OF[child.tag]
        passed += status == "passed"
        key = test_id(case)
        if key not in results or _RANK[status] > _RANK[results[key]]:
            results[key] = status
    return Report(results, passed, bad)


def _counts(body: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for part in body.split(", "):
        number, _, word = part.partition(" ")
        if number.isdigit():
            counts[word] = counts.get(word, 0) + int(number)
    return counts


def runner_summaries(output: str) -> list[Summary]:
    """Every summary a known runner printed (pytest, node --test spec/tap, jest), in order."""
    found: list[Summary] = []
    node: dict[str, int] = {}
    for raw in output.splitlines():
        line = raw.strip()
        if match := _PYTEST.match(line):
            counts = _counts(match["body"])
            passed, bad = (sum(counts.get(w, 0) for w in words) for words in (_PYTEST_PASSED, _PYTEST_BAD))
            found.append(Summary("pytest", line.strip("= "), passed, bad))
        elif match := _JEST.match(line):
            counts = _counts(match["body"])
            found.append(Summary("jest", line, counts.get("passed", 0), counts.get("failed", 0)))
        elif match := _NODE.match(line):
            key = match["key"]
            if key in node or key == "duration_ms":
                if node:
                    found.append(_node_summary(node))
                node = {}
            if key != "duration_ms":
                node[key] = int(float(line.rsplit(" ", 1)[1]))
    if node:
        found.append(_node_summary(node))
    return found


def _node_summary(counts: dict[str, int]) -> Summary:
    line = ", ".join(f"{key} {value}" for key, value in counts.items())
    return Summary("node --test", line, counts.get("pass", 0), counts.get("fail", 0) + counts.get("cancelled", 0))


def junit_id(nodeid: str) -> str:
    """pytest's node id as its JUnit report names the test: `a/b.py::C::t` → `a.b.C::t`; a parameter id may hold
    `::` (`t[https://[::1]:80/]`, boltons' tests): only the part before its `[` is split."""
    head, bracket, param = nodeid.partition("[")
    path, *names = head.split("::")
    module = path.removesuffix(".py").replace("/", ".")
    return f"{'.'.join([module, *names[:-1]])}::{names[-1]}{bracket}{param}" if names else module + bracket + param


def disagreement(report: Report, output: str, code: int | None) -> str | None:
    """Why the report cannot be what the runner produced, or None when they agree."""
    problems = [
        f"{s.runner} printed `{s.line}`"
        for s in runner_summaries(output)
        if report.bad < s.bad or report.passed > s.passed
    ]
    for line in output.splitlines():
        match = _PYTEST_FAILED_LINE.match(line.strip())
        if match and report.results.get(junit_id(match["id"])) == "passed":
            problems.append(f"pytest printed `{line.strip()[:200]}`, a test the report marks passed")
    if code not in (0, None) and report.bad == 0:
        problems.append(f"the command exited {code}, yet the report has no failure or error")
    if not problems:
        return None
    return (
        f"the JUnit report and the runner disagree — report: {report.passed} passed, {report.bad} failed or "
        f"errors; runner: {'; '.join(problems)}. The report is not believed: code under test can rewrite it "
        "(e.g. from an atexit hook)"
    )
