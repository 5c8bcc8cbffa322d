"""Bases and sandboxes: the pinned starting point of every trial, and what a trial changed.

A base is prepared once per task version (copy repo/, `git init`, commit "base", run
`setup`) and cached under `<cache>/bases/<id>-<version>`. Every trial and every grader
starts from a copy of it, so no trial ever sees another's edits.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from passhat._errors import SandboxError
from passhat.tasks._load import Task
from passhat.tasks._source import export_source
from passhat.trial._git import GitError, GitOutputTooLargeError, git
from passhat.trial._limits import Limits, tree_usage

_READY = ".passhat-base"  # holds the base commit; written last, so its presence means done
SETUP_TIMEOUT_S = 900
_MB = 1024 * 1024


@dataclass(frozen=True)
class Base:
    path: Path
    commit: str


@dataclass(frozen=True)
class Outcome:
    """What a trial produced: a binary-safe patch against the base commit and the paths it touches."""

    patch: bytes
    changed_paths: tuple[str, ...]


@contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _read_base(path: Path) -> Base | None:
    marker = path / ".git" / _READY
    return Base(path, marker.read_text().strip()) if marker.is_file() else None


def prepare_base(task: Task, cache_root: Path) -> Base:
    """The task's base workspace, built once per task version, safe across processes."""
    path = cache_root / "bases" / f"{task.id}-{task.version}"
    if (base := _read_base(path)) is not None:
        return base
    with _locked(path.with_name(path.name + ".lock")):
        if (base := _read_base(path)) is not None:
            return base
        building = path.with_name(f"{path.name}.building-{os.getpid()}")
        shutil.rmtree(building, ignore_errors=True)
        try:
            export_source(task, building, cache_root)
            git(building, "init", "-q", "-b", "main")
            git(building, "add", "-A")
            git(building, "commit", "-q", "--no-verify", "-m", "base")
            commit = git(building, "rev-parse", "HEAD").decode().strip()
            if task.setup:
                _run_setup(task, task.setup, building)
            _exclude_untracked(building)
            (building / ".git" / _READY).write_text(commit + "\n")
        except (GitError, OSError) as error:
            shutil.rmtree(building, ignore_errors=True)
            msg = f"preparing the base of task {task.id!r} failed: {error}"
            raise SandboxError(msg) from None
        except SandboxError:
            shutil.rmtree(building, ignore_errors=True)
            raise
        os.replace(building, path)
        return Base(path, commit)


def _run_setup(task: Task, setup: str, workdir: Path) -> None:
    try:
        proc = subprocess.run(setup, shell=True, cwd=workdir, capture_output=True, text=True, timeout=SETUP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        msg = f"task {task.id!r}: setup {setup!r} ran past {SETUP_TIMEOUT_S} s"
        raise SandboxError(msg) from None
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip()[-800:]
        msg = f"task {task.id!r}: setup {setup!r} exited {proc.returncode}: {tail}"
        raise SandboxError(msg)


def _exclude_untracked(workdir: Path) -> None:
    """What setup made (node_modules, build output) is part of the base, not of any patch."""
    listing = git(workdir, "ls-files", "--others", "--directory", "-z")
    entries = [entry for entry in listing.decode().split("\0") if entry]
    if entries:
        with open(workdir / ".git" / "info" / "exclude", "a") as handle:
            handle.writelines(f"/{entry}\n" for entry in entries)


def copy_tree(source: Path, dest: Path) -> None:
    """A full, independent copy (reflinked where the filesystem can), never hard links."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["cp", "-a", "--reflink=auto", f"{source}/.", str(dest)], capture_output=True, text=True)
    if proc.returncode != 0:
        msg = f"copying {source} to {dest} failed: {proc.stderr.strip()}"
        raise SandboxError(msg)


class AgentTreeError(Exception):
    """The tree the agent left cannot be collected: over a limit (`limit` True) or git fails on it.

    Both are the agent's doing (the base was fine), so the trial is an agent failure, never an infra error."""

    def __init__(self, reason: str, limit: bool) -> None:
        super().__init__(reason)
        self.limit = limit


def collect_outcome(workdir: Path, base: Base, limits: Limits | None = None) -> Outcome:
    """The trial's patch against the base commit: untracked files included, binary-safe, bounded by `limits`."""
    limits = limits or Limits()
    over = tree_usage(workdir, limits.worktree_mb * _MB, limits.worktree_files)
    if over is not None:
        raise AgentTreeError(over, limit=True)
    try:
        git(workdir, "add", "-A")
        names = git(workdir, "diff", "--cached", "--name-only", "-z", "--no-renames", base.commit)
        patch = git(
            workdir, "diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "--no-renames", base.commit,
            max_output=limits.patch_mb * _MB,
        )  # fmt: skip
    except GitOutputTooLargeError:
        msg = f"patch size limit (patch_mb): the patch is over {limits.patch_mb} MB"
        raise AgentTreeError(msg, limit=True) from None
    except GitError as error:
        msg = f"collecting the patch failed on the work tree the agent left: {error}"
        raise AgentTreeError(msg, limit=False) from None
    return Outcome(patch, tuple(name for name in names.decode().split("\0") if name))


def materialize(base: Base, patch: bytes, dest_root: Path) -> Path:
    """A fresh copy of the base with the patch applied; raises SandboxError if it does not apply."""
    dest = dest_root / f"m-{uuid.uuid4().hex[:12]}"
    copy_tree(base.path, dest)
    if patch.strip():
        try:
            git(dest, "apply", "--binary", "--whitespace=nowarn", "-", input=patch)
        except GitError as error:
            shutil.rmtree(dest, ignore_errors=True)
            msg = f"the patch does not apply to the base: {error}"
            raise SandboxError(msg) from None
    return dest


def materialize_cached(base: Base, patch: bytes, cache_root: Path, name: str) -> Path:
    """base + patch, built once per (base, patch) across processes; treat the result as read-only.

    Every assertion of one trial runs in its own Promptfoo process; they share this tree.
    A patch that does not apply raises SandboxError, every time, with the same reason.
    """
    digest = hashlib.sha256(patch).hexdigest()[:16]
    path = cache_root / "outcomes" / f"{name}-{base.commit[:12]}-{digest}"
    failure = path.with_name(path.name + ".failed")
    ready = path / ".git" / "passhat-outcome"
    with _locked(path.with_name(path.name + ".lock")):
        if failure.is_file():
            raise SandboxError(failure.read_text())
        if not ready.is_file():
            building = path.with_name(f"{path.name}.building-{os.getpid()}")
            shutil.rmtree(building, ignore_errors=True)
            try:
                built = materialize(base, patch, building)
            except SandboxError as error:
                failure.write_text(str(error))
                raise
            shutil.rmtree(path, ignore_errors=True)
            os.replace(built, path)
            shutil.rmtree(building, ignore_errors=True)
            ready.write_text(digest + "\n")
            with open(path.parent / "builds.log", "a") as journal:  # one line per build: shows sharing works
                journal.write(f"{path.name}\n")
    return path


def base_for(task_dir: Path, base_dir: Path) -> Base:
    """The base a trial ran on; rebuilt from the task (same version, same place) if it was removed."""
    from passhat.tasks._load import load_task

    if (base := _read_base(base_dir)) is not None:
        return base
    return prepare_base(load_task(task_dir), base_dir.parent.parent)
