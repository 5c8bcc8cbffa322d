"""The mean pass^k interval: the exact bootstrap law against a tiny suite enumerated trial by trial, and the
Monte Carlo error of the default interval measured the way bench/bootstrap_mc.py does, across seeds."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from fractions import Fraction

import pytest

from passhat.stats._bootstrap import (
    MAX_RESAMPLES,
    MIN_RESAMPLES,
    bound_error,
    mean_pass_hat_k_bootstrap,
    mean_pass_hat_k_intervals,
)


def enumerated_law(tasks: list[tuple[int, int]], k: int) -> dict[Fraction, Fraction]:
    """The bootstrap law of mean pass^k from its definition: every way to draw T tasks, then each drawn task's
    n trials, with replacement, each equally likely; exact fractions."""
    per_task = []  # the law of one drawn task's resampled pass^k
    for n, c in tasks:
        outcomes = [1] * c + [0] * (n - c)
        law: dict[Fraction, int] = {}
        for picks in itertools.product(range(n), repeat=n):
            passes = sum(outcomes[i] for i in picks)
            value = Fraction(math.comb(passes, k), math.comb(n, k))
            law[value] = law.get(value, 0) + 1
        per_task.append({value: Fraction(count, n**n) for value, count in law.items()})
    t = len(tasks)
    mean_law: dict[Fraction, Fraction] = {}
    for drawn in itertools.product(range(t), repeat=t):
        for values in itertools.product(*(per_task[i].items() for i in drawn)):
            mean = sum((value for value, _ in values), Fraction(0)) / t
            weight = math.prod((p for _, p in values), start=Fraction(1)) / t**t
            mean_law[mean] = mean_law.get(mean, Fraction(0)) + weight
    return mean_law


def quantile(law: dict[Fraction, Fraction], q: Fraction) -> Fraction:
    """The smallest value whose CDF reaches q."""
    total = Fraction(0)
    for value in sorted(law):
        total += law[value]
        if total >= q:
            return value
    raise AssertionError("the law sums to less than 1")


@pytest.mark.parametrize("k", [1, 2, 3])
def test_exact_law_is_the_enumerated_bootstrap(k: int) -> None:
    # Three tasks: 2/3, 1/2 (n=2 < 3 drops out of pass^3) and 3/3.
    tasks = [(3, 2), (2, 1), (3, 3)]
    defined = [task for task in tasks if task[0] >= k]
    law = enumerated_law(defined, k)
    assert sum(law.values()) == 1
    (found,) = mean_pass_hat_k_bootstrap(tasks, [k]).values()
    assert found is not None and (found.method, found.resamples, found.mc_error) == ("exact", 0, 0.0)
    expected = (float(quantile(law, Fraction(1, 40))), float(quantile(law, Fraction(39, 40))))
    assert found.interval == expected


def test_exact_law_matches_a_long_monte_carlo_run() -> None:
    # The demo's shape: 10 tasks of n=10. 64,000 resamples land within a few thousandths of the exact bounds.
    tasks = [(10, c) for c in (6, 10, 8, 7, 9, 5, 10, 7, 8, 6)]
    exact = mean_pass_hat_k_intervals(tasks, [1, 3, 5, 10])
    sampled = mean_pass_hat_k_intervals(tasks, [1, 3, 5, 10], resamples=MAX_RESAMPLES, exact_work=0)
    for k in (1, 3, 5, 10):
        assert exact[k] == pytest.approx(sampled[k], abs=0.01), k


def suite(tasks: int, ns: list[int], ps: list[float], seed: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(tasks):
        n, p = rng.choice(ns), rng.choice(ps)
        out.append((n, sum(rng.random() < p for _ in range(n))))
    return out


@pytest.mark.parametrize(
    ("tasks", "ns", "ps", "method"),
    [
        # 2000 resamples, always sampled, spread 0.18 across seeds here: a bound jumping between lumps 1/T apart.
        pytest.param(10, [8, 9, 10], [1.0, 0.9, 0.7, 0.5, 0.0], "exact", id="10-tasks-n8-10"),
        # Too big for the exact law at k >= 3 (C(20, k) in the common denominator): sampled, adaptively.
        pytest.param(20, [5, 10, 20], [1.0, 0.9, 0.7, 0.5, 0.0], "monte-carlo", id="20-tasks-n5-20"),
    ],
)
def test_default_interval_varies_less_than_0_005_across_seeds(
    tasks: int, ns: list[int], ps: list[float], method: str
) -> None:
    counts = suite(tasks, ns, ps, seed=tasks)
    ks = [1, 3, 5, 10]
    runs = [mean_pass_hat_k_bootstrap(counts, ks, seed=seed) for seed in range(6)]
    assert method in {b.method for b in runs[0].values() if b is not None}
    for k in ks:
        found = [run[k] for run in runs]
        if found[0] is None:
            continue
        for bound in (0, 1):
            values = [b.interval[bound] for b in found if b is not None]
            assert statistics.stdev(values) < 0.005, (k, bound, values)


def test_adaptive_resampling_stops_when_the_bounds_are_certain() -> None:
    # 1000 tasks: the 2,000 first resamples already pin each bound (estimated error well under 0.002).
    big = suite(1000, [10], [1.0, 1.0, 0.9, 0.7, 0.5, 0.2, 0.0], seed=1)
    found = mean_pass_hat_k_bootstrap(big, [3], exact_work=0)[3]
    assert found is not None and (found.method, found.resamples) == ("monte-carlo", MIN_RESAMPLES)
    assert found.mc_error <= 0.002
    # An explicit count is taken as given, whatever the error.
    few = mean_pass_hat_k_bootstrap(big, [3], resamples=50, exact_work=0)[3]
    assert few is not None and few.resamples == 50
    # A lumpy suite sampled: more resamples, doubling, up to the cap.
    lumpy = mean_pass_hat_k_bootstrap([(10, 10), (10, 0), (10, 9), (10, 10)], [10], exact_work=0)[10]
    assert lumpy is not None and lumpy.resamples in {MIN_RESAMPLES * 2**i for i in range(6)}
    assert lumpy.resamples > MIN_RESAMPLES and lumpy.resamples <= MAX_RESAMPLES


def test_bound_error_is_the_quantiles_standard_error() -> None:
    # R uniform points on [0, 1): the q-quantile's standard error is sqrt(q (1 - q) / R) (density 1).
    ordered = [i / 40000 for i in range(40000)]
    assert bound_error(ordered, 0.025) == pytest.approx(math.sqrt(0.025 * 0.975 / 40000), rel=0.05)  # ranks rounded out
    assert bound_error([0.5] * 100, 0.975) == 0.0  # every resample the same: no error
    assert bound_error([0.0] * 50 + [1.0] * 50, 0.5) == 0.5  # the quantile sits on a lump's edge
