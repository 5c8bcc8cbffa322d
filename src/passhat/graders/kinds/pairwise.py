"""The `pairwise` grader: an LLM judge compares the trial's answer with a reference, twice with positions swapped;
inconsistent verdicts are a TIE flagged position_bias (passhat.judge). A judge: an assertion of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from passhat.graders._common import Grade
from passhat.graders._judges import NOT_RUN, TaskOnly, check_only, judge_inputs
from passhat.graders.kinds import GraderKind
from passhat.graders.view import OutcomeView, outcome_of


def grade_pairwise_outcome(view: OutcomeView, raw: dict) -> Grade:
    """A saved trial compared again (regrade), or the settings checked (check-task: no trial behind the outcome)."""
    from passhat.judge._config import parse_pairwise_config
    from passhat.judge._pairwise import grade_pairwise, opponent, pairwise_reason

    config = parse_pairwise_config(raw)
    outcome = outcome_of(view)
    inputs = judge_inputs(outcome, raw)
    if check_only(outcome):
        against, _ = opponent(inputs, config)
        return Grade(True, 1.0, f"{NOT_RUN}: pairwise settings are valid, compared with {against}")
    verdict = grade_pairwise(inputs, config)
    return Grade(verdict.passed, verdict.score, pairwise_reason(verdict))


def pairwise_live(output: Any, context: dict) -> dict:
    """Promptfoo's assertion for a live trial: the judge's GradingResult, both orders."""
    from passhat.judge import pairwise_promptfoo

    return pairwise_promptfoo(output, context)


def pairwise_preflight(task_dir: Path, task_id: str, grader: dict) -> str:
    """What the trial will be compared with; a RubricError when there is nothing to compare with."""
    from passhat.judge._config import parse_pairwise_config
    from passhat.judge._pairwise import opponent

    inputs = judge_inputs(TaskOnly(task_dir, {"task_id": task_id}), grader)
    against, _ = opponent(inputs, parse_pairwise_config(grader))
    return f"pairwise vs {against}"


_TEXT = {"type": "string", "minLength": 1}
_ATTEMPTS = {"type": "integer", "minimum": 1, "maximum": 5, "default": 3}
SETTINGS = {
    "properties": {
        "model": _TEXT,
        "question": {"description": "What 'better' means for this task."} | _TEXT,
        "against_results": {
            "description": "Compare with this promptfoo results file's answer to the same task (else the task's "
            "reference)."
        }
        | _TEXT,
        "against_provider": {"description": "The provider label to take from against_results."} | _TEXT,
        "shuffles": {
            "description": "0: two passes, positions swapped; N >= 3: N seeded orders and a majority vote.",
            "type": "integer",
            "minimum": 0,
        },
        "pass_on": {"enum": ["win", "win_or_tie"], "default": "win_or_tie"},
        "max_attempts": _ATTEMPTS,
        "fake_script": _TEXT,
        "reference_output": _TEXT,
        "use_reference": {"type": "boolean", "default": True},
    },
}

KIND = GraderKind(
    "pairwise",
    grade_pairwise_outcome,
    deterministic=False,
    settings=SETTINGS,
    live=pairwise_live,
    preflight=pairwise_preflight,
)
