"""Graders: one function per `type`, looked up in a plain dict (no plugin framework).

May import: passhat._errors, tasks, trial (the outcome), judge (the rubric / pairwise graders wrap it).
Exports: GRADERS, Grade, TrialOutcome, grade, grade_promptfoo, check_judges, TestLists, compute_test_lists.

Each takes the trial's outcome and the grader's config (an item of task.yaml `graders:`)
and returns a Grade. `grade_promptfoo` is what the assertions/ entry files call.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from passhat._errors import GradingInfraError, PasshatError, SandboxError
from passhat.graders._auto import TestLists
from passhat.graders._common import Grade
from passhat.graders._diff_scope import grade_diff_scope
from passhat.graders._files import grade_files
from passhat.graders._health import grade_health
from passhat.graders._judges import (
    check_judges,
    grade_pairwise_outcome,
    grade_rubric_outcome,
)
from passhat.graders._tests import compute_test_lists, grade_tests
from passhat.trial._outcome import TrialOutcome

GRADERS: dict[str, Callable[[TrialOutcome, dict], Grade]] = {
    "tests": grade_tests,
    "files": grade_files,
    "diff-scope": grade_diff_scope,
    "health": grade_health,
    "rubric": grade_rubric_outcome,  # LLM judge; check-task validates it and skips the call (passhat.judge)
    "pairwise": grade_pairwise_outcome,
}

__all__ = [
    "GRADERS",
    "Grade",
    "TestLists",
    "TrialOutcome",
    "check_judges",
    "compute_test_lists",
    "grade",
    "grade_promptfoo",
]


def grade(outcome: TrialOutcome, config: dict) -> Grade:
    """Run one grader; an outcome that cannot be built (patch does not apply) is a failed grade with the reason."""
    try:
        return GRADERS[config["type"]](outcome, config)
    except SandboxError as error:
        return Grade(False, 0.0, f"{config['type']} grader: {error}")


def _metadata(context: dict) -> dict:
    response = context.get("providerResponse") or {}
    return {**(context.get("metadata") or {}), **(response.get("metadata") or {})}


def grade_promptfoo(grader_type: str, context: dict) -> dict:
    """Run one grader inside a Promptfoo python assertion; raises into Promptfoo only GradingInfraError (the
    cluster lost the grader's run: Promptfoo records an error, which passhat counts as an infra error)."""
    config = {**(context.get("config") or {}), "type": grader_type}
    try:
        result = grade(TrialOutcome.from_metadata(_metadata(context)), config)
    except GradingInfraError:
        raise
    except PasshatError as error:
        print(f"passhat grader {grader_type}: {error}", file=sys.stderr)
        result = Grade(False, 0.0, f"{grader_type} grader could not run: {error}")
    return result.to_promptfoo()
