"""Intervals for a pass rate whose coverage holds where the verdict decides: at the tails, and under stopping.

- `clopper_pearson`: the exact interval at a fixed n (Clopper & Pearson 1934, "The use of confidence or fiducial
  limits illustrated in the case of the binomial", https://doi.org/10.1093/biomet/26.4.404). Each end leaves at
  most 2.5% on its side at every rate p: the verdict, which reads one end, is wrong in at most 2.5% of runs.
- `mixture_interval`: Robbins' beta-binomial mixture confidence sequence (Robbins 1970, "Statistical methods
  related to the law of the iterated logarithm", https://doi.org/10.1214/aoms/1177696786; Howard, Ramdas,
  McAuliffe & Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences",
  https://arxiv.org/abs/1810.08240). With a Beta(a, b) prior, M_n(p) = B(a + c, b + n - c) / B(a, b) /
  (p^c (1 - p)^(n - c)) is a nonnegative martingale with mean 1 under p, so by Ville's inequality
  P(some n has M_n(p) >= 1/alpha) <= alpha: {p : M_n(p) < 1/alpha} holds at every n at once — a verdict
  re-checked after each round, and stopped when decided, stays right in 95% of runs.
- `rate_interval(method)`: the one place the verdict's interval is chosen.

All take real c (a rate times a number of trials) so `trials_to_decide` can project "if the observed rate holds".
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Literal

Method = Literal["clopper-pearson", "mixture", "wilson"]
METHODS: tuple[Method, ...] = ("clopper-pearson", "mixture", "wilson")
ALPHA = 0.05
PRIOR = (1.0, 1.0)  # Robbins' uniform mixture; see README "Numbers" for why not Jeffreys' Beta(1/2, 1/2)
_EPS = 1e-15
_ITERATIONS = 200
_NEWTON_STEPS = 60  # beta_quantile's: a guess from the mean takes ~5-10 to the root


def _check(n: float, c: float) -> None:
    if not (0 <= c <= n):
        msg = f"need 0 <= c <= n, got n={n}, c={c}; count passes among the n scored trials only."
        raise ValueError(msg)


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz; Numerical Recipes 6.4).

    Each m takes an even and an odd step, written out rather than looped over (a verdict's interval bisects over
    this ~25,000 times in a big report: the loop was a tenth of its time)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + even * d
        d = 1.0 / (d if d > tiny or d < -tiny else tiny)
        c = 1.0 + even / c
        if not (c > tiny or c < -tiny):
            c = tiny
        h *= d * c
        d = 1.0 + odd * d
        d = 1.0 / (d if d > tiny or d < -tiny else tiny)
        c = 1.0 + odd / c
        if not (c > tiny or c < -tiny):
            c = tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return h


def beta_cdf(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b): P(X <= x) for X ~ Beta(a, b), a, b > 0."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - _log_beta(a, b))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def _bisect(inside: Callable[[float], bool], inner: float, outer: float) -> float:
    """The boundary between `inner` (inside) and `outer` (outside), to double precision."""
    for _ in range(_ITERATIONS):
        middle = (inner + outer) / 2
        if middle in (inner, outer):
            break
        inner, outer = (middle, outer) if inside(middle) else (inner, middle)
    return inner


def beta_quantile(q: float, a: float, b: float) -> float:
    """x with I_x(a, b) = q: a float x with I_x(a, b) <= q next to one above q (I_x grows with x), as bisection
    over [0, 1] finds it, in a quarter of its steps. Newton's steps on I_x - q (whose slope is the Beta(a, b)
    density) close in on the root, each also narrowing the bracket bisection keeps (a step that would leave it is
    a bisection step instead); bisection finishes within a few floats of the root. Where the computed I_x is not
    monotone at its last bits the two can stop a few floats apart (<= 3e-15 relative on 12,000 (a, b) checked
    against the full bisection). A report asks this ~400 times."""

    def inside(x: float) -> bool:
        return beta_cdf(x, a, b) <= q

    inner, outer = 0.0, 1.0
    log_norm, x = _log_beta(a, b), a / (a + b)
    if not 0.0 < x < 1.0:  # the mean rounds to an end when one of a, b dwarfs the other
        x = 0.5
    for _ in range(_NEWTON_STEPS):
        below = beta_cdf(x, a, b) - q
        inner, outer = (x, outer) if below <= 0 else (inner, x)
        try:
            density = math.exp((a - 1) * math.log(x) + (b - 1) * math.log1p(-x) - log_norm)
        except OverflowError:  # a density spike at an end (a or b far below 1): no Newton step there
            density = 0.0
        step = below / density if density > 0 else math.inf
        if abs(step) <= 4 * math.ulp(x):  # at the root: now a bracket of a few floats around it
            inner, outer = _around(inside, x, below <= 0, inner, outer)
            break
        x = x - step if inner < x - step < outer else (inner + outer) / 2
        if x in (inner, outer):
            break
    return _bisect(inside, inner, outer)


def _around(inside: Callable[[float], bool], x: float, side: bool, inner: float, outer: float) -> tuple[float, float]:
    """(inner, outer) narrowed to floats near x (`side`: whether x is inside), on x's side of the boundary: probes
    4, 64, 1024... floats away from x until one lands across it (or at the old bracket's end)."""
    width = 4 * math.ulp(x)
    while True:
        if side:
            inner, probe = x, min(x + width, outer)
        else:
            outer, probe = x, max(x - width, inner)
        if probe in (inner, outer):
            return inner, outer
        if inside(probe) != side:
            return (x, probe) if side else (probe, x)
        x, width = probe, width * 16


def clopper_pearson(n: float, c: float, alpha: float = ALPHA) -> tuple[float, float] | None:
    """The exact (Clopper–Pearson) 1 - alpha interval for the pass rate c/n; None when n == 0.

    low = the alpha/2 quantile of Beta(c, n - c + 1) (0 at c = 0), high = the 1 - alpha/2 quantile of
    Beta(c + 1, n - c) (1 at c = n): for whole c, the rates at which P(X >= c) resp. P(X <= c) is alpha/2.
    """
    _check(n, c)
    if n == 0:
        return None
    low = 0.0 if c <= 0 else beta_quantile(alpha / 2, c, n - c + 1)
    high = 1.0 if c >= n else beta_quantile(1 - alpha / 2, c + 1, n - c)
    return low, high


def mixture_log_martingale(n: float, c: float, p: float, prior: tuple[float, float] = PRIOR) -> float:
    """log M_n(p) of Robbins' beta-binomial mixture: log B(a + c, b + n - c) - log B(a, b) - log L_n(p)."""
    a, b = prior
    likelihood = (c * math.log(p) if c else 0.0) + ((n - c) * math.log1p(-p) if n - c else 0.0)
    return _log_beta(a + c, b + n - c) - _log_beta(a, b) - likelihood


def mixture_interval(
    n: float, c: float, alpha: float = ALPHA, prior: tuple[float, float] = PRIOR
) -> tuple[float, float] | None:
    """The anytime-valid 1 - alpha interval {p : M_n(p) < 1/alpha} (a confidence sequence); None when n == 0.

    log M_n(p) is convex in p with its least value at c/n (where M_n <= 1, the mixture's likelihood being at
    most the best one's), so the set is an interval around c/n, found by bisection on each side.
    """
    _check(n, c)
    if n == 0:
        return None
    bound = math.log(1 / alpha)
    centre = c / n

    def inside(p: float) -> bool:
        return mixture_log_martingale(n, c, p, prior) < bound

    low = 0.0 if inside(_EPS) else _bisect(inside, centre, 0.0)
    high = 1.0 if inside(1 - _EPS) else _bisect(inside, centre, 1.0)
    return low, high


def wilson(n: float, c: float, alpha: float = ALPHA) -> tuple[float, float] | None:
    """The Wilson score interval (fixed n; undercovers near 0 and 1 — kept for comparison)."""
    from statistics import NormalDist

    _check(n, c)
    if n == 0:
        return None
    z = NormalDist().inv_cdf(1 - alpha / 2)
    rate, z2 = c / n, z * z
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(rate * (1 - rate) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


_INTERVALS: dict[Method, Callable[[float, float, float], tuple[float, float] | None]] = {
    "clopper-pearson": clopper_pearson,
    "mixture": mixture_interval,
    "wilson": wilson,
}


@functools.lru_cache(maxsize=1 << 14)
def rate_interval(n: float, c: float, method: Method = "clopper-pearson") -> tuple[float, float] | None:
    """The 95% interval of the pass rate that verdicts use: `clopper-pearson` at a fixed n, `mixture` when the
    trials were stopped by looking (rounds, `report --sequential`). None when n == 0.

    Remembered (a pure function of its arguments): a report asks it of the same (n, c) for many tasks, k's
    and searches (`_verdict`), each a bisection over the incomplete beta function (~1.5 ms)."""
    if method not in _INTERVALS:
        msg = f"interval method {method!r} is not one of {', '.join(METHODS)}."
        raise ValueError(msg)
    return _INTERVALS[method](n, c, ALPHA)
