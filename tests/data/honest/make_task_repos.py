"""Writes the repositories the honest tasks are made from (tests/graders/test_honest_tasks.py runs `passhat task
from-commit` on them): per source repository one git bundle, one branch per chosen bug-fix commit, each branch
two commits — the fix's parent and the fix (its own message) — of a pruned tree: the package, the root's config
files, and only the test files the fix touches (so its suite runs in a second, not a minute).

    .venv/bin/python tests/data/honest/make_task_repos.py /work/.mirror
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent / "tasks"
CHOSEN = {  # owner+name: (the package folder, the chosen commits)
    "mahmoud+boltons": (
        "boltons",
        ["ec1ff9f6728f", "c1c25da365cf", "ead236e278ca", "1e61524a798e", "766b5547392f", "d0a284fc7ef1",
         "4aa77cddb5d0", "c463d1633a07", "ebc7a8f776de", "f1034b07ddf7"],
    ),
}  # fmt: skip
ROOT_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "LICENSE")


def git(cwd: Path, *args: str, data: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, check=True).stdout.decode()


def export(source: Path, commit: str, paths: list[str], into: Path) -> None:
    """The files `paths` (folders whole) of `commit` written under `into`."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    listed = git(source, "ls-tree", "-r", "--name-only", commit).splitlines()
    for rel in listed:
        if any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in paths) and not rel.endswith((".pyc",)):
            (into / rel).parent.mkdir(parents=True, exist_ok=True)
            (into / rel).write_bytes(subprocess.run(["git", "show", f"{commit}:{rel}"], cwd=source,
                                                    capture_output=True, check=True).stdout)  # fmt: skip


def main(mirror: Path) -> None:
    HERE.mkdir(exist_ok=True)
    for name, (package, commits) in CHOSEN.items():
        source = mirror / name / "repo"
        work = Path(tempfile.mkdtemp(prefix="passhat-honest-"))
        repo = work / "repo"
        repo.mkdir()
        git(repo, "init", "-q")
        for short in commits:
            commit = git(source, "rev-parse", short).strip()
            parent = git(source, "rev-parse", f"{commit}^").strip()
            changed = git(source, "diff", "--name-only", parent, commit).splitlines()
            tests = [p for p in changed if p.startswith(("tests/", f"{package}/tests/")) or "/test_" in p]
            keep = [package, *ROOT_FILES, *tests, "tests/conftest.py", "tests/__init__.py"]
            git(repo, "checkout", "-q", "--orphan", f"fix-{short}")
            for state, message in ((parent, f"parent of {short}"), (commit, None)):
                export(source, state, keep, work / "tree")
                git(repo, "rm", "-rq", "--cached", "--ignore-unmatch", ".")
                for old in repo.iterdir():
                    if old.name != ".git":
                        shutil.rmtree(old) if old.is_dir() else old.unlink()
                shutil.copytree(work / "tree", repo, dirs_exist_ok=True)
                git(repo, "add", "-A")
                text = message or git(source, "log", "-1", "--format=%B", commit)
                author = git(source, "log", "-1", "--format=%an <%ae>", state).strip()
                git(repo, "-c", "user.name=passhat", "-c", "user.email=passhat@localhost", "commit", "-q",
                    "--allow-empty", f"--author={author}", "-F", "-", data=text.encode())  # fmt: skip
        bundle = HERE / f"{name}.bundle"
        git(repo, "bundle", "create", str(bundle), "--all")
        print(f"{name}: {len(commits)} fixes, {bundle.stat().st_size // 1024} KiB")
        shutil.rmtree(work)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
