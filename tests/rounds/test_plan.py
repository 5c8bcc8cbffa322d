"""The stopping rule of `passhat eval --until-decided`, on counts: decided in round 1, never decided before
--max-trials, the budget forecast, and the rule's error rate under stopping."""

from __future__ import annotations

import random

import pytest

from passhat.rounds import Count, Settings, next_round
from passhat.stats._verdict import chance_to_decide, decide

SETTINGS = Settings(round=5, max_trials=60, budget_usd=None, k=10, safe_at=0.9)


def count(task: str, n: int, passes: int, cost: float = 0.0) -> Count:
    return Count(task, "claude-code", n, passes, n, cost * n, n if cost else 0)


def test_a_task_that_failed_in_round_1_is_decided_and_leaves() -> None:
    # 2/5 passed: the mixture's upper end for the rate is ~0.86, 0.86^10 < 0.9: not safe, whatever comes next.
    plan = next_round([count("broken", 5, 2), count("open", 5, 4)], {"broken": 5, "open": 5}, SETTINGS)
    assert (plan.tasks, plan.repeat, plan.stop) == (("open",), 5, None)


def test_every_task_decided_in_round_1_stops() -> None:
    plan = next_round([count("a", 5, 0), count("b", 5, 1)], {"a": 5, "b": 5}, SETTINGS)
    assert (plan.tasks, plan.stop) == ((), "every task is decided")


def test_a_task_never_decided_stops_at_max_trials() -> None:
    # 60/60 passed: pass^10 >= 0.9 needs p >= 0.9895 and 60 passes in a row do not show it (the mixture needs ~900).
    assert decide(60, 60, 10, 0.9, "mixture") is None
    plan = next_round([count("young", 60, 60)], {"young": 60}, SETTINGS)
    assert (plan.tasks, plan.stop) == ((), "the undecided tasks have had --max-trials 60 trials")


def test_the_last_round_is_cut_to_max_trials() -> None:
    plan = next_round([count("t", 5, 4)], {"t": 5}, Settings(10, 12, None, 10, 0.9))
    assert (plan.tasks, plan.repeat) == (("t",), 7)


def test_a_task_the_trials_left_are_unlikely_to_decide_stops_early() -> None:
    # 20/20: never safe within 60 (the mixture needs ~900 passes in a row), and not safe only if 5 or more of the
    # 40 left fail — 11% by the posterior predictive, below the even odds that keep a task going. 5/5 goes on (59%).
    assert chance_to_decide(20, 20, 40, 10, 0.9, "mixture") == pytest.approx(0.111, abs=0.001)
    plan = next_round([count("young", 20, 20), count("lucky", 5, 5)], {"young": 20, "lucky": 5}, SETTINGS)
    assert (plan.tasks, plan.beyond) == (("lucky",), ("young",))
    plan = next_round([count("young", 20, 20)], {"young": 20}, SETTINGS)
    assert (
        plan.tasks == ()
        and plan.stop is not None
        and "the trials --max-trials 60 leaves are unlikely (< 50%)" in plan.stop
    )


def test_chance_to_decide_against_a_brute_force_sum() -> None:
    """5/5 with 15 more: sum over every count of new passes x of its beta-binomial(15, 6, 1) weight (scipy), where
    decide() at 20 trials gives a verdict."""
    from scipy import stats as sp

    expected = sum(
        sp.betabinom.pmf(x, 15, 6, 1) for x in range(16) if decide(20, 5 + x, 10, 0.9, "mixture") is not None
    )
    assert chance_to_decide(5, 5, 15, 10, 0.9, "mixture") == pytest.approx(expected, rel=1e-9)


def test_a_task_is_open_while_any_provider_is_undecided() -> None:
    counts = [count("t", 5, 0), Count("t", "other", 5, 4, 5, 0.0, 0)]  # 0/5 decided, 4/5 open
    assert next_round(counts, {"t": 5}, SETTINGS).tasks == ("t",)


def test_the_budget_stops_before_a_round_would_cross_it() -> None:
    # 2 open tasks x 5 trials at $0.50 a trial: the next round is forecast at $5.00; $5.00 spent so far.
    counts = [count("a", 5, 4, cost=0.5), count("b", 5, 4, cost=0.5)]
    go = next_round(counts, {"a": 5, "b": 5}, Settings(5, 60, 10.0, 10, 0.9))
    assert (go.tasks, go.forecast_usd) == (("a", "b"), pytest.approx(5.0))
    stop = next_round(counts, {"a": 5, "b": 5}, Settings(5, 60, 9.99, 10, 0.9))
    assert (
        stop.tasks == () and stop.stop is not None and "would take the $5.00 spent past --budget-usd 9.99" in stop.stop
    )


@pytest.mark.parametrize("rate", [0.9895, 0.995, 0.97])
def test_the_rule_stopped_after_every_round_is_wrong_in_at_most_5_percent(rate: float) -> None:
    """Simulated runs of the rule (rounds of 5 up to 60): a wrong verdict (safe while p^10 < 0.9, not safe while
    p^10 >= 0.9) in at most 5% of them — 400 runs here, 10,000 in bench/verdict_coverage.py."""
    rng = random.Random(26)
    truth = rate**10 >= 0.9
    wrong = 0
    for _ in range(400):
        n = c = 0
        while n < 60:
            c += sum(rng.random() < rate for _ in range(5))
            n += 5
            verdict = decide(n, c, 10, 0.9, "mixture")
            if verdict is not None:
                wrong += (verdict == "safe") != truth
                break
    assert wrong / 400 <= 0.05
