"""One process at a time on a file: an exclusive lock (fcntl.flock) on `<file>.lock` beside it, shared by every
worker of an eval (the base cache, patched trees, computed test lists, task sources)."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def locked(file: Path) -> Iterator[None]:
    """Hold `<file>.lock` (its folder made if needed): one process makes or changes `file`, the others wait."""
    file.parent.mkdir(parents=True, exist_ok=True)
    with open(file.with_name(file.name + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
