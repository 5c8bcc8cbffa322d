"""Per-test results from a JUnit XML report (pytest --junitxml, node --test-reporter=junit).

A test id is `classname::name`, or `name` when the runner writes no classname.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Literal

Status = Literal["passed", "failed", "error", "skipped"]
_STATUS_OF: dict[str, Status] = {"failure": "failed", "error": "error", "skipped": "skipped"}  # child tag → status


class JUnitError(Exception):
    pass


def test_id(case: ET.Element) -> str:
    classname, name = case.get("classname") or "", case.get("name") or ""
    return f"{classname}::{name}" if classname else name


def read_junit(path: Path) -> dict[str, Status]:
    """Map test id → status. A test that appears twice keeps its worst status."""
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        msg = f"no JUnit report at {path.name}: the test command did not write it"
        raise JUnitError(msg) from None
    except ET.ParseError as error:
        msg = f"the JUnit report {path.name} is not valid XML ({error})"
        raise JUnitError(msg) from None
    rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    results: dict[str, Status] = {}
    for case in root.iter("testcase"):
        status: Status = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                status = _STATUS_OF[child.tag]
                break
        key = test_id(case)
        if key not in results or rank[status] > rank[results[key]]:
            results[key] = status
    return results
