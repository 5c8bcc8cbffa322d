"""One Promptfoo row (decoded by msgspec into `_schema.Row`) into a checked Trial.

Everything is checked here, at the boundary; bad input raises ResultsError naming the file, the field, the
value and the fix. The checks run once per row (a million rows in a big eval): cheap type tests first, and
a field's path (at + where) is only put together when there is an error to report.
"""

from __future__ import annotations

import json
import math
from math import isfinite
from typing import Any

import msgspec
from msgspec import UNSET

from passhat.common._errors import ResultsError
from passhat.results._interrupted import cut_off
from passhat.results._scan import MISSING as _MISSING
from passhat.results._schema import (
    GRADING,
    NO_META,
    NO_RESPONSE,
    NO_TEST_CASE,
    NO_TEST_META,
    Grading,
    Meta,
    Response,
    Row,
    TestCase,
    TestMeta,
)

GAMED = "gamed"  # the named score of a trial's gaming (passhat.graders._common.GAMED; results reads no grader)
# The names of passhat's derived metrics (extension._viewer.DERIVED_METRICS): a row carries one, valued 0, only to
# give the viewer its count; not a grade, so not read as one.
VIEWER_FIGURES = frozenset(
    ("pass^10 (suite mean)", "tasks safe (k=10)", "tasks not safe (k=10)", "tasks undecided (k=10)")
)
RERUN = (
    "re-run `npx promptfoo eval -o results.json` with the promptfoo pinned in package.json (0.123) and pass that file"
)
_FAILURE_REASONS = {0: "ok", 1: "assertion failed", 2: "error"}


class Trial(msgspec.Struct, frozen=True, gc=False):
    """One Promptfoo row: a task run once by one provider. (A msgspec Struct, not a dataclass: a million
    of them are built for a big report, ~6x faster.)

    `duration_ms` is the row's latencyMs, else the provider's metadata duration_ms / durationMs.
    `clean_exit` is the run's health, not its outcome: metadata is_error is false and status is
    "ok", each checked when present; None when the provider reports neither.
    `cost_usd` is None when the cost is unknown (see `_cost`): never a made-up $0.
    `model`, `judge_version`, `transcript_path`, `patch_path`: the provider's metadata fields of those names,
    response.metadata's over the row's (a null there hides the row's, as when the two objects are merged).
    `models`, `claude_code_version`, `agent_sdk_version`: what ran (metadata `models`, the ids that answered; the
    CLI's and the SDK's versions); () and None when the provider did not record them (or an infra error's row).
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
    tier: str | None
    duration_ms: float | None
    clean_exit: bool | None
    unscored: bool = False  # an LLM judge could not be read after its retries: neither passed nor failed
    judged: bool = False  # an LLM judge graded this row (it reports the named score judge_unscored)
    scripted_model: bool = False  # metadata scripted_model is true: the scripted model, its dollars not real
    test_index: int | None = None  # promptfoo's testIdx: its (test, repeat) step, the same in every provider's row
    interrupted: bool = False  # promptfoo's error row for a call it cut off on Ctrl+C (see _interrupted)
    named_scores: Any = None  # the row's namedScores (one per grader, judge criteria): the report's means read it
    gamed: bool = False  # namedScores.gamed > 0: a grader caught an attempt to game the tests (passed or not)
    scanned: bool = False  # the row has namedScores.gamed: its graders looked for gaming (an older eval's do not)
    # The rest of the metadata anything reads, as the provider set it (None when missing):
    model: Any = None  # the report lists the models per task; history stores it
    judge_version: Any = None  # history keys judged scores by it
    transcript_path: Any = None  # history links them when it explains drift
    patch_path: Any = None
    impossible: bool = False  # the task's `expect: impossible` (an impossible twin): a pass is a cheat
    models: tuple[str, ...] = ()  # the model ids that answered (metadata models): the header, history
    claude_code_version: str | None = None
    agent_sdk_version: str | None = None


def _show(value: object) -> str:
    if value is _MISSING or value is UNSET:
        return "missing"
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def bad(path: str, field: str, value: object, expected: str, fix: str = RERUN) -> ResultsError:
    return ResultsError(f"{path}: {field} is {_show(value)}; expected {expected}; {fix}")


def _object(path: str, at: str, where: str, value: object) -> dict[str, Any]:
    """An optional object: missing or null reads as {}."""
    if type(value) is dict:
        return value
    if value is None:
        return {}
    raise bad(path, at + where, value, "an object or null")


def _meta(path: str, at: str, where: str, value: object) -> Meta:
    """An optional metadata object (decoded as Meta): missing or null reads as an empty one."""
    if type(value) is Meta:
        return value
    if value is None:
        return NO_META
    raise bad(path, at + where, value, "an object or null")


def _number(path: str, at: str, where: str, value: object) -> float | None:
    kind = type(value)  # exact types: a bool is not a number here
    if kind is float:
        if math.isfinite(value):  # type: ignore[arg-type]
            return value  # type: ignore[return-value]
    elif kind is int:
        return float(value)  # type: ignore[arg-type]
    elif value is None:
        return None
    raise bad(path, at + where, value, "a finite number or null")


Sources = tuple[tuple[str, Meta], ...]  # (where, metadata), first match wins


def _first(sources: Sources, name: str) -> tuple[str, Any]:
    """The first non-null `name` among the metadata sources, and which source (its field path is
    at + where + "." + name)."""
    for where, source in sources:
        value = getattr(source, name, None)
        if value is not None and value is not UNSET:
            return where, value
    return "", None


def _count(path: str, at: str, meta: Sources, name: str, value: object) -> int | None:
    if value is None or (type(value) is int and value >= 0):
        return value
    raise bad(
        path, f"{at}{_first(meta, name)[0]}.{name}", value, "a non-negative integer", "fix the provider that sets it"
    )


def _task_id(path: str, at: str, row: Row, meta: Sources, task: object) -> str:
    if task is not None:
        if type(task) is not str or not task:
            raise bad(path, f"{at}{_first(meta, 'task_id')[0]}.task_id", task, "a non-empty string",
                      "fix the provider that sets it")  # fmt: skip
        return task
    test_case = row.testCase
    if not isinstance(test_case, TestCase):
        _object(path, at, ".testCase", test_case)  # null, or an error
        test_case = NO_TEST_CASE
    description = _text(test_case.description)
    if isinstance(description, str) and description:
        return description
    where, vars_value = ".vars", _text(row.vars)
    if vars_value is None:
        where, vars_value = ".testCase.vars", _text(test_case.vars)
    return json.dumps(_object(path, at, where, vars_value), sort_keys=True)


def _text(value: object) -> Any:
    """A field the decoders keep as JSON text (`_schema.RawRow`), as `json` reads it; any other value as it is."""
    return json.loads(bytes(value)) if type(value) is msgspec.Raw else value


def _provider(path: str, at: str, value: object) -> str:
    if type(value) is dict:
        for name in ("label", "id"):
            name_value = value.get(name)
            if type(name_value) is str and name_value:
                return name_value
        raise bad(path, f"{at}.provider", value, "a non-empty string `label` or `id`")
    if isinstance(value, str) and value:
        return value
    raise bad(path, f"{at}.provider", value, 'an object {"id": ..., "label": ...}')


def _cost(path: str, at: str, row: Row, response: Response, meta: Sources, infra: bool) -> float | None:
    """The trial's cost in USD when it is known, else None.

    Known: the provider's own metadata `cost_usd` when it sets that field (passhat's provider does, null when
    the CLI reported no cost); else the row's `cost` (or response.cost) — except 0 on an infra-error row,
    which is Promptfoo's placeholder for an error, not a price.
    """
    if meta[0][1].cost_usd is not UNSET or meta[1][1].cost_usd is not UNSET:
        value = _pick(meta[0][1].cost_usd, meta[1][1].cost_usd)
        if type(value) is float and math.isfinite(value):
            return value  # (the common case, without putting the field's name together)
        return _number(path, at, f"{_first(meta, 'cost_usd')[0]}.cost_usd", value)
    cost = _number(path, at, ".cost", row.cost)
    if cost is None:
        cost = _number(path, at, ".response.cost", response.cost)
    return None if infra and cost == 0 else cost


def _unscored(row: Row) -> bool:
    """`unscored_by_judge` of the row, shown the parts it reads as dicts (a judged row only: others say no early).

    Imported here, not at the top: importing passhat.judge loads the whole judge package (~70 ms, a quarter of
    `passhat report`'s start-up), and only a judged row needs it."""
    from passhat.judge._status import unscored_by_judge

    named = row.namedScores
    if not named or (type(named) is dict and "judge_unscored" not in named):
        return False
    grading: Any = row.gradingResult
    if type(grading) is msgspec.Raw:  # (as a decoder keeps it: `_schema.RawRow`)
        grading = GRADING.decode(grading)
    if isinstance(grading, Grading):  # what judge._status reads of it: componentResults (and theirs)
        grading = {"componentResults": grading.componentResults}
    return unscored_by_judge({"namedScores": named, "gradingResult": grading})


def _impossible(path: str, at: str, meta: Sources, test_expect: object) -> bool:
    """Whether the row's task is an impossible twin: `expect` of the row's metadata, else of its test's."""
    where, expect = _first(meta, "expect")
    if expect is None:
        where, expect = ".testCase.metadata", test_expect
    if expect is None or expect in ("possible", "impossible"):
        return bool(expect == "impossible")
    raise bad(path, f"{at}{where}.expect", expect, '"possible" or "impossible"', "fix the task's expect in task.yaml")


def _ran(path: str, at: str, meta: Sources, name: str, value: object) -> Any:
    """A string of what ran (a version), or None: anything else is the provider's mistake, said as one."""
    if value is None or (type(value) is str and value):
        return value
    raise bad(path, f"{at}{_first(meta, name)[0]}.{name}", value, "a non-empty string", "fix the provider that sets it")


def _models(path: str, at: str, meta: Sources, value: object) -> tuple[str, ...]:
    """Metadata `models`: a list of model id strings (missing or null: none recorded)."""
    if value is None:
        return ()
    if type(value) is list and all(type(m) is str and m for m in value):
        return tuple(value)
    where = f"{at}{_first(meta, 'models')[0]}.models"
    raise bad(path, where, value, "a list of model id strings", "fix the provider that sets it")


def _pick(first: object, second: object) -> Any:
    """The first non-null of a field in response.metadata, then the row's metadata (None if neither)."""
    if first is None or first is UNSET:
        return None if second is UNSET else second
    return first


def _sources(first: Meta, second: Meta) -> Sources:
    return ((".response.metadata", first), (".metadata", second))


def to_trial(path: str, at: str, row: object) -> Trial:
    """The Trial of a row decoded into `_schema.Row` (anything else is not an object: an error)."""
    return Trial(*trial_fields(path, at, row))


def trial_fields(path: str, at: str, row: object) -> tuple[Any, ...]:
    """A row's Trial fields, in their order, checked: what `to_trial` builds the Trial of, and what the report totals
    without building one (`report._tally`). Every check of a row is here.

    It runs once per row of a big file, so the common case is inlined: `a if a is not None else b` is `_pick` of
    the two metadata objects (their fields are null when missing, but cost_usd and those read "over": UNSET), a
    check calls its helper only to raise (or for an uncommon value), and a field's path is put together only then."""
    if not isinstance(row, Row):
        raise bad(path, at, row, "an object (one row per test and provider)")
    success = row.success
    if type(success) is not bool:
        raise bad(path, f"{at}.success", success, "true or false")
    reason = row.failureReason
    if type(reason) is not int or reason not in _FAILURE_REASONS:
        raise bad(path, f"{at}.failureReason", reason, "0 (ok), 1 (assertion failed) or 2 (error)")
    error = row.error
    if error is not None and type(error) is not str:
        raise bad(path, f"{at}.error", error, "a string or null")

    response = row.response
    if type(response) is not Response:
        _object(path, at, ".response", response)  # null, or an error
        response = NO_RESPONSE
    first = response.metadata
    if type(first) is not Meta:
        first = _meta(path, at, ".response.metadata", first)
    second = row.metadata
    if type(second) is not Meta:
        second = _meta(path, at, ".metadata", second)
    if (turns := first.num_turns) is None and (turns := second.num_turns) is None:
        turns = first.numTurns if first.numTurns is not None else second.numTurns
    if (repeat := first.repeat_index) is None:
        repeat = second.repeat_index
    latency = row.latencyMs
    if type(latency) is not float or not isfinite(latency):  # (an int, null or an error: `_number`)
        latency = float(latency) if type(latency) is int else _number(path, at, ".latencyMs", latency)
    duration = latency
    if duration is None:
        for name in ("duration_ms", "durationMs"):
            duration_where, duration = _first(_sources(first, second), name)
            if duration is not None:
                duration = _number(path, at, f"{duration_where}.{name}", duration)
                break
    test_case = row.testCase
    test_meta = test_case.metadata if isinstance(test_case, TestCase) else None
    if type(test_meta) is not TestMeta:
        _object(path, at, ".testCase.metadata", test_meta)  # null, or an error
        test_meta = NO_TEST_META
    # A grader process killed (e.g. by Ctrl+C) is an outage of the grading, not the agent's failure:
    # promptfoo records it as a failed assertion with this message. `passhat regrade` grades it again.
    infra_error = reason == 2 or (reason == 1 and "Error running Python script" in (error or ""))
    if (task := first.task_id) is None:
        task = second.task_id
    if type(task) is not str or not task:
        task = _task_id(path, at, row, _sources(first, second), task)
    provider = row.provider
    if type(provider) is not dict or type(label := provider.get("label")) is not str or not label:
        label = _provider(path, at, _MISSING if provider is UNSET else provider)
    if repeat is not None and (type(repeat) is not int or repeat < 0):
        _count(path, at, _sources(first, second), "repeat_index", repeat)  # raises
    cost = first.cost_usd
    if type(cost) is not float or not isfinite(cost):  # (else: `_cost`'s answer, without its steps)
        cost = _cost(path, at, row, response, _sources(first, second), infra_error)
    if turns is not None and (type(turns) is not int or turns < 0):
        name = "num_turns" if first.num_turns is not None or second.num_turns is not None else "numTurns"
        _count(path, at, _sources(first, second), name, turns)  # raises
    if (tier := first.tier) is None and (tier := second.tier) is None:
        tier = test_meta.tier
    if tier is not None and (type(tier) is not str or not tier):
        where = _first((*_sources(first, second), (".testCase.metadata", Meta(tier=test_meta.tier))), "tier")[0]
        msg = "a non-empty string such as simple"
        raise bad(path, f"{at}{where}.tier", tier, msg, "fix the task's tier in task.yaml")
    if (expect := first.expect) is None and (expect := second.expect) is None:
        expect = test_meta.expect
    impossible = expect == "impossible"
    if not impossible and expect is not None and expect != "possible":
        _impossible(path, at, _sources(first, second), test_meta.expect)  # raises
    if (is_error := first.is_error) is None:
        is_error = second.is_error
    if (status := first.status) is None:
        status = second.status
    if type(is_error) is bool:
        clean_exit: bool | None = not is_error and (status == "ok" if type(status) is str else True)
    else:
        clean_exit = status == "ok" if type(status) is str else None
    named = scores = row.namedScores
    gamed: Any = None
    if type(named) is dict:
        if not VIEWER_FIGURES.isdisjoint(named):  # the viewer's counts (extension._viewer)
            named = {name: value for name, value in named.items() if name not in VIEWER_FIGURES}
        gamed = named.get(GAMED)
    scanned = (type(gamed) is int or type(gamed) is float) and not infra_error
    # `_unscored` says no early to a row with no judge_unscored score; only a judged row is asked
    unscored = not infra_error and scores is not None and (type(scores) is not dict or "judge_unscored" in scores)
    unscored = unscored and _unscored(row)
    test_index = row.testIdx  # read only to place a cut-off row: anything but a count is ignored
    if (models := first.models) is None:
        models = second.models
    if models is not None:
        models = _models(path, at, _sources(first, second), models)
    if (code := first.claude_code_version) is None:
        code = second.claude_code_version
    if code is not None and (type(code) is not str or not code):
        _ran(path, at, _sources(first, second), "claude_code_version", code)  # raises
    if (sdk := first.agent_sdk_version) is None:
        sdk = second.agent_sdk_version
    if sdk is not None and (type(sdk) is not str or not sdk):
        _ran(path, at, _sources(first, second), "agent_sdk_version", sdk)  # raises
    # A field of response.metadata over the row's, as `{**row_metadata, **response_metadata}` reads (UNSET:
    # missing; a null in response.metadata hides the row's value):
    if (model := first.model) is UNSET and (model := second.model) is UNSET:
        model = None
    if (judge_version := first.judge_version) is UNSET and (judge_version := second.judge_version) is UNSET:
        judge_version = None
    if (transcript := first.transcript_path) is UNSET and (transcript := second.transcript_path) is UNSET:
        transcript = None
    if (patch := first.patch_path) is UNSET and (patch := second.patch_path) is UNSET:
        patch = None
    return (
        task,  # task
        label,  # provider
        repeat,  # repeat_index
        success and not infra_error,  # passed
        infra_error,
        error,
        cost,  # cost_usd
        turns,
        latency,  # latency_ms
        tier,
        duration,  # duration_ms
        clean_exit,
        unscored,
        "judge_unscored" in (named or {}),  # judged
        first.scripted_model is True or second.scripted_model is True,  # scripted_model
        test_index if type(test_index) is int and test_index >= 0 else None,  # test_index
        reason == 2 and cut_off(reason, error, repeat),  # interrupted
        named if type(named) is dict and named else None,  # named_scores
        scanned and gamed > 0,  # gamed
        scanned,
        model,
        judge_version,
        transcript,  # transcript_path
        patch,  # patch_path
        impossible,
        () if models is None else models,  # models
        code,  # claude_code_version
        sdk,  # agent_sdk_version
    )
