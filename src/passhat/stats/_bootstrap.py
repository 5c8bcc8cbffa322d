"""The 95% cluster-bootstrap interval for the mean over tasks of pass^k: exact when cheap, else sampled. Pure.

Exact (`_exact`): the bootstrap law of the mean computed whole — the small and lumpy suites, where resampling
is least accurate. Sampled: resamples drawn from the mixture (`_suite`'s samplers), all ks of a provider from the
same draws. With `resamples=None` (the default) sampling goes on in doubling batches, from MIN_RESAMPLES, until
the estimated Monte Carlo standard error of each bound is at most TARGET_MC_ERROR, or MAX_RESAMPLES is reached;
an explicit `resamples` takes exactly that many. Seeded: the same counts, seed and settings give the same interval.

The standard error of a percentile bound is read off the sorted resamples (the order statistics one binomial
standard deviation of rank either side of it, half their distance apart), which also sees a bound that sits on
the edge of a lump of the law and jumps between lumps (bench/bootstrap_mc.py measures the real spread).
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Literal

from passhat.stats._exact import WORK, exact_interval, lattice_law, within_work
from passhat.stats._suite import (
    LEVEL,
    SEED,
    Categorical,
    Counts,
    _check_args,
    _percentile_interval,
    _resampled_pmf,
    multinomial,
)

MIN_RESAMPLES = 2000
MAX_RESAMPLES = 64000
TARGET_MC_ERROR = 0.002  # estimated standard error of a bound; measured spread stays under 0.005
Method = Literal["exact", "monte-carlo"]


@dataclass(frozen=True)
class Bootstrap:
    """A mean pass^k interval and how it was found: resamples 0 and mc_error 0.0 for the exact law."""

    interval: tuple[float, float]
    method: Method
    resamples: int
    mc_error: float  # estimated Monte Carlo standard error of the less certain bound


def _defined_groups(tasks: Sequence[Counts], ks: Sequence[int]) -> dict[tuple[Counts, ...], list[int]]:
    """The tasks with n >= k, and the ks that share them (pass^k is undefined for the others)."""
    groups: dict[tuple[Counts, ...], list[int]] = {}
    for k in ks:
        groups.setdefault(tuple(task for task in tasks if task[0] >= k), []).append(k)
    return groups


def mean_pass_hat_k_bootstrap(
    tasks: Sequence[Counts],
    ks: Sequence[int],
    *,
    resamples: int | None = None,
    seed: int = SEED,
    level: float = LEVEL,
    exact_work: float = WORK,
) -> dict[int, Bootstrap | None]:
    """Cluster-bootstrap percentile interval for the mean over tasks of pass^k, for each k; None without a task.

    Only tasks with n >= k take part (pass^k is undefined for the others, as in the mean itself). The law is
    computed exactly when that costs at most `exact_work` cells, else sampled (see the module docstring).
    """
    if resamples is not None:
        _check_args(resamples, level)
    elif not 0 < level < 1:
        _check_args(1, level)
    found: dict[int, Bootstrap | None] = {}
    for defined, group_ks in _defined_groups(tasks, ks).items():
        sampled = []
        for k in group_ks:
            if not defined:
                found[k] = None
                continue
            if within_work(defined, k, _resampled_pmf, exact_work):
                denominator, law = lattice_law(defined, k, _resampled_pmf)
                found[k] = Bootstrap(exact_interval(len(defined), denominator, law, level), "exact", 0, 0.0)
            else:
                sampled.append(k)
        if sampled:
            found.update(_sampled(defined, sampled, resamples, seed, level))
    return found


def mean_pass_hat_k_intervals(
    tasks: Sequence[Counts],
    ks: Sequence[int],
    *,
    resamples: int | None = None,
    seed: int = SEED,
    level: float = LEVEL,
    exact_work: float = WORK,
) -> dict[int, tuple[float, float] | None]:
    """The intervals of `mean_pass_hat_k_bootstrap` alone."""
    found = mean_pass_hat_k_bootstrap(tasks, ks, resamples=resamples, seed=seed, level=level, exact_work=exact_work)
    return {k: None if b is None else b.interval for k, b in found.items()}


def mean_pass_hat_k_interval(
    tasks: Sequence[Counts],
    k: int,
    *,
    resamples: int | None = None,
    seed: int = SEED,
    level: float = LEVEL,
    exact_work: float = WORK,
) -> tuple[float, float] | None:
    """`mean_pass_hat_k_intervals` for a single k."""
    return mean_pass_hat_k_intervals(tasks, [k], resamples=resamples, seed=seed, level=level, exact_work=exact_work)[k]


def bound_error(ordered: Sequence[float], q: float) -> float:
    """Estimated Monte Carlo standard error of the q-quantile of sorted resamples: half the distance between
    the order statistics one binomial standard deviation of rank, sqrt(R q (1 - q)), either side of rank R q."""
    size = len(ordered)
    middle, spread = size * q, math.sqrt(size * q * (1 - q))
    low = min(max(math.floor(middle - spread), 0), size - 1)
    high = min(max(math.ceil(middle + spread), 0), size - 1)
    return (ordered[high] - ordered[low]) / 2


def _sampled(
    defined: tuple[Counts, ...], group_ks: list[int], resamples: int | None, seed: int, level: float
) -> dict[int, Bootstrap | None]:
    """Monte Carlo percentile intervals for the ks in `group_ks`, all from the same resamples."""
    draws = len(defined)
    weights: dict[tuple[int, int], float] = {}
    for (n, c), count in sorted(Counter(defined).items()):
        for j, probability in enumerate(_resampled_pmf(n, c)):
            if probability > 0:
                weights[n, j] = weights.get((n, j), 0.0) + probability * count / draws
    points = sorted(weights, key=lambda point: (-weights[point], point))  # likeliest first
    probabilities = [weights[point] for point in points]
    cumulative = list(itertools.accumulate(probabilities))
    values = {k: [math.comb(j, k) / math.comb(n, k) for n, j in points] for k in group_ks}  # pass^k, n >= k
    means: dict[int, list[float]] = {k: [] for k in group_ks}
    rng = random.Random(seed)
    one_by_one = draws < 16 * len(points)  # a binomial costs about 16 table draws
    sampler = Categorical(cumulative) if one_by_one else None
    tail = (1 - level) / 2
    batch = MIN_RESAMPLES if resamples is None else resamples
    while True:
        for _ in range(batch):
            if sampler is not None:
                pick = itemgetter(*sampler.draw(rng, draws))  # the drawn points' values, in draw order (at C speed)
                for k in group_ks:
                    picked = pick(values[k])  # (one draw: the value itself)
                    means[k].append((sum(picked) if draws > 1 else picked) / draws)
            else:
                counts = list(multinomial(rng, draws, probabilities))
                for k in group_ks:
                    row = values[k]
                    means[k].append(sum(row[i] * count for i, count in counts) / draws)
        found: dict[int, Bootstrap | None] = {}
        worst = 0.0
        for k in group_ks:
            interval = _percentile_interval(means[k], level)  # sorts means[k] in place; more draws append after
            error = max(bound_error(means[k], tail), bound_error(means[k], 1 - tail))
            found[k] = Bootstrap(interval, "monte-carlo", len(means[k]), error)
            worst = max(worst, error)
        total = len(means[group_ks[0]])
        if resamples is not None or total >= MAX_RESAMPLES or worst <= TARGET_MC_ERROR:
            return found
        batch = min(total, MAX_RESAMPLES - total)  # doubling
