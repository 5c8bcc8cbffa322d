"""What was registered or replaced after passhat's plugin, read after the run: pytest hook implementations whose code
lies in the work tree outside conftest files and plugins the command names (`-p`, PYTEST_PLUGINS), any hook
implementation registered while the tests ran (whatever its file), and items whose run method (`runtest`, `ihook`)
was replaced on the item itself or whose test function (`obj`) is code of the tree outside the test files — read
when each test's body is called (what ran) and after the run (what was left), so a thread that swaps them early or
late is seen either way. Pluggy calls a wrapper registered later inside passhat's own, where it could
swallow a test's failure before passhat sees it: such a wrapper is found here, whatever its hook's name was built
from. Standard library and pytest only (runs in the test process).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

_getattr, _realpath = getattr, os.path.realpath
_PER_ITEM = ("runtest", "ihook")


def test_files(patterns: Iterable[str]) -> Callable[[str], object]:
    """Whether a path relative to the tree is a test file (passhat's protected globs as regular expressions)."""
    joined = "|".join(f"(?:{pattern})" for pattern in patterns)
    return re.compile(joined, re.DOTALL).match if joined else lambda rel: False


def swapped(item: Any, tree: str, is_test: Callable[[str], object]) -> list[str]:
    """What of `item`'s run is not pytest's or the tests': `runtest` / `ihook` set on the item, or an `obj` (the
    test function pytest calls) whose code lies in the tree outside the test files and the item's own file."""
    found = [name for name in _PER_ITEM if name in _getattr(item, "__dict__", {})]
    obj = _getattr(item, "__dict__", {}).get("_obj")
    code = _getattr(_getattr(obj, "__func__", obj), "__code__", None)
    if code is not None:
        root = _real(tree) + os.sep
        file = _real(code.co_filename)
        own = _real(str(_getattr(item, "path", "")))  # a test function of the file it was collected from
        if file.startswith(root) and file != own and not is_test(file[len(root) :]):
            found.append("obj")
    return found


_REAL: dict[str, str] = {}


def _real(path: str) -> str:
    """os.path.realpath, once per path (called for every test: a few system calls each)."""
    if path not in _REAL:
        _REAL[path] = _realpath(path)
    return _REAL[path]


def _impls(config: Any) -> list[tuple[str, Any]]:
    found = []
    for name, caller in vars(config.pluginmanager.hook).items():
        if name.startswith("pytest_") and hasattr(caller, "get_hookimpls"):
            found += [(name, impl) for impl in caller.get_hookimpls()]
    return found


def snapshot(config: Any) -> set[int]:
    """The hook implementations registered now (by identity)."""
    return {id(impl) for _, impl in _impls(config)}


def _named(config: Any) -> set[str]:
    """Plugins the command itself names (`-p NAME`, PYTEST_PLUGINS), which may live in the tree."""
    names = {str(p).strip() for p in _getattr(config.known_args_namespace, "plugins", None) or ()}
    names |= {p.strip() for p in os.environ.get("PYTEST_PLUGINS", "").split(",") if p.strip()}
    return names


def _name(config: Any, impl: Any) -> str:
    """The name the plugin of `impl` was registered under (pluggy looks it up through every plugin: asked only for
    a hook of the tree, the rare case)."""
    return str(config.pluginmanager.get_name(impl.plugin) or "")


def late(
    config: Any,
    tree: str,
    before_run: set[int],
    items: list[Any],
    exempt: set[str],
    is_test: Callable[[str], object] = lambda rel: False,
) -> list[list[Any]]:
    """[what, file relative to the tree (or the absolute path), line, name] per late registration found."""
    root = _realpath(tree) + os.sep
    named = _named(config)
    found: list[list[Any]] = []
    real: dict[str, str] = {}  # the hook implementations share a few dozen files: each resolved once, here
    for hook, impl in _impls(config):
        function = impl.function
        code = _getattr(function, "__code__", None)
        if code is None:
            file = "?"
        else:  # realpath only for a file not seen yet
            file = real.get(code.co_filename) or real.setdefault(code.co_filename, _realpath(code.co_filename))
        line = code.co_firstlineno if code is not None else 0
        where = file[len(root) :] if file.startswith(root) else file
        if id(impl) not in before_run:
            found.append(["hook-registered-during-the-run", where, line, hook])
        elif file.startswith(root) and os.path.basename(file) != "conftest.py" and _name(config, impl) not in named:
            found.append(["hook-from-the-tree", where, line, hook])
    for item in items:
        replaced = swapped(item, tree, is_test)
        if replaced and item.nodeid not in exempt:
            found.append(["item-method-replaced", item.nodeid, 0, ", ".join(replaced)])
    return found[:20]
