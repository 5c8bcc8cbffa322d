"""The verdict's estimate and the suite's intervals: no figure is printed beside an interval that leaves it out."""

from __future__ import annotations

from fractions import Fraction

import pytest

from passhat.stats import pass_hat_k_interval, pass_hat_k_plug_in, wilson_interval
from passhat.stats._bootstrap import mean_pass_hat_k_bootstrap
from passhat.stats._suite import MIN_TASKS, mean_pass_hat_k, shown_interval


def test_the_plug_in_is_c_over_n_to_the_k_exactly() -> None:
    # 9/10 at k = 10: (9/10)^10 = 3486784401 / 10^10 = 0.3486784401; the unbiased C(9,10)/C(10,10) is 0.
    assert pass_hat_k_plug_in(10, 9, 10) == 3486784401 / 10**10
    assert pass_hat_k_plug_in(7, 3, 5) == float(Fraction(3, 7) ** 5)
    assert pass_hat_k_plug_in(3, 1, 5) is None  # n < k: undefined, as everywhere (never (1/1)^10)
    assert pass_hat_k_plug_in(1, 1, 10) is None
    assert pass_hat_k_plug_in(0, 0, 3) is None  # no scored trial: no estimate, not 0


def test_wilson_holds_its_own_rate_at_every_count() -> None:
    # Floats left 0/10 out (low 2.8e-17) and 13/13 out (high 0.9999999999999999) before the ends were made exact.
    for n in range(1, 400):
        for c in range(n + 1):
            low, high = wilson_interval(n, c)
            assert low <= c / n <= high, (n, c, low, high)


def test_the_plug_in_lies_inside_the_verdicts_interval() -> None:
    for n in range(1, 61):
        for c in range(n + 1):
            for k in (1, 2, 3, 5, 7, 10, 20, 50):
                low, high = pass_hat_k_interval(n, c, k)
                estimate = pass_hat_k_plug_in(n, c, k)
                assert (estimate is None) == (n < k), (n, c, k)
                assert estimate is None or low <= estimate <= high, (n, c, k)


@pytest.mark.parametrize(
    ("tasks", "estimate", "interval", "shown"),
    [
        pytest.param(0, None, None, (None, "no task"), id="no-task"),
        pytest.param(1, 1.0, (1.0, 1.0), (None, "not enough tasks"), id="one-cluster"),
        pytest.param(MIN_TASKS - 1, 0.5, (0.2, 0.8), (None, "not enough tasks"), id="four"),
        pytest.param(MIN_TASKS, 0.5, (0.2, 0.8), ((0.2, 0.8), None), id="five"),
        pytest.param(20, 0.0, (0.15, 0.55), (None, "estimate outside"), id="outside"),
    ],
)
def test_which_suite_interval_is_shown(tasks: int, estimate, interval, shown) -> None:
    assert shown_interval(tasks, estimate, interval) == shown


def test_twenty_tasks_at_nine_of_ten_show_the_mean_inside_its_interval_at_k_10() -> None:
    # The suite's mean is of the per-task (c/n)^k: (9/10)^10 = 0.349 each. The bootstrap redraws c* ~ Bin(10, 0.9)
    # and the unbiased C(c*,10)/C(10,10), whose mean over the redraws is exactly (0.9)^10: its 95% interval (0.15-0.55,
    # exact law) holds the mean. With the unbiased mean (0 at 9/10) the interval left it out and was not shown.
    counts = [(10, 9)] * 20
    mean, found = mean_pass_hat_k(counts, 10), mean_pass_hat_k_bootstrap(counts, [10])[10]
    assert mean == 3486784401 / 10**10 and found is not None and found.interval[0] < mean < found.interval[1]
    assert shown_interval(20, mean, found.interval) == (found.interval, None)
