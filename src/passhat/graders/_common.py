"""What every grader gets: the trial's outcome (base + patch), read from the provider's metadata."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from passhat._errors import PasshatError


@dataclass(frozen=True)
class Grade:
    passed: bool
    score: float
    reason: str

    def to_promptfoo(self) -> dict:
        return {"pass": self.passed, "score": self.score, "reason": self.reason}


@dataclass(frozen=True)
class TrialOutcome:
    task_dir: Path
    base_dir: Path
    patch_path: Path
    scratch: Path  # where materialized copies go (removed after use)

    @classmethod
    def from_metadata(cls, metadata: dict) -> TrialOutcome:
        missing = [key for key in ("task_dir", "base_dir", "patch_path", "trial_dir") if not metadata.get(key)]
        if missing:
            msg = (
                f"provider metadata lacks {', '.join(missing)}: this grader needs a trial run by "
                "file://providers/claude_code.py (or a regrade of one)"
            )
            raise PasshatError(msg)
        return cls(Path(metadata["task_dir"]), Path(metadata["base_dir"]), Path(metadata["patch_path"]),
                   Path(metadata["trial_dir"]))

    @contextmanager
    def materialized(self) -> Iterator[Path]:
        """A fresh directory holding base + patch; removed on exit."""
        from passhat._sandbox import base_for, materialize

        base = base_for(self.task_dir, self.base_dir)
        self.scratch.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="grade-", dir=self.scratch))
        try:
            yield materialize(base, self.patch_path.read_bytes(), root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
