"""The verdict's intervals against an independent computation (scipy), and the verdict's arithmetic."""

from __future__ import annotations

import math

import pytest
from scipy import special
from scipy import stats as sp

from passhat.stats._intervals import (
    ALPHA,
    PRIOR,
    _bisect,
    beta_cdf,
    beta_quantile,
    clopper_pearson,
    mixture_interval,
    mixture_log_martingale,
    rate_interval,
    wilson,
)
from passhat.stats._verdict import decide, hat_interval, trials_to_decide

COUNTS = [(1, 0), (1, 1), (3, 1), (5, 5), (10, 6), (10, 10), (15, 15), (20, 19), (50, 48), (60, 3), (400, 399)]


@pytest.mark.parametrize(("x", "a", "b"), [(0.3, 2, 5), (0.99, 60, 1), (0.5, 0.5, 0.5), (0.01, 1, 40), (0.9, 7.5, 2.5)])
def test_beta_cdf_is_scipys_regularized_incomplete_beta(x: float, a: float, b: float) -> None:
    assert beta_cdf(x, a, b) == pytest.approx(special.betainc(a, b, x), rel=1e-10, abs=1e-14)


def test_beta_quantile_stops_where_bisection_over_the_whole_unit_interval_does() -> None:
    """Newton's shortcut ends at the boundary a full bisection finds, to within a few floats, for every
    Clopper-Pearson end of n <= 120 and for real (projected) counts; each answer is inside (I_x <= q)."""
    cases = [(q, c, n - c + 1) for n in range(1, 121) for c in range(1, n + 1) for q in (ALPHA / 2,)]
    cases += [(1 - ALPHA / 2, c + 1, n - c) for n in range(1, 121) for c in range(n)]
    cases += [(q, 0.37 * n + 0.5, 0.63 * n + 0.5) for n in range(1, 400, 7) for q in (0.001, 0.5, 0.999)]
    for q, a, b in cases:
        found = beta_quantile(q, a, b)
        whole = _bisect(lambda x, a=a, b=b, q=q: beta_cdf(x, a, b) <= q, 0.0, 1.0)
        assert beta_cdf(found, a, b) <= q
        assert found == pytest.approx(whole, rel=1e-14, abs=1e-300), (q, a, b)


@pytest.mark.parametrize("q", [1e-12, ALPHA / 2, 0.5, 1 - ALPHA / 2, 1 - 1e-12])
def test_beta_quantile_holds_where_one_shape_dwarfs_the_other(q: float) -> None:
    """Shapes from 1e-12 to 1e9 (a projected count can leave n - c tiny): no error, an answer inside, and the full
    bisection's x to 1e-9 — or, where I_x is so flat that x is known to a few digits only, an x whose I_x is as
    near q as the bisection's (the computed I_x moves by ~1e-12 between neighbouring floats at the big shapes)."""
    shapes = [1e-12, 1e-9, 1e-3, 0.5, 2.0, 1e3, 1e6, 1e9]
    for a in shapes:
        for b in shapes:
            found = beta_quantile(q, a, b)
            whole = _bisect(lambda x, a=a, b=b: beta_cdf(x, a, b) <= q, 0.0, 1.0)
            assert beta_cdf(found, a, b) <= q, (a, b)
            as_near = q - beta_cdf(found, a, b) <= q - beta_cdf(whole, a, b) + 1e-15
            assert found == pytest.approx(whole, rel=1e-9, abs=1e-45) or as_near, (a, b)


@pytest.mark.parametrize(("n", "c"), COUNTS)
def test_clopper_pearson_is_scipys_exact_interval(n: int, c: int) -> None:
    low, high = clopper_pearson(n, c)
    expected = sp.binomtest(c, n).proportion_ci(confidence_level=1 - ALPHA, method="exact")
    assert low == pytest.approx(expected.low, abs=1e-9)
    assert high == pytest.approx(expected.high, abs=1e-9)


@pytest.mark.parametrize(("n", "c"), COUNTS)
def test_mixture_ends_are_where_the_beta_binomial_martingale_reaches_1_over_alpha(n: int, c: int) -> None:
    """M_n(p) = P_mix(c) / P_p(c): scipy's beta-binomial pmf over its binomial pmf (the C(n, c) cancel)."""
    a, b = PRIOR
    low, high = mixture_interval(n, c)

    def martingale(p: float) -> float:
        return float(sp.betabinom.pmf(c, n, a, b) / sp.binom.pmf(c, n, p))

    for end in (low, high):
        if 0 < end < 1:
            assert martingale(end) == pytest.approx(1 / ALPHA, rel=1e-6)
            assert math.exp(mixture_log_martingale(n, c, end)) == pytest.approx(1 / ALPHA, rel=1e-6)
    middle = (low + high) / 2
    assert martingale(middle) < 1 / ALPHA
    for outside in (low * 0.99, high + (1 - high) * 0.01):
        if 0 < outside < 1 and not (low <= outside <= high):
            assert martingale(outside) > 1 / ALPHA


@pytest.mark.parametrize("n", [5, 10, 15, 30])
def test_clopper_pearson_covers_at_every_rate_where_wilson_does_not(n: int) -> None:
    """Exact coverage sum_c P(c) [p in CI(c)] over a grid of rates: >= 95% for CP everywhere, < 95% for Wilson
    somewhere near 1 (where the verdict decides)."""
    grid = [i / 1000 for i in range(1, 1000)]
    cp = [clopper_pearson(n, c) for c in range(n + 1)]
    wi = [wilson(n, c) for c in range(n + 1)]

    def coverage(intervals: list[tuple[float, float] | None], p: float) -> float:
        pmf = sp.binom.pmf(range(n + 1), n, p)
        return float(sum(w for w, ci in zip(pmf, intervals, strict=True) if ci and ci[0] <= p <= ci[1]))

    assert min(coverage(cp, p) for p in grid) >= 1 - ALPHA - 1e-12
    assert min(coverage(wi, p) for p in grid if p > 0.9) < 1 - ALPHA


def test_the_mixture_is_wider_than_clopper_pearson_the_price_of_looking() -> None:
    for n, c in COUNTS:
        mix, cp = mixture_interval(n, c), clopper_pearson(n, c)
        assert mix[0] <= cp[0] + 1e-12 and mix[1] >= cp[1] - 1e-12, (n, c)


def test_rate_interval_picks_the_method_and_refuses_an_unknown_one() -> None:
    assert rate_interval(10, 7) == clopper_pearson(10, 7)
    assert rate_interval(10, 7, "mixture") == mixture_interval(10, 7)
    assert rate_interval(0, 0) is None
    with pytest.raises(ValueError, match="'bayes' is not one of clopper-pearson, mixture, wilson"):
        rate_interval(10, 7, "bayes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="need 0 <= c <= n, got n=3, c=4"):
        clopper_pearson(3, 4)


def test_hat_interval_raises_the_rate_interval_to_the_k() -> None:
    low, high = clopper_pearson(10, 9)
    assert hat_interval(10, 9, 3) == (low**3, high**3)


@pytest.mark.parametrize("method", ["clopper-pearson", "mixture", "wilson"])
def test_decide_at_the_thresholds(method: str) -> None:
    # 0/10 passed: pass^10 cannot be 0.9; 2/5 passed is already not safe for 10 runs at 0.9.
    assert decide(10, 0, 10, 0.9, method) == "not safe"  # type: ignore[arg-type]
    assert decide(5, 2, 10, 0.9, method) == "not safe"  # type: ignore[arg-type]
    # 10/10 is not enough: pass^10 >= 0.9 needs p >= 0.9895, and 10 passes leave p = 0.69 possible.
    assert decide(10, 10, 10, 0.9, method) is None  # type: ignore[arg-type]
    assert decide(2000, 2000, 10, 0.9, method) == "safe"  # type: ignore[arg-type]
    assert decide(0, 0, 10, 0.9, method) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["clopper-pearson", "mixture"])
@pytest.mark.parametrize(("n", "c"), [(10, 10), (10, 9), (20, 19), (5, 5)])
def test_trials_to_decide_is_the_least_number_that_decides(method: str, n: int, c: int) -> None:
    more = trials_to_decide(n, c, 3, 0.9, method)  # type: ignore[arg-type]
    assert more is not None and more > 0
    rate = c / n
    assert decide(n + more, rate * (n + more), 3, 0.9, method) is not None  # type: ignore[arg-type]
    assert decide(n + more - 1, rate * (n + more - 1), 3, 0.9, method) is None  # type: ignore[arg-type]


def test_trials_to_decide_at_the_threshold_rate_and_at_zero() -> None:
    assert trials_to_decide(0, 0, 10, 0.9) is None
    assert trials_to_decide(10, 0, 10, 0.9) == 0
    # the rate exactly at the bar (0.9^(1/1) = 0.9 with k = 1): no number of trials decides it
    assert trials_to_decide(10, 9, 1, 0.9) is None
