"""Suite-level statistics over tasks: ICC(1), mean pass^k, the paired change, and the samplers. Pure, no I/O.

Every function takes per-task counts as (n, c) pairs: n scored trials, c passes among them.

The bootstrap is the two-stage "cluster" bootstrap (Davison & Hinkley 1997, "Bootstrap Methods and
their Application", section 3.8): draw T tasks with replacement, then redraw each drawn task's n
trials with replacement, and recompute the statistic. Each drawn task is independent, so one draw is
a sample from the mixture over tasks of "c* ~ Binomial(n, c/n), value = f(n, c*)"; a resample's mean
is the mean of T such draws. The samplers here draw that mixture exactly; `_bootstrap` builds the mean
pass^k interval from them (or from the exact law, `_exact`).
"""

from __future__ import annotations

import array
import bisect
import itertools
import math
import random
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction
from functools import lru_cache
from operator import itemgetter
from typing import Literal

from passhat.stats._estimators import pass_hat_k_plug_in_exact

Counts = tuple[int, int]  # (n, c)
PAIRED_RESAMPLES = 2000  # `passhat compare`'s paired interval
SEED = 0
LEVEL = 0.95
MIN_TASKS = 5  # a suite interval (cluster bootstrap) is shown over at least this many tasks
NoInterval = Literal["no task", "not enough tasks", "estimate outside"]


def shown_interval(
    tasks: int, estimate: float | None, interval: tuple[float, float] | None
) -> tuple[tuple[float, float] | None, NoInterval | None]:
    """The suite interval to print beside `estimate`, or None and why not.

    "not enough tasks" below MIN_TASKS: the cluster bootstrap redraws tasks, and T tasks give only C(2T-1, T)
    different draws (1, 3, 10, 35 for T = 1..4; 126 at 5); with one task nothing but that task's own trial
    noise is left, and the seed printed "pass^1 1.000 (1.000-1.000)" for a one-task suite. Inference from few
    clusters is known to be too sure of itself (Cameron, Gelbach & Miller 2008, "Bootstrap-based improvements
    for inference with clustered errors"); 5 is passhat's floor, not a guarantee above it.
    "estimate outside": a percentile interval need not contain the statistic it resamples (a lumpy law, or
    pass^k's unbiased estimate below the bootstrap's centre (c/n)^k when n is close to k); a figure printed
    beside an interval that leaves it out reads as more certain than the data, so neither is shown together.
    """
    if interval is None or estimate is None or tasks == 0:
        return None, "no task"
    if tasks < MIN_TASKS:
        return None, "not enough tasks"
    if not interval[0] - 1e-12 <= estimate <= interval[1] + 1e-12:  # equal, but for the last bit of a float sum
        return None, "estimate outside"
    return interval, None


def icc1(tasks: Iterable[Counts]) -> float | None:
    """ICC(1) of the 0/1 outcomes with tasks as groups: how much of the variance is the task, not luck.

    One-way random-effects ANOVA (Shrout & Fleiss 1979, ICC(1,1); unequal group sizes with
    n0 = (N - sum(n_i^2)/N) / (g - 1), Snedecor & Cochran): ICC = (MSB - MSW) / (MSB + (n0 - 1) MSW),
    MSB = sum n_i (p_i - p)^2 / (g - 1), MSW = sum c_i (n_i - c_i) / n_i / (N - g).
    Near 1: each task either passes or fails, reruns change nothing; near 0 (or below): outcomes
    vary as much within a task as between tasks. None when it cannot be estimated: fewer than two
    tasks with trials, no more trials than tasks, or every outcome identical.
    """
    groups = [(n, c) for n, c in tasks if n > 0]
    g = len(groups)
    total = sum(n for n, _ in groups)
    if g < 2 or total <= g:
        return None
    grand = sum(c for _, c in groups) / total
    msb = sum(n * (c / n - grand) ** 2 for n, c in groups) / (g - 1)
    msw = sum(c * (n - c) / n for n, c in groups) / (total - g)
    n0 = (total - sum(n * n for n, _ in groups) / total) / (g - 1)
    denominator = msb + (n0 - 1) * msw
    if denominator <= 0:
        return None
    return (msb - msw) / denominator


def binomial(rng: random.Random, n: int, p: float) -> int:
    """One draw from Binomial(n, p), exact, from `rng` alone (the same draws on every Python).

    Inversion for n*p < 10; otherwise BTRS, the transformed rejection with squeeze of Hormann 1993,
    "The generation of binomial random variates" (J. Statist. Comput. Simul. 46), O(1) in n.
    """
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if p > 0.5:
        return n - binomial(rng, n, 1.0 - p)
    q = 1.0 - p
    if n * p < 10.0:
        u, x, f, ratio = rng.random(), 0, q**n, p / q
        while u > f and x < n:
            u -= f
            f *= ratio * (n - x) / (x + 1)
            x += 1
        return x
    spq = math.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    lpq = math.log(p / q)
    m = math.floor((n + 1) * p)
    h = math.lgamma(m + 1) + math.lgamma(n - m + 1)
    while True:
        u = rng.random() - 0.5
        v = rng.random()
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + c)
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v *= alpha / (a / (us * us) + b)
        if math.log(v) <= h - math.lgamma(k + 1) - math.lgamma(n - k + 1) + (k - m) * lpq:
            return k


@lru_cache(maxsize=4096)
def _resampled_pmf(n: int, c: int) -> tuple[float, ...]:
    """P(c* = j) for j = 0..n, c* ~ Binomial(n, c/n): the passes after redrawing n trials with replacement."""
    if c in (0, n):
        return tuple(1.0 if j == c else 0.0 for j in range(n + 1))
    log_p, log_q, log_n = math.log(c / n), math.log(1 - c / n), math.lgamma(n + 1)
    return tuple(
        math.exp(log_n - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * log_p + (n - j) * log_q)
        for j in range(n + 1)
    )


@lru_cache(maxsize=4096)
def _resampled_cdf(n: int, c: int) -> tuple[float, ...]:
    """Cumulative P(c* <= j); the last entry is exactly 1 so bisection never runs past n."""
    cdf = list(itertools.accumulate(_resampled_pmf(n, c)))
    cdf[-1] = 1.0
    return tuple(cdf)


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (Hyndman & Fan type 7, numpy's default)."""
    h = (len(ordered) - 1) * q
    low = math.floor(h)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (h - low) * (ordered[high] - ordered[low])


def _percentile_interval(means: list[float], level: float) -> tuple[float, float]:
    means.sort()
    tail = (1 - level) / 2
    return _quantile(means, tail), _quantile(means, 1 - tail)


def _check_args(resamples: int, level: float) -> None:
    if resamples < 1 or not 0 < level < 1:
        msg = f"need resamples >= 1 and 0 < level < 1, got resamples={resamples}, level={level}."
        raise ValueError(msg)


def multinomial(rng: random.Random, draws: int, probabilities: Sequence[float]) -> Iterator[tuple[int, int]]:
    """(index, count) of `draws` categorical draws, as successive conditional binomials; zero counts skipped."""
    remaining, rest = draws, math.fsum(probabilities)
    for index, probability in enumerate(probabilities):
        if remaining == 0:
            return
        count = remaining if probability >= rest else binomial(rng, remaining, probability / rest)
        if count:
            yield index, count
        remaining -= count
        rest -= probability
    if remaining:  # only float drift can leave draws unassigned
        yield len(probabilities) - 1, remaining


class Categorical:
    """Exact draws of indexes 0..S-1 with the given cumulative weights, many at a time.

    A 16-bit random number picks one of 65,536 equal slices of [0, 1); almost every slice lies well
    inside a single category, which a table lookup returns (at C speed, through `itemgetter`). For the slices
    at or next to a boundary (-1 in the table), a fresh uniform places the draw inside the slice and
    bisection decides, so each draw has exactly the requested law.
    """

    BITS = 16

    def __init__(self, cumulative: Sequence[float]) -> None:
        self.cumulative = list(cumulative)
        total, size = self.cumulative[-1], 1 << self.BITS
        self.table = [-1] * size
        low = 0.0
        for index, high in enumerate(self.cumulative):
            # slices [s, s+1) / size strictly inside (low, high), with a slice of margin for rounding
            first, last = math.floor(low / total * size) + 1, math.floor(high / total * size) - 1
            if last > first:
                self.table[first:last] = [index] * (last - first)
            low = high

    def draw(self, rng: random.Random, count: int) -> list[int]:
        slots = array.array("H", rng.randbytes(2 * count))
        if sys.byteorder == "big":
            slots.byteswap()  # the same draws on every machine
        drawn = list(itemgetter(*slots)(self.table)) if count > 1 else list(map(self.table.__getitem__, slots))
        straddling = drawn.count(-1)
        at, total, size = -1, self.cumulative[-1], 1 << self.BITS
        for _ in range(straddling):
            at = drawn.index(-1, at + 1)
            point = (slots[at] + rng.random()) / size * total
            drawn[at] = min(bisect.bisect_right(self.cumulative, point), len(self.cumulative) - 1)
        return drawn


def mean_pass_hat_k_exact(tasks: Sequence[Counts], k: int) -> Fraction | None:
    """Mean over the tasks with n >= k of pass^k = (c/n)^k (the per-task figure every surface prints), as an exact
    fraction; None when there are none. The cluster bootstrap (`_bootstrap`) redraws the unbiased C(c*, k)/C(n, k),
    whose mean over the redraws of a task is exactly (c/n)^k: its law is centred on this mean."""
    counted = Counter(tasks)  # tasks that share their counts (most of a big suite) share one term
    terms = [(times, pass_hat_k_plug_in_exact(n, c, k)) for (n, c), times in counted.items()]
    defined = [(times, value) for times, value in terms if value is not None]
    if not defined:
        return None
    common = math.lcm(*(value.denominator for _, value in defined))  # added in whole numbers: one Fraction, not 1,000
    total = sum(times * value.numerator * (common // value.denominator) for times, value in defined)
    return Fraction(total, common * sum(times for times, _ in defined))


def mean_pass_hat_k(tasks: Sequence[Counts], k: int) -> float | None:
    """Mean over the tasks with n >= k of pass^k, rounded once from the exact fraction; None when there are none."""
    exact = mean_pass_hat_k_exact(tasks, k)
    return None if exact is None else float(exact)


def _usable(pairs: Sequence[tuple[Counts, Counts]]) -> list[tuple[Counts, Counts]]:
    return [(base, new) for base, new in pairs if base[0] > 0 and new[0] > 0]


def paired_change(pairs: Sequence[tuple[Counts, Counts]]) -> float | None:
    """Mean over tasks of (new pass rate - base pass rate); None without a task scored on both sides."""
    usable = _usable(pairs)
    if not usable:
        return None
    return math.fsum(wc / wn - bc / bn for (bn, bc), (wn, wc) in usable) / len(usable)


def paired_change_interval(
    pairs: Sequence[tuple[Counts, Counts]],
    *,
    resamples: int = PAIRED_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> tuple[float, float] | None:
    """Cluster-bootstrap interval for `paired_change`: tasks redrawn, then each side's trials redrawn.

    Each drawn task redraws its base and its new trials independently (c* by inverse CDF).
    """
    _check_args(resamples, level)
    usable = _usable(pairs)
    if not usable:
        return None
    tables = [(_resampled_cdf(*base), base[0], _resampled_cdf(*new), new[0]) for base, new in usable]
    rng = random.Random(seed)
    draw, uniform, tasks = bisect.bisect_right, rng.random, range(len(tables))
    means = []
    for _ in range(resamples):
        total = 0.0
        for index in rng.choices(tasks, k=len(tables)):
            base_cdf, base_n, new_cdf, new_n = tables[index]
            total += draw(new_cdf, uniform()) / new_n - draw(base_cdf, uniform()) / base_n
        means.append(total / len(tables))
    return _percentile_interval(means, level)
