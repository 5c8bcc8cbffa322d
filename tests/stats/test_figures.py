"""stats._figures: the one computation of the suite's figures every surface prints, what n trials can decide, and
each task's chance that its next k runs all pass — checked against scipy, an independent computation."""

from __future__ import annotations

import math

import pytest
from scipy import stats as scipy_stats

from passhat.stats._figures import (
    TaskCounts,
    next_runs_all_pass,
    not_safe_failures,
    safe_reach,
    suite_figures,
    task_decision,
)
from passhat.stats._verdict import decide


@pytest.mark.parametrize("k", [1, 3, 5, 10, 20])
@pytest.mark.parametrize(("n", "c"), [(0, 0), (1, 1), (2, 1), (10, 10), (10, 9), (10, 6), (10, 0), (37, 30)])
def test_next_runs_all_pass_is_the_beta_binomial_mass_at_k(n: int, c: int, k: int) -> None:
    # Uniform prior, posterior Beta(1 + c, 1 + n - c): k more runs all pass with the beta-binomial's P(X = k).
    assert next_runs_all_pass(n, c, k) == pytest.approx(scipy_stats.betabinom(k, 1 + c, 1 + n - c).pmf(k), rel=1e-12)


def test_next_runs_all_pass_in_words() -> None:
    assert next_runs_all_pass(10, 10, 10) == 11 / 21  # prod (11 + i) / (12 + i): it telescopes
    assert next_runs_all_pass(0, 0, 10) == 1 / 11  # no trial: the prior alone
    with pytest.raises(ValueError, match="0 <= passes <= n"):
        next_runs_all_pass(3, 4, 10)


def _clopper_pearson_low_of_all_passes(n: int) -> float:
    return float(scipy_stats.beta.ppf(0.025, n, 1))


@pytest.mark.parametrize(("k", "threshold"), [(10, 0.9), (3, 0.9), (10, 0.5), (1, 0.95), (5, 0.99)])
def test_safe_reach_is_the_fewest_passes_in_a_row_whose_interval_clears_the_threshold(k: int, threshold: float) -> None:
    # Clopper-Pearson's low end at n/n solves p^n = 0.025: safe once 0.025^(k/n) >= t, n >= k ln 0.025 / ln t.
    reach = safe_reach(k, threshold)
    assert reach == math.ceil(k * math.log(0.025) / math.log(threshold))
    assert reach is not None and _clopper_pearson_low_of_all_passes(reach) ** k >= threshold
    assert _clopper_pearson_low_of_all_passes(reach - 1) ** k < threshold


def test_at_ten_trials_no_task_can_be_safe_for_ten_runs_at_0_9() -> None:
    assert safe_reach(10, 0.9) == 351
    assert decide(10, 10, 10, 0.9) is None and decide(351, 351, 10, 0.9) == "safe"
    assert safe_reach(10, 0.9, "mixture") > 351  # the anytime-valid interval is wider: more passes in a row
    assert safe_reach(10, 1.0) is None


def test_not_safe_failures_is_the_fewest_failures_that_decide_not_safe() -> None:
    for n in (1, 5, 10, 30):
        fails = not_safe_failures(n, 10, 0.9)
        assert fails is not None
        assert decide(n, n - fails, 10, 0.9) == "not safe"
        assert fails == 1 or decide(n, n - fails + 1, 10, 0.9) != "not safe"
    assert not_safe_failures(0, 10, 0.9) is None


def test_suite_figures_leave_impossible_twins_out_and_a_gamed_task_is_not_safe() -> None:
    tasks = [
        TaskCounts(10, 10),  # undecided at k=10: pass^10 1
        TaskCounts(10, 9),  # undecided: (9/10)^10
        TaskCounts(10, 3),  # not safe: 0.3^10
        TaskCounts(10, 10, gamed=1),  # all passed, but caught gaming: not safe; its pass^10 1 still in the mean
        TaskCounts(10, 0, gamed=2, impossible=True),  # the twin: in nothing
        TaskCounts(3, 3),  # n < k: undecided, not in the mean
    ]
    found = suite_figures(tasks, 10, 0.9)
    assert found.mean_pass_hat_k == pytest.approx((1 + 0.9**10 + 0.3**10 + 1) / 4)
    assert (found.defined, found.safe, found.not_safe, found.undecided, found.impossible) == (4, 0, 2, 3, 1)
    with_twin_as_task = suite_figures([TaskCounts(t.n, t.passes, t.gamed) for t in tasks], 10, 0.9)
    assert (with_twin_as_task.not_safe, with_twin_as_task.defined) == (3, 5)  # what the viewer counted before
    assert task_decision(10, 10, 1, 10, 0.9) == "not safe" and task_decision(10, 10, 0, 10, 0.9) is None
