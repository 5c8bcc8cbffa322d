"""Read a Promptfoo 0.123 `promptfoo eval -o results.json` file into typed trials.

The file's shape: {"evalId", "results": {"version": 3, "results": [row, ...], "stats", ...},
"config", "shareableUrl", ...}. Each row is one trial: one test (repeat) x one provider.
Everything is checked here, at the boundary; bad input raises ResultsError naming the file,
the field, the value and the fix.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passhat._errors import ResultsError

RESULTS_VERSION = 3
_RERUN = (
    "re-run `npx promptfoo eval -o results.json` with the promptfoo pinned in package.json "
    "(0.123) and pass that file"
)
_FAILURE_REASONS = {0: "ok", 1: "assertion failed", 2: "error"}
_MISSING = object()


@dataclass(frozen=True)
class Trial:
    """One Promptfoo row: a task run once by one provider."""

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


def _show(value: object) -> str:
    if value is _MISSING:
        return "missing"
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _bad(path: str, field: str, value: object, expected: str, fix: str = _RERUN) -> ResultsError:
    return ResultsError(f"{path}: {field} is {_show(value)}; expected {expected}; {fix}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _object(path: str, field: str, value: object) -> dict[str, Any]:
    """An optional object: missing or null reads as {}."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad(path, field, value, "an object or null")
    return value


def _number(path: str, field: str, value: object) -> float | None:
    if value is None:
        return None
    if not _is_number(value):
        raise _bad(path, field, value, "a finite number or null")
    return float(value)


def _first(sources: list[tuple[str, dict[str, Any]]], name: str) -> tuple[str, Any]:
    """The first non-null `name` among (field prefix, metadata) sources, with its field path."""
    for prefix, source in sources:
        if source.get(name) is not None:
            return f"{prefix}.{name}", source[name]
    return "", None


def _int_field(path: str, field: str, value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _bad(path, field, value, "a non-negative integer", "fix the provider that sets it")
    return value


def _task_id(path: str, at: str, row: dict[str, Any], meta: list[tuple[str, dict[str, Any]]]) -> str:
    field, task = _first(meta, "task_id")
    if task is not None:
        if not isinstance(task, str) or not task:
            raise _bad(path, field, task, "a non-empty string", "fix the provider that sets it")
        return task
    test_case = _object(path, f"{at}.testCase", row.get("testCase"))
    description = test_case.get("description")
    if isinstance(description, str) and description:
        return description
    vars_field, vars_value = f"{at}.vars", row.get("vars")
    if vars_value is None:
        vars_field, vars_value = f"{at}.testCase.vars", test_case.get("vars")
    return json.dumps(_object(path, vars_field, vars_value), sort_keys=True)


def _provider(path: str, at: str, value: object) -> str:
    if isinstance(value, str) and value:
        return value
    if not isinstance(value, dict):
        raise _bad(path, f"{at}.provider", value, 'an object {"id": ..., "label": ...}')
    for name in ("label", "id"):
        if isinstance(value.get(name), str) and value[name]:
            return value[name]
    raise _bad(path, f"{at}.provider", value, "a non-empty string `label` or `id`")


def _trial(path: str, index: int, row: object) -> Trial:
    at = f"results.results[{index}]"
    if not isinstance(row, dict):
        raise _bad(path, at, row, "an object (one row per test and provider)")
    success = row.get("success", _MISSING)
    if not isinstance(success, bool):
        raise _bad(path, f"{at}.success", success, "true or false")
    reason = row.get("failureReason", _MISSING)
    if isinstance(reason, bool) or not isinstance(reason, int) or reason not in _FAILURE_REASONS:
        raise _bad(path, f"{at}.failureReason", reason, "0 (ok), 1 (assertion failed) or 2 (error)")
    error = row.get("error")
    if error is not None and not isinstance(error, str):
        raise _bad(path, f"{at}.error", error, "a string or null")

    response = _object(path, f"{at}.response", row.get("response"))
    response_meta = _object(path, f"{at}.response.metadata", response.get("metadata"))
    row_meta = _object(path, f"{at}.metadata", row.get("metadata"))
    meta = [(f"{at}.response.metadata", response_meta), (f"{at}.metadata", row_meta)]

    cost = _number(path, f"{at}.cost", row.get("cost"))
    if cost is None:
        cost = _number(path, f"{at}.response.cost", response.get("cost"))
    turns_field, turns = _first(meta, "num_turns")
    if turns is None:
        turns_field, turns = _first(meta, "numTurns")
    repeat_field, repeat = _first(meta, "repeat_index")
    infra_error = reason == 2
    return Trial(
        task=_task_id(path, at, row, meta),
        provider=_provider(path, at, row.get("provider", _MISSING)),
        repeat_index=_int_field(path, repeat_field, repeat),
        passed=success and not infra_error,
        infra_error=infra_error,
        error=error,
        cost_usd=cost,
        turns=_int_field(path, turns_field, turns),
        latency_ms=_number(path, f"{at}.latencyMs", row.get("latencyMs")),
        metadata={**row_meta, **response_meta},
    )


def _read_json(path: str) -> object:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        msg = f"{path}: no such file; write it with `npx promptfoo eval -o {path}` or pass the right path"
        raise ResultsError(msg) from None
    except IsADirectoryError:
        msg = f"{path}: is a directory; pass the results.json file written by `promptfoo eval -o`"
        raise ResultsError(msg) from None
    except UnicodeDecodeError as error:
        msg = f"{path}: not UTF-8 text (byte {error.start}); pass the .json file written by `promptfoo eval -o`"
        raise ResultsError(msg) from None
    except OSError as error:
        msg = f"{path}: cannot be read ({error.strerror}); check its permissions"
        raise ResultsError(msg) from None
    if not text.strip():
        msg = f"{path}: file is empty; the eval did not finish writing it, {_RERUN}"
        raise ResultsError(msg)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        msg = (
            f"{path}: not valid JSON at line {error.lineno}, column {error.colno} ({error.msg}); "
            "pass the .json file written by `promptfoo eval -o results.json` (not .jsonl, .csv or .yaml)"
        )
        raise ResultsError(msg) from None


def load_trials(path: str | Path) -> list[Trial]:
    """Every row of a Promptfoo results file as a Trial, in file order."""
    path = str(path)
    data = _read_json(path)
    if not isinstance(data, dict):
        raise _bad(path, "the top level", data, 'an object {"evalId", "results", "config", ...}')
    results = data.get("results", _MISSING)
    if not isinstance(results, dict):
        raise _bad(path, "results", results, 'an object {"version": 3, "results": [...], ...}')
    version = results.get("version", _MISSING)
    if version != RESULTS_VERSION or isinstance(version, bool):
        raise _bad(
            path,
            "results.version",
            version,
            f"{RESULTS_VERSION} (passhat reads the results format of promptfoo 0.123)",
        )
    rows = results.get("results", _MISSING)
    if not isinstance(rows, list):
        raise _bad(path, "results.results", rows, "an array of rows")
    if not rows:
        msg = (
            f"{path}: results.results is [], so there is nothing to report; "
            "check the eval's tests and providers and re-run it"
        )
        raise ResultsError(msg)
    return [_trial(path, index, row) for index, row in enumerate(rows)]
