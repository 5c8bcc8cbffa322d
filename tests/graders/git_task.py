"""A git-based task made in the test with real git: `origin/` holds calc.py (add is broken) and two tests;
test.patch adds the test of add (plus whatever a test asks for), solution.patch fixes add.

Imported by the tests of git bases, test.patch and `auto` lists (tests/graders and tests/tasks).
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
TESTS = textwrap.dedent("""\
    from calc import add, sub


    def test_sub():
        assert sub(5, 3) == 2
""")
TEST_ADD = textwrap.dedent("""\


    def test_add():
        assert add(2, 3) == 5
""")
# Counts its runs in the file $COUNTER names (only writable when the grader runs unconfined): passes on odd runs.
TEST_FLAKY = textwrap.dedent("""\


    def test_flaky():
        import os
        with open(os.environ["COUNTER"], "a+") as f:
            f.write("x")
            f.seek(0)
            assert len(f.read()) % 2 == 1
""")
TEST_BROKEN = "\n\ndef test_broken():\n    assert add(1, 1) == 3\n"
PYTEST = "python -m pytest -q -p no:cacheprovider --junitxml={junit}"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def make_origin(path: Path) -> tuple[Path, str]:
    """The repository and its one commit: calc.py, tests/test_calc.py, pytest.ini, a symlink, a script."""
    (path / "tests").mkdir(parents=True)
    (path / "calc.py").write_text(CALC)
    (path / "tests" / "test_calc.py").write_text(TESTS)
    (path / "pytest.ini").write_text("[pytest]\ntestpaths = tests\npythonpath = .\n")
    (path / "run.sh").write_text("#!/bin/sh\necho run\n")
    (path / "run.sh").chmod(0o755)
    (path / "calc_link.py").symlink_to("calc.py")
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "calc")
    return path, git(path, "rev-parse", "HEAD")


def diff(repo: Path, rel: str, new: str) -> str:
    """The patch that turns `rel` (as committed) into `new`, the work tree left as it was."""
    old = (repo / rel).read_text()
    (repo / rel).write_text(new)
    try:
        return git(repo, "diff", "--binary", "--", rel) + "\n"
    finally:
        (repo / rel).write_text(old)


def make_git_task(
    tasks: Path, origin: Path, commit: str, graders: str, extra_tests: str = TEST_ADD, task_id: str = "calc"
) -> Path:
    """tasks/<task_id>/ with `base: {git: <relative path to origin>, commit}`, solution.patch and test.patch."""
    folder = tasks / task_id
    folder.mkdir(parents=True)
    (folder / "solution.patch").write_text(diff(origin, "calc.py", CALC.replace("a - b", "a + b", 1)))
    (folder / "test.patch").write_text(diff(origin, "tests/test_calc.py", TESTS + extra_tests))
    relative = (
        Path("..", "..", *origin.relative_to(tasks.parent).parts) if origin.is_relative_to(tasks.parent) else origin
    )
    (folder / "task.yaml").write_text(
        f"id: {task_id}\ndescription: d\ntier: simple\nprompt: fix add\n"
        f"base:\n  git: {relative}\n  commit: {commit}\ngraders:\n{graders}"
    )
    return folder
