"""Tasks: load and validate `tasks/<id>/task.yaml` (+ repo/, solution.patch), and turn them into Promptfoo tests.

May import: passhat._errors only (the first stage of the data's path).
Exports: Task, load_task, load_tasks, generate_tests.
"""

from __future__ import annotations

from passhat.tasks._load import Task, load_task, load_tasks
from passhat.tasks._suite import generate_tests

__all__ = ["Task", "generate_tests", "load_task", "load_tasks"]
