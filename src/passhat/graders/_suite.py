"""Promptfoo test generator: one test per task folder; the task's deterministic graders as ONE python assertion,
each judge as an assertion of its own (which kind is which: graders/kinds/, `GraderKind.deterministic`).

promptfooconfig.yaml:  tests: file://tasks/promptfoo_tests.py:generate_tests
Adding a task = adding a folder under tasks/. `PASSHAT_TASKS=a,b` runs only those tasks.

Why one assertion: Promptfoo runs every python assertion in a fresh process, and each one imported passhat and
rebuilt its view of the trial (base + patch) — 4-5 times per trial, about half of a suite's time. The one
assertion (graders._live.grade_all_promptfoo) runs them all in one process on one view and returns a
GradingResult whose `componentResults` has one component per grader (its `assertion` carries the grader's metric
and config) and whose `namedScores` has one score per grader. Promptfoo 0.12x keeps that assertion's own result
in the row's `gradingResult.componentResults` followed by flattened copies of its components, and merges its
namedScores into the row's (the viewer shows one metric pill per grader, and one evaluation line per grader plus
the summary line). The assertion has `weight` = its number of graders, so the row's score is the mean over
graders (its result: passhat.graders._common.combined_result).
Judges stay separate assertions: they wait on the model API (Promptfoo runs up to 3 assertions of a row at
once, so they overlap the deterministic graders), their components carry judge metadata of their own, and their
imports stay out of the deterministic graders' process.

passhat.judge._status.grader_components(row) reads a saved row back as one component per grader, whichever shape
it has (a row of an older eval has one assertion per grader).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from passhat.graders._common import metric_of
from passhat.graders._settings import graders_of, load_graded_tasks
from passhat.graders.kinds import grader_kinds
from passhat.tasks import Task

ALL_FILE = "graders.py"  # assertions/ file of the one assertion of a task's deterministic graders
ONE_FILE = "grader.py"  # assertions/ file of an assertion of one grader of any kind (its `type` in its config)
ALL, ONE = "all", "one"  # what `assertions` is asked for: the combined assertion, or one grader's
TASKS_ENV = "PASSHAT_TASKS"


def deterministic(graders: list[dict] | tuple[dict, ...]) -> list[dict]:
    """The graders that join the one combined assertion, in task order (copies)."""
    return [dict(g) for g in graders if grader_kinds()[g["type"]].deterministic]


def judges(graders: list[dict] | tuple[dict, ...]) -> list[dict]:
    """The graders that are assertions of their own, in task order (copies)."""
    return [dict(g) for g in graders if not grader_kinds()[g["type"]].deterministic]


def graders_assertion(graders: list[dict], value: str) -> dict:
    """The one Promptfoo assertion of `graders` (deterministic ones): no metric of its own (the graders' named
    scores come back in its result), weight = how many graders, so the row's score stays the graders' mean."""
    return {"type": "python", "value": value, "weight": len(graders), "config": {"graders": graders}}


def judge_assertion(grader: dict, value: str) -> dict:
    return {"type": "python", "value": value, "metric": metric_of(grader), "config": dict(grader)}


def promptfoo_test(task: Task, assertions: Path | Callable[[str], str]) -> dict:
    """`assertions`: the folder of the entry files (ALL_FILE, ONE_FILE), or a function from ALL or ONE to the
    assertion's `file://` value (passhat.promptfoo: one entry file)."""
    files = {ALL: ALL_FILE, ONE: ONE_FILE}
    value = assertions if callable(assertions) else lambda which: f"file://{assertions / files[which]}"
    graders = graders_of(task)  # the task's, plus the integrity scan (passhat.graders.kinds.integrity)
    combined = deterministic(graders)
    asserts = [graders_assertion(combined, value(ALL))] if combined else []
    asserts += [judge_assertion(grader, value(ONE)) for grader in judges(graders)]
    metadata = {"task_id": task.id, "tier": task.tier, "task_version": task.version}
    if task.expect == "impossible":  # every pass is a cheat: the report counts them apart (results reads it)
        metadata["expect"] = task.expect
    return {
        "description": task.id,
        "vars": {"task_id": task.id, "task_dir": str(task.dir), "prompt": task.prompt},
        "metadata": metadata,
        "assert": asserts,
    }


def generate_tests(tasks_dir: str | Path, assertions: str | Path | Callable[[str], str]) -> list[dict]:
    only = [name.strip() for name in os.environ.get(TASKS_ENV, "").split(",") if name.strip()]
    tasks = load_graded_tasks(tasks_dir, only=only or None)
    where = assertions if callable(assertions) else Path(assertions).resolve()
    return [promptfoo_test(task, where) for task in tasks]
