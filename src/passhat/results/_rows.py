"""Read a Promptfoo 0.123 results file (`promptfoo eval -o results.json` or `.jsonl`) into typed trials.

JSON: {"evalId", "results": {"version": 3, "results": [row, ...], "stats", ...}, "config", ...}.
JSONL: one row object per line, no wrapper. Each row is one trial: one test (repeat) x one provider.
Rows are streamed (`iter_trials`), so a 100,000-row file never sits in memory whole, and decoded by
msgspec into `_schema.Row` (only the fields read here: see `_schema` for why msgspec), then checked
into a Trial by `_trial` (bad input raises ResultsError naming the file, the field, the value and the fix).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import msgspec

from passhat.common._errors import ResultsError
from passhat.results._jsonl import jsonl_blocks, jsonl_rows, line_of
from passhat.results._progress import Counted
from passhat.results._scan import (
    ByteSource,
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

__all__ = ["Trial", "iter_checked", "iter_made", "iter_rows", "iter_trials", "load_trials"]

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
    """`iter_trials` with each row made by `make`: `to_trial`, or `trial_fields` (a row's Trial fields, without the
    Trial). Either raises the same errors, the row named the same way."""
    path = str(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, also when the caller stops early
    except OSError as error:
        raise read_error(path, error) from None
    source = handle if on_read is None else Counted(handle, on_read)
    jsonl = path.endswith(".jsonl")
    rows = enumerate(itertools.chain.from_iterable(_row_blocks(path, source, on_member)))
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


def iter_made(
    path: str | Path,
    make: Callable[[str, str, Any], T],
    on_read: Callable[[int], None] | None = None,
    on_member: OnMember | None = None,
    part: tuple[int, Literal["head", "tail"]] | None = None,
) -> Iterator[T]:
    """`iter_checked` for a reader that wants speed, not messages: a block's rows are made at C speed, by one `map`
    (a generator step per row was ~5% of a big report); a problem raises unnamed (ResultsError, OSError, and
    SplitUnsafe for a part): read the file with `iter_checked` for the exact message.

    `part` = (start, "head"): only the rows before byte `start`, where a row begins; (start, "tail"): the rest.
    For reading one file in two processes."""
    return itertools.chain.from_iterable(_made_blocks(str(path), make, on_read, on_member, part))


def _made_blocks(
    path: str,
    make: Callable[[str, str, Any], T],
    on_read: Callable[[int], None] | None,
    on_member: OnMember | None,
    part: tuple[int, Literal["head", "tail"]] | None,
) -> Iterator[Iterator[T]]:
    check = functools.partial(make, path, "")
    with open(path, "rb") as raw:
        handle = raw if on_read is None else Counted(raw, on_read)
        blocks = _row_blocks(path, handle, on_member) if part is None else _part_blocks(path, handle, *part, on_member)
        for block in blocks:
            yield map(check, block)


def _row_blocks(path: str, handle: ByteSource, on_member: OnMember | None) -> Iterator[Iterable[Any]]:
    """A whole file's decoded rows, a block at a time: JSONL's blocks of lines; a JSON file's rows as one stream."""
    if path.endswith(".jsonl"):
        return jsonl_blocks(path, handle, typed=_TYPED)
    bad = functools.partial(_bad, path)
    return iter((json_rows(path, handle, bad, _version_problem, on_member=on_member, typed=_TYPED),))


def _part_blocks(
    path: str, handle: ByteSource, start: int, part: Literal["head", "tail"], on_member: OnMember | None
) -> Iterator[Iterable[Any]]:
    """`_row_blocks` of the rows before byte `start` (head) or from it on (tail). Any doubt raises."""
    if path.endswith(".jsonl"):
        if part == "tail":
            handle.seek(start)
        return jsonl_blocks(path, handle, start if part == "head" else None, _TYPED)
    if part == "tail":
        return iter((json_tail_rows(path, handle, start, on_member, _TYPED),))
    return iter((_json_head_rows(path, handle, start, on_member),))


def _json_head_rows(path: str, handle: ByteSource, start: int, on_member: OnMember | None) -> Iterator[Any]:
    """The rows of results.results before byte `start`, which must end them between two rows."""
    try:
        yield from json_rows(path, handle, functools.partial(_bad, path), _version_problem, start, on_member, _TYPED)
    except SplitReached:
        return
    raise SplitUnsafe  # the rows ended before `start`: it was not a row of results.results


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


def load_trials(path: str | Path) -> list[Trial]:
    """Every row of a Promptfoo results file as a Trial, in file order."""
    return list(iter_trials(path))
