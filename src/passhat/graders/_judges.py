"""The judges as `passhat.graders.GRADERS` entries (outcome, config) → Grade, for check-task and regrade.

check-task grades the reference and the empty patch with no trial behind them and no model: there the
rubric or pairwise settings are validated (a bad rubric breaks the task, with the reason) and the judge
is skipped, saying so — a judge scores trials, it cannot tell a valid task from a broken one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from passhat._errors import RubricError
from passhat.graders._common import Grade
from passhat.judge._config import parse_pairwise_config, parse_rubric_config
from passhat.judge._direct import effective_rubric, grade_rubric, version_of
from passhat.judge._grading import rubric_reason
from passhat.judge._inputs import JudgeInputs, gather
from passhat.judge._pairwise import grade_pairwise, opponent, pairwise_reason

if TYPE_CHECKING:
    from passhat.trial._outcome import TrialOutcome

NOT_RUN = "judge not run (check-task has no model and no agent text)"


class _HasRun(Protocol):
    """What _inputs reads of an outcome: a TrialOutcome, or an _Outcome when no trial is behind it."""

    @property
    def task_dir(self) -> Path: ...

    @property
    def run(self) -> dict: ...

    @property
    def patch(self) -> bytes: ...


@dataclass(frozen=True)
class _Outcome:
    """Just what _inputs reads of a TrialOutcome: a task with no trial behind it."""

    task_dir: Path
    run: dict
    patch: bytes = b""


def _inputs(outcome: _HasRun, raw: dict) -> JudgeInputs:
    metadata = {"task_dir": str(outcome.task_dir), **outcome.run}
    return gather(outcome.run.get("output"), metadata, {}, raw, patch=outcome.patch)


def _check_only(outcome: TrialOutcome) -> bool:
    return not outcome.run.get("patch_path")


def grade_rubric_outcome(outcome: TrialOutcome, raw: dict) -> Grade:
    config = parse_rubric_config(raw)
    inputs = _inputs(outcome, raw)
    if _check_only(outcome):
        rubric = effective_rubric(config, inputs)
        return Grade(True, 1.0, f"{NOT_RUN}: rubric {rubric.name} is valid, judge_version {version_of(config, rubric)}")
    verdict = grade_rubric(inputs, config)
    return Grade(verdict.passed, verdict.score, rubric_reason(verdict))


def grade_pairwise_outcome(outcome: TrialOutcome, raw: dict) -> Grade:
    config = parse_pairwise_config(raw)
    inputs = _inputs(outcome, raw)
    if _check_only(outcome):
        against, _ = opponent(inputs, config)
        return Grade(True, 1.0, f"{NOT_RUN}: pairwise settings are valid, compared with {against}")
    verdict = grade_pairwise(inputs, config)
    return Grade(verdict.passed, verdict.score, pairwise_reason(verdict))


def check_judges(task_dir: Path, task_id: str, graders: Sequence[dict]) -> list[str]:
    """Validate a task's rubric and pairwise graders before any trial (settings, rubric file, a reference to
    compare with): one line per judge, or a RubricError naming task.yaml, the grader and the problem."""
    lines = []
    for index, grader in enumerate(graders):
        if grader.get("type") not in ("rubric", "pairwise"):
            continue
        outcome = _Outcome(task_dir, {"task_id": task_id})
        try:
            if grader["type"] == "rubric":
                config = parse_rubric_config(grader)
                rubric = effective_rubric(config, _inputs(outcome, grader))
                lines.append(
                    f"{task_id}: graders[{index}] rubric {rubric.name}, judge_version {version_of(config, rubric)}"
                )
            else:
                against, _ = opponent(_inputs(outcome, grader), parse_pairwise_config(grader))
                lines.append(f"{task_id}: graders[{index}] pairwise vs {against}")
        except RubricError as error:
            raise RubricError(f"{task_dir / 'task.yaml'}: graders[{index}]: {error}") from None
    return lines
