"""The LLM judge: rubric scoring and pairwise comparison of a trial, its noise and its calibration.

May import: passhat.common._errors only (the graders wrap the judge, the report summarizes it; never the reverse).
Exports: the Promptfoo entries `rubric_promptfoo` / `pairwise_promptfoo`, the configs, verdicts and rubrics.

`assertions/grader.py` (a judge kind's `live`, passhat.graders.kinds) calls `rubric_promptfoo` /
`pairwise_promptfoo`; the rubric and pairwise kinds' grade functions serve check-task and regrade. Heavy imports (anthropic, jsonschema) happen at call time: every
Promptfoo assertion is a fresh process.
"""

from __future__ import annotations

import sys
from typing import Any

from passhat.common._errors import LabelsError, PasshatError, RubricError
from passhat.judge._config import (
    PairwiseConfig,
    RubricConfig,
    parse_pairwise_config,
    parse_rubric_config,
)
from passhat.judge._direct import (
    CriterionScore,
    RubricVerdict,
    grade_rubric,
    weighted_overall,
)
from passhat.judge._grading import rubric_grading_result
from passhat.judge._inputs import JudgeInputs, from_promptfoo, from_row
from passhat.judge._pairwise import (
    PairwiseVerdict,
    grade_pairwise,
    pairwise_grading_result,
)
from passhat.judge._rubric import Rubric, find_rubric, load_rubric
from passhat.judge._status import unscored_by_judge

__all__ = [
    "CriterionScore", "JudgeInputs", "LabelsError", "PairwiseConfig", "PairwiseVerdict", "Rubric",
    "RubricConfig",
    "RubricError", "RubricVerdict", "find_rubric", "from_promptfoo", "from_row", "grade_pairwise",
    "grade_rubric", "load_rubric", "pairwise_promptfoo",
    "parse_pairwise_config", "parse_rubric_config", "rubric_promptfoo", "unscored_by_judge", "weighted_overall",
]  # fmt: skip


def _could_not_run(kind: str, error: PasshatError) -> dict:
    print(f"passhat grader {kind}: {error}", file=sys.stderr)
    return {"pass": False, "score": 0.0, "reason": f"{kind} grader could not run: {error}"}


def rubric_promptfoo(output: Any, context: dict) -> dict:
    """A Promptfoo GradingResult for one trial; bad configuration fails the assertion with the reason."""
    raw = {**(context.get("config") or {}), "type": "rubric"}
    try:
        config = parse_rubric_config(raw)
        verdict = grade_rubric(from_promptfoo(output, context, raw), config)
    except PasshatError as error:
        return _could_not_run("rubric", error)
    return rubric_grading_result(verdict, config.name)


def pairwise_promptfoo(output: Any, context: dict) -> dict:
    raw = {**(context.get("config") or {}), "type": "pairwise"}
    try:
        config = parse_pairwise_config(raw)
        verdict = grade_pairwise(from_promptfoo(output, context, raw), config)
    except PasshatError as error:
        return _could_not_run("pairwise", error)
    return pairwise_grading_result(verdict, config.name)
