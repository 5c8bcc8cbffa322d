"""Graders: one function per `type`, looked up in a plain dict (no plugin framework).

Each takes the trial's outcome and the grader's config (an item of task.yaml `graders:`)
and returns a Grade. `grade_promptfoo` is what the assertions/ entry files call.
"""

from __future__ import annotations

import sys

from passhat._errors import PasshatError, SandboxError
from passhat.graders._common import Grade, TrialOutcome
from passhat.graders._tests import grade_tests

GRADERS = {"tests": grade_tests}

__all__ = ["GRADERS", "Grade", "TrialOutcome", "grade_promptfoo"]


def _metadata(context: dict) -> dict:
    response = context.get("providerResponse") or {}
    return {**(context.get("metadata") or {}), **(response.get("metadata") or {})}


def grade_promptfoo(grader_type: str, context: dict) -> dict:
    """Run one grader inside a Promptfoo python assertion; never raises into Promptfoo."""
    config = dict(context.get("config") or {})
    config.setdefault("type", grader_type)
    try:
        outcome = TrialOutcome.from_metadata(_metadata(context))
        grade = GRADERS[grader_type](outcome, config)
    except (PasshatError, SandboxError) as error:
        print(f"passhat grader {grader_type}: {error}", file=sys.stderr)
        grade = Grade(False, 0.0, f"{grader_type} grader could not run: {error}")
    return grade.to_promptfoo()
