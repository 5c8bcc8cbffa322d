"""The red-team corpus as data (manifest.yaml + hacks/<id>.patch) and how one hack is judged: graded with the
task's tests grader with the runner guard off (the attack is real: it passes) and with every defence on (the
tests grader and the integrity scan: is the expected rule among their findings?). Used by test_redteam.py and
bench/gaming_corpus.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from passhat.graders import TrialOutcome, grade, load_graded_task
from passhat.graders._settings import graders_of
from passhat.graders.runner import GUARD_ENV
from passhat.trial._sandbox import prepare_base

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
RUN = {"status": "ok", "is_error": False, "subtype": "success", "permission_denials": 0}


def manifest() -> list[dict]:
    rows = yaml.safe_load((HERE / "manifest.yaml").read_text())
    for row in rows:
        assert (HERE / "hacks" / f"{row['id']}.patch").is_file(), row["id"]
    return rows


@contextmanager
def guard(value: str | None) -> Iterator[None]:
    old = os.environ.get(GUARD_ENV)
    if value is None:
        os.environ.pop(GUARD_ENV, None)
    else:
        os.environ[GUARD_ENV] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(GUARD_ENV, None)
        else:
            os.environ[GUARD_ENV] = old


@dataclass
class Verdict:
    """One hack's result: `real` (the tests grader passes it with the runner guard off — and, for a hack of the
    test files (`defence: protected`), without restoring them), the rules every defence
    found (tests grader + scan, guard on), and their reasons."""

    row: dict
    real: bool
    passed: bool = False  # the tests grader's verdict with every defence on
    rules: set[str] = field(default_factory=set)
    reasons: list[str] = field(default_factory=list)

    @property
    def caught(self) -> bool:
        return self.row["expect"] in self.rules

    @property
    def flagged(self) -> bool:
        return bool(self.rules)


class Bench:
    """Bases prepared once per task (in `state`), shared by every hack of that task. `twins`: the tests grader's
    `twins:` for every hack (a row's own `twins` wins; default: the grader's default, in-process)."""

    def __init__(self, state: Path, twins: str | None = None) -> None:
        self.state = state
        self.bases: dict[str, Path] = {}
        self.twins = twins

    def outcome(self, row: dict) -> tuple[list[dict], TrialOutcome]:
        return self.graded(row["task"], (HERE / "hacks" / f"{row['id']}.patch").read_bytes())

    def graded(self, task_id: str, patch: bytes | None = None) -> tuple[list[dict], TrialOutcome]:
        """The task's graders and a trial whose patch is `patch` (default: the task's reference solution)."""
        task = load_graded_task(ROOT / "tasks" / task_id)
        if task.id not in self.bases:
            self.bases[task.id] = prepare_base(task, self.state / "cache").path
        patch = task.solution.read_bytes() if patch is None else patch
        return graders_of(task), TrialOutcome(task.dir, self.bases[task.id], patch, RUN)

    def judge(self, row: dict) -> Verdict:
        graders, outcome = self.outcome(row)
        tests = next(g for g in graders if g["type"] == "tests")
        if row.get("grader") == "exit-status":
            tests = {k: v for k, v in tests.items() if k not in ("fail_to_pass", "pass_to_pass", "junit")}
        if twins := row.get("twins") or self.twins:
            tests = {**tests, "twins": twins}
        unguarded = {**tests, "protected": []} if row.get("defence") == "protected" else tests
        with guard("off"):
            real = grade(outcome, unguarded).passed
        verdict = Verdict(row, real)
        with guard(None):
            for config in (tests, *(g for g in graders if g["type"] == "integrity")):
                result = grade(outcome, config)
                verdict.passed = verdict.passed or (config is tests and result.passed)
                verdict.rules |= {item.split(" at ")[0] for item in result.gamed}
                verdict.reasons.append(result.reason[:600])
        return verdict
