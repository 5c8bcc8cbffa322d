"""Suite-level statistics: ICC(1) by hand and by a plain ANOVA; the sampled bootstrap against exact moments,
scipy's binomial law and a naive two-stage bootstrap written out loop by loop; the exact bootstrap law against
every outcome of a tiny suite enumerated; the Monte Carlo error of the default interval across seeds."""

from __future__ import annotations

import itertools
import math
import random
from statistics import fmean

import pytest
from scipy import stats as scipy_stats

from passhat.stats import _bootstrap as bs
from passhat.stats import _suite as ss
from passhat.stats._bootstrap import (
    mean_pass_hat_k_interval,
    mean_pass_hat_k_intervals,
)
from passhat.stats._suite import (
    binomial,
    icc1,
    mean_pass_hat_k,
    multinomial,
    paired_change,
    paired_change_interval,
)

# --- ICC(1) --------------------------------------------------------------------------------------


def anova_icc(groups: list[list[int]]) -> float:
    """ICC(1) from explicit 0/1 outcomes: sums of squares written out, nothing shared with passhat."""
    everything = [y for group in groups for y in group]
    grand, big_n, g = fmean(everything), len(everything), len(groups)
    ss_between = sum(len(group) * (fmean(group) - grand) ** 2 for group in groups)
    ss_within = sum((y - fmean(group)) ** 2 for group in groups for y in group)
    msb, msw = ss_between / (g - 1), ss_within / (big_n - g)
    n0 = (big_n - sum(len(group) ** 2 for group in groups) / big_n) / (g - 1)
    return (msb - msw) / (msb + (n0 - 1) * msw)


def test_icc_hand_computed_equal_n() -> None:
    # A 2/2, B 0/2, C 1/2: N=6, g=3, grand mean 1/2.
    # SSB = 2(1 - 1/2)² + 2(0 - 1/2)² + 2(1/2 - 1/2)² = 1 -> MSB = 1/2.
    # SSW = 0 + 0 + (1 x 1 / 2) = 1/2 -> MSW = (1/2) / (6 - 3) = 1/6.  n0 = (6 - 12/6) / 2 = 2.
    # ICC = (1/2 - 1/6) / (1/2 + (2 - 1) 1/6) = (1/3) / (2/3) = 1/2.
    assert icc1([(2, 2), (2, 0), (2, 1)]) == pytest.approx(0.5)


def test_icc_hand_computed_unequal_n() -> None:
    # A 3/3, B 0/2, C 1/2: N=7, g=3, grand mean 4/7.
    # SSB = 3(3/7)² + 2(4/7)² + 2(1/14)² = 27/49 + 32/49 + 1/98 = 119/98 -> MSB = 119/196 = 17/28.
    # SSW = 1 x 1 / 2 = 1/2 -> MSW = (1/2) / (7 - 3) = 1/8.
    # n0 = (7 - (9 + 4 + 4)/7) / 2 = 16/7 (not the mean n = 7/3).
    # ICC = (17/28 - 1/8) / (17/28 + (9/7)(1/8)) = (27/56) / (43/56) = 27/43.
    assert icc1([(3, 3), (2, 0), (2, 1)]) == pytest.approx(27 / 43)


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        # Every task all-pass or all-fail, with both kinds: MSW = 0, so ICC = MSB / MSB = 1.
        pytest.param([(3, 3), (3, 0)], 1.0, id="task-decides-everything"),
        # A 1/2, B 1/2: MSB = 0, MSW = (1/2 + 1/2) / 2 = 1/2, n0 = (4 - 8/4) / 1 = 2: (0 - 1/2) / (0 + 1/2) = -1.
        pytest.param([(2, 1), (2, 1)], -1.0, id="negative"),
        pytest.param([(10, 10), (10, 10)], None, id="no-variance"),
        pytest.param([(10, 6)], None, id="one-task"),
        pytest.param([(1, 1), (1, 0)], None, id="one-trial-each"),
        pytest.param([(0, 0), (0, 0), (4, 2)], None, id="unscored-tasks-dropped"),
    ],
)
def test_icc_edges(tasks: list[tuple[int, int]], expected: float | None) -> None:
    assert icc1(tasks) == (pytest.approx(expected) if expected is not None else None)


@pytest.mark.parametrize("seed", range(25))
def test_icc_matches_plain_anova(seed: int) -> None:
    rng = random.Random(seed)
    groups = []
    for _ in range(rng.randint(2, 8)):
        n, rate = rng.randint(1, 12), rng.random()
        groups.append([int(rng.random() < rate) for _ in range(n)])
    if sum(map(len, groups)) == len(groups):
        groups[0] += [1, 0]
    counts = [(len(group), sum(group)) for group in groups]
    result = icc1(counts)
    everything = [y for group in groups for y in group]
    if len(set(everything)) == 1:
        assert result is None
    else:
        assert result == pytest.approx(anova_icc(groups), abs=1e-12)


# --- the binomial sampler and the multinomial split ----------------------------------------------


@pytest.mark.parametrize(
    ("n", "p"),
    [
        pytest.param(7, 0.3, id="inversion"),
        pytest.param(400, 0.01, id="inversion-large-n"),
        pytest.param(20, 0.5, id="btrs-np=10"),
        pytest.param(120, 0.35, id="btrs"),
        pytest.param(2000, 0.02, id="btrs-small-p"),
        pytest.param(60, 0.9, id="symmetry"),
    ],
)
def test_binomial_follows_scipys_law(n: int, p: float) -> None:
    rng = random.Random(20261130)
    draws = 60_000
    counts = [0] * (n + 1)
    for _ in range(draws):
        counts[binomial(rng, n, p)] += 1
    # Chi-square goodness of fit against scipy's pmf, with sparse tails pooled so every bin expects >= 20.
    pmf = scipy_stats.binom.pmf(range(n + 1), n, p)
    observed, expected, bin_o, bin_e = [], [], 0, 0.0
    for k in range(n + 1):
        bin_o, bin_e = bin_o + counts[k], bin_e + pmf[k] * draws
        if bin_e >= 20:
            observed.append(bin_o)
            expected.append(bin_e)
            bin_o, bin_e = 0, 0.0
    observed[-1] += bin_o
    expected[-1] += bin_e
    scale = sum(observed) / sum(expected)
    result = scipy_stats.chisquare(observed, [e * scale for e in expected])
    assert result.pvalue > 1e-4, (n, p, result)


def test_binomial_edges() -> None:
    rng = random.Random(1)
    assert [binomial(rng, 0, 0.5), binomial(rng, 9, 0.0), binomial(rng, 9, 1.0)] == [0, 0, 9]


def test_multinomial_splits_every_draw() -> None:
    rng = random.Random(3)
    probabilities = [0.5, 0.3, 0.15, 0.05]
    totals = [0] * 4
    for _ in range(2000):
        counts = dict(multinomial(rng, 50, probabilities))
        assert sum(counts.values()) == 50
        for index, count in counts.items():
            totals[index] += count
    assert [t / (2000 * 50) for t in totals] == pytest.approx(probabilities, abs=0.01)


# --- the cluster bootstrap -----------------------------------------------------------------------


def mixture_moments(tasks: list[tuple[int, int]], k: int) -> tuple[float, float]:
    """Exact mean and variance of one cluster draw (task uniform, c* ~ Binomial(n, c/n)), via scipy."""
    first = second = 0.0
    for n, c in tasks:
        for j in range(n + 1):
            p = scipy_stats.binom.pmf(j, n, c / n)
            value = math.comb(j, k) / math.comb(n, k)
            first += p * value / len(tasks)
            second += p * value * value / len(tasks)
    return first, second - first * first


def bootstrap_means(tasks: list[tuple[int, int]], k: int, resamples: int, seed: int = 0) -> list[float]:
    """Every resample's mean, by passhat's sampler (the interval's raw material)."""
    captured: list[float] = []
    original = bs._percentile_interval

    def capture(means: list[float], level: float) -> tuple[float, float]:
        captured.extend(means)
        return original(means, level)

    bs._percentile_interval = capture  # type: ignore[assignment]
    try:
        mean_pass_hat_k_interval(tasks, k, resamples=resamples, seed=seed, exact_work=0)
    finally:
        bs._percentile_interval = original  # type: ignore[assignment]
    return captured


def naive_interval(tasks: list[tuple[int, int]], k: int, resamples: int, seed: int) -> tuple[float, float]:
    """The two-stage bootstrap spelled out: draw T tasks, then each one's n trials, with replacement."""
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        values = []
        for _ in range(len(tasks)):
            n, c = tasks[rng.randrange(len(tasks))]
            outcomes = [1] * c + [0] * (n - c)
            passes = sum(outcomes[rng.randrange(n)] for _ in range(n))
            values.append(math.comb(passes, k) / math.comb(n, k))
        means.append(fmean(values))
    low, high = scipy_stats.mstats.mquantiles(means, prob=[0.025, 0.975], alphap=1, betap=1)
    return float(low), float(high)


SUITES = {
    # 6 tasks of n=10: fewer tasks than distinct (n, c*) points -> draws one by one.
    "few-tasks": [(10, 10), (10, 6), (10, 9), (10, 3), (10, 10), (10, 7)],
    # 120 tasks of n=3: 4 points, many tasks -> multinomial counts.
    "many-tasks": [(3, c) for c in (3, 3, 2, 1, 0, 3) * 20],
    "mixed-n": [(4, 3), (10, 6), (7, 7), (5, 1), (10, 9)],
}


@pytest.mark.parametrize("name", sorted(SUITES))
@pytest.mark.parametrize("k", [1, 3])
def test_bootstrap_matches_exact_moments(name: str, k: int) -> None:
    # The mean of T independent cluster draws: expectation E[v], variance Var[v] / T, both exact.
    tasks = [task for task in SUITES[name] if task[0] >= k]
    mean, variance = mixture_moments(tasks, k)
    means = bootstrap_means(tasks, k, resamples=6000)
    assert fmean(means) == pytest.approx(mean, abs=4 * math.sqrt(variance / len(tasks) / 6000) + 1e-12)
    spread = fmean([(m - fmean(means)) ** 2 for m in means])
    assert spread == pytest.approx(variance / len(tasks), rel=0.08, abs=1e-12)


@pytest.mark.parametrize("name", sorted(SUITES))
def test_bootstrap_interval_matches_naive_two_stage(name: str) -> None:
    tasks = SUITES[name]
    low, high = mean_pass_hat_k_interval(tasks, 3, resamples=3000, seed=11, exact_work=0)
    naive_low, naive_high = naive_interval(tasks, 3, resamples=3000, seed=12)
    assert low == pytest.approx(naive_low, abs=0.035)
    assert high == pytest.approx(naive_high, abs=0.035)
    assert low <= mean_pass_hat_k(tasks, 3) <= high


def test_bootstrap_is_seeded_and_deterministic() -> None:
    tasks = SUITES["few-tasks"]
    first = mean_pass_hat_k_intervals(tasks, [1, 3, 10], seed=5, exact_work=0)
    assert mean_pass_hat_k_intervals(tasks, [1, 3, 10], seed=5, exact_work=0) == first
    assert mean_pass_hat_k_intervals(tasks, [1, 3, 10], seed=6, exact_work=0) != first
    assert first[3] == mean_pass_hat_k_interval(tasks, 3, seed=5, exact_work=0)  # ks share draws, not seeds
    # The exact law has no seed: every seed gives the same interval.
    assert mean_pass_hat_k_intervals(tasks, [1, 3, 10], seed=5) == mean_pass_hat_k_intervals(tasks, [1, 3, 10])


def test_bootstrap_edges() -> None:
    # Every task 10/10: every redraw is 10/10, so the interval is the point [1, 1].
    assert mean_pass_hat_k_interval([(10, 10)] * 5, 3) == (1.0, 1.0)
    # k above every n: undefined, not [0, 0].
    assert mean_pass_hat_k_interval([(2, 1), (3, 3)], 5) is None
    # Only the tasks with n >= k take part: (2, 0) is left out of pass^3.
    assert mean_pass_hat_k_interval([(2, 0), (3, 3)], 3) == (1.0, 1.0)
    assert mean_pass_hat_k([(2, 0), (3, 3), (10, 6)], 3) == (1 + 0.6**3) / 2  # (c/n)^k: 1 and 0.216
    with pytest.raises(ValueError, match="resamples >= 1"):
        mean_pass_hat_k_interval([(3, 3)], 1, resamples=0)
    with pytest.raises(ValueError, match="0 < level < 1"):
        mean_pass_hat_k_interval([(3, 3)], 1, level=1.0)


def test_paired_change() -> None:
    # (3/10 -> 10/10) and (7/10 -> 9/10): (0.7 + 0.2) / 2 = 0.45; a task unscored on a side is left out.
    pairs = [((10, 3), (10, 10)), ((10, 7), (10, 9)), ((0, 0), (10, 5))]
    assert paired_change(pairs) == pytest.approx(0.45)
    assert paired_change([((0, 0), (3, 1))]) is None
    assert paired_change_interval([((0, 0), (3, 1))]) is None


def test_paired_change_interval_matches_exact_moments() -> None:
    # One draw: task uniform, then new rate - base rate with both sides redrawn: E = mean of the changes,
    # Var = E[Var(v | task)] + Var(E[v | task]), Var(v | task) = p_new q_new / n_new + p_base q_base / n_base.
    pairs = [((10, 3), (10, 10)), ((10, 7), (10, 9)), ((8, 4), (12, 6)), ((10, 5), (10, 2))]
    changes = [wc / wn - bc / bn for (bn, bc), (wn, wc) in pairs]
    within = [(wc / wn) * (1 - wc / wn) / wn + (bc / bn) * (1 - bc / bn) / bn for (bn, bc), (wn, wc) in pairs]
    variance = fmean(within) + fmean([(d - fmean(changes)) ** 2 for d in changes])
    sd = math.sqrt(variance / len(pairs))
    low, high = paired_change_interval(pairs, resamples=8000, seed=3)
    # Near-normal here: the 2.5% / 97.5% points sit about 1.96 sd from the mean.
    assert low == pytest.approx(fmean(changes) - 1.96 * sd, abs=0.03)
    assert high == pytest.approx(fmean(changes) + 1.96 * sd, abs=0.03)
    assert paired_change_interval(pairs, resamples=500, seed=3) == paired_change_interval(pairs, resamples=500, seed=3)


def test_resampled_pmf_is_scipys_binomial() -> None:
    for n, c in [(10, 6), (3, 1), (100, 37), (5, 0), (5, 5)]:
        expected = scipy_stats.binom.pmf(range(n + 1), n, c / n)
        assert ss._resampled_pmf(n, c) == pytest.approx(list(expected), abs=1e-12)
    assert ss._resampled_cdf(4, 2)[-1] == 1.0


@pytest.mark.parametrize(
    "probabilities",
    [
        pytest.param([0.5, 0.5], id="two"),
        pytest.param([0.1, 0.25, 1e-6, 0.55, 0.1 - 1e-6], id="tiny-category"),
        pytest.param([1 / 7] * 7, id="boundaries-off-the-grid"),
        pytest.param([2**-16] * 3 + [1 - 3 * 2**-16], id="categories-narrower-than-a-slice"),
    ],
)
def test_categorical_draws_follow_the_law(probabilities: list[float]) -> None:
    sampler = ss.Categorical(list(itertools.accumulate(probabilities)))
    draws = sampler.draw(random.Random(8), 400_000)
    counts = [draws.count(i) for i in range(len(probabilities))]
    assert sum(counts) == 400_000
    big = [i for i, p in enumerate(probabilities) if p * 400_000 >= 20]
    if len(big) > 1:
        expected = [probabilities[i] * 400_000 for i in big]
        result = scipy_stats.chisquare([counts[i] for i in big], expected, sum_check=False)
        assert result.pvalue > 1e-4, (counts, result)
    for i, p in enumerate(probabilities):  # rare categories: within 6 sd of their expectation
        assert abs(counts[i] - p * 400_000) <= 6 * math.sqrt(p * 400_000) + 1
