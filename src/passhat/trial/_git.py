"""git, run the same way everywhere: no user or system config, fixed identity, bytes out, bounded.

The trees passhat runs git in after a trial are the agent's: the work tree belongs to the trial's uid
(`safe.directory`), and nothing in them may make git run code (hooks, fsmonitor) or run forever.
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

_CONFIG = {"safe.directory": "*", "core.hooksPath": os.devnull, "core.fsmonitor": "false"}
_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "passhat",
    "GIT_AUTHOR_EMAIL": "passhat@localhost",
    "GIT_COMMITTER_NAME": "passhat",
    "GIT_COMMITTER_EMAIL": "passhat@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_CONFIG_COUNT": str(len(_CONFIG)),
    **{f"GIT_CONFIG_KEY_{i}": key for i, key in enumerate(_CONFIG)},
    **{f"GIT_CONFIG_VALUE_{i}": value for i, value in enumerate(_CONFIG.values())},
}
DEFAULT_TIMEOUT_S = 600.0


class GitError(Exception):
    pass


class GitOutputTooLargeError(GitError):
    pass


def git(
    cwd: Path,
    *args: str,
    input: bytes | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_output: int | None = None,
    env: Mapping[str, str] | None = None,
    ok_codes: tuple[int, ...] = (0,),
) -> bytes:
    """stdout of `git ARGS` in cwd; GitError if it fails (an exit code not in ok_codes), runs past timeout_s, or
    prints more than max_output. `env` adds variables (GIT_DIR, GIT_INDEX_FILE, ...) to passhat's fixed ones."""
    env = {**os.environ, **_ENV, **(env or {})}
    proc = subprocess.Popen(
        ["git", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    timer = threading.Timer(timeout_s, proc.kill)
    timer.start()
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(proc.stderr.read() if proc.stderr else b""), daemon=True)
    reader.start()
    try:
        if input is not None and proc.stdin is not None:
            threading.Thread(target=_feed, args=(proc.stdin, input), daemon=True).start()
        chunks: list[bytes] = []
        size = 0
        stdout = proc.stdout
        while stdout is not None and (chunk := stdout.read(1 << 16)):
            size += len(chunk)
            if max_output is not None and size > max_output:
                proc.kill()
                proc.wait()
                msg = f"git {' '.join(args)} in {cwd}: output over {max_output} bytes"
                raise GitOutputTooLargeError(msg)
            chunks.append(chunk)
        code = proc.wait()
    finally:
        timer.cancel()
        reader.join(timeout=5)
        for stream in (proc.stdout, proc.stderr, proc.stdin):
            if stream is not None:
                stream.close()
    if code not in ok_codes:
        why = b"".join(errors).decode(errors="replace").strip() or f"exit {code}"
        if code == -9:
            why = f"killed after {timeout_s:g} s"
        msg = f"git {' '.join(args)} in {cwd} failed: {why}"
        raise GitError(msg)
    return b"".join(chunks)


def _feed(stdin: IO[bytes], data: bytes) -> None:
    try:
        stdin.write(data)
        stdin.close()
    except OSError:
        pass


def _alternate(path: Path) -> str:
    text = str(path)
    if any(char in text for char in ':"\\\n'):  # git reads the list C-quoted then
        text = '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


def isolated_git_env(git_dir: Path, workdir: Path, scratch: Path) -> dict[str, str]:
    """git's view for collecting a patch: the base's .git (`git_dir`), read only (never the agent's .git,
    whose config, hooks or fsmonitor could run code on the host), the agent's files as work tree, and an
    index and an object folder of the collection's own in `scratch`."""
    (scratch / "objects").mkdir(exist_ok=True)
    return {
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(workdir),
        "GIT_INDEX_FILE": str(scratch / "index"),
        "GIT_OBJECT_DIRECTORY": str(scratch / "objects"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": _alternate(git_dir / "objects"),
        "GIT_LITERAL_PATHSPECS": "1",
    }


def streaming(max_bytes: int) -> tuple[str, str]:
    """git's options to stream a file larger than max_bytes (`add` hashes it in chunks, core.bigFileThreshold)
    instead of holding it whole in memory; `staged_sizes` then finds it before any diff loads it."""
    return ("-c", f"core.bigFileThreshold={max_bytes}")


def not_ignored(workdir: Path, paths: list[bytes], env: dict[str, str]) -> list[bytes]:
    """The paths git would add: those no ignore rule of the tree matches (tracked or not: `--no-index`)."""
    plain = {k: v for k, v in env.items() if k != "GIT_LITERAL_PATHSPECS"}  # check-ignore takes only :(top)
    asked = b"".join(b":(top)" + path + b"\0" for path in paths)
    found = git(workdir, "check-ignore", "--no-index", "-z", "--stdin", input=asked, env=plain, ok_codes=(0, 1))
    ignored = set(found.split(b"\0"))
    return [path for path in paths if b":(top)" + path not in ignored]


def staged_sizes(workdir: Path, commit: str, paths: tuple[str, ...], env: dict[str, str]) -> list[tuple[bytes, int]]:
    """(path, size of its staged blob) for each path the index changes against `commit`; 0 for a deletion or
    a nested repository (a gitlink). Reads object headers only, never a file or a blob."""
    raw = git(workdir, "diff", "--cached", "--no-renames", "--raw", "-z", "--no-abbrev", commit, *paths, env=env)
    fields = raw.split(b"\0")
    entries = []
    for header, path in zip(fields[0::2], fields[1::2], strict=False):
        if header.startswith(b":"):
            _, mode, _, blob, _ = header[1:].split(b" ")
            entries.append((path, None if mode in (b"000000", b"160000") else blob))
    asked = b"".join(blob + b"\n" for _, blob in entries if blob)
    sizes = iter(git(workdir, "cat-file", "--batch-check=%(objectsize)", input=asked, env=env).split() if asked else [])
    return [(path, int(next(sizes)) if blob else 0) for path, blob in entries]


# --- what an overlay's upper dir says changed -------------------------------------------------------

_MAX_PATHSPECS = 4000  # more changed paths than this: git walks the whole tree (same patch, no huge argv)
_MAX_PATHSPEC_BYTES = 512 * 1024
_RULES = (b".gitignore", b".gitattributes")  # changing one changes how git sees files the agent never touched


@dataclass(frozen=True)
class Changes:
    present: list[bytes]  # files, links and whole folders (new, replaced, moved) written in the work tree
    deleted: list[bytes]  # whiteouts: what was removed


def _xattr(path: bytes, name: str) -> bytes | None:
    try:
        return os.getxattr(path, name, follow_symlinks=False)
    except OSError:
        return None


def _whole(upper: bytes, lower: bytes) -> bool:
    """An upper dir git must read whole: replaced (opaque), moved here (redirect), or new (not in the base)."""
    if _xattr(upper, "trusted.overlay.opaque") == b"y" or _xattr(upper, "trusted.overlay.redirect") is not None:
        return True
    try:
        return not stat.S_ISDIR(os.lstat(lower).st_mode)
    except OSError:
        return True


def upper_changes(upper: Path, lower: Path) -> Changes | None:
    """The work tree's changed paths, read from the overlay's upper dir; None when git must walk the whole
    tree instead (an ignore or attributes file changed, which changes how git sees untouched files; or too
    many paths for one command line)."""
    top, base = os.fsencode(upper), os.fsencode(lower)
    present: list[bytes] = []
    deleted: list[bytes] = []
    size = 0
    stack = [b""]
    while stack:
        rel = stack.pop()
        with os.scandir(os.path.join(top, rel) if rel else top) as found:
            entries = list(found)
        for entry in entries:
            path = os.path.join(rel, entry.name) if rel else entry.name
            if entry.name == b".git":  # the tree's own .git is never part of a patch; a nested one: its folder
                if rel:
                    present.append(rel)
                continue
            info = entry.stat(follow_symlinks=False)
            whiteout = stat.S_ISCHR(info.st_mode) and info.st_rdev == 0
            if entry.name in _RULES:
                return None
            if stat.S_ISDIR(info.st_mode) and not _whole(entry.path, os.path.join(base, path)):
                stack.append(path)
                continue
            (deleted if whiteout else present).append(path)
            size += len(path) + 1
            if len(present) + len(deleted) > _MAX_PATHSPECS or size > _MAX_PATHSPEC_BYTES:
                return None
    return Changes(present, deleted)


def stage_changes(workdir: Path, commit: str, changes: Changes, env: dict[str, str], max_bytes: int) -> None:
    """Index = the base commit's entries at the changed paths, then the work tree's state there (a file over
    max_bytes streamed, never held whole)."""
    listed = b"".join(path + b"\0" for path in [*changes.present, *changes.deleted])
    spec = ("--pathspec-from-file=-", "--pathspec-file-nul")
    git(workdir, "reset", "-q", "--no-refresh", commit, *spec, input=listed, env=env)
    if changes.deleted:
        deleted = b"".join(path + b"\0" for path in changes.deleted)
        git(workdir, "rm", "--cached", "-r", "-f", "-q", "--ignore-unmatch", *spec, input=deleted, env=env)
    if changes.present:  # an ignored path named to `git add` is an error: leave those out, as a full walk does
        plain = {k: v for k, v in env.items() if k != "GIT_LITERAL_PATHSPECS"}  # check-ignore takes only :(top)
        asked = b"".join(b":(top)" + path + b"\0" for path in changes.present)
        ignored = set(
            git(workdir, "check-ignore", "-z", "--stdin", input=asked, env=plain, ok_codes=(0, 1)).split(b"\0")
        )
        kept = b"".join(path + b"\0" for path in changes.present if b":(top)" + path not in ignored)
        if kept:
            git(workdir, *streaming(max_bytes), "add", "-A", *spec, input=kept, env=env)
