"""Tasks: load and validate `tasks/<id>/task.yaml` (+ repo/ or a git base, solution.patch, test.patch), and say
where a task's repository files come from. A grader's settings are its kind's to check (passhat.graders).

May import: passhat.common._errors only (the first stage of the data's path).
Exports: Task, load_task, load_tasks, describe_schema_error, export_source, source_tree, task_test_patch, test_patch_file, test_patch_name.
"""

from __future__ import annotations

from passhat.tasks._load import (
    Task,
    describe_schema_error,
    load_task,
    load_tasks,
    task_test_patch,
    test_patch_file,
    test_patch_name,
)
from passhat.tasks._source import export_source, source_tree

__all__ = [
    "Task",
    "describe_schema_error",
    "export_source",
    "load_task",
    "load_tasks",
    "source_tree",
    "task_test_patch",
    "test_patch_file",
    "test_patch_name",
]
