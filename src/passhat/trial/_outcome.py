"""What every grader gets: the trial's outcome (base + patch) and its run record.

Graders grade what the agent produced — its patch on the pinned base — never the transcript's claims.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from passhat._errors import PasshatError


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
        from passhat.trial._sandbox import base_for, materialize_cached

        base = base_for(self.task_dir, self.base_dir)
        return materialize_cached(base, self.patch, self.cache_root, self.task_dir.name)

    def base_tree(self) -> Path:
        from passhat.trial._sandbox import base_for

        return base_for(self.task_dir, self.base_dir).path

    @contextmanager
    def private_copy(self) -> Iterator[Path]:
        """A writable copy of tree() for graders that run commands; removed on exit."""
        from passhat.trial._sandbox import copy_tree

        tree = self.tree()
        scratch = self.cache_root / "scratch"
        scratch.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="grade-", dir=scratch))
        try:
            copy_tree(tree, root / "work")
            yield root / "work"
        finally:
            shutil.rmtree(root, ignore_errors=True)
