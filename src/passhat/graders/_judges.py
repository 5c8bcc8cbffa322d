"""What the judge kinds (graders/kinds/rubric.py, pairwise.py) share: the judge's inputs from a trial's outcome,
or from a task with no trial behind it.

check-task grades the reference and the empty patch with no trial behind them and no model: there the
rubric or pairwise settings are validated (a bad rubric breaks the task, with the reason) and the judge
is skipped, saying so — a judge scores trials, it cannot tell a valid task from a broken one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from passhat.judge._inputs import JudgeInputs, gather

if TYPE_CHECKING:
    from passhat.trial._outcome import TrialOutcome

NOT_RUN = "judge not run (check-task has no model and no agent text)"


class _HasRun(Protocol):
    """What _inputs reads of an outcome: a TrialOutcome, or a TaskOnly when no trial is behind it."""

    @property
    def task_dir(self) -> Path: ...

    @property
    def run(self) -> dict: ...

    @property
    def patch(self) -> bytes: ...


@dataclass(frozen=True)
class TaskOnly:
    """Just what judge_inputs reads of a TrialOutcome: a task with no trial behind it."""

    task_dir: Path
    run: dict
    patch: bytes = b""


def judge_inputs(outcome: _HasRun, raw: dict) -> JudgeInputs:
    metadata = {"task_dir": str(outcome.task_dir), **outcome.run}
    return gather(outcome.run.get("output"), metadata, {}, raw, patch=outcome.patch)


def check_only(outcome: TrialOutcome) -> bool:
    """No trial behind the outcome (check-task's reference or empty patch): validate, don't call the judge."""
    return not outcome.run.get("patch_path")
