"""Reading a git patch without applying it: which paths it touches and how many lines change."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADER = re.compile(rb"^diff --git a/(.*) b/(.*)$")


@dataclass(frozen=True)
class PatchStats:
    paths: tuple[str, ...]  # every path added, removed or modified, sorted
    added: int
    removed: int

    @property
    def changed_lines(self) -> int:
        return self.added + self.removed


def patch_stats(patch: bytes) -> PatchStats:
    """Paths from `diff --git` headers (old and new name), +/- lines from hunks; binary hunks count 0 lines."""
    paths: set[str] = set()
    added = removed = 0
    in_hunk = False
    for line in patch.split(b"\n"):
        header = _HEADER.match(line)
        if header:
            paths.update(name.decode("utf-8", "replace") for name in header.groups())
            in_hunk = False
        elif line.startswith(b"@@"):
            in_hunk = True
        elif in_hunk and line.startswith(b"+"):
            added += 1
        elif in_hunk and line.startswith(b"-"):
            removed += 1
        elif line.startswith((b"GIT binary patch", b"Binary files")):
            in_hunk = False
    return PatchStats(tuple(sorted(paths)), added, removed)
