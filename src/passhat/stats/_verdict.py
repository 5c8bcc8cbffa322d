"""The verdict's arithmetic: is pass^k at or above a threshold, below it, or not yet known — and how many more
trials would tell, if the observed rate holds.

pass^k = p^k grows with p, so an interval (low, high) of the rate p gives (low^k, high^k) for pass^k with the
same coverage. "safe" when low^k >= threshold, "not safe" when high^k < threshold, else undecided (None).
The interval is `_intervals.rate_interval(method)`: Clopper–Pearson at a fixed n, the mixture confidence
sequence when the trials were stopped by looking.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

from passhat.stats._estimators import more_trials_until
from passhat.stats._intervals import Method, rate_interval

Decision = Literal["safe", "not safe"]


def _check(k: int, threshold: float) -> None:
    if k < 1:
        msg = f"k must be a positive integer, got k={k}."
        raise ValueError(msg)
    if not 0 < threshold <= 1:
        msg = f"threshold must be in (0, 1], got {threshold}."
        raise ValueError(msg)


def hat_interval(n: float, c: float, k: int, method: Method = "clopper-pearson") -> tuple[float, float] | None:
    """95% interval of pass^k: the rate's interval with each end raised to the k-th power; None when n == 0."""
    _check(k, 0.5)
    interval = rate_interval(n, c, method)
    return None if interval is None else (interval[0] ** k, interval[1] ** k)


def decide(n: float, c: float, k: int, threshold: float, method: Method = "clopper-pearson") -> Decision | None:
    """ "safe", "not safe", or None (not enough trials to say; also when n == 0)."""
    _check(k, threshold)
    interval = hat_interval(n, c, k, method)
    if interval is None:
        return None
    if interval[0] >= threshold:
        return "safe"
    if interval[1] < threshold:
        return "not safe"
    return None


def trials_to_decide(
    n: int, c: int, k: int, threshold: float, method: Method = "clopper-pearson", limit: int = 100_000
) -> int | None:
    """More trials until the verdict is decided if the observed rate c/n holds (c/n of the new trials pass);
    0 when it already is. None when n == 0, when no number decides it (the rate is exactly threshold^(1/k)),
    or beyond `limit` more trials.

    Deciding is monotone in the number of trials at a fixed rate for every method here, so a doubling search
    and then bisection find the least such number.
    """
    _check(k, threshold)
    if n == 0:
        return None
    projected = c / n

    def decided(trials: int) -> bool:
        return decide(trials, c + projected * (trials - n), k, threshold, method) is not None

    if decided(n):
        return 0
    if math.isclose(projected, threshold ** (1 / k), rel_tol=0, abs_tol=1e-12):
        return None
    return more_trials_until(n, decided, n + limit)


def cutoffs(total: int, k: int, threshold: float, method: Method) -> tuple[int, int]:
    """At `total` trials: the most passes still called "not safe" (-1: none) and the fewest called "safe"
    (total + 1: none). Deciding is monotone in the passes, so both are found by bisection."""

    def least(holds: Callable[[int], bool]) -> int:  # the least c in 0..total where `holds` (monotone) is true
        low, high = -1, total + 1
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if holds(middle) else (middle, high)
        return high

    not_safe = least(lambda c: decide(total, c, k, threshold, method) != "not safe") - 1
    return not_safe, least(lambda c: decide(total, c, k, threshold, method) == "safe")


def chance_to_decide(n: int, c: int, more: int, k: int, threshold: float, method: Method = "clopper-pearson") -> float:
    """The chance that `more` trials decide the verdict at n + more trials, by the posterior predictive of the
    rate given c of n (uniform prior: the new passes are beta-binomial(more, c + 1, n - c + 1)). Used to stop
    spending on a task the trials left are unlikely to decide — without taking 5/5 for a sure rate of 1."""
    _check(k, threshold)
    if more <= 0:
        return 1.0 if decide(n, c, k, threshold, method) is not None else 0.0
    not_safe, safe = cutoffs(n + more, k, threshold, method)
    a, b = c + 1, n - c + 1

    def pmf(x: int) -> float:  # beta-binomial, in logs
        return math.exp(
            math.lgamma(more + 1) - math.lgamma(x + 1) - math.lgamma(more - x + 1)
            + math.lgamma(x + a) + math.lgamma(more - x + b) - math.lgamma(more + a + b)
            - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
        )  # fmt: skip

    return sum(pmf(x) for x in range(more + 1) if c + x <= not_safe or c + x >= safe)
