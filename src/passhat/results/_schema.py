"""The fields of a Promptfoo row that passhat reads, as a msgspec schema: what the fast decoder builds.

Why msgspec: a row is ~2-3 KB of JSON of which the report reads a dozen fields. `json.loads` builds every
one of them as Python objects (the prompt, the output, token usage, the graders' results), ~70% of the
report's time on a big file; a msgspec Struct decoder skips the rest in C and builds only these, 3-4x
faster per row, with no hand-written parsing. The file's layout (the wrapper, row boundaries, errors with
json's own line and column) stays with the small scanner in `_scan`; the rows go to msgspec in batches.
(orjson was weighed too: it builds whole dicts like `json`, only faster, so it leaves the per-row cost
of objects nobody reads.)

Every field is typed loosely (`Any`, or a Struct in a union with every other JSON type), so any JSON row
decodes: the checks and their one-line errors stay in `_rows._trial`, the same for every value. A
missing field is UNSET where "missing" and null read differently in an error.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec
from msgspec import UNSET

_SCALAR = Union[bool, int, float, str, None]  # noqa: UP007
_JSON = Union[_SCALAR, list[Any]]  # noqa: UP007 - beside a Struct: any other JSON value


class Response(msgspec.Struct, gc=False):
    metadata: Any = None
    cost: Any = None


class TestMeta(msgspec.Struct, gc=False):
    tier: Any = None


class TestCase(msgspec.Struct, gc=False):
    description: Any = None
    vars: Any = None
    metadata: TestMeta | _JSON = None


class Grading(msgspec.Struct, gc=False):
    componentResults: Any = None  # noqa: N815 - promptfoo's name; all of it: the judge reads nested ones


class Row(msgspec.Struct, gc=False):
    success: Any = UNSET
    failureReason: Any = UNSET  # noqa: N815
    error: Any = None
    response: Response | _JSON = None
    metadata: Any = None
    latencyMs: Any = None  # noqa: N815
    testCase: TestCase | _JSON = None  # noqa: N815
    vars: Any = None
    provider: Any = UNSET
    cost: Any = None
    namedScores: Any = None  # noqa: N815
    gradingResult: Grading | _JSON = None  # noqa: N815
    testIdx: Any = None  # noqa: N815


ROW = Union[Row, _JSON]  # noqa: UP007 - an element of results.results / a line
NO_RESPONSE, NO_TEST_CASE, NO_TEST_META = Response(), TestCase(), TestMeta()
