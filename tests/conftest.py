"""Shared fixtures: the repo's own tasks, the scripted model, a PATH with the repo's Node and venv."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / "tasks"
SHIPPED_TASKS = sorted(p.name for p in TASKS.iterdir() if (p / "task.yaml").is_file())
# Tests marked `slow` (the longest end-to-end runs) run in CI (CI=true, as .ci/run has it) or when PASSHAT_SLOW=1;
# a local `make test` skips them, saying so, to stay near 20 minutes on a 2-core machine.
RUN_SLOW = any(os.environ.get(name, "").lower() in ("1", "true", "yes") for name in ("CI", "PASSHAT_SLOW"))


def pytest_collection_modifyitems(config, items):
    if RUN_SLOW:
        return
    skip = pytest.mark.skip(reason="slow: runs in CI (CI=true) or with PASSHAT_SLOW=1")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def _repo_tools_first_in_path():
    """Tests run what `make` runs: the repo's Node 22 / promptfoo and the venv first in PATH."""
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([str(ROOT / "node_modules" / ".bin"), str(Path(sys.executable).parent), old])
    yield
    os.environ["PATH"] = old


@pytest.fixture
def fake_model():
    from passhat.fake_model import start_in_thread

    server = start_in_thread(TASKS, "oracle")
    yield server
    server.stop()


def with_tests_shown(task_id: str, tasks: Path) -> Path:
    """A copy of shipped task `task_id` in `tasks/` whose held-out tests (test.patch) are folded into repo/: what
    an agent sees of a task whose tests are not hidden (the scripted hacks read the tests they game)."""
    import subprocess

    dest = tasks / task_id
    shutil.copytree(TASKS / task_id, dest)
    if (dest / "test.patch").is_file():
        subprocess.run(["git", "apply", "../test.patch"], cwd=dest / "repo", check=True)
        (dest / "test.patch").unlink()
    return dest


@pytest.fixture
def task_copy(tmp_path):
    """Copy a shipped task into tmp_path before anything touches it."""

    def copy(task_id: str) -> Path:
        dest = tmp_path / "tasks" / task_id
        shutil.copytree(TASKS / task_id, dest)
        return dest

    return copy
