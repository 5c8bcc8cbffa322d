"""Reading a git patch without applying it: which paths it touches and how many lines change.

git reads the patch, as `git apply` will: `git apply --numstat -z` prints each file's +/- counts and its
path NUL-terminated and verbatim, even a name with a newline or non-ASCII bytes, which the patch itself
carries C-quoted (`"b/tests/t\\303\\251st.py"`). numstat names only the new side of a rename or copy,
so the headers are read too (`diff --git`, `---`/`+++`, rename/copy from/to, quoted names unquoted);
every path git reads must be among theirs, or the patch is refused rather than half-seen.
"""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from dataclasses import dataclass

from passhat.common._errors import SandboxError

GIT_TIMEOUT_S = 60
_ESCAPES = {ord(k): v for k, v in zip('abtnvfr"\\', b'\a\b\t\n\v\f\r"\\', strict=True)}


@dataclass(frozen=True)
class PatchStats:
    paths: tuple[str, ...]  # every path added, removed, modified, renamed or copied (both names), sorted
    added: int
    removed: int

    @property
    def changed_lines(self) -> int:
        return self.added + self.removed


def _unquote(text: bytes) -> tuple[bytes, bytes]:
    """A C-quoted name at the start of `text` (as git writes it) → (the name's bytes, what follows)."""
    out, i = bytearray(), 1
    while i < len(text) and text[i] != ord('"'):
        if text[i] != ord("\\"):
            out.append(text[i])
            i += 1
        elif (digits := len(text[i + 1 : i + 4]) - len(text[i + 1 : i + 4].lstrip(b"01234567"))) > 0:
            out.append(int(text[i + 1 : i + 1 + digits], 8) & 0xFF)
            i += 1 + digits
        else:
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]) if i + 1 < len(text) else ord("\\"))
            i += 2
    if i >= len(text):
        msg = f"unterminated quoted file name in the patch: {text[:200]!r}"
        raise SandboxError(msg)
    return bytes(out), text[i + 1 :]


def _field(text: bytes) -> bytes:
    """The name in a `---`, `+++`, rename or copy line (git ends a name holding a space with a tab)."""
    return _unquote(text)[0] if text.startswith(b'"') else text.removesuffix(b"\t")


def _strip_prefix(name: bytes) -> bytes | None:
    """`a/x` → `x` (as `git apply -p1`); /dev/null → None."""
    return None if name == b"/dev/null" else name.partition(b"/")[2]


def _header_names(rest: bytes) -> list[bytes]:
    """The two names of `diff --git A B`; unquoted names with spaces are split only when both agree."""
    if rest.startswith(b'"'):
        first, after = _unquote(rest)
        after = after.removeprefix(b" ")
        return [first, _field(after)]
    quoted = rest.find(b' "')
    if quoted != -1 and rest.endswith(b'"'):
        return [rest[:quoted], _unquote(rest[quoted + 1 :])[0]]
    half = (len(rest) - 1) // 2
    first, second = rest[:half], rest[half + 1 :]
    same = rest[half : half + 1] == b" " and _strip_prefix(first) == _strip_prefix(second)
    return [first, second] if same else []  # a rename with spaces: its rename lines name both


def _header_paths(patch: bytes) -> tuple[set[bytes], int]:
    """Every name the patch's file headers give, and how many files it has."""
    names: set[bytes] = set()
    files, in_header = 0, False
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            files, in_header = files + 1, True
            names.update(n for n in map(_strip_prefix, _header_names(line[len(b"diff --git ") :])) if n)
        elif not in_header:
            continue  # hunk lines: a removed "-- x" line reads "--- x"
        elif line.startswith((b"@@", b"GIT binary patch", b"Binary files ")):
            in_header = False
        elif line.startswith((b"--- ", b"+++ ")):
            name = _strip_prefix(_field(line[4:]))
            if name:
                names.add(name)
        else:
            for key in (b"rename from ", b"rename to ", b"copy from ", b"copy to "):
                if line.startswith(key):
                    names.add(_field(line[len(key) :]))
    return names, files


def _numstat(patch: bytes) -> list[tuple[int, int, bytes]]:
    """git's own reading: (added, removed, path) per file, binary files as 0, 0. Touches no tree."""
    with tempfile.TemporaryDirectory(prefix="passhat-numstat-") as empty:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": empty,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CEILING_DIRECTORIES": os.path.dirname(empty),  # no repository around: plain patch reading
            "LC_ALL": "C",
        }
        argv = ["git", "-c", "core.hooksPath=/dev/null", "apply", "--numstat", "-z", "-"]
        try:
            proc = subprocess.run(argv, cwd=empty, env=env, input=patch, capture_output=True, timeout=GIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            msg = f"git apply --numstat took longer than {GIT_TIMEOUT_S} s to read the patch"
            raise SandboxError(msg) from None
    if proc.returncode != 0:
        msg = f"git cannot read the patch: {proc.stderr.decode(errors='replace').strip()}"
        raise SandboxError(msg)
    fields = proc.stdout.split(b"\0")
    stats, i = [], 0
    while i < len(fields) - 1:
        added, removed, path = fields[i].split(b"\t", 2)
        if path:
            i += 1
        else:  # a rename or copy: "+\t-\t\0old\0new\0" (git apply prints the new name alone; kept for safety)
            path, i = fields[i + 2], i + 3
        stats.append((int(added) if added.isdigit() else 0, int(removed) if removed.isdigit() else 0, path))
    return stats


@functools.lru_cache(maxsize=8)
def patch_stats(patch: bytes) -> PatchStats:
    """Paths (old and new names) and +/- lines; binary files count 0 lines. SandboxError if unreadable.
    Remembered per process: the graders of one assertion (tests, diff-scope, integrity) ask for the same patch."""
    if not patch.strip():
        return PatchStats((), 0, 0)
    stats = _numstat(patch)
    names, files = _header_paths(patch)
    unseen = sorted({path for _, _, path in stats} - names)
    if unseen or files != len(stats):
        msg = (
            f"the patch's headers name {len(names)} path(s) in {files} file(s) but git reads {len(stats)} "
            f"file(s){', including ' + ', '.join(map(repr, unseen)) if unseen else ''}; "
            "refusing to grade a patch whose paths are not all seen"
        )
        raise SandboxError(msg)
    paths = {name.decode("utf-8", "replace") for name in names}
    return PatchStats(tuple(sorted(paths)), sum(s[0] for s in stats), sum(s[1] for s in stats))
