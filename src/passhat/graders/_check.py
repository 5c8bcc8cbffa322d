"""`passhat check-task`: validate tasks with no model — the reference solution must pass every
grader, and the empty patch must fail at least one (else a do-nothing agent would score 100%)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from passhat.tasks._load import Task

CLEAN_RUN = {"status": "ok", "is_error": False, "subtype": "success", "permission_denials": 0}
TAIL_LINES = 15  # of a failing grader's reason, under its BROKEN line: the command's own output says why


@dataclass(frozen=True)
class TaskCheck:
    task_id: str
    reference_failures: tuple[tuple[str, str], ...]  # (grader, reason) that failed the reference
    empty_passes: tuple[str, ...]  # graders the empty patch got through
    graders: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.reference_failures and len(self.empty_passes) < len(self.graders)


def _label(index: int, grader: dict) -> str:
    return grader.get("name") or f"{grader['type']}#{index}"


def check_task(task: Task, state_dir: Path) -> TaskCheck:
    from passhat.graders import TrialOutcome, grade
    from passhat.trial._sandbox import prepare_base

    base = prepare_base(task, state_dir / "cache")
    labels = tuple(_label(i, g) for i, g in enumerate(task.graders))

    def run_all(patch: bytes) -> list[tuple[str, bool, str]]:
        outcome = TrialOutcome(task.dir, base.path, patch, CLEAN_RUN)
        return [
            (label, (g := grade(outcome, grader)).passed, g.reason)
            for label, grader in zip(labels, task.graders, strict=False)
        ]

    reference = run_all(task.solution.read_bytes())
    empty = run_all(b"")
    return TaskCheck(
        task.id,
        tuple((label, reason) for label, passed, reason in reference if not passed),
        tuple(label for label, passed, _ in empty if passed),
        labels,
    )


def describe(check: TaskCheck) -> list[str]:
    lines = []
    if check.ok:
        fails = [label for label in check.graders if label not in check.empty_passes]
        line = (
            f"ok      {check.task_id}: reference passes all {len(check.graders)} graders; "
            f"empty patch fails {', '.join(fails)}"
        )
        if check.empty_passes:
            line += f" (gets through {', '.join(check.empty_passes)})"
        lines.append(line)
    for label, reason in check.reference_failures:
        first, *rest = reason.strip().splitlines() or [""]
        lines.append(f"BROKEN  {check.task_id}: solution.patch fails grader {label}: {first}")
        lines += [f"        | {line}" for line in [line for line in rest if line.strip()][-TAIL_LINES:]]
    if len(check.empty_passes) == len(check.graders):
        lines.append(
            f"BROKEN  {check.task_id}: the empty patch passes every grader "
            f"({', '.join(check.empty_passes)}): a do-nothing agent would score 100%; add a grader it fails"
        )
    return lines
