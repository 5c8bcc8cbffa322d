"""A PEP 578 audit hook: which capabilities over the runner the work tree's code used, and from where.

Installed by passhat's plugin at its import, before any conftest or test module is imported (an audit hook cannot
be removed). It records the events that give code a handle on the runner or on the tests — frame access
(`sys._getframe`, `sys._current_frames`, a frame's `f_code`, a traceback's `tb_frame`, a generator's or
coroutine's frame, the `__code__` of a function of the tree), object-graph walks (`gc.get_referrers` / `get_referents` /
`get_objects`), `ctypes`, code made at run time (`compile`, `marshal.loads`, `code.__new__`, `function.__new__`:
a hook function could claim a file outside the tree), tracing
(`sys.settrace` / `setprofile`), another audit hook, imports of pytest's or pluggy's modules, and the opening of a
test file's source (`open:<file>`: the answer read from the tests; found by the real path, the caller being the
first frame of the tree's own code on the stack, so pathlib, linecache or a library anywhere in between hide
nothing, and a runner that opens the tests with no tree code asking — pytest's rewriter, wherever it is installed —
is not counted; nor is a test file reading the tests) — each once per
(event, file, function), when the code that asked is not the interpreter's or its environment's (sys.prefix,
sys.base_prefix) nor passhat's: the work tree's, or code it wrote elsewhere or built from a string. The caller is the first frame outside the stdlib's inspect and traceback: a frame read through
`inspect.currentframe()` is the tree's, a logger's `sys._getframe` is logging's; what the import machinery does to
load a module (compile its source, unmarshal its bytecode) is not the importer's. passhat decides after the
run which records are test files, which the base's own run had, and which a task allows.

Standard library only; bound at import so later patches of sys or threading change nothing here.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any

WATCHED = frozenset(
    {
        "sys._getframe",
        "sys._current_frames",
        "sys._current_exceptions",
        "gc.get_referrers",
        "gc.get_referents",
        "gc.get_objects",
        "marshal.loads",
        "marshal.load",
        "code.__new__",
        "function.__new__",
        "compile",
        "sys.settrace",
        "sys.setprofile",
        "sys.addaudithook",
        "object.__getattr__",
        "import",
        "open",
    }
)
_HANDLES = frozenset({"f_code", "tb_frame", "gi_frame", "cr_frame", "ag_frame", "__code__"})
_RUNNER = ("_pytest", "pytest", "pluggy", "passhat_")
_FORWARDERS = (f"{os.sep}inspect.py", f"{os.sep}traceback.py")
_SOURCES = (".py",)  # a test file's source: what a file-reading hack parses (data files are the code's to read)
LIMIT = 200  # distinct records kept


def install(tree: str, tests: Iterable[str] = ()) -> Callable[[], list[list[Any]]]:
    """Add the hook for `tree`; returns what reads its records ([event, file relative to tree, line, function]).
    `tests`: regular expressions of the test files' paths relative to the tree (passhat's protected globs)."""
    getframe, ident, sep = sys._getframe, __import__("_thread").get_ident, os.sep
    realpath, getcwd, fspath, fsdecode = os.path.realpath, os.getcwd, os.fspath, os.fsdecode
    root = tree.rstrip(sep) + sep
    test_file = re.compile("|".join(f"(?:{pattern})" for pattern in tests), re.DOTALL).match if tests else None
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(__file__)}
    trusted = tuple({q.rstrip(sep) + sep for p in prefixes if p for q in (p, os.path.realpath(p))})
    records: list[list[Any]] = []
    seen: set[tuple[str, str, str]] = set()
    busy: set[int] = set()
    stdlib = os.path.dirname(os.__file__) + sep

    def forwards(name: str) -> bool:
        return name.startswith(stdlib) and name.endswith(_FORWARDERS)

    def imports(name: str) -> bool:
        return name.startswith(("<frozen importlib", f"{stdlib}importlib{sep}"))

    def tree_code(function: Any) -> bool:
        """`function`'s code lies in the tree (or cannot be read here: judged as the tree's). Its own `__code__`
        read is one more event, let go as the hook's."""
        try:
            file = function.__code__.co_filename
        except Exception:  # any: an object whose __code__ misbehaves is looked at, not trusted
            return True
        return not isinstance(file, str) or file.startswith(root)

    def opened(path: Any) -> str | None:
        """The test file `path` (as open's audit event gives it) is, relative to the tree; else None. Paths of the
        interpreter and its environment (every import outside the tree) are let go before any system call."""
        try:
            if type(path) is not str:
                if isinstance(path, int) or path is None:
                    return None
                path = fsdecode(fspath(path))
            if not path.startswith(root) and path.startswith(trusted):
                return None
            full = realpath(path if path.startswith(sep) else getcwd() + sep + path)
        except (OSError, ValueError, TypeError):  # open itself says what is wrong with such a path
            return None
        if not full.startswith(root) or not full.endswith(_SOURCES):
            return None
        rel = full[len(root) :]
        return rel if test_file is not None and test_file(rel) else None

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in WATCHED and not event.startswith("ctypes."):
            return
        if busy and ident() in busy:
            return  # the events of the hook's own frame reads (most of its calls): first out
        if event == "open":
            if test_file is None or not args or (rel := opened(args[0])) is None:
                return
            event, args = "open", ("", rel)
        if event == "object.__getattr__" and (len(args) < 2 or args[1] not in _HANDLES):
            return
        if event == "import" and not (args and str(args[0]).startswith(_RUNNER)):
            return
        me = ident()
        if len(records) >= LIMIT:
            return
        busy.add(me)
        try:
            if event == "object.__getattr__" and args[1] == "__code__" and not tree_code(args[0]):
                return  # the code of a function outside the tree (pytest's own, mostly: most of the events)
            # each read of a frame's f_code is an audited event of its own (let go as the hook's, but a call of
            # this hook): read once per frame walked
            frame: Any = getframe(1)
            code = frame.f_code
            while forwards(code.co_filename):
                if (frame := frame.f_back) is None:
                    return
                code = frame.f_code
            if event == "open":  # whoever asked, through any library: the first frame of the tree's own code
                while not code.co_filename.startswith(root):  # a runner or library anywhere else is not the tree
                    if (frame := frame.f_back) is None:
                        return  # no tree code asked
                    code = frame.f_code
                if test_file is not None and test_file(code.co_filename[len(root) :]):
                    return  # a test file asked (the tests may read the tests)
            if imports(code.co_filename):
                if event != "import":
                    return  # the import machinery's own compile / marshal.loads: loading a module, not the tree's
                while imports(code.co_filename):
                    if (frame := frame.f_back) is None:
                        return
                    code = frame.f_code
            name = code.co_filename
            if not name.startswith(root) and (name.startswith(trusted) or name.startswith("<frozen ")):
                return
            what = f"{event}:{args[1]}" if event in ("object.__getattr__", "open") else event
            key = (what, name, code.co_name)
            if key not in seen:
                seen.add(key)
                where = name[len(root) :] if name.startswith(root) else name
                records.append([what, where, frame.f_lineno, code.co_name])
        finally:
            busy.discard(me)

    sys.addaudithook(hook)
    return lambda: list(records)
