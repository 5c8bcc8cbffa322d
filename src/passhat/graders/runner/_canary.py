"""Canary tests: a test that must pass and one that must fail, with fresh random names, in a file the agent never
saw, placed beside the task's tests and importing what they import — so whatever the agent's code does to the
runner when the tests import it, it does to the canaries too, and passhat knows what their outcome must be.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from passhat.graders._globs import matches
from passhat.graders.runner._node_canary import NODE_TEST, assert_use, canary_block, insert_prologue, prologue
from passhat.trial._paths import UnsafePathError, read_within, write_within

Runner = Literal["pytest", "node"]
CANARY_MARK = "# passhat canary"  # the first line of a Python canary (the plugin keeps other runs' ones out)
PRUNE = {".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache"}
_JS = (".js", ".mjs", ".cjs")
_SPEC = r"""(['"])(?P<spec>\.{1,2}(?:/[^'"]*)?)\1"""  # a relative specifier: '..', './lib/x.js'
_REQUIRE = re.compile(rf"\brequire\(\s*{_SPEC}\s*\)")
_IMPORT = re.compile(rf"\b(?:from|import)\s*\(?\s*{_SPEC}")
_PY_IMPORT = re.compile(  # `from pkg.mod import x` (not relative) or `import a.b as c, d` at the start of a line
    r"^[ \t]*(?:from[ \t]+(?P<module>[A-Za-z_]\w*)[\w.]*[ \t]+import\b|import[ \t]+(?P<names>[A-Za-z_][\w. \t,]*))",
    re.MULTILINE,
)
_SCAN_LIMIT = 400  # test files read to find the package; more is not needed to find the common import
_MUST_FAIL = "passhat canary: this test must fail (the tests grader checks that it does)"  # (pytest's)


@dataclass(frozen=True)
class Canary:
    """The canaries of one run: the file they are in (relative to the tree), their test names, what the file
    imports for them; `host`: the module kind (esm / cjs) of the task's test file they were added to, if any."""

    rel: str
    passing: str
    failing: str
    imports: tuple[str, ...]
    host: str | None = None
    uses: tuple[tuple[str, ...], ...] = ()  # node: the tests' assert modules, functions and kinds of values
    others: tuple[str, ...] = ()  # node: the other test files (they import node:test): each gets a sentinel
    tests: tuple[str, ...] = ()  # node: every test file (the prologue reports the tree's code reading one)


def _files(tree: Path, suffixes: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for folder, dirs, names in os.walk(tree):  # never enters links
        dirs[:] = sorted(d for d in dirs if d not in PRUNE)
        here = Path(folder).relative_to(tree)
        for name in sorted(names):
            if name.endswith(suffixes) and stat.S_ISREG(os.lstat(os.path.join(folder, name)).st_mode):
                found.append((here / name).as_posix())
    return found


def _read(tree: Path, rel: str) -> str:
    try:
        return (read_within(tree, rel, limit=1_000_000) or b"").decode("utf-8", errors="replace")
    except (UnsafePathError, OSError):
        return ""


def _is_python_test(rel: str, protected: tuple[str, ...]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return (name.startswith("test_") or name.endswith("_test.py")) and (matches(rel, protected) or "/" not in rel)


def _local_modules(tree: Path, rel: str, source: str) -> list[str]:
    """Top-level names a test file imports that are modules or packages of the tree (at its root or beside it).
    Import statements are read line by line (not parsed: a big test file took ms, every grader run)."""
    names = []
    for match in _PY_IMPORT.finditer(source):
        if match["module"]:
            names.append(match["module"])
        else:
            names += [part.split()[0].split(".")[0] for part in match["names"].split(",") if part.strip()]
    here = (tree / rel).parent
    found = []
    for name in dict.fromkeys(names):
        if name == "conftest" or name.startswith("test"):
            continue
        if any((folder / f"{name}.py").is_file() or (folder / name).is_dir() for folder in (tree, here)):
            found.append(name)
    return found


def _python(tree: Path, protected: tuple[str, ...]) -> Canary:
    tests = [rel for rel in _files(tree, (".py",)) if _is_python_test(rel, protected)][:_SCAN_LIMIT]
    imports = {rel: _local_modules(tree, rel, _read(tree, rel)) for rel in tests}
    counts = Counter(name for names in imports.values() for name in names)
    package = min(counts, key=lambda name: (-counts[name], name)) if counts else None
    beside = next((rel for rel in tests if package in imports[rel]), tests[0] if tests else "x")
    folder = beside.rpartition("/")[0]
    name = f"test_{secrets.token_hex(5)}.py"
    passing, failing = f"test_{secrets.token_hex(6)}", f"test_{secrets.token_hex(6)}"
    return Canary(f"{folder}/{name}" if folder else name, passing, failing, (package,) if package else ())


def _module_kind(tree: Path, rel: str) -> str:
    """esm or cjs: by extension, else by the nearest package.json's "type" (node's own rule)."""
    if rel.endswith((".mjs", ".cjs")):
        return "esm" if rel.endswith(".mjs") else "cjs"
    folder = rel.rpartition("/")[0]
    while True:
        manifest = _read(tree, f"{folder}/package.json" if folder else "package.json")
        if manifest:
            try:
                return "esm" if json.loads(manifest).get("type") == "module" else "cjs"
            except (ValueError, AttributeError):
                return "cjs"
        if not folder:
            return "cjs"
        folder = folder.rpartition("/")[0]


def _node(tree: Path, protected: tuple[str, ...]) -> Canary:
    """node --test runs each test file in a process of its own: the canaries go at the end of the test file that
    imports the tree's most imported module (one more process would cost more than the rest of a small suite),
    so they share that file's process and whatever the module did to it. No test file: a file of their own."""
    tests = [rel for rel in _files(tree, _JS) if matches(rel, protected)][:_SCAN_LIMIT]
    specs: Counter[tuple[str, str, str]] = Counter()  # (folder, how, spec): a relative spec holds from its folder
    users: dict[tuple[str, str, str], str] = {}
    sources = {rel: _read(tree, rel) for rel in tests}
    uses = assert_use(list(sources.values()))
    for rel in tests:
        source, folder = sources[rel], rel.rpartition("/")[0]
        found = [(folder, "require", m["spec"]) for m in _REQUIRE.finditer(source)]
        found += [(folder, "import", m["spec"]) for m in _IMPORT.finditer(source)]
        specs.update(found)
        for key in found:
            users.setdefault(key, rel)
    passing, failing = (f"{secrets.token_hex(4)} {secrets.token_hex(4)}" for _ in range(2))
    if specs:
        host = users[min(specs, key=lambda key: (-specs[key], key))]
        others = tuple(rel for rel in tests if rel != host and NODE_TEST.search(sources[rel]))
        return Canary(host, passing, failing, (), _module_kind(tree, host), uses, others, tuple(tests))
    folder = tests[0].rpartition("/")[0] if tests else "test"
    name = f"canary_{secrets.token_hex(5)}.test.mjs"
    return Canary(f"{folder}/{name}" if folder else name, passing, failing, (), None, uses, (), tuple(tests))


def _values() -> tuple[int, int]:
    """Two fresh numbers, never equal, of fixed widths (6 and 7 digits): the runner prints their failure the same
    way every run (node's assert picks a one-line or a diff message by length)."""
    return 100_000 + secrets.randbelow(900_000), 1_000_000 + secrets.randbelow(9_000_000)


def _python_text(canary: Canary) -> str:
    a, b = _values()
    lines = [CANARY_MARK, *(f"import {name}  # noqa: F401" for name in canary.imports), "", ""]
    lines += [f"def {canary.passing}():", f"    assert {a} == {a}", "", ""]
    lines += [f"def {canary.failing}():", f"    assert {a} == {b}, {_MUST_FAIL!r}", ""]
    return "\n".join(lines)


def _node_text(canary: Canary, before: str, kind: str | None, sentinel: bool = False) -> str:
    """A test file (or a file of its own) with the canary's prologue first and its tests (or sentinel) last."""
    token = secrets.token_hex(6)
    cjs = kind == "cjs"
    text = insert_prologue(before, prologue(token, canary.uses[0] if canary.uses else (), not cjs, canary.tests))
    block = canary_block(token, canary.passing, canary.failing, cjs, canary.uses, sentinel=sentinel)
    return text.rstrip("\n") + "\n" + block


def add_canary(tree: Path, runner: Runner, protected: tuple[str, ...]) -> Canary:
    """Write a fresh canary into `tree` (the grader's private copy) for `runner`; its names are new each call."""
    if runner == "pytest":
        canary = _python(tree, protected)
        write_within(tree, canary.rel, _python_text(canary).encode())
        return canary
    canary = _node(tree, protected)
    before = _read(tree, canary.rel) if canary.host in ("cjs", "esm") else ""
    write_within(tree, canary.rel, _node_text(canary, before, canary.host).lstrip("\n").encode())
    for rel in canary.others:
        text = _node_text(canary, _read(tree, rel), _module_kind(tree, rel), sentinel=True)
        write_within(tree, rel, text.encode())
    return canary


CANARY_TEXT = "passhat canary"  # in every canary's failure message (graders.runner: pytest's and node's)
_SECTION = re.compile(r"^_{3,} (?P<name>.+?) _{3,}$|^={3,}")  # pytest's per-failure section, its summary rules
_NODE_FRAME = re.compile(r"^\s+at (?:async )?.*\(node:[\w/:.]+\)$")  # a stack frame inside Node itself: noise


def without_canaries(output: str, names: frozenset[str]) -> tuple[str, int]:
    """The runner's output less passhat's canary tests (named `names`, or saying CANARY_TEXT): each one's line,
    the lines indented under it (its trace), pytest's failure section of it, node's `test at` line before it;
    and how many of those went. A reader of the reason sees the task's tests only (and no frame inside Node)."""
    kept: list[str] = []
    dropped, skip = 0, None  # skip: the indent (or -1: a section) of a canary's lines being left out
    for line in output.splitlines():
        indent = len(line) - len(line.lstrip())
        if skip is not None and (line.strip() == "" or indent > skip) and not _SECTION.match(line):
            dropped += 1
            continue
        skip = None
        if _NODE_FRAME.match(line):
            continue
        if any(name and name in line for name in names) or CANARY_TEXT in line:
            section = _SECTION.match(line)
            skip = -1 if section and section["name"] else indent
            if kept and kept[-1].lstrip().startswith("test at "):  # node's spec: where the test is, then its line
                kept.pop()
                dropped += 1
            dropped += 1
            continue
        kept.append(line)
    return "\n".join(kept), dropped
