"""Graders: one module per grader `type` in graders/kinds/ (the registry: `grader_kinds()`); the rest derives
from it.

May import: passhat.common._errors, tasks, trial (the outcome), judge (the rubric / pairwise kinds wrap it), cluster.
Exports: GraderKind, grader_kinds, Grade, TrialOutcome, grade, load_graded_task(s), check_graders, generate_tests,
preflight, TestLists, compute_test_lists.

Each kind takes the outcome's view (graders.view: read-only, no path of the tree) and the grader's config (an
item of task.yaml `graders:`) and returns a Grade; `type: python` runs a team's own function (graders.team). Live grading in Promptfoo: graders._live; Promptfoo tests: graders._suite; regrade: graders._regrade.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passhat.graders._auto import TestLists
    from passhat.graders._common import Grade
    from passhat.graders._live import grade
    from passhat.graders._settings import check_graders, load_graded_task, load_graded_tasks, preflight
    from passhat.graders._suite import generate_tests
    from passhat.graders._tests import compute_test_lists
    from passhat.graders.kinds import GraderKind, grader_kinds
    from passhat.trial._outcome import TrialOutcome

# Each Promptfoo assertion is a fresh interpreter that imports one entry (graders._live) through this package:
# the exports are imported when first used, so that an assertion imports only what its graders run.
_HOMES = {
    "TestLists": "passhat.graders._auto",
    "Grade": "passhat.graders._common",
    "grade": "passhat.graders._live",
    "check_graders": "passhat.graders._settings",
    "load_graded_task": "passhat.graders._settings",
    "load_graded_tasks": "passhat.graders._settings",
    "preflight": "passhat.graders._settings",
    "generate_tests": "passhat.graders._suite",
    "compute_test_lists": "passhat.graders._tests",
    "GraderKind": "passhat.graders.kinds",
    "grader_kinds": "passhat.graders.kinds",
    "TrialOutcome": "passhat.trial._outcome",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "Grade",
    "GraderKind",
    "TestLists",
    "TrialOutcome",
    "check_graders",
    "compute_test_lists",
    "generate_tests",
    "grade",
    "grader_kinds",
    "load_graded_task",
    "load_graded_tasks",
    "preflight",
]
