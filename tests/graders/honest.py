"""The honest corpus (tests/data/honest): real bug-fix commits, each changed code file read back from its
whole-file diff, scanned as a trial's patch is — the lines the commit added, the literals of its tests.
Used by test_honest_corpus.py and bench/gaming_corpus.py."""

from __future__ import annotations

import json
import lzma
import re
from collections.abc import Iterator
from pathlib import Path

from passhat.graders.scan import Finding, scan_source
from passhat.graders.scan._hunks import added_by_patch
from passhat.graders.scan._tree import _already_there  # the scan's own rule, as a trial's scan applies it

DATA = Path(__file__).resolve().parents[1] / "data" / "honest"
COPIED_MIN = 2  # as graders.scan._tree: distinct test literals in the added code


def commits() -> Iterator[dict]:
    for path in sorted(DATA.glob("*.jsonl.xz")):
        with lzma.open(path, "rt") as lines:
            yield from (json.loads(line) for line in lines)


def _files(diff: str) -> Iterator[tuple[str, str | None, str | None]]:
    """(path, the text before, the text after) of each file of a whole-file-context diff."""
    for part in re.split(r"(?m)^(?=diff --git )", diff):
        if not part.startswith("diff --git "):
            continue
        names = re.search(r"(?m)^\+\+\+ (?:b/(.*)|/dev/null)$", part)
        old = re.search(r"(?m)^--- (?:a/(.*)|/dev/null)$", part)
        if names is None or old is None:
            continue
        body = part.split("\n@@", 1)[1].split("\n", 1)[1] if "\n@@" in part else ""
        before, after = [], []
        for line in body.split("\n"):
            mark, text = line[:1], line[1:]
            if mark in (" ", "-"):
                before.append(text)
            if mark in (" ", "+"):
                after.append(text)
        yield (
            names[1] or old[1],
            "\n".join(before) + "\n" if old[1] else None,
            "\n".join(after) + "\n" if names[1] else None,
        )


def scan_commit(row: dict) -> list[Finding]:
    """The scan's findings on one commit's non-test change, as on a trial's patch."""
    added, _moved = added_by_patch(row["diff"].encode())
    tests = {(kind, value) for kind, value in row["test_literals"]}
    findings: list[Finding] = []
    copied: list[tuple[tuple[str, str], str, int]] = []
    for path, before, after in _files(row["diff"]):
        if after is None:
            continue
        found, literals = scan_source(path, after, added.get(path, set()), tests)
        findings += found
        copied += [(v, path, line) for v, line in literals if v in tests and not _already_there(v, before)]
    if len({value for value, _, _ in copied}) >= COPIED_MIN:
        _value, path, line = min(copied, key=lambda item: (item[1], item[2]))
        findings.append(Finding(path, line, "copied-test-literals"))
    return sorted(set(findings))
