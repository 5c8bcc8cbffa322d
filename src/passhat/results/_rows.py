"""Read a Promptfoo 0.123 results file (`promptfoo eval -o results.json` or `.jsonl`) into typed trials.

JSON: {"evalId", "results": {"version": 3, "results": [row, ...], "stats", ...}, "config", ...}.
JSONL: one row object per line, no wrapper. Each row is one trial: one test (repeat) x one provider.
Rows are streamed (`iter_trials`), so a 100,000-row file never sits in memory whole.
Everything is checked here, at the boundary; bad input raises ResultsError naming the file,
the field, the value and the fix.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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
    json_rows,
    json_tail_rows,
    jsonl_rows,
    read_error,
)

RESULTS_VERSION = 3
_RERUN = (
    "re-run `npx promptfoo eval -o results.json` with the promptfoo pinned in package.json (0.123) and pass that file"
)
_FAILURE_REASONS = {0: "ok", 1: "assertion failed", 2: "error"}


@dataclass(frozen=True)
class Trial:
    """One Promptfoo row: a task run once by one provider.

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
    if value is _MISSING:
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


def _count(path: str, at: str, where: str, name: str, value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _bad(path, f"{at}{where}.{name}", value, "a non-negative integer", "fix the provider that sets it")
    return value


def _task_id(path: str, at: str, row: dict[str, Any], meta: Sources) -> str:
    where, task = _first(meta, "task_id")
    if task is not None:
        if type(task) is not str or not task:
            raise _bad(path, f"{at}{where}.task_id", task, "a non-empty string", "fix the provider that sets it")
        return task
    test_case = _object(path, at, ".testCase", row.get("testCase"))
    description = test_case.get("description")
    if isinstance(description, str) and description:
        return description
    where, vars_value = ".vars", row.get("vars")
    if vars_value is None:
        where, vars_value = ".testCase.vars", test_case.get("vars")
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


def _tier(path: str, at: str, meta: Sources) -> str | None:
    where, tier = _first(meta, "tier")
    if tier is not None and (type(tier) is not str or not tier):
        msg = "a non-empty string such as simple"
        raise _bad(path, f"{at}{where}.tier", tier, msg, "fix the task's tier in task.yaml")
    return tier


def _clean_exit(meta: Sources) -> bool | None:
    """Health from the provider's own fields; other providers' shapes of these names are ignored."""
    is_error, status = _first(meta, "is_error")[1], _first(meta, "status")[1]
    if type(is_error) is bool:
        return not is_error and (status == "ok" if type(status) is str else True)
    return status == "ok" if type(status) is str else None


def _cost(
    path: str, at: str, row: dict[str, Any], response: dict[str, Any], meta: Sources, infra: bool
) -> float | None:
    """The trial's cost in USD when it is known, else None.

    Known: the provider's own metadata `cost_usd` when it sets that field (passhat's provider does, null when
    the CLI reported no cost); else the row's `cost` (or response.cost) — except 0 on an infra-error row,
    which is Promptfoo's placeholder for an error, not a price.
    """
    if any("cost_usd" in source for _, source in meta):
        where, value = _first(meta, "cost_usd")
        return _number(path, at, f"{where}.cost_usd", value)
    cost = _number(path, at, ".cost", row.get("cost"))
    if cost is None:
        cost = _number(path, at, ".response.cost", response.get("cost"))
    return None if infra and cost == 0 else cost


def _trial(path: str, at: str, row: object) -> Trial:
    if type(row) is not dict:
        raise _bad(path, at, row, "an object (one row per test and provider)")
    get = row.get
    success = get("success", _MISSING)
    if type(success) is not bool:
        raise _bad(path, f"{at}.success", success, "true or false")
    reason = get("failureReason", _MISSING)
    if type(reason) is not int or reason not in _FAILURE_REASONS:
        raise _bad(path, f"{at}.failureReason", reason, "0 (ok), 1 (assertion failed) or 2 (error)")
    error = get("error")
    if error is not None and type(error) is not str:
        raise _bad(path, f"{at}.error", error, "a string or null")

    response = _object(path, at, ".response", get("response"))
    response_meta = _object(path, at, ".response.metadata", response.get("metadata"))
    row_meta = _object(path, at, ".metadata", get("metadata"))
    meta: Sources = ((".response.metadata", response_meta), (".metadata", row_meta))

    turns_name = "num_turns"
    turns_where, turns = _first(meta, turns_name)
    if turns is None:
        turns_name = "numTurns"
        turns_where, turns = _first(meta, turns_name)
    repeat_where, repeat = _first(meta, "repeat_index")
    latency = _number(path, at, ".latencyMs", get("latencyMs"))
    duration = latency
    if duration is None:
        for name in ("duration_ms", "durationMs"):
            duration_where, duration = _first(meta, name)
            if duration is not None:
                duration = _number(path, at, f"{duration_where}.{name}", duration)
                break
    test_case = get("testCase")
    test_meta = test_case.get("metadata") if type(test_case) is dict else None
    tier_sources = (*meta, (".testCase.metadata", _object(path, at, ".testCase.metadata", test_meta)))
    # A grader process killed (e.g. by Ctrl+C) is an outage of the grading, not the agent's failure:
    # promptfoo records it as a failed assertion with this message. `passhat regrade` grades it again.
    grader_crashed = reason == 1 and "Error running Python script" in (error or "")
    infra_error = reason == 2 or grader_crashed
    test_index = get("testIdx")  # read only to place a cut-off row: anything but a count is ignored
    return Trial(
        task=_task_id(path, at, row, meta),
        provider=_provider(path, at, get("provider", _MISSING)),
        repeat_index=_count(path, at, repeat_where, "repeat_index", repeat),
        passed=success and not infra_error,
        infra_error=infra_error,
        error=error,
        cost_usd=_cost(path, at, row, response, meta, infra_error),
        turns=_count(path, at, turns_where, turns_name, turns),
        latency_ms=latency,
        metadata={**row_meta, **response_meta},
        tier=_tier(path, at, tier_sources),
        duration_ms=duration,
        clean_exit=_clean_exit(meta),
        unscored=not infra_error and unscored_by_judge(row),
        judged="judge_unscored" in (get("namedScores") or {}),
        scripted_model=any(source.get("scripted_model") is True for _, source in meta),
        test_index=test_index if type(test_index) is int and test_index >= 0 else None,
        interrupted=cut_off(reason, error, repeat),
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
    if path.endswith(".jsonl"):
        rows = ((f"line {line}: row", row) for line, row in jsonl_rows(path, source))
    else:
        bad = functools.partial(_bad, path)
        numbered = enumerate(json_rows(path, source, bad, _version_problem, on_member=on_member))
        rows = ((f"results.results[{index}]", row) for index, row in numbered)
    try:
        for at, row in rows:
            try:
                trial = _trial(path, at, row)
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
            for line, row in jsonl_rows(path, handle, limit=start if part == "head" else None):
                yield _trial(path, f"line {line}: row", row)
        elif part == "tail":
            for index, row in enumerate(json_tail_rows(path, handle, start, on_member)):
                yield _trial(path, f"results.results[+{index}]", row)
        else:
            try:
                rows = json_rows(path, handle, functools.partial(_bad, path), _version_problem, start, on_member)
                for index, row in enumerate(rows):
                    yield _trial(path, f"results.results[{index}]", row)
            except SplitReached:
                return
            raise SplitUnsafe  # the rows ended before `start`: it was not a row of results.results


def load_trials(path: str | Path) -> list[Trial]:
    """Every row of a Promptfoo results file as a Trial, in file order."""
    return list(iter_trials(path))
