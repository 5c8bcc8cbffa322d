"""Which lines of each file a patch added or changed, read from the patch's own hunks: linear in its size.

(A diff of the file before and after would find the same lines, but difflib is quadratic on some inputs: a
modified 50,000-line file took minutes. The patch already says which lines are new.)

A hunk `@@ -a,b +c,d @@` is followed by exactly b old and d new lines (` ` both, `-` old, `+` new, `\\` a note),
so a `+++` inside a hunk is content, never a header. Names come from `+++` lines, unquoted as git writes them
(passhat.trial._patch); a file without hunks (binary, a pure rename or mode change) is not in the result, and
the caller decides (graders.scan._tree scans all of a changed file it has no hunks for).
"""

from __future__ import annotations

import re

from passhat.trial._patch import _field, _strip_prefix

_HUNK = re.compile(rb"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def added_by_patch(patch: bytes) -> tuple[dict[str, set[int]], set[str]]:
    """(path (as patch_stats names it) -> the 1-based line numbers of its new version the patch added,
    the paths a rename or copy made: their lines come from another file unless a hunk says otherwise)."""
    added: dict[str, set[int]] = {}
    moved: set[str] = set()
    current: str | None = None
    old_left = new_left = 0
    line_no = 0
    for line in patch.split(b"\n"):
        if old_left > 0 or new_left > 0:
            mark = line[:1]
            if mark == b"+":
                if current is not None:
                    added.setdefault(current, set()).add(line_no)
                line_no += 1
                new_left -= 1
            elif mark == b"-":
                old_left -= 1
            elif mark == b"\\":
                pass
            else:  # context (" ", or an empty line where an editor stripped the space)
                line_no += 1
                old_left -= 1
                new_left -= 1
            continue
        if line.startswith(b"diff --git "):
            current = None
        elif line.startswith((b"rename to ", b"copy to ")):
            moved.add(_field(line.split(b" to ", 1)[1]).decode("utf-8", "replace"))
        elif line.startswith(b"+++ "):
            name = _strip_prefix(_field(line[4:]))
            current = None if name is None else name.decode("utf-8", "replace")
        elif match := _HUNK.match(line):
            old_left = int(match.group(1) or b"1")
            line_no = int(match.group(2))
            new_left = int(match.group(3) or b"1")
    return added, moved
