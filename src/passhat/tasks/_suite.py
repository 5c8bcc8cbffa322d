"""Promptfoo test generator: one test per task folder; the task's deterministic graders (tests, files,
diff-scope, health) as ONE python assertion, each judge (rubric, pairwise) as an assertion of its own.

promptfooconfig.yaml:  tests: file://tasks/promptfoo_tests.py:generate_tests
Adding a task = adding a folder under tasks/. `PASSHAT_TASKS=a,b` runs only those tasks.

Why one assertion: Promptfoo runs every python assertion in a fresh process, and each one imported passhat and
rebuilt its view of the trial (base + patch) — 4-5 times per trial, about half of a suite's time. The one
assertion (`graders_assertion`) runs them all in one process on one view and returns a GradingResult whose
`componentResults` has one component per grader (its `assertion` carries the grader's metric and config) and
whose `namedScores` has one score per grader. Promptfoo 0.12x keeps that assertion's own result in the row's
`gradingResult.componentResults` followed by flattened copies of its components, and merges its namedScores into
the row's (the viewer shows one metric pill per grader, and one evaluation line per grader plus the summary line).
The assertion has `weight` = its number of graders, so the row's score is the mean over graders as before
(its result: passhat.graders._common.combined_result).
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

from passhat.tasks._load import Task, load_tasks

ASSERTION_FILES = {
    "tests": "tests_pass.py",
    "files": "files.py",
    "diff-scope": "diff_scope.py",
    "health": "health.py",
    "rubric": "rubric_judge.py",
    "pairwise": "pairwise_judge.py",
}  # grader type → file in assertions/ (one grader per assertion: still works, e.g. in a hand-written config)
GRADERS_FILE = "graders.py"  # assertions/ file of the one assertion for a task's deterministic graders
ALL_DETERMINISTIC = "graders"  # what `assertions` is asked for to name that assertion
DETERMINISTIC = ("tests", "files", "diff-scope", "health")
TASKS_ENV = "PASSHAT_TASKS"


def metric_of(grader: dict) -> str:
    """A grader's named score: its `name`, else its type."""
    return str(grader.get("name", grader["type"]))


def graders_assertion(graders: list[dict], value: str) -> dict:
    """The one Promptfoo assertion of `graders` (deterministic ones): no metric of its own (the graders' named
    scores come back in its result), weight = how many graders, so the row's score stays the graders' mean."""
    return {"type": "python", "value": value, "weight": len(graders), "config": {"graders": graders}}


def promptfoo_test(task: Task, assertions: Path | Callable[[str], str]) -> dict:
    """`assertions`: the folder of the entry files (GRADERS_FILE, ASSERTION_FILES), or a function from a grader
    type (or ALL_DETERMINISTIC) to the assertion's `file://` value (passhat.promptfoo: one entry file)."""
    files = {**ASSERTION_FILES, ALL_DETERMINISTIC: GRADERS_FILE}
    value = assertions if callable(assertions) else lambda kind: f"file://{assertions / files[kind]}"
    deterministic = [dict(g) for g in task.graders if g["type"] in DETERMINISTIC]
    asserts = [graders_assertion(deterministic, value(ALL_DETERMINISTIC))] if deterministic else []
    for grader in task.graders:
        if grader["type"] not in DETERMINISTIC:
            asserts.append(
                {"type": "python", "value": value(grader["type"]), "metric": metric_of(grader), "config": dict(grader)}
            )
    return {
        "description": task.id,
        "vars": {"task_id": task.id, "task_dir": str(task.dir), "prompt": task.prompt},
        "metadata": {"task_id": task.id, "tier": task.tier, "task_version": task.version},
        "assert": asserts,
    }


def generate_tests(tasks_dir: str | Path, assertions: str | Path | Callable[[str], str]) -> list[dict]:
    only = [name.strip() for name in os.environ.get(TASKS_ENV, "").split(",") if name.strip()]
    tasks = load_tasks(tasks_dir, only=only or None)
    where = assertions if callable(assertions) else Path(assertions).resolve()
    return [promptfoo_test(task, where) for task in tasks]
