"""The perturbed expectation of a test, from its source alone: which `assert A == B` side or parametrized argument
holds the expected value, and a fresh wrong value of the same type and shape for it. Used in the test process by
the in-process twins (passhat_guard_twins) and on the host by the twin world (passhat.graders.runner._world), so
it imports the standard library only.
"""

from __future__ import annotations

import ast
import math
import os
from typing import Any

_urandom = os.urandom  # bound before any test module is imported
NONE = object()
LITERALS = (bool, int, float, complex, str, bytes, list, tuple, set, frozenset, dict)


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
    NONE when there is none (None, an object of another type)."""
    kind = type(value)
    if kind is bool:
        return not value
    if kind is int:
        return int(_number(value, whole=True))
    if kind is float:
        return _number(value, whole=False) if math.isfinite(value) else NONE
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
            if (wrong := perturb(items[at])) is not NONE:
                items[at] = wrong
                return kind(items)
        return kind([*items, draw(10)])
    if kind is dict:
        for key in sorted(value, key=lambda _: draw(1 << 30)):
            if (wrong := perturb(value[key])) is not NONE:
                return {**value, key: wrong}
    if kind in (set, frozenset, dict):
        for _ in range(8):
            seed = next(iter(value)) if value else draw(10)
            key = perturb(seed)
            if key is not NONE and key not in value:
                if kind is dict:
                    return {**value, key: value[seed] if value else draw(10)}
                return kind([*(item for item in value if item != seed), key])
    return NONE


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
        if wrong is NONE or not any(_equal(wrong, other) for other in others):
            break
        wrong = perturb(value)
    return wrong


def body_returns(node: ast.AST) -> bool:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(child, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await)) or body_returns(child):
            return True
    return False


def literal(node: ast.expr) -> object:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NONE
    return value if type(value) in LITERALS else NONE


def loads(function: ast.AST) -> dict[str, int]:
    """How often each name is read in the function."""
    counts: dict[str, int] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def expected_param(side: ast.expr, other: ast.expr, params: dict[str, object], loads: dict[str, int]) -> bool:
    """`side` is a parametrized argument read nowhere else in the test, compared with something that is not one."""
    if not isinstance(side, ast.Name) or side.id not in params or loads[side.id] != 1:
        return False
    return not (isinstance(other, ast.Name) and other.id in params)


def sides(statement: ast.stmt) -> tuple[ast.expr, ast.expr] | None:
    if not isinstance(statement, ast.Assert) or not isinstance(statement.test, ast.Compare):
        return None
    test = statement.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return None
    return test.left, test.comparators[0]


def expectations(function: ast.FunctionDef, params: dict[str, object]) -> list[tuple[ast.stmt, ast.expr, object]]:
    """(assert, side, expected value) of each perturbable expectation of the test `function`: a literal side of a
    top-level `assert A == B` whose other side is not a literal, or a parametrized argument (`params`: name ->
    value) read nowhere else and compared with something that is not one."""
    counts = loads(function)
    found: list[tuple[ast.stmt, ast.expr, object]] = []
    for statement in function.body:
        if (pair := sides(statement)) is None:
            continue
        for side, other in (pair, pair[::-1]):
            value = literal(side)
            if value is not NONE and literal(other) is NONE:
                found.append((statement, side, value))
            elif expected_param(side, other, params, counts):
                found.append((statement, side, params[side.id]))  # type: ignore[attr-defined]
    return found


def find(tree: ast.Module, first_line: int, name: str) -> tuple[list[ast.ClassDef], ast.FunctionDef] | None:
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


def replace(source: bytes, node: ast.expr, text: str) -> bytes:
    """`source` with `node`'s span replaced by `text`, every other line where it was (offsets are UTF-8 bytes)."""
    lines = source.splitlines(keepends=True)
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    start, end = node.col_offset, node.end_col_offset or 0
    span = text if first == last else f"({text}{chr(10) * (last - first)})"
    joined = lines[first][:start] + span.encode() + lines[last][end:]
    return b"".join([*lines[:first], joined, *lines[last + 1 :]])
