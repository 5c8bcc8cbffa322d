"""Tasks: load and validate `tasks/<id>/task.yaml` (+ repo/ or a git base, solution.patch, test.patch), say
where a task's repository files come from, and turn tasks into Promptfoo tests.

May import: passhat._errors only (the first stage of the data's path).
Exports: Task, load_task, load_tasks, generate_tests, export_source, source_tree, task_test_patch.
"""

from __future__ import annotations

from passhat.tasks._load import Task, load_task, load_tasks, task_test_patch
from passhat.tasks._source import export_source, source_tree
from passhat.tasks._suite import generate_tests

__all__ = ["Task", "export_source", "generate_tests", "load_task", "load_tasks", "source_tree", "task_test_patch"]
