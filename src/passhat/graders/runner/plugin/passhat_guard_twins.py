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
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from _pytest.assertion.rewrite import rewrite_asserts
from _pytest.python import Function
from _pytest.runner import runtestprotocol

_urandom, _getattr = os.urandom, getattr  # bound before any test module is imported
_NONE = object()
_LITERALS = (bool, int, float, complex, str, bytes, list, tuple, set, frozenset, dict)


def draw(n: int) -> int:
    """A number in [0, n) from the OS, not from a `random` the code under test could have seeded."""
    return int.from_bytes(_urandom(8), "big") % n


_CLASSES = ("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789")


def _other_char(char: str) -> str:
    """Another character of the same class (a letter for a letter, a digit for a digit), else a letter."""
    pool = next((chars for chars in _CLASSES if char in chars), _CLASSES[0])
    choices = pool.replace(char, "")
    return choices[draw(len(choices))]


def _number(value: float, whole: bool) -> float:
    """A different number of about the same size and the same sign (a literal `-5` stays a `-` literal)."""
    size = max(9, int(abs(value)))
    step = 1 + draw(size) if whole else (1 + draw(100) / 10) * max(1.0, abs(value)) / 2
    down = value - step
    return down if draw(2) and (down >= 0) == (value >= 0) else value + step if value >= 0 else value - step


def perturb(value: Any) -> Any:
    """A value of the same type and shape (length, sign, size) that is not equal to `value` (honest equality), or
    _NONE when there is none (None, an object of another type)."""
    kind = type(value)
    if kind is bool:
        return not value
    if kind is int:
        return int(_number(value, whole=True))
    if kind is float:
        return _number(value, whole=False) if math.isfinite(value) else _NONE
    if kind is complex:
        return value + complex(1 + draw(9), 0)
    if kind in (str, bytes):
        text: str = value.decode("latin-1") if kind is bytes else value
        if not text:
            wrong = _CLASSES[0][draw(26)]
        else:
            at = draw(len(text))
            wrong = text[:at] + _other_char(text[at]) + text[at + 1 :]
        return wrong.encode("latin-1") if kind is bytes else wrong
    if kind in (list, tuple):
        items = list(value)
        for at in sorted(range(len(items)), key=lambda _: draw(1 << 30)):
            if (wrong := perturb(items[at])) is not _NONE:
                items[at] = wrong
                return kind(items)
        return kind([*items, draw(10)])
    if kind is dict:
        for key in sorted(value, key=lambda _: draw(1 << 30)):
            if (wrong := perturb(value[key])) is not _NONE:
                return {**value, key: wrong}
    if kind in (set, frozenset, dict):
        for _ in range(8):
            seed = next(iter(value)) if value else draw(10)
            key = perturb(seed)
            if key is not _NONE and key not in value:
                if kind is dict:
                    return {**value, key: value[seed] if value else draw(10)}
                return kind([*(item for item in value if item != seed), key])
    return _NONE


def _equal(a: object, b: object) -> bool:
    try:
        return bool(a == b)
    except Exception:  # a literal's own comparison: equal is the safe answer (another value is drawn)
        return True


def fresh(value: Any, others: list[object], tries: int = 32) -> Any:
    """perturb(value), drawn again while it equals another literal of the test (an input, another expectation): a
    wrong value the code under test could tell from the test's other values by elimination — the inputs it was
    given — would let a hack that answers "the test's constant that is not my input" dodge the twin."""
    wrong = perturb(value)
    for _ in range(tries):
        if wrong is _NONE or not any(_equal(wrong, other) for other in others):
            break
        wrong = perturb(value)
    return wrong


@dataclass
class Twin:
    """One planned twin of an item: what is swapped while it runs (and swapped back after)."""

    where: str  # FILE:LINE of the perturbed assert
    function: Callable[..., Any] | None = None  # the recompiled test function (a literal twin)
    source: bytes | None = None  # the twin's source of the test file (a literal twin)
    param: tuple[str, object] | None = None  # (name, wrong value) of a parametrized argument
    saved: dict[str, Any] = field(default_factory=dict)


def _body_returns(node: ast.AST) -> bool:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(child, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await)) or _body_returns(child):
            return True
    return False


def _literal(node: ast.expr) -> object:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NONE
    return value if type(value) in _LITERALS else _NONE


def _loads(function: ast.AST) -> dict[str, int]:
    """How often each name is read in the function."""
    counts: dict[str, int] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _expected_param(side: ast.expr, other: ast.expr, params: dict[str, object], loads: dict[str, int]) -> bool:
    """`side` is a parametrized argument read nowhere else in the test, compared with something that is not one."""
    if not isinstance(side, ast.Name) or side.id not in params or loads[side.id] != 1:
        return False
    return not (isinstance(other, ast.Name) and other.id in params)


def _sides(statement: ast.stmt) -> tuple[ast.expr, ast.expr] | None:
    if not isinstance(statement, ast.Assert) or not isinstance(statement.test, ast.Compare):
        return None
    test = statement.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return None
    return test.left, test.comparators[0]


def _find(tree: ast.Module, first_line: int, name: str) -> tuple[list[ast.ClassDef], ast.FunctionDef] | None:
    """The def of the test (by name and first line, decorators included) and the classes around it."""

    def search(body: list[ast.stmt], classes: list[ast.ClassDef]) -> tuple[list[ast.ClassDef], ast.FunctionDef] | None:
        for node in body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if start == first_line:
                    return classes, node
            elif isinstance(node, ast.ClassDef) and (found := search(node.body, [*classes, node])):
                return found
        return None

    return search(tree.body, [])


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
        found = _find(parsed[1], code.co_firstlineno, function.__name__) if parsed else None
        if parsed is None or found is None or _body_returns(found[1]):
            return None
        classes, node = found
        params = _direct_params(item)
        loads = _loads(node)
        choices: list[tuple[ast.stmt, ast.expr, object]] = []
        for statement in node.body:
            if (sides := _sides(statement)) is None:
                continue
            for side, other in (sides, sides[::-1]):
                value = _literal(side)
                if value is not _NONE and _literal(other) is _NONE:
                    choices.append((statement, side, value))
                elif _expected_param(side, other, params, loads):
                    choices.append((statement, side, params[side.id]))  # type: ignore[attr-defined]
        others = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)] + list(params.values())
        while choices:
            statement, side, value = choices.pop(draw(len(choices)))
            wrong = fresh(value, others)
            if wrong is _NONE:
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


def _replace(source: bytes, node: ast.expr, text: str) -> bytes:
    """`source` with `node`'s span replaced by `text`, every other line where it was (offsets are UTF-8 bytes)."""
    lines = source.splitlines(keepends=True)
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    start, end = node.col_offset, node.end_col_offset or 0
    span = text if first == last else f"({text}{chr(10) * (last - first)})"
    joined = lines[first][:start] + span.encode() + lines[last][end:]
    return b"".join([*lines[:first], joined, *lines[last + 1 :]])


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
    twin_source = _replace(source, side, text)
    try:
        twin_tree = ast.parse(twin_source, str(item.path))
    except SyntaxError:
        return None
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    found = _find(twin_tree, first, node.name)
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
    kept = item.__dict__.get("repr_failure", _NONE)
    try:
        _swap_in(item, twin)
        item.repr_failure = _unformatted  # type: ignore[method-assign]
        runtestprotocol(item, log=False, nextitem=nextitem)  # type: ignore[arg-type]
    finally:
        if kept is _NONE:
            item.__dict__.pop("repr_failure", None)
        else:
            item.repr_failure = kept  # type: ignore[method-assign]
        _swap_out(item, twin)
