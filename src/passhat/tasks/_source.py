"""Where a task's repository comes from: its frozen `repo/` folder (or, later, a commit of a git repository).

`export_source(task, dest)` writes the files the agent starts from into `dest` (no `.git`); the base
(passhat.trial._sandbox.prepare_base) turns them into a git work tree of its own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from passhat.tasks._load import Task


def export_source(task: Task, dest: Path, cache_root: Path) -> None:
    """Fill `dest` (which must not exist yet) with the task's repository files, symlinks kept as links.

    `cache_root` is passhat's cache (`<state>/cache`), for sources that keep something there."""
    shutil.copytree(task.repo, dest, symlinks=True)
