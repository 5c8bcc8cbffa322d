"""Per-task statistics: pure functions of trial counts, no I/O.

pass@k and pass^k are undefined when n < k and return None then — never a made-up 0 or 1.
Both are ratios of whole numbers, computed exactly: `*_exact` returns the Fraction, the float form is
that Fraction correctly rounded once (8/10 is the double nearest 0.8, so a gate `pass@1>=0.8` holds).
The Wilson interval, runs needed for a target interval width, Fisher's exact test, the Holm
correction and the nearest-rank percentile live here too; suite-level figures (ICC, bootstrap)
are in `_suite`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from statistics import NormalDist

Z95 = NormalDist().inv_cdf(0.975)  # 1.959963984540054: the two-sided 95% normal quantile


def _check(n: int, c: int, k: int) -> None:
    if n < 0 or c < 0:
        msg = f"n and c must be non-negative, got n={n}, c={c}."
        raise ValueError(msg)
    if c > n:
        msg = f"c={c} passes cannot exceed n={n} trials; count passes among the n trials only."
        raise ValueError(msg)
    if k < 1:
        msg = f"k must be a positive integer, got k={k}."
        raise ValueError(msg)


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction | None:
    """pass@k as an exact fraction: (C(n, k) - C(n-c, k)) / C(n, k); None when n < k."""
    _check(n, c, k)
    if n < k:
        return None
    return Fraction(math.comb(n, k) - math.comb(n - c, k), math.comb(n, k))


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Probability that at least one of k trials passes: 1 - C(n-c, k) / C(n, k).

    The unbiased estimator of Chen et al. 2021, "Evaluating Large Language Models
    Trained on Code" (https://arxiv.org/abs/2107.03374). Their numerically stable product
    form is not exact in floating point (8/10 came out 0.7999999999999999), so this is
    the ratio of the two whole numbers, rounded once (Python's int / int is correctly
    rounded). Returns None when n < k: k trials cannot be drawn from n.
    """
    _check(n, c, k)
    if n < k:
        return None
    total = math.comb(n, k)
    return (total - math.comb(n - c, k)) / total


def pass_hat_k_exact(n: int, c: int, k: int) -> Fraction | None:
    """pass^k as an exact fraction: C(c, k) / C(n, k); None when n < k."""
    _check(n, c, k)
    if n < k:
        return None
    return Fraction(math.comb(c, k), math.comb(n, k))


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """Probability that all of k trials pass: C(c, k) / C(n, k).

    pass^k of Yao et al. 2024, "tau-bench" (https://arxiv.org/abs/2406.12045); the ratio of
    two whole numbers, rounded once. Returns None when n < k: k trials cannot be drawn from n.
    """
    _check(n, c, k)
    if n < k:
        return None
    return math.comb(c, k) / math.comb(n, k)


def _wilson(rate: float, n: float, z: float) -> tuple[float, float]:
    """Wilson score interval for an observed rate over n trials (n may be fractional)."""
    z2 = z * z
    center = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(rate * (1 - rate) / n + z2 / (4 * n * n))
    return max(0.0, center - half), min(1.0, center + half)


def wilson_interval(n: int, c: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for the pass rate c/n (95% by default); None when n == 0.

    Wilson 1927, "Probable inference, the law of succession, and statistical inference"
    (https://doi.org/10.1080/01621459.1927.10502953). Unlike c/n ± z·se it stays inside
    [0, 1] and does not collapse to a point at 0/n or n/n.
    """
    _check(n, c, 1)
    if n == 0:
        return None
    low, high = _wilson(c / n, n, z)
    # At 0/n and n/n the ends are exactly 0 and 1 in exact arithmetic; floats gave 2.8e-17 (0/10) and
    # 0.9999999999999999 (13/13), an interval that left out its own c/n.
    return (0.0 if c == 0 else low), (1.0 if c == n else high)


def wilson_width(rate: float, n: float, z: float = Z95) -> float:
    """Width of the Wilson interval if `rate` were observed over n trials."""
    low, high = _wilson(rate, n, z)
    return high - low


def runs_needed(n: int, c: int, width: float = 0.2, z: float = Z95) -> int | None:
    """More trials needed before the Wilson interval is at most `width` wide; None when n == 0.

    Assumes the observed rate c/n holds for the new trials ("rerun before you conclude").
    The width shrinks as trials are added, so the answer is the smallest m >= 0 with
    wilson_width(c/n, n + m) <= width.
    """
    _check(n, c, 1)
    if not 0 < width < 1:
        msg = f"width must be between 0 and 1 (exclusive), got {width}."
        raise ValueError(msg)
    if n == 0:
        return None
    rate = c / n
    if wilson_width(rate, n, z) <= width:
        return 0
    low, high = n, 2 * n
    while wilson_width(rate, high, z) > width:
        low, high = high, 2 * high
    while high - low > 1:  # invariant: too wide at `low`, narrow enough at `high`
        middle = (low + high) // 2
        low, high = (low, middle) if wilson_width(rate, middle, z) <= width else (middle, high)
    return high - n


def _hat_interval(rate: float, n: float, k: int, z: float) -> tuple[float, float]:
    low, high = _wilson(rate, n, z)
    return (0.0 if rate == 0 else low**k), (1.0 if rate == 1 else high**k)  # ends exact, as in wilson_interval


def pass_hat_k_plug_in_exact(n: int, c: int, k: int) -> Fraction | None:
    """(c/n)^k as an exact fraction; None when n < k."""
    _check(n, c, k)
    if n < k or n == 0:
        return None
    return Fraction(c, n) ** k


def pass_hat_k_plug_in(n: int, c: int, k: int) -> float | None:
    """(c/n)^k, the plug-in (maximum-likelihood) estimate of pass^k: the one pass^k every surface prints per task,
    the verdict's and the table's alike. None when n < k: undefined, as pass@k is (never (1/1)^10).

    Why not C(c, k)/C(n, k) there: that unbiased estimator is 0 whenever c < k (9/10 at k = 10), far outside
    the verdict's interval of pass^k (0.006-0.835 at 9/10), which the verdict is decided on. Every interval of the
    rate here contains c/n and p -> p^k increases, so (c/n)^k always lies inside the verdict's interval: the figure
    printed beside an interval is one it contains. Exact, rounded once: c^k / n^k in whole numbers (Python's int / int
    is correctly rounded: the value of `pass_hat_k_plug_in_exact`, without building the Fraction).
    """
    _check(n, c, k)
    if n < k or n == 0:
        return None
    passes: int = c**k  # (k >= 1: whole numbers)
    runs: int = n**k
    return passes / runs


def pass_hat_k_interval(n: int, c: int, k: int, z: float = Z95) -> tuple[float, float] | None:
    """95% interval for pass^k, the chance that k runs in a row all pass: the Wilson interval (low, high)
    of the pass rate c/n, each end raised to the k-th power (p^k grows with p, so the coverage carries
    over). Defined for n < k too: it needs the rate, not k draws. None when n == 0."""
    _check(n, c, k)
    if n == 0:
        return None
    return _hat_interval(c / n, n, k, z)


def runs_to_decide(n: int, c: int, k: int, threshold: float, z: float = Z95, limit: int = 10**9) -> int | None:
    """More trials until the pass^k interval lies wholly at or above `threshold`, or wholly below it, if the
    observed rate c/n holds; 0 when it already does. None when no number of trials decides it (the rate is
    exactly threshold^(1/k), or all passes against a threshold of 1), when n == 0, or beyond `limit` trials.
    """
    _check(n, c, k)
    if not 0 < threshold <= 1:
        msg = f"threshold must be in (0, 1], got {threshold}."
        raise ValueError(msg)
    if n == 0:
        return None
    rate = c / n

    def decided(trials: float) -> bool:
        low, high = _hat_interval(rate, trials, k, z)
        return low >= threshold or high < threshold

    if decided(n):
        return 0
    if rate == threshold ** (1 / k) or (rate == 1 and threshold == 1):
        return None
    return more_trials_until(n, decided, limit)


def more_trials_until(n: int, decided: Callable[[int], bool], ceiling: int) -> int | None:
    """The fewest more trials after n at which `decided` holds, for a `decided` that is false at n and monotone in
    the number of trials: a doubling search, then bisection. None past `ceiling` trials in all."""
    low, high = n, 2 * n
    while not decided(high):
        if high > ceiling:
            return None
        low, high = high, 2 * high
    while high - low > 1:  # invariant: undecided at `low`, decided at `high`
        middle = (low + high) // 2
        low, high = (low, middle) if decided(middle) else (middle, high)
    return high - n


def fisher_exact(base_passes: int, base_n: int, new_passes: int, new_n: int) -> float:
    """Two-sided p-value of Fisher's exact test on the 2x2 table of passes and failures.

    Conditioning on the margins, the base passes follow a hypergeometric law; the p-value sums
    the probabilities of every table no more likely than the one observed (Fisher 1935,
    "The logic of inductive inference"; the same rule as scipy.stats.fisher_exact). Computed
    with exact integers, so ties are exact.
    """
    _check(base_n, base_passes, 1)
    _check(new_n, new_passes, 1)
    passes = base_passes + new_passes
    total = base_n + new_n
    if total == 0:
        return 1.0

    def weight(x: int) -> int:  # C(base_n, x) C(new_n, passes - x): proportional to P(x)
        return math.comb(base_n, x) * math.comb(new_n, passes - x)

    observed = weight(base_passes)
    support = range(max(0, passes - new_n), min(base_n, passes) + 1)
    extreme = sum(w for w in map(weight, support) if w <= observed)
    return min(1.0, extreme / math.comb(total, passes))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm (1979) step-down adjusted p-values, in the input order.

    Sorted ascending p(1) <= ... <= p(m): adjusted p(i) = max over j <= i of min(1, (m - j + 1) p(j)).
    Rejecting where adjusted p < alpha controls the family-wise error rate at alpha.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def nearest_rank(values: Sequence[float], percent: int) -> float | None:
    """The percentile by nearest rank: the smallest value with at least `percent`% of values at or below it.

    Rank = ceil(percent * len / 100), in integers. Always an observed value (the p90 duration is
    a duration some trial really took). None for no values.
    """
    if not 0 < percent <= 100:
        msg = f"percent must be in 1..100, got {percent}."
        raise ValueError(msg)
    if not values:
        return None
    ordered = sorted(values)
    return ordered[(percent * len(ordered) + 99) // 100 - 1]
