"""Direct scoring (grader type `rubric`): one judge call per trial, every criterion scored on the
rubric's scale, then overall = sum(weight x level value) in 0..1; pass = overall >= threshold.

Options: `conciseness` adds a conciseness criterion; `length_normalize` reports (and, when set, passes
on) overall x min(1, budget / length) ** 0.5. A judge that cannot be read after the bounded retries
leaves the trial UNSCORED — pass false, score 0, `judge_unscored: 1` — never passed, never a quiet 0.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from typing import TypedDict

from passhat.judge._client import DEFAULT_MODEL, call_tool, endpoint
from passhat.judge._config import RubricConfig
from passhat.judge._inputs import JudgeInputs
from passhat.judge._prompt import (
    rubric_judge_version,
    rubric_system,
    rubric_tool,
    rubric_user,
)
from passhat.judge._rubric import Rubric, find_rubric, with_conciseness

_SNAPSHOT = re.compile(r"-(\d{8}|latest)$")
LENGTH_EXPONENT = 0.5
DEFAULT_LENGTH_BUDGET = 4000  # characters of final message + diff, when the task has no reference to size it by


@dataclass(frozen=True)
class CriterionScore:
    name: str
    weight: float
    points: int
    label: str
    value: float
    evidence: tuple[str, ...] = ()
    justification: str = ""
    improvement: str = ""


@dataclass(frozen=True)
class RubricVerdict:
    """A judged trial. `overall` None means unscored (`unscored_reason` says why)."""

    rubric: str
    points: int
    judge_version: str
    model: str
    threshold: float
    criteria: tuple[CriterionScore, ...] = ()
    overall: float | None = None
    length_normalized: float | None = None
    pass_on_normalized: bool = False
    unscored_reason: str | None = None
    attempts: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)
    scripted: bool = False  # judged by passhat's scripted model (offline): canned scores, not a model's judgement

    @property
    def unscored(self) -> bool:
        return self.overall is None

    @property
    def score(self) -> float:
        """The score the verdict rests on: the length-normalized one when configured so."""
        if self.overall is None:
            return 0.0
        return (
            self.length_normalized if self.pass_on_normalized and self.length_normalized is not None else self.overall
        )

    @property
    def passed(self) -> bool:
        return not self.unscored and self.score >= self.threshold


class _VerdictBase(TypedDict):
    """The RubricVerdict fields every outcome of one grading shares."""

    rubric: str
    points: int
    judge_version: str
    model: str
    threshold: float


def weighted_overall(criteria: tuple[CriterionScore, ...]) -> float:
    """sum(weight x value): the weights sum to 1, the values are in 0..1, so the overall is in 0..1."""
    return min(1.0, max(0.0, math.fsum(c.weight * c.value for c in criteria)))


def length_factor(length: int, budget: int) -> float:
    """1 within budget, else (budget / length) ** 0.5: four times the budget halves the score."""
    if length <= budget:
        return 1.0
    factor: float = (budget / length) ** LENGTH_EXPONENT  # a positive base: the power is real
    return factor


def length_budget(inputs: JudgeInputs, configured: int | None) -> int:
    """The configured budget, else twice the reference (solution.patch + reference output), else 4000."""
    if configured:
        return configured
    reference = len(inputs.reference_patch or "") + len(inputs.reference_output or "")
    return 2 * reference if reference else DEFAULT_LENGTH_BUDGET


def same_model(a: str | None, b: str | None) -> bool:
    """claude-sonnet-4-5, claude-sonnet-4-5-20250929 and claude-sonnet-4-5-latest are one model (a dated
    snapshot or alias of it); claude-sonnet-4 is another. A missing name matches nothing."""
    if not a or not b:
        return False
    return _SNAPSHOT.sub("", a.lower()) == _SNAPSHOT.sub("", b.lower())


def effective_rubric(config: RubricConfig, inputs: JudgeInputs) -> Rubric:
    rubric = find_rubric(config.rubric, inputs.roots(), where=f"{config.name} grader config")
    return with_conciseness(rubric, config.conciseness_weight) if config.conciseness else rubric


def version_of(config: RubricConfig, rubric: Rubric) -> str:
    scoring = (
        {"length_normalize": config.length_normalize, "budget": config.length_budget} if config.length_normalize else {}
    )
    return rubric_judge_version(rubric, config.model or DEFAULT_MODEL, scoring)


def scores_from_reply(rubric: Rubric, data: dict) -> tuple[CriterionScore, ...]:
    out = []
    for c in rubric.criteria:
        item = data["criteria"][c.name]
        level = rubric.level(item["score"])
        out.append(CriterionScore(c.name, c.weight, level.score, level.label, level.value,
                                  tuple(item["evidence"]), item["justification"], item["improvement"]))  # fmt: skip
    return tuple(out)


def grade_rubric(inputs: JudgeInputs, config: RubricConfig) -> RubricVerdict:
    """Judge one trial. Bad configuration raises RubricError; a judge that fails leaves it unscored."""
    rubric = effective_rubric(config, inputs)
    model = config.model or DEFAULT_MODEL
    base: _VerdictBase = {
        "rubric": rubric.name, "points": rubric.points, "judge_version": version_of(config, rubric), "model": model,
        "threshold": config.threshold if config.threshold is not None else rubric.threshold,
    }  # fmt: skip
    warnings: list[str] = []
    if same_model(model, inputs.agent_model):
        warnings.append(f"judge model {model} is the agent's model ({inputs.agent_model}): self-enhancement bias; "
                        "judge with a different model")  # fmt: skip
        print(f"passhat judge: warning: {warnings[-1]}", file=sys.stderr)
    where = endpoint(inputs.task_id, inputs.trial, config.fake_script)
    if isinstance(where, str):
        return RubricVerdict(**base, unscored_reason=where, warnings=tuple(warnings))
    user = rubric_user(inputs.prompt, inputs.output, inputs.diff, inputs.reference_patch, inputs.reference_output)
    reply = call_tool(where, model=model, system=rubric_system(rubric), user=user, tool=rubric_tool(rubric),
                      max_attempts=config.max_attempts)  # fmt: skip
    if reply.data is None:
        return RubricVerdict(**base, unscored_reason=reply.problem, attempts=reply.attempts, warnings=tuple(warnings),
                             scripted=where.offline)  # fmt: skip
    criteria = scores_from_reply(rubric, reply.data)
    overall = weighted_overall(criteria)
    normalized = None
    if config.length_normalize:
        length = len(inputs.output or "") + len(inputs.diff or "")
        normalized = overall * length_factor(length, length_budget(inputs, config.length_budget))
    return RubricVerdict(**base, criteria=criteria, overall=overall, length_normalized=normalized,
                         pass_on_normalized=config.length_normalize, attempts=reply.attempts,
                         warnings=tuple(warnings), scripted=where.offline)  # fmt: skip
