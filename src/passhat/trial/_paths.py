"""Paths inside a tree the agent wrote, handled without ever following one of its symlinks.

The agent controls every entry of its work tree, symlinks included: after `ln -s ~ tests`, a host-side
write of tests/x lands in your HOME, and a read of `notes.txt -> /…/solution.patch` reads the reference
fix. These helpers walk a relative path one component at a time with `dir_fd` opens and O_NOFOLLOW, so
the kernel never follows a link on our behalf:

* write_within / symlink_within / remove_within change the tree. A symlink or a non-folder where a folder
  should be is replaced by a real folder; the last component is replaced, never written through.
* read_within / lstat_within look at it. A symlink is resolved by us, inside the root (`a -> ../b` is b);
  one that leaves the root (absolute, or `..` past it) or loops raises UnsafePathError naming the link
  and its target. Only regular files are read (a FIFO would block), up to a size limit.
* tree_entries lists it without descending into symlinks.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Kind = Literal["file", "dir", "symlink", "other", "missing"]
MAX_LINKS = 40  # as the kernel's own limit on symlinks in one lookup
READ_LIMIT = 64 * 1024 * 1024
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NOT_A_DIR = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)


class UnsafePathError(Exception):
    """A path the harness will not follow or read; the message says what is there."""


@dataclass(frozen=True)
class Entry:
    """What is at a path, its last component not followed: a symlink carries its target."""

    kind: Kind
    target: str | None = None


def _split(rel: str) -> list[str]:
    parts = [part for part in rel.split("/") if part not in ("", ".")]
    if rel.startswith("/") or ".." in parts or not parts:
        msg = f"{rel!r} is not a relative path inside the tree (no leading /, no ..)"
        raise UnsafePathError(msg)
    return parts


def _kind(mode: int) -> Kind:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    return "symlink" if stat.S_ISLNK(mode) else "other"


def _lstat(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _clear(dir_fd: int, name: str) -> bool:
    """Remove whatever is at `name` (a folder with its contents; a symlink itself, never its target)."""
    found = _lstat(name, dir_fd)
    if found is None:
        return False
    if stat.S_ISDIR(found.st_mode):
        shutil.rmtree(name, dir_fd=dir_fd)  # fd-based: does not follow symlinks inside
    else:
        os.unlink(name, dir_fd=dir_fd)
    return True


@contextmanager
def _parent(root: Path, parts: list[str], create: bool) -> Iterator[int | None]:
    """An fd of the folder holding parts[-1], reached without following links (None: no such folder).

    With create, a missing, symlinked or non-folder component is replaced by a real, empty folder.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the root is ours, not the agent's
    try:
        for name in parts[:-1]:
            try:
                child = os.open(name, _DIR, dir_fd=fd)
            except OSError as error:
                if error.errno not in _NOT_A_DIR:
                    raise
                if not create:
                    yield None
                    return
                _clear(fd, name)
                os.mkdir(name, 0o755, dir_fd=fd)
                child = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def write_within(root: Path, rel: str, data: bytes, mode: int = 0o644) -> None:
    """Make root/rel a new regular file holding `data`, whatever the agent put on the way."""
    parts = _split(rel)
    with _parent(root, parts, create=True) as fd:
        assert fd is not None  # create=True always yields a folder
        _clear(fd, parts[-1])
        out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
        try:
            os.fchmod(out, mode & 0o777)
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
        finally:
            os.close(out)


def symlink_within(root: Path, rel: str, target: str) -> None:
    """Make root/rel a new symlink to `target` (replacing whatever was there, never writing through it)."""
    parts = _split(rel)
    with _parent(root, parts, create=True) as fd:
        assert fd is not None
        _clear(fd, parts[-1])
        os.symlink(target, parts[-1], dir_fd=fd)


def remove_within(root: Path, rel: str) -> bool:
    """Remove root/rel itself (a symlink, not its target); False when nothing is there inside the tree."""
    parts = _split(rel)
    with _parent(root, parts, create=False) as fd:
        return fd is not None and _clear(fd, parts[-1])


def _escape(rel: str, link: str, target: str, why: str) -> UnsafePathError:
    where = f"{rel} is a symlink" if link == rel else f"{rel} leads to {link}, a symlink"
    return UnsafePathError(f"{where} to {target} {why} (not followed)")


@contextmanager
def _resolved(root: Path, rel: str, follow_last: bool) -> Iterator[tuple[int, str, os.stat_result | None]]:
    """(fd of the folder holding it, its name there, its lstat or None) once in-tree symlinks are resolved.

    Every step is an lstat or an O_NOFOLLOW open relative to the folder reached so far, so no link is
    followed by the kernel; we follow in-tree links ourselves and refuse the rest.
    """
    asked = "/".join(_split(rel))
    pending, hops = asked.split("/"), 0
    done: list[str] = []
    via = (asked, "")  # the last link taken, for the message
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]  # fds[i]: the folder done[:i]
    try:
        while pending:
            name = pending.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if not done:
                    raise _escape(asked, *via, "outside the tree")
                done.pop()
                os.close(fds.pop())
                continue
            found = _lstat(name, fds[-1])
            if found is not None and stat.S_ISLNK(found.st_mode) and (pending or follow_last):
                via = ("/".join([*done, name]), os.readlink(name, dir_fd=fds[-1]))
                hops += 1
                if hops > MAX_LINKS:
                    raise _escape(asked, *via, f"after {MAX_LINKS} links (a loop?)")
                if via[1].startswith("/"):
                    raise _escape(asked, *via, "outside the tree")
                pending = [*via[1].split("/"), *pending]
                continue
            if not pending:
                yield fds[-1], name, found
                return
            if found is None or not stat.S_ISDIR(found.st_mode):
                yield fds[-1], name, None  # nothing can be below a missing entry or a file
                return
            fds.append(os.open(name, _DIR, dir_fd=fds[-1]))
            done.append(name)
        # the path ended on a folder reached through `.` or `..` (e.g. a link to `..`)
        if done:
            yield fds[-2], done[-1], _lstat(done[-1], fds[-2])
        else:
            yield fds[0], ".", _lstat(".", fds[0])
    finally:
        for fd in fds:
            os.close(fd)


def lstat_within(root: Path, rel: str) -> Entry:
    """What root/rel is, its last component not followed (in-tree links on the way are resolved)."""
    with _resolved(root, rel, follow_last=False) as (fd, name, found):
        if found is None:
            return Entry("missing")
        kind = _kind(found.st_mode)
        return Entry(kind, os.readlink(name, dir_fd=fd) if kind == "symlink" else None)


def read_within(root: Path, rel: str, limit: int = READ_LIMIT) -> bytes | None:
    """The bytes of the regular file root/rel names; None when no file is there (missing, or a folder)."""
    with _resolved(root, rel, follow_last=True) as (fd, name, found):
        if found is None or stat.S_ISDIR(found.st_mode):
            return None
        if not stat.S_ISREG(found.st_mode):
            msg = f"{rel} is not a regular file (mode {stat.filemode(found.st_mode)}); not read"
            raise UnsafePathError(msg)
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        with os.fdopen(handle, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                msg = f"{rel} is not a regular file; not read"
                raise UnsafePathError(msg)
            data = file.read(limit + 1)
    if len(data) > limit:
        msg = f"{rel} is larger than {limit} bytes; not read"
        raise UnsafePathError(msg)
    return data


def tree_entries(root: Path, skip: str = ".git") -> dict[str, Kind]:
    """Every non-folder entry under root (symlinks to folders included, never entered), by relative path;
    nothing inside a folder named `skip`."""
    entries: dict[str, Kind] = {}
    for folder, dirs, files in os.walk(root):  # os.walk does not descend into symlinks
        here = Path(folder).relative_to(root)
        dirs[:] = [d for d in dirs if d != skip]
        for name in [*dirs, *files]:
            mode = os.lstat(os.path.join(folder, name)).st_mode
            if not stat.S_ISDIR(mode):
                entries[(here / name).as_posix()] = _kind(mode)
    return entries
