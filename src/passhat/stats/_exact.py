"""The cluster bootstrap's interval for mean pass^k computed exactly, with no resampling, when that is cheap.

One cluster draw (`_suite`) is a point (n, c*) of the mixture over tasks, with value pass^k = C(c*, k)/C(n, k),
and a resample's mean is the mean of T independent draws. Every value is a whole multiple of 1/D, D the least
common multiple of the C(n, k) present, so the sum of the T draws lives on the whole numbers 0..T*D and its law
is one draw's law convolved T times, one draw at a time. The percentile interval is read off that exact CDF:
the lower bound is the smallest mean whose CDF reaches (1 - level)/2, the upper the smallest whose CDF reaches
(1 + level)/2 — the values a Monte Carlo percentile interval converges to as resamples grow.

Why: the law of the mean is lumpy (tasks that always or never pass give atoms 1/T apart), and a Monte Carlo
quantile near the edge of a lump jumps between lumps whatever the number of resamples (measured in
bench/bootstrap_mc.py: 0.01 at 100,000 resamples for a 10-task suite). The exact law has no such error.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Sequence
from operator import add

Counts = tuple[int, int]  # (n, c)
WORK = 4_000_000  # cells written while convolving (about T^2 x span x points / 2); above it, Monte Carlo
_TINY = 1e-15  # tail cells below this are dropped as the law grows (their mass is far below a quantile's 2.5%)
_SLACK = 1e-9  # the CDF reaches a level when it is within float rounding of it


def lattice_law(
    tasks: Sequence[Counts], k: int, pmf: Callable[[int, int], Sequence[float]]
) -> tuple[int, dict[int, float]]:
    """(D, {value * D: probability}) of one cluster draw; `pmf(n, c)` is the law of c* for a task (n, c)."""
    denominator = math.lcm(*{math.comb(n, k) for n, _ in tasks})
    law: dict[int, float] = {}
    share = 1 / len(tasks)
    terms: dict[Counts, list[tuple[int, float]]] = {}  # a task's (value, probability * share): tasks share counts
    for n, c in tasks:
        if (mine := terms.get((n, c))) is None:
            scale = denominator // math.comb(n, k)
            mine = terms[n, c] = [
                (math.comb(j, k) * scale, probability * share)
                for j, probability in enumerate(pmf(n, c))
                if probability > 0
            ]
        for value, term in mine:  # (added task by task, in order, as ever: the same floats)
            law[value] = law.get(value, 0.0) + term
    return denominator, law


def within_work(tasks: Sequence[Counts], k: int, pmf: Callable[[int, int], Sequence[float]], limit: float) -> bool:
    """Whether `work` of `lattice_law`'s law is at most `limit`, from its values (the keys) alone, each (n, c) once;
    gathered only while the work could still be within it (it grows with each value): a suite too big for the
    exact law stops after its first counts, and never builds the law."""
    denominator = math.lcm(*{math.comb(n, k) for n, _ in tasks})
    values: set[int] = set()
    for n, c in set(tasks):
        scale = denominator // math.comb(n, k)
        values.update(math.comb(j, k) * scale for j, probability in enumerate(pmf(n, c)) if probability > 0)
        if work(len(tasks), values) > limit:
            return False
    return True


def work(draws: int, law: Collection[int]) -> float:
    """Cells `exact_interval` would write for the sum of `draws` draws (before tails are dropped), from the law's
    values (the law itself, or `within_work`'s)."""
    span = max(law) - min(law)
    return len(law) * (span * draws * (draws + 1) / 2 + draws)


def exact_interval(draws: int, denominator: int, law: dict[int, float], level: float) -> tuple[float, float]:
    """Percentile interval of the mean of `draws` independent draws from `law` (values in units of 1/denominator)."""
    low_value = min(law)
    shifted = sorted((value - low_value, probability) for value, probability in law.items())
    span = shifted[-1][0]
    dist, start = [1.0], 0  # dist[i] = P(sum of the draws so far = start + i), in units of 1/denominator
    (_, first_probability), rest = shifted[0], shifted[1:]  # offset 0: the lowest value
    for _ in range(draws):
        width = len(dist)
        grown = [first_probability * p for p in dist]
        grown += [0.0] * span
        for offset, probability in rest:
            window = grown[offset : offset + width]
            grown[offset : offset + width] = map(add, window, map(probability.__mul__, dist))
        start += low_value
        first = next(i for i, p in enumerate(grown) if p >= _TINY)
        last = len(grown) - next(i for i, p in enumerate(reversed(grown)) if p >= _TINY)
        dist, start = grown[first:last], start + first
    cumulative = list(itertools.accumulate(dist))
    total = cumulative[-1]
    tail = (1 - level) / 2

    def quantile(q: float) -> float:
        index = next(i for i, cdf in enumerate(cumulative) if cdf >= q * total - _SLACK)
        return (start + index) / (draws * denominator)

    return quantile(tail), quantile(1 - tail)
