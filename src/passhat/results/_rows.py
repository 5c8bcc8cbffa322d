"""Read a Promptfoo 0.123 results file (`promptfoo eval -o results.json` or `.jsonl`) into typed trials.

JSON: {"evalId", "results": {"version": 3, "results": [row, ...], "stats", ...}, "config", ...}.
JSONL: one row object per line, no wrapper. Each row is one trial: one test (repeat) x one provider.
Rows are streamed (`iter_trials`), so a 100,000-row file never sits in memory whole, and decoded by
msgspec into `_schema.Row` (only the fields read here: see `_schema` for why msgspec), then checked
into a Trial by `_trial` (bad input raises ResultsError naming the file, the field, the value and the fix).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import msgspec

from passhat.common._errors import ResultsError
from passhat.results._jsonl import jsonl_rows, line_of
from passhat.results._progress import Counted
from passhat.results._scan import (
    NotJson,
    OnMember,
    SplitReached,
    SplitUnsafe,
    Typed,
    json_rows,
    json_tail_rows,
    read_error,
)
from passhat.results._schema import RAW_ROW, ROW
from passhat.results._trial import Trial, to_trial
from passhat.results._trial import bad as _bad

__all__ = ["Trial", "iter_checked", "iter_checked_part", "iter_rows", "iter_trials", "load_trials"]

T = TypeVar("T")

RESULTS_VERSION = 3
_TYPED = Typed(
    msgspec.json.Decoder(list[RAW_ROW]), msgspec.json.Decoder(RAW_ROW), functools.partial(msgspec.convert, type=ROW)
)


def _version_problem(version: object) -> str | None:
    if version != RESULTS_VERSION or isinstance(version, bool):
        return f"{RESULTS_VERSION} (passhat reads the results format of promptfoo 0.123)"
    return None


def iter_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """Every raw row (a dict) of a results file, streamed like iter_trials, for readers of other fields."""
    path = str(path)
    try:
        with open(path, "rb") as handle:
            if path.endswith(".jsonl"):
                yield from (row for _, row in jsonl_rows(path, handle))
            else:
                yield from json_rows(path, handle, functools.partial(_bad, path), _version_problem)
    except OSError as error:
        raise read_error(path, error) from None


def iter_trials(
    path: str | Path, on_read: Callable[[int], None] | None = None, on_member: OnMember | None = None
) -> Iterator[Trial]:
    """Every row of a Promptfoo results file as a Trial, in file order, streamed.

    `*.jsonl` is read as JSONL (one row per line); anything else as the JSON document.
    Raises ResultsError at the first problem, possibly after earlier rows were yielded.
    `on_read(bytes)` is told as the file is read (a progress line); `on_member` every member of the
    JSON wrapper but the rows (evalId, config, metadata, ...).
    """
    return iter_checked(path, to_trial, on_read, on_member)


def iter_checked(
    path: str | Path,
    make: Callable[[str, str, Any], T],
    on_read: Callable[[int], None] | None = None,
    on_member: OnMember | None = None,
) -> Iterator[T]:
    """`iter_trials` with each row made by `make`: `to_trial`, or `trial_fields` (the report totals a row's
    fields without building its Trial). Either raises the same errors, the row named the same way."""
    path = str(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, also when the caller stops early
    except OSError as error:
        raise read_error(path, error) from None
    source = handle if on_read is None else Counted(handle, on_read)
    rows: Iterator[tuple[int, Any]]
    jsonl = path.endswith(".jsonl")
    if jsonl:
        rows = jsonl_rows(path, source, typed=_TYPED)
    else:
        bad = functools.partial(_bad, path)
        rows = enumerate(json_rows(path, source, bad, _version_problem, on_member=on_member, typed=_TYPED))
    try:
        for index, row in rows:
            try:
                made = make(path, "", row)
            except ResultsError:  # again, to name the row in the message (only put together for an error)
                try:
                    make(path, f"line {line_of(path, index)}: row" if jsonl else f"results.results[{index}]", row)
                except ResultsError as problem:
                    _raise_if_not_json(rows)
                    raise problem from None
            yield made
    except OSError as error:
        raise read_error(path, error) from None
    finally:
        handle.close()


def _raise_if_not_json(rows: Iterator[object]) -> None:
    """Read on to the end: text that is not JSON is the first thing to fix (a '}' too early can make
    a row look incomplete), so like `json.loads` that error wins over a row's content."""
    try:
        for _ in rows:
            pass
    except NotJson as error:
        raise error from None
    except ResultsError:
        pass


def iter_checked_part(
    path: str | Path,
    start: int,
    part: Literal["head", "tail"],
    make: Callable[[str, str, Any], T],
    on_read: Callable[[int], None] | None = None,
    on_member: OnMember | None = None,
) -> Iterator[T]:
    """The rows before byte `start` (head) or from it on (tail), where `start` begins a row, each made by `make`
    (as `iter_checked`).

    For reading one file in two processes. Any doubt raises (ResultsError, SplitUnsafe, ...): the
    caller then reads the file whole with `iter_checked`, which reports problems exactly.
    """
    path = str(path)
    with open(path, "rb") as raw:
        handle = raw if on_read is None else Counted(raw, on_read)
        if path.endswith(".jsonl"):
            if part == "tail":
                handle.seek(start)
            for _, row in jsonl_rows(path, handle, start if part == "head" else None, _TYPED):
                yield make(path, "", row)  # (an error's place is named by the whole read)
        elif part == "tail":
            for row in json_tail_rows(path, handle, start, on_member, _TYPED):
                yield make(path, "", row)
        else:
            try:
                bad = functools.partial(_bad, path)
                rows = json_rows(path, handle, bad, _version_problem, start, on_member, _TYPED)
                for row in rows:
                    yield make(path, "", row)
            except SplitReached:
                return
            raise SplitUnsafe  # the rows ended before `start`: it was not a row of results.results


def load_trials(path: str | Path) -> list[Trial]:
    """Every row of a Promptfoo results file as a Trial, in file order."""
    return list(iter_trials(path))
