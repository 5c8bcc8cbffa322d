"""Promptfoo test generator: one test per task folder, its graders as python assertions.

promptfooconfig.yaml:  tests: file://tasks/promptfoo_tests.py:generate_tests
Adding a task = adding a folder under tasks/. `PASSHAT_TASKS=a,b` runs only those tasks.
"""

from __future__ import annotations

import os
from pathlib import Path

from passhat.tasks._load import Task, load_tasks

ASSERTION_FILES = {
    "tests": "tests_pass.py",
    "files": "files.py",
    "diff-scope": "diff_scope.py",
    "health": "health.py",
    "rubric": "rubric_judge.py",
    "pairwise": "pairwise_judge.py",
}  # grader type → file in assertions/
TASKS_ENV = "PASSHAT_TASKS"


def promptfoo_test(task: Task, assertions_dir: Path) -> dict:
    asserts = []
    for grader in task.graders:
        asserts.append(
            {
                "type": "python",
                "value": f"file://{assertions_dir / ASSERTION_FILES[grader['type']]}",
                "metric": grader.get("name", grader["type"]),
                "config": dict(grader),
            }
        )
    return {
        "description": task.id,
        "vars": {"task_id": task.id, "task_dir": str(task.dir), "prompt": task.prompt},
        "metadata": {"task_id": task.id, "tier": task.tier, "task_version": task.version},
        "assert": asserts,
    }


def generate_tests(tasks_dir: str | Path, assertions_dir: str | Path) -> list[dict]:
    only = [name.strip() for name in os.environ.get(TASKS_ENV, "").split(",") if name.strip()]
    tasks = load_tasks(tasks_dir, only=only or None)
    return [promptfoo_test(task, Path(assertions_dir).resolve()) for task in tasks]
