"""The `rubric` grader: an LLM judge scores the trial (task prompt, final text, diff, reference) on a rubric;
pass = weighted overall >= threshold (passhat.judge). A judge: an assertion of its own, never part of the
combined one. check-task validates its settings without calling a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from passhat.graders._common import Grade
from passhat.graders._judges import NOT_RUN, TaskOnly, check_only, judge_inputs
from passhat.graders.kinds import GraderKind
from passhat.graders.view import OutcomeView, outcome_of


def grade_rubric_outcome(view: OutcomeView, raw: dict) -> Grade:
    """A saved trial judged again (regrade), or the settings checked (check-task: no trial behind the outcome)."""
    from passhat.judge._config import parse_rubric_config
    from passhat.judge._direct import effective_rubric, grade_rubric, version_of
    from passhat.judge._grading import rubric_reason

    config = parse_rubric_config(raw)
    outcome = outcome_of(view)
    inputs = judge_inputs(outcome, raw)
    if check_only(outcome):
        rubric = effective_rubric(config, inputs)
        return Grade(True, 1.0, f"{NOT_RUN}: rubric {rubric.name} is valid, judge_version {version_of(config, rubric)}")
    verdict = grade_rubric(inputs, config)
    return Grade(verdict.passed, verdict.score, rubric_reason(verdict))


def rubric_live(output: Any, context: dict) -> dict:
    """Promptfoo's assertion for a live trial: the judge's GradingResult with its criteria and metadata."""
    from passhat.judge import rubric_promptfoo

    return rubric_promptfoo(output, context)


def rubric_preflight(task_dir: Path, task_id: str, grader: dict) -> str:
    """The rubric it will use and its judge_version; a RubricError when the settings or the rubric are bad."""
    from passhat.judge._config import parse_rubric_config
    from passhat.judge._direct import effective_rubric, version_of

    config = parse_rubric_config(grader)
    rubric = effective_rubric(config, judge_inputs(TaskOnly(task_dir, {"task_id": task_id}), grader))
    return f"rubric {rubric.name}, judge_version {version_of(config, rubric)}"


_TEXT = {"type": "string", "minLength": 1}
SETTINGS = {
    "required": ["rubric"],
    "properties": {
        "rubric": {"description": "A shipped rubric name (rubrics/<name>.yaml) or a path to a rubric YAML."} | _TEXT,
        "model": {"description": "Judge model; default claude-sonnet-5-5."} | _TEXT,
        "threshold": {
            "description": "Overrides the rubric's pass threshold (0..1).",
            "type": "number",
            "minimum": 0,
            "maximum": 1,
        },
        "conciseness": {
            "description": "Add a conciseness criterion (weight conciseness_weight; the others scaled down).",
            "type": "boolean",
            "default": False,
        },
        "conciseness_weight": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.5, "default": 0.1},
        "length_normalize": {
            "description": "Score (and pass on) overall x min(1, length_budget / length) ** 0.5.",
            "type": "boolean",
            "default": False,
        },
        "length_budget": {
            "description": "Characters of final text + diff before the length penalty; default twice the "
            "reference, else 4000.",
            "type": "integer",
            "minimum": 1,
        },
        "max_attempts": {
            "description": "Judge calls per trial when the reply is malformed; then the trial is unscored.",
            "type": "integer",
            "minimum": 1,
            "maximum": 5,
            "default": 3,
        },
        "fake_script": {
            "description": "Scripted model only: the judge script (judge, judge:0.8, judge-malformed, ...)."
        }
        | _TEXT,
        "reference_output": {"description": "Overrides the task's reference_output."} | _TEXT,
        "use_reference": {
            "description": "Show the judge solution.patch and reference_output.",
            "type": "boolean",
            "default": True,
        },
    },
}

KIND = GraderKind(
    "rubric",
    grade_rubric_outcome,
    deterministic=False,
    settings=SETTINGS,
    live=rubric_live,
    preflight=rubric_preflight,
)
