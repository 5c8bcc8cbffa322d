"""The fields of a Promptfoo row that passhat reads, as a msgspec schema: what the fast decoder builds.

Why msgspec: a row is ~2-3 KB of JSON of which the report reads a dozen fields. `json.loads` builds every
one of them as Python objects (the prompt, the output, token usage, the graders' results), ~70% of the
report's time on a big file; a msgspec Struct decoder skips the rest in C and builds only these, 3-4x
faster per row, with no hand-written parsing. The file's layout (the wrapper, row boundaries, errors with
json's own line and column) stays with the small scanner in `_scan`; the rows go to msgspec in batches.
(orjson was weighed too: it builds whole dicts like `json`, only faster, so it leaves the per-row cost
of objects nobody reads.)

Every field is typed loosely (`Any`, or a Struct in a union with every other JSON type), so any JSON row
decodes: the checks and their one-line errors stay in `_trial`, the same for every value. A
missing field is UNSET where "missing" and null read differently.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec
from msgspec import UNSET

_SCALAR = Union[bool, int, float, str, None]  # noqa: UP007
_JSON = Union[_SCALAR, list[Any]]  # noqa: UP007 - beside a Struct: any other JSON value


class Meta(msgspec.Struct, gc=False):
    """The provider's metadata fields anything of passhat reads (a row's `metadata` and `response.metadata`).
    Missing reads as null, but for the fields where "missing" and null read differently (`cost_usd`, and those
    response.metadata's null hides the row's: `_trial.to_trial`), UNSET. The rest is skipped in C: building every
    field of both objects as dicts was a third of a row's decoding.

    Fields (here and in every Struct below) are in the order promptfoo 0.123 writes them for passhat's provider
    (tests/report/data/ctrl-c-then-resume/results.json): msgspec looks a key up from the field after the last one
    it found, so in that order each key is found at its first try (~6% fewer instructions to decode a row)."""

    task_id: Any = None
    tier: Any = None
    repeat_index: Any = None
    status: Any = None
    is_error: Any = None
    num_turns: Any = None
    duration_ms: Any = None
    cost_usd: Any = UNSET
    patch_path: Any = UNSET
    transcript_path: Any = UNSET
    model: Any = UNSET
    scripted_model: Any = None
    # not written by passhat's provider for a trial (other providers, the judge, the task's metadata):
    numTurns: Any = None  # noqa: N815
    durationMs: Any = None  # noqa: N815
    judge_version: Any = UNSET
    expect: Any = None  # the task's `expect` (promptfoo copies the test's metadata into the row's)
    models: Any = None  # what ran (the report's header, the drift history): the model ids that answered,
    claude_code_version: Any = None  # the CLI's version and the Agent SDK's (passhat's provider sets them;
    agent_sdk_version: Any = None  # model_usage, the per-model figures beside them, is skipped)


class Response(msgspec.Struct, gc=False):
    cost: Any = None
    metadata: Meta | _JSON = None


class TestMeta(msgspec.Struct, gc=False):
    tier: Any = None
    expect: Any = None  # "impossible" for an impossible twin (graders._suite.promptfoo_test)


class TestCase(msgspec.Struct, gc=False):
    description: Any = None
    vars: Any = None
    metadata: TestMeta | _JSON = None


class Grading(msgspec.Struct, gc=False):
    componentResults: Any = None  # noqa: N815 - promptfoo's name; all of it: the judge reads nested ones


class RawTestCase(TestCase, gc=False):
    """A TestCase as the decoders build it: its `description` and `vars`, read only for a row with no task id, kept
    as text."""

    description: msgspec.Raw = msgspec.Raw(b"null")
    vars: msgspec.Raw = msgspec.Raw(b"null")


class Row(msgspec.Struct, gc=False):
    cost: Any = None
    error: Any = None
    gradingResult: Grading | _JSON = None  # noqa: N815
    latencyMs: Any = None  # noqa: N815
    namedScores: Any = None  # noqa: N815
    provider: Any = UNSET
    response: Response | _JSON = None
    success: Any = UNSET
    testCase: TestCase | _JSON = None  # noqa: N815
    testIdx: Any = None  # noqa: N815
    vars: Any = None
    metadata: Meta | _JSON = None
    failureReason: Any = UNSET  # noqa: N815


class RawRow(Row, gc=False):
    """A Row as the decoders build it (see RawTestCase); `msgspec.convert` of a dict builds a Row. Its
    `gradingResult`, the graders' results, is kept as its JSON text (msgspec.Raw, no objects) and read only for a
    judged row (`_trial._unscored`): half of a row's decoding time once went to building it."""

    gradingResult: msgspec.Raw = msgspec.Raw(b"null")  # type: ignore[assignment]  # noqa: N815
    testCase: RawTestCase | _JSON = None  # noqa: N815
    vars: msgspec.Raw = msgspec.Raw(b"null")  # (as RawTestCase.vars: `_trial._task_id` decodes it)


ROW = Union[Row, _JSON]  # noqa: UP007 - an element of results.results / a line, from a dict (convert)
RAW_ROW = Union[RawRow, _JSON]  # noqa: UP007 - the same, decoded from JSON text
GRADING = msgspec.json.Decoder(Union[Grading, _JSON])  # noqa: UP007 - a RawRow's gradingResult, when it is read
NO_META, NO_RESPONSE, NO_TEST_CASE, NO_TEST_META = Meta(), Response(), TestCase(), TestMeta()
