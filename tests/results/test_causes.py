"""results._causes: one cause per line of the report, whatever trial it happened to (issue 23: each reason
carried "trial N" and a folder, so one cause showed as N separate "1x" lines, and long ones lost their fix)."""

from __future__ import annotations

import pytest

from passhat.results._causes import MAX_CHARS, cause, with_repeat

FIX = "Bring the endpoint back, then `promptfoo eval --retry-errors --repeat N` runs these trials again"


@pytest.mark.parametrize(
    "errors",
    [
        pytest.param(
            [f"infrastructure error in task py-median trial {i}: the model API at http://127.0.0.1:4242 could not "
             f"be reached 3 times in a row (last: unreachable: ConnectionRefusedError); {FIX}" for i in range(6)],
            id="trial-numbers",
        ),
        pytest.param(
            [f"infrastructure error in task t trial {i}: cannot create /s/.passhat/artifacts/eval-cPw-2026-12-02T07:54:"
             f"24/t/r00{i}-{h}0a1b2c3 (Permission denied); make the state dir /s writable" for i, h in enumerate("abc")],
            id="trial-folders",
        ),
        pytest.param(
            [f"infrastructure error in task t trial {i}: the model endpoint http://127.0.0.1:9 gave no answer to the "
             f"last {n} trials (first error: x) and still does not" for i, n in ((3, 3), (4, 4), (5, 5))],
            id="counts-so-far",
        ),
        pytest.param(
            [f"infrastructure error in task t trial 1: the model API at http://h:1 never answered: {n} model request(s), "
             f"none answered (first: no answer) in {s} s" for n, s in ((1, 12), (2, 14.5))],
            id="requests-and-seconds",
        ),
        pytest.param(["x\n  at line 1", "x\n  at line 2", "\n  x  "], id="first-line-only"),
    ],
)  # fmt: skip
def test_one_cause_is_one_key(errors: list[str]) -> None:
    assert len({cause(error) for error in errors}) == 1, {cause(error) for error in errors}


def test_the_key_keeps_what_tells_causes_apart() -> None:
    refused = (
        "infrastructure error in task t trial 1: the model API at http://127.0.0.1:{} refused the credential (HTTP {})"
    )
    keys = {cause(refused.format(port, status)) for port in (4242, 4243) for status in (401, 403)}
    assert len(keys) == 4  # endpoint and status are the cause, not noise
    assert cause(refused.format(4242, 403)) == (
        "infrastructure error in task t: the model API at http://127.0.0.1:4242 refused the credential (HTTP 403)"
    )


def test_a_long_cause_keeps_its_fix_whole() -> None:
    error = f"infrastructure error in task t trial 2: the CLI ended the session: {'x' * 2000}; {FIX}"
    key = cause(error)
    assert len(key) == MAX_CHARS and key.endswith(FIX) and key.startswith("infrastructure error in task t: ")


def test_no_text_is_said() -> None:
    assert cause(None) == cause("  \n ") == "(no error text)"


def test_the_hint_gets_the_real_repeat() -> None:
    assert with_repeat(FIX, 10).endswith("`promptfoo eval --retry-errors --repeat 10` runs these trials again")
    assert with_repeat(FIX, None) == FIX
