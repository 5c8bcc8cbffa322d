"""A read-only tree: a folder's files and listings, read without following any link out of it, and no path of
the folder handed out — a grader cannot `open(tree.root / name)`: there is no root to join.

Every read goes through trial._paths (one component at a time, O_NOFOLLOW): a link inside the tree is
resolved inside it; a link that leaves it (absolute, `..` past the root, a loop), a FIFO or a device raises
UnsafePathError naming the link and its target. `is_link`, `readlink` and `entry` look at a link itself.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import stat
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from passhat.trial._paths import Entry, UnsafePathError, lstat_within, read_within, tree_entries

# Where each tree is, kept out of the object: nothing reachable from a Tree's attributes is a path of it.
_WHERE: weakref.WeakKeyDictionary[Tree, Callable[[], Path]] = weakref.WeakKeyDictionary()


T = TypeVar("T", bound="Tree")


def make_tree(where: Callable[[], Path], kind: type[T]) -> T:
    """A `kind` (Tree or a subclass) of the folder `where()` gives (called once, on the first read: a tree is
    built only when read)."""
    tree = object.__new__(kind)
    _WHERE[tree] = functools.cache(where)
    return tree


def root_of(tree: Tree) -> Path:
    """The folder of `tree`: for passhat's own graders (the tests runner, the scan), never a team grader's."""
    return _WHERE[tree]()


def _parts(path: str) -> list[str]:
    parts = [part for part in str(path).split("/") if part not in ("", ".")]
    if str(path).startswith("/") or ".." in parts:
        msg = f"{path!r} is not a relative path inside the tree (no leading /, no ..)"
        raise UnsafePathError(msg)
    return parts


class Tree:
    """A folder's files, read-only. Paths are relative, `/`-separated (`src/app.py`); `.` is the top."""

    __slots__ = ("__weakref__",)

    def __init__(self) -> None:
        msg = "a Tree is made by passhat (graders get one as `view` or `view.base`), not by a grader"
        raise TypeError(msg)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: read-only, links out of it are not followed>"

    def read(self, path: str) -> bytes | None:
        """The file's bytes; None when nothing is there (or a folder is). A link inside the tree is followed
        inside it; a link out of it raises UnsafePathError ("x is a symlink to /… outside the tree")."""
        return read_within(root_of(self), path)

    def text(self, path: str, encoding: str = "utf-8") -> str | None:
        """read(), decoded (undecodable bytes replaced)."""
        data = self.read(path)
        return None if data is None else data.decode(encoding, errors="replace")

    def entry(self, path: str) -> Entry:
        """What is at `path` itself: Entry(kind: file|dir|symlink|other|missing, target: a link's target)."""
        return lstat_within(root_of(self), path)

    def exists(self, path: str) -> bool:
        """Something is there (a link counts, wherever it points)."""
        return self.entry(path).kind != "missing"

    def is_file(self, path: str) -> bool:
        return self.entry(path).kind == "file"

    def is_dir(self, path: str) -> bool:
        return self.entry(path).kind == "dir"

    def is_link(self, path: str) -> bool:
        return self.entry(path).kind == "symlink"

    def readlink(self, path: str) -> str | None:
        """A link's target as written (None: not a link); never followed."""
        return self.entry(path).target

    def listdir(self, path: str = ".") -> list[str]:
        """The names in a folder, sorted; a link on the way is not entered (UnsafePathError), a missing folder
        raises FileNotFoundError."""
        fd = os.open(root_of(self), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for name in _parts(path):
                found = os.stat(name, dir_fd=fd, follow_symlinks=False)  # FileNotFoundError: said as such
                if stat.S_ISLNK(found.st_mode):
                    msg = f"{path}: {name} is a symlink; a listing does not follow links (use readlink)"
                    raise UnsafePathError(msg)
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = child
            return sorted(os.listdir(fd))
        finally:
            os.close(fd)

    def files(self, pattern: str | None = None) -> list[str]:
        """Every entry but folders (links included, never entered), relative and sorted, `.git` left out;
        with `pattern`, those it matches (fnmatch: `*.py`, `src/*.ts`; `*` also crosses `/`)."""
        found = sorted(tree_entries(root_of(self)))
        return [p for p in found if pattern is None or fnmatch.fnmatchcase(p, pattern)]
