"""Rows of a trial cut off by Ctrl+C, and which repeat each one was.

On SIGINT promptfoo 0.123.1 pauses the eval and shuts its Python workers down; the provider call in flight is
rejected and saved as an error row (failureReason 2) whose `error` is "Error: Worker shutting down" (a call
still queued for a worker: "Worker pool shutting down") plus a Node stack. The provider never answered, so the
row has none of its metadata: no `repeat_index`. `promptfoo eval --resume` skips every step that has a row,
this one too; only `promptfoo eval --retry-errors --repeat N` runs it again.

The row keeps promptfoo's `testIdx`, the index of the (test, repeat) step: promptfoo numbers a test's repeats
one after another (evaluator `appendRunEvalOptionsForTestCase`: testIdx = the test's first index + repeat, for a
test with one set of vars, as passhat's tasks are). A finished row of the same task carries both testIdx and
`repeat_index`, so their difference places the cut-off row. When the finished rows disagree on it (a test with
several sets of vars) or there is none, the repeat is not known, and said so.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

# the call in flight, a call waiting for a worker, a call waiting in the adaptive scheduler's queue (its
# SlotQueue.dispose() when the eval pauses): each saved as an error row the provider never answered
SHUTDOWN_ERRORS = ("Worker shutting down", "Worker pool shutting down", "Queue disposed")


def cut_off(failure_reason: int, error: str | None, repeat_index: object) -> bool:
    """Whether a row is promptfoo's record of a provider call it cut off when the eval was interrupted."""
    if failure_reason != 2 or repeat_index is not None or not error:
        return False
    first = error.lstrip().split("\n", 1)[0].strip()
    return first.removeprefix("Error: ") in SHUTDOWN_ERRORS


def repeats_of(offsets: Collection[int], test_indexes: Iterable[int | None]) -> tuple[int | None, ...]:
    """The repeat of each cut-off row (by its testIdx), or None where it cannot be placed; known ones first, sorted.

    `offsets` holds the values of testIdx - repeat_index among the finished rows of the same task and provider: one
    value when every repeat of the task is one step.
    """
    offset = next(iter(offsets)) if len(offsets) == 1 else None
    found = [None if offset is None or index is None or index < offset else index - offset for index in test_indexes]
    return (*sorted(r for r in found if r is not None), *(r for r in found if r is None))
