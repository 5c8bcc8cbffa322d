"""Read a Promptfoo 0.123 results file (`promptfoo eval -o results.json` or `.jsonl`) into typed trials.

JSON: {"evalId", "results": {"version": 3, "results": [row, ...], "stats", ...}, "config", ...}.
JSONL: one row object per line, no wrapper. Each row is one trial: one test (repeat) x one provider.
Rows are streamed (`iter_trials`), so a 100,000-row file never sits in memory whole, and decoded by
msgspec into `_schema.Row` (only the fields read here: see `_schema` for why msgspec).
Everything is checked here, at the boundary; bad input raises ResultsError naming the file,
the field, the value and the fix.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from passhat._errors import ResultsError
from passhat.judge._status import unscored_by_judge
from passhat.results._interrupted import cut_off
from passhat.results._progress import Counted
from passhat.results._scan import MISSING as _MISSING
from passhat.results._scan import (
    NotJson,
    OnMember,
    SplitReached,
    SplitUnsafe,
    Typed,
    json_rows,
    json_tail_rows,
    jsonl_rows,
    read_error,
)
from passhat.results._schema import (
    NO_RESPONSE,
    NO_TEST_CASE,
    NO_TEST_META,
    ROW,
    Grading,
    Response,
    Row,
    TestCase,
    TestMeta,
)

RESULTS_VERSION = 3
_RERUN = (
    "re-run `npx promptfoo eval -o results.json` with the promptfoo pinned in package.json (0.123) and pass that file"
)
_FAILURE_REASONS = {0: "ok", 1: "assertion failed", 2: "error"}
_TYPED = Typed(msgspec.json.Decoder(list[ROW]), msgspec.json.Decoder(ROW), functools.partial(msgspec.convert, type=ROW))


class Trial(msgspec.Struct, frozen=True, gc=False):
    """One Promptfoo row: a task run once by one provider. (A msgspec Struct, not a dataclass: a million
    of them are built for a big report, ~6x faster.)

    `duration_ms` is the row's latencyMs, else the provider's metadata duration_ms / durationMs.
    `clean_exit` is the run's health, not its outcome: metadata is_error is false and status is
    "ok", each checked when present; None when the provider reports neither.
    `cost_usd` is None when the cost is unknown (see `_cost`): never a made-up $0.
    """

    task: str
    provider: str
    repeat_index: int | None
    passed: bool
    infra_error: bool
    error: str | None
    cost_usd: float | None
    turns: int | None
    latency_ms: float | None
    metadata: dict[str, Any]
    tier: str | None
    duration_ms: float | None
    clean_exit: bool | None
    unscored: bool = False  # an LLM judge could not be read after its retries: neither passed nor failed
    judged: bool = False  # an LLM judge graded this row (it reports the named score judge_unscored)
    scripted_model: bool = False  # metadata scripted_model is true: the scripted model, its dollars not real
    test_index: int | None = None  # promptfoo's testIdx: its (test, repeat) step, the same in every provider's row
    interrupted: bool = False  # promptfoo's error row for a call it cut off on Ctrl+C (see _interrupted)


def _show(value: object) -> str:
    if value is _MISSING or value is UNSET:
        return "missing"
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _bad(path: str, field: str, value: object, expected: str, fix: str = _RERUN) -> ResultsError:
    return ResultsError(f"{path}: {field} is {_show(value)}; expected {expected}; {fix}")


# The checks below run once per row (100,000 rows in a big eval): cheap type tests first, and a field's
# path (at + where) is only put together when there is an error to report.


def _object(path: str, at: str, where: str, value: object) -> dict[str, Any]:
    """An optional object: missing or null reads as {}."""
    if type(value) is dict:
        return value
    if value is None:
        return {}
    raise _bad(path, at + where, value, "an object or null")


def _number(path: str, at: str, where: str, value: object) -> float | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise _bad(path, at + where, value, "a finite number or null")
    return float(value)


Sources = tuple[tuple[str, dict[str, Any]], ...]  # (where, metadata object), first match wins


def _first(sources: Sources, name: str) -> tuple[str, Any]:
    """The first non-null `name` among the metadata sources, and which source (its field path is
    at + where + "." + name)."""
    for where, source in sources:
        value = source.get(name)
        if value is not None:
            return where, value
    return "", None


def _count(path: str, at: str, meta: Sources, name: str, value: object) -> int | None:
    if value is None or (type(value) is int and value >= 0):
        return value
    raise _bad(
        path, f"{at}{_first(meta, name)[0]}.{name}", value, "a non-negative integer", "fix the provider that sets it"
    )


def _task_id(path: str, at: str, row: Row, meta: Sources, task: object) -> str:
    if task is not None:
        if type(task) is not str or not task:
            raise _bad(path, f"{at}{_first(meta, 'task_id')[0]}.task_id", task, "a non-empty string",
                       "fix the provider that sets it")  # fmt: skip
        return task
    test_case = row.testCase
    if type(test_case) is not TestCase:
        _object(path, at, ".testCase", test_case)  # null, or an error
        test_case = NO_TEST_CASE
    description = test_case.description
    if isinstance(description, str) and description:
        return description
    where, vars_value = ".vars", row.vars
    if vars_value is None:
        where, vars_value = ".testCase.vars", test_case.vars
    return json.dumps(_object(path, at, where, vars_value), sort_keys=True)


def _provider(path: str, at: str, value: object) -> str:
    if type(value) is dict:
        for name in ("label", "id"):
            name_value = value.get(name)
            if type(name_value) is str and name_value:
                return name_value
        raise _bad(path, f"{at}.provider", value, "a non-empty string `label` or `id`")
    if isinstance(value, str) and value:
        return value
    raise _bad(path, f"{at}.provider", value, 'an object {"id": ..., "label": ...}')


def _cost(path: str, at: str, row: Row, response: Response, meta: Sources, infra: bool) -> float | None:
    """The trial's cost in USD when it is known, else None.

    Known: the provider's own metadata `cost_usd` when it sets that field (passhat's provider does, null when
    the CLI reported no cost); else the row's `cost` (or response.cost) — except 0 on an infra-error row,
    which is Promptfoo's placeholder for an error, not a price.
    """
    if "cost_usd" in meta[0][1] or "cost_usd" in meta[1][1]:
        where, value = _first(meta, "cost_usd")
        return _number(path, at, f"{where}.cost_usd", value)
    cost = _number(path, at, ".cost", row.cost)
    if cost is None:
        cost = _number(path, at, ".response.cost", response.cost)
    return None if infra and cost == 0 else cost


def _unscored(row: Row) -> bool:
    """`unscored_by_judge` of the row, shown the parts it reads as dicts (a judged row only: others say no early)."""
    named = row.namedScores
    if not named or (type(named) is dict and "judge_unscored" not in named):
        return False
    grading: Any = row.gradingResult
    if type(grading) is Grading:  # what judge._status reads of it: componentResults (and theirs)
        grading = {"componentResults": grading.componentResults}
    return unscored_by_judge({"namedScores": named, "gradingResult": grading})


def _trial(path: str, at: str, row: object) -> Trial:
    """The Trial of a row decoded into `_schema.Row` (anything else is not an object: an error). The checks
    run once per row (a million rows in a big eval): cheap type tests first, a field's path only on an error."""
    if type(row) is not Row:
        raise _bad(path, at, row, "an object (one row per test and provider)")
    success = row.success
    if type(success) is not bool:
        raise _bad(path, f"{at}.success", success, "true or false")
    reason = row.failureReason
    if type(reason) is not int or reason not in _FAILURE_REASONS:
        raise _bad(path, f"{at}.failureReason", reason, "0 (ok), 1 (assertion failed) or 2 (error)")
    error = row.error
    if error is not None and type(error) is not str:
        raise _bad(path, f"{at}.error", error, "a string or null")

    response = row.response
    if type(response) is not Response:
        _object(path, at, ".response", response)  # null, or an error
        response = NO_RESPONSE
    response_meta = response.metadata
    if type(response_meta) is not dict:
        response_meta = _object(path, at, ".response.metadata", response_meta)
    row_meta = row.metadata
    if type(row_meta) is not dict:
        row_meta = _object(path, at, ".metadata", row_meta)
    meta: Sources = ((".response.metadata", response_meta), (".metadata", row_meta))
    metadata = {**row_meta, **response_meta}
    # The first non-null value of a name in response.metadata, then metadata (as `_first`): `metadata`'s,
    # else (response.metadata's is null) the row's. Inlined: this runs a dozen times per row.
    get, row_get = metadata.get, row_meta.get
    turns_name = "num_turns"
    if (turns := get(turns_name)) is None and (turns := row_get(turns_name)) is None:
        turns_name = "numTurns"
        if (turns := get(turns_name)) is None:
            turns = row_get(turns_name)
    if (repeat := get("repeat_index")) is None:
        repeat = row_get("repeat_index")
    latency = _number(path, at, ".latencyMs", row.latencyMs)
    duration = latency
    if duration is None:
        for name in ("duration_ms", "durationMs"):
            duration_where, duration = _first(meta, name)
            if duration is not None:
                duration = _number(path, at, f"{duration_where}.{name}", duration)
                break
    test_case = row.testCase
    test_meta = test_case.metadata if type(test_case) is TestCase else None
    if type(test_meta) is not TestMeta:
        _object(path, at, ".testCase.metadata", test_meta)  # null, or an error
        test_meta = NO_TEST_META
    # A grader process killed (e.g. by Ctrl+C) is an outage of the grading, not the agent's failure:
    # promptfoo records it as a failed assertion with this message. `passhat regrade` grades it again.
    grader_crashed = reason == 1 and "Error running Python script" in (error or "")
    infra_error = reason == 2 or grader_crashed
    if (task_id := get("task_id")) is None:
        task_id = row_get("task_id")
    task = _task_id(path, at, row, meta, task_id)
    provider = _provider(path, at, _MISSING if row.provider is UNSET else row.provider)
    repeat_index = _count(path, at, meta, "repeat_index", repeat)
    cost = _cost(path, at, row, response, meta, infra_error)
    turns = _count(path, at, meta, turns_name, turns)
    if (tier := get("tier")) is None and (tier := row_get("tier")) is None:
        tier = test_meta.tier
    if tier is not None and (type(tier) is not str or not tier):
        where = _first((*meta, (".testCase.metadata", {"tier": test_meta.tier})), "tier")[0]
        msg = "a non-empty string such as simple"
        raise _bad(path, f"{at}{where}.tier", tier, msg, "fix the task's tier in task.yaml")
    if (is_error := get("is_error")) is None:
        is_error = row_get("is_error")
    if (status := get("status")) is None:
        status = row_get("status")
    if type(is_error) is bool:
        clean_exit: bool | None = not is_error and (status == "ok" if type(status) is str else True)
    else:
        clean_exit = status == "ok" if type(status) is str else None
    named = row.namedScores
    test_index = row.testIdx  # read only to place a cut-off row: anything but a count is ignored
    return Trial(
        task=task,
        provider=provider,
        repeat_index=repeat_index,
        passed=success and not infra_error,
        infra_error=infra_error,
        error=error,
        cost_usd=cost,
        turns=turns,
        latency_ms=latency,
        metadata=metadata,
        tier=tier,
        duration_ms=duration,
        clean_exit=clean_exit,
        unscored=not infra_error and _unscored(row),
        judged="judge_unscored" in (named or {}),
        scripted_model=response_meta.get("scripted_model") is True or row_get("scripted_model") is True,
        test_index=test_index if type(test_index) is int and test_index >= 0 else None,
        interrupted=reason == 2 and cut_off(reason, error, repeat),
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
    path = str(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, also when the caller stops early
    except OSError as error:
        raise read_error(path, error) from None
    source = handle if on_read is None else Counted(handle, on_read)
    rows: Iterator[tuple[int, Any]]
    if path.endswith(".jsonl"):
        rows, where = jsonl_rows(path, source, typed=_TYPED), "line {}: row"
    else:
        bad = functools.partial(_bad, path)
        rows = enumerate(json_rows(path, source, bad, _version_problem, on_member=on_member, typed=_TYPED))
        where = "results.results[{}]"
    try:
        for place, row in rows:
            try:
                trial = _trial(path, "", row)
            except ResultsError:  # again, to name the row in the message (only put together for an error)
                try:
                    _trial(path, where.format(place), row)
                except ResultsError as problem:
                    _raise_if_not_json(rows)
                    raise problem from None
            yield trial
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


def iter_trials_part(
    path: str | Path,
    start: int,
    part: Literal["head", "tail"],
    on_read: Callable[[int], None] | None = None,
    on_member: OnMember | None = None,
) -> Iterator[Trial]:
    """The trials before byte `start` (head) or from it on (tail), where `start` begins a row.

    For reading one file in two processes. Any doubt raises (ResultsError, SplitUnsafe, ...): the
    caller then reads the file whole with `iter_trials`, which reports problems exactly.
    """
    path = str(path)
    with open(path, "rb") as raw:
        handle = raw if on_read is None else Counted(raw, on_read)
        if path.endswith(".jsonl"):
            if part == "tail":
                handle.seek(start)
            for _, row in jsonl_rows(path, handle, start if part == "head" else None, _TYPED):
                yield _trial(path, "", row)  # (an error's place is named by the whole read)
        elif part == "tail":
            for row in json_tail_rows(path, handle, start, on_member, _TYPED):
                yield _trial(path, "", row)
        else:
            try:
                bad = functools.partial(_bad, path)
                rows = json_rows(path, handle, bad, _version_problem, start, on_member, _TYPED)
                for row in rows:
                    yield _trial(path, "", row)
            except SplitReached:
                return
            raise SplitUnsafe  # the rows ended before `start`: it was not a row of results.results


def load_trials(path: str | Path) -> list[Trial]:
    """Every row of a Promptfoo results file as a Trial, in file order."""
    return list(iter_trials(path))
