"""Perturbed-expectation twins: a FAIL_TO_PASS test run once more with one expectation made wrong must fail.

A twin is the same item (node id, name, file, line numbers, fixtures) whose expected value is a fresh wrong value of
the same type, drawn per run: a literal side of a top-level `assert A == B` rewritten in the test's source (the
function recompiled from it, its module's and class's attribute pointing at it, the file on disk and linecache
showing it while the twin runs), or a parametrized argument used only as such a side (the callspec's value swapped).
Whatever makes an assertion hold regardless of the value — an always-true `__eq__`, the expected value read from the
caller's frame or source — makes the twin pass too; honest code makes it fail. The twin runs before or after the
original at random, so code that behaves on "the second run" fails the original half the time.

Only asserts at the top level of a test function without return/yield (so an assert is reached whenever the test
passes) are perturbed; a test with none is not twinned. Standard library and pytest only (runs in the test process).
"""

from __future__ import annotations

import ast
import linecache
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from _pytest.assertion.rewrite import rewrite_asserts
from _pytest.python import Function
from _pytest.runner import runtestprotocol
from passhat_guard_perturb import (  # type: ignore[import-not-found]
    NONE,
    body_returns,
    draw,
    expectations,
    find,
    fresh,
    replace,
)

_getattr = getattr  # bound before any test module is imported


@dataclass
class Twin:
    """One planned twin of an item: what is swapped while it runs (and swapped back after)."""

    where: str  # FILE:LINE of the perturbed assert
    function: Callable[..., Any] | None = None  # the recompiled test function (a literal twin)
    source: bytes | None = None  # the twin's source of the test file (a literal twin)
    param: tuple[str, object] | None = None  # (name, wrong value) of a parametrized argument
    saved: dict[str, Any] = field(default_factory=dict)


class Planner:
    """Twins of one session: test files read and parsed once each."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[bytes, ast.Module] | None] = {}

    def _parsed(self, path: str) -> tuple[bytes, ast.Module] | None:
        if path not in self.files:
            try:
                with open(path, "rb") as file:
                    data = file.read()
                self.files[path] = (data, ast.parse(data, path))
            except (OSError, SyntaxError, ValueError):
                self.files[path] = None
        return self.files[path]

    def plan(self, item: pytest.Item) -> Twin | None:
        """A twin of `item`, or None when it has no expectation that can be perturbed."""
        if type(item) is not Function:  # unittest items and plugins' own kinds: not twinned
            return None
        function = _getattr(item.obj, "__func__", item.obj)
        code = _getattr(function, "__code__", None)
        if code is None or code.co_filename != str(item.path) or "__class__" in code.co_freevars:
            return None
        parsed = self._parsed(code.co_filename)
        found = find(parsed[1], code.co_firstlineno, function.__name__) if parsed else None
        if parsed is None or found is None or body_returns(found[1]):
            return None
        classes, node = found
        params = _direct_params(item)
        choices = expectations(node, params)
        others = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)] + list(params.values())
        while choices:
            statement, side, value = choices.pop(draw(len(choices)))
            wrong = fresh(value, others)
            if wrong is NONE:
                continue
            where = f"{item.path.name}:{statement.lineno}"
            if isinstance(side, ast.Name):
                return Twin(where, param=(side.id, wrong))
            twin = _recompiled(item, parsed[0], parsed[1], classes, node, side, wrong)
            if twin is not None:
                twin.where = where
                return twin
        return None


def _direct_params(item: Function) -> dict[str, object]:
    """Parametrized arguments passed straight to the test (function scope, no fixture in between)."""
    callspec = _getattr(item, "callspec", None)
    if callspec is None:
        return {}
    found = {}
    for name, value in callspec.params.items():
        defs = item._fixtureinfo.name2fixturedefs.get(name) or ()
        direct = bool(defs) and _getattr(defs[-1].func, "__name__", "") == "get_direct_param_fixture_func"
        if direct and str(_getattr(callspec._arg2scope.get(name), "value", "")) == "function":
            found[name] = value
    return found


def _recompiled(
    item: Function,
    source: bytes,
    tree: ast.Module,
    classes: list[ast.ClassDef],
    node: ast.FunctionDef,
    side: ast.expr,
    wrong: object,
) -> Twin | None:
    """The test function compiled from the twin's source, in its module's namespace, within shells of its classes
    (so its qualified name is the original's), asserts rewritten as pytest rewrote the module's."""
    text = repr(wrong)
    twin_source = replace(source, side, text)
    try:
        twin_tree = ast.parse(twin_source, str(item.path))
    except SyntaxError:
        return None
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    found = find(twin_tree, first, node.name)
    if found is None:
        return None
    outer: ast.stmt = found[1]
    for shell in reversed(found[0]):
        outer = ast.ClassDef(shell.name, [], [], [outer], [])
        ast.copy_location(outer, shell)
    future = [s for s in twin_tree.body if isinstance(s, ast.ImportFrom) and s.module == "__future__"]
    module = ast.Module([*future, outer], [])
    ast.fix_missing_locations(module)
    namespace = item.module.__dict__
    if "@pytest_ar" in namespace:
        rewrite_asserts(module, twin_source, str(item.path), item.config)
    try:
        code = compile(module, str(item.path), "exec", dont_inherit=True)
        scope: dict[str, Any] = {}
        exec(code, namespace, scope)  # the test's own source, one literal changed
    except Exception:  # a twin that cannot be built is not run
        return None
    function = scope[classes[0].name if classes else node.name]
    for shell in classes[1:] if classes else ():
        function = function.__dict__[shell.name]
    if classes:
        function = function.__dict__[node.name]
    return Twin("", function=function, source=twin_source)


def _owner(item: Function) -> Any:
    return item.cls if item.cls is not None else item.module


def _swap_in(item: Function, twin: Twin) -> None:
    saved = twin.saved
    if twin.param is not None:
        name, wrong = twin.param
        saved["param"] = item.callspec.params[name]
        item.callspec.params[name] = wrong
        return
    owner, name = _owner(item), item.originalname
    saved["attr"], saved["obj"] = owner.__dict__.get(name), item.obj
    setattr(owner, name, twin.function)
    item.obj = _getattr(item.instance, name) if item.instance is not None else twin.function
    path = str(item.path)
    try:
        saved["stat"] = os.stat(path)
        with open(path, "rb") as file:
            original = file.read()
        with open(path, "wb") as file:
            file.write(twin.source or b"")
        saved["written"] = original
    except OSError:
        pass
    linecache.cache.pop(path, None)


def _swap_out(item: Function, twin: Twin) -> None:
    saved, twin.saved = twin.saved, {}
    if twin.param is not None:
        if "param" in saved:
            item.callspec.params[twin.param[0]] = saved["param"]
        return
    if "obj" not in saved:
        return
    setattr(_owner(item), item.originalname, saved["attr"])
    item.obj = saved["obj"]
    path = str(item.path)
    if "written" in saved:
        try:
            with open(path, "wb") as file:
                file.write(saved["written"])
            os.utime(path, ns=(saved["stat"].st_atime_ns, saved["stat"].st_mtime_ns))
        except OSError:
            pass
    linecache.cache.pop(path, None)


def _unformatted(excinfo: Any, style: Any = None) -> str:
    return "passhat twin: failed"


def run(item: Function, twin: Twin, nextitem: pytest.Item | pytest.Collector | None) -> None:
    """Run `item` as its twin, unlogged (no report, no JUnit entry, nothing on the terminal), then swap back.
    `nextitem`: what stays set up after it (the item's parent when the original runs next). A twin's failure is
    never shown, so it is not formatted (pytest parses the whole test file to format one: most of a twin's cost
    on a big file)."""
    kept = item.__dict__.get("repr_failure", NONE)
    try:
        _swap_in(item, twin)
        item.repr_failure = _unformatted  # type: ignore[method-assign]
        runtestprotocol(item, log=False, nextitem=nextitem)  # type: ignore[arg-type]
    finally:
        if kept is NONE:
            item.__dict__.pop("repr_failure", None)
        else:
            item.repr_failure = kept  # type: ignore[method-assign]
        _swap_out(item, twin)
