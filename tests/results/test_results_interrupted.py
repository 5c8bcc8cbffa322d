"""results._interrupted: which rows are promptfoo's record of a call it cut off on Ctrl+C, and their repeats.

The row shapes are promptfoo 0.123.1's (tests/report/data/ctrl-c-then-resume holds a real file); the report's
use of them is tested in tests/report/test_report_interrupted.py.
"""

from __future__ import annotations

from collections import Counter

import pytest

from passhat.results._interrupted import cut_off, repeats_of

NODE_STACK = "\n    at PythonWorker.shutdown (file:///…/providers-BUaNtf-O.js:18202:48)\n    at Array.map (<anonymous>)"


@pytest.mark.parametrize(
    ("reason", "error", "repeat", "expected"),
    [
        pytest.param(2, "Error: Worker shutting down" + NODE_STACK, None, True, id="promptfoo-0.123.1"),
        pytest.param(2, "Error: Worker pool shutting down", None, True, id="queued-call"),
        pytest.param(2, "Worker shutting down", None, True, id="no-Error-prefix"),
        pytest.param(2, "Error: Queue disposed" + NODE_STACK, None, True, id="queued-in-the-adaptive-scheduler"),
        pytest.param(2, "Error: Worker shutting down", 4, False, id="the-provider-answered"),
        pytest.param(2, "Error: Worker crashed", None, False, id="a-crash-is-not-ctrl-c"),
        pytest.param(2, "passhat: the state dir is not writable: Worker shutting down", None, False, id="not-first"),
        pytest.param(2, None, None, False, id="no-error-text"),
        pytest.param(1, "Error: Worker shutting down", None, False, id="a-failed-assertion"),
    ],
)
def test_cut_off(reason: int, error: str | None, repeat: int | None, expected: bool) -> None:
    assert cut_off(reason, error, repeat) is expected


def test_repeats_come_from_the_offset_of_the_finished_rows() -> None:
    # --repeat 10, the second test: its repeats are testIdx 10..19, so testIdx - repeat_index = 10 in every row;
    # the cut-off rows at testIdx 14 and 12 are repeats 4 and 2 (sorted)
    assert repeats_of(Counter({10: 8}), [14, 12]) == (2, 4)


@pytest.mark.parametrize(
    ("offsets", "indexes", "expected"),
    [
        pytest.param(Counter(), [4], (None,), id="no-finished-row"),
        pytest.param(Counter({0: 3, 5: 2}), [4], (None,), id="rows-disagree"),  # a test with several sets of vars
        pytest.param(Counter({10: 3}), [None], (None,), id="no-testIdx"),
        pytest.param(Counter({10: 3}), [3], (None,), id="before-the-first-repeat"),
        pytest.param(Counter({10: 3}), [None, 11], (1, None), id="known-first"),
    ],
)
def test_a_repeat_that_cannot_be_placed_is_none(
    offsets: Counter[int], indexes: list[int | None], expected: tuple[int | None, ...]
) -> None:
    assert repeats_of(offsets, indexes) == expected
