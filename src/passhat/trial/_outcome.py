"""What every grader gets: the trial's outcome (base + patch) and its run record.

Graders grade what the agent produced — its patch on the pinned base — never the transcript's claims.
The tree they read (base + patch) is built once per outcome and shared; a grader that runs commands gets
a writable view of it of its own (an overlay where passhat can mount one, else a copy).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from passhat._errors import PasshatError, SandboxError

if TYPE_CHECKING:
    from passhat.trial._sandbox import Base


@dataclass(frozen=True)
class TrialOutcome:
    """A trial's patch on its task's base, plus the run's metadata (for the health grader)."""

    task_dir: Path
    base_dir: Path
    patch: bytes
    run: dict = field(default_factory=dict)

    @classmethod
    def from_metadata(cls, metadata: dict) -> TrialOutcome:
        missing = [key for key in ("task_dir", "base_dir", "patch_path") if not metadata.get(key)]
        if missing:
            msg = (
                f"provider metadata lacks {', '.join(missing)}: this grader needs a trial run by "
                "file://providers/claude_code.py (or a regrade of one)"
            )
            raise PasshatError(msg)
        patch_path = Path(metadata["patch_path"])
        if not patch_path.is_file():
            msg = f"the trial's patch {patch_path} is gone; regrade needs the artifacts folder of the eval"
            raise PasshatError(msg)
        return cls(Path(metadata["task_dir"]), Path(metadata["base_dir"]), patch_path.read_bytes(), dict(metadata))

    @property
    def cache_root(self) -> Path:
        return self.base_dir.parent.parent  # <state>/cache/bases/<id>-<version> → <state>/cache

    def tree(self) -> Path:
        """base + patch, shared by every grader of this outcome; read it, never write to it."""
        from passhat.trial._sandbox import base_for

        base = base_for(self.task_dir, self.base_dir)
        return materialize_cached(base, self.patch, self.cache_root, self.task_dir.name)

    def base_tree(self) -> Path:
        from passhat.trial._sandbox import base_for

        return base_for(self.task_dir, self.base_dir).path

    @contextmanager
    def private_copy(self) -> Iterator[Path]:
        """A writable view of tree() for graders that run commands: an overlay on it (what the command
        writes lands beside it), or a copy where no overlay mounts; unmounted and removed on exit."""
        from passhat.trial._sandbox import close_sandbox, open_sandbox

        tree = self.tree()
        scratch = self.cache_root / "scratch"
        scratch.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="grade-", dir=scratch))
        try:
            yield open_sandbox(tree, root).work
        finally:
            close_sandbox(root)


def _applied_paths(dest: Path, patch: bytes) -> list[bytes]:
    """The paths `git apply` writes for `patch` (new names), as git reads them."""
    from passhat.trial._git import git

    fields = git(dest, "apply", "--numstat", "-z", "-", input=patch).split(b"\0")
    paths, i = [], 0
    while i < len(fields) - 1:
        path = fields[i].split(b"\t", 2)[-1]
        if path:
            paths.append(path)
            i += 1
        else:  # a rename or copy: "+\t-\t\0old\0new\0"
            paths.append(fields[i + 2])
            i += 3
    return paths


def materialize(base: Base, patch: bytes, dest_root: Path) -> Path:
    """A fresh copy of the base with the patch applied; raises SandboxError if it does not apply.
    As root, what the patch wrote is given to the base's uid, like the rest of the copy."""
    from passhat.trial._git import GitError, git
    from passhat.trial._limits import chown_paths
    from passhat.trial._sandbox import copy_tree

    dest = dest_root / f"m-{uuid.uuid4().hex[:12]}"
    copy_tree(base.path, dest)
    if patch.strip():
        try:
            git(dest, "apply", "--binary", "--whitespace=nowarn", "-", input=patch)
            if base.uid is not None:
                chown_paths(dest, _applied_paths(dest, patch), base.uid)
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
    from passhat._lock import locked

    digest = hashlib.sha256(patch).hexdigest()[:16]
    path = cache_root / "outcomes" / f"{name}-{base.commit[:12]}-{digest}"
    failure = path.with_name(path.name + ".failed")
    ready = path / ".git" / "passhat-outcome"
    with locked(path):
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
            if base.uid is not None:  # the whole tree is the base's uid's, as a grader command will see it
                os.lchown(ready, base.uid, base.uid)
            with open(path.parent / "builds.log", "a") as journal:  # one line per build: shows sharing works
                journal.write(f"{path.name}\n")
    return path
