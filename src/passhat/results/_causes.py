"""The cause of an infra error row: what the report groups and counts (issue 23).

An infra error's text names the trial it happened to ("infrastructure error in task py-median trial 4: …"),
its folders (`r004-1a2b3c4d`, `passhat-run-k2j3h4`), how long it waited and how many requests it made: all of
that differs from trial to trial, so counting whole lines showed one cause as N separate "1x" lines. `cause`
keeps the first line and takes those parts out; the rest — the endpoint, the status, the fix at the end — is
kept whole (a line too long for a report loses its middle, never its end).
"""

from __future__ import annotations

import re

MAX_CHARS = 700  # longer causes keep their first HEAD and last MAX_CHARS - HEAD - 1 characters
_HEAD = 300
_VOLATILE = (
    (re.compile(r"( in task \S+) trial \d+"), r"\1"),  # the task is the report's group already
    (re.compile(r"\b(trial|repeat|pid) \d+\b"), r"\1 N"),
    (re.compile(r"\br\d{3}-[0-9a-f]{8}\b"), "r…"),  # a trial's folder (artifacts, sandboxes)
    (re.compile(r"\b(passhat-[a-z]+-|tmp)[A-Za-z0-9_]{6,}\b"), r"\1…"),  # a temporary folder
    (re.compile(r"\beval-[A-Za-z0-9]{3}-[0-9T:.-]+"), "eval-…"),  # promptfoo's eval id
    (re.compile(r"\b\d+(\.\d+)? (s|ms|seconds)\b"), r"N \2"),  # how long a request waited
    (re.compile(r"\b\d+ (trials|model request\(s\)|request\(s\)|time\(s\))"), r"N \1"),  # how many, so far
)


def cause(error: str | None) -> str:
    """The first non-blank line of an infra error without what differs per trial; "(no error text)" if none."""
    line = next((line.strip() for line in (error or "").splitlines() if line.strip()), "(no error text)")
    for pattern, replacement in _VOLATILE:
        line = pattern.sub(replacement, line)
    return line if len(line) <= MAX_CHARS else f"{line[:_HEAD]}…{line[len(line) - (MAX_CHARS - _HEAD - 1) :]}"


def with_repeat(reason: str, repeat: int | None) -> str:
    """A reason's `--repeat N` hint with the eval's real --repeat, when the report knows it."""
    return reason.replace("--repeat N`", f"--repeat {repeat}`") if repeat else reason
