from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest

from passhat.stats._estimators import pass_at_k, pass_at_k_exact, pass_hat_k, pass_hat_k_exact


def brute_force(n: int, c: int, k: int) -> tuple[Fraction, Fraction]:
    """(pass@k, pass^k) by drawing every k-subset of n outcomes, c of them passes."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    any_pass = sum(any(subset) for subset in subsets)
    all_pass = sum(all(subset) for subset in subsets)
    return Fraction(any_pass, len(subsets)), Fraction(all_pass, len(subsets))


GRID = [(n, c, k) for n in range(1, 11) for c in range(n + 1) for k in range(1, n + 1)]


@pytest.mark.parametrize(("n", "c", "k"), GRID)
def test_matches_brute_force(n: int, c: int, k: int) -> None:
    at_k, hat_k = brute_force(n, c, k)
    assert (pass_at_k_exact(n, c, k), pass_hat_k_exact(n, c, k)) == (at_k, hat_k)
    assert (pass_at_k(n, c, k), pass_hat_k(n, c, k)) == (float(at_k), float(hat_k))  # rounded once: exact


def product_form(n: int, c: int, k: int) -> float:
    """Chen et al.'s numerically stable product form of pass@k, in floating point (the reference code's)."""
    return 1.0 if n - c < k else 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def test_every_ratio_up_to_20_is_correctly_rounded() -> None:
    # Every n <= 20, c <= n, k <= n: the float is the exact fraction rounded once (float(Fraction) is correctly
    # rounded), so 8/10 is the double nearest 0.8 and the same double as float("0.8").
    wrong = []
    for n in range(1, 21):
        for c in range(n + 1):
            for k in range(1, n + 1):
                at_k = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
                hat_k = Fraction(math.comb(c, k), math.comb(n, k))
                if (pass_at_k(n, c, k), pass_hat_k(n, c, k)) != (float(at_k), float(hat_k)):
                    wrong.append((n, c, k))
                # The product form agrees to rounding, no better: it is a reference, not the estimator.
                assert product_form(n, c, k) == pytest.approx(float(at_k), abs=1e-15)
    assert wrong == []
    assert pass_at_k(10, 8, 1) == 0.8 == float("0.8")  # the product form gives 0.7999999999999999
    assert pass_at_k(10, 6, 1) == 0.6  # and 0.5999999999999999 here
    assert product_form(10, 8, 1) != 0.8  # why the product form is not used


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [
        pytest.param(200, 100, 50, id="n=200-c=100-k=50"),
        pytest.param(1000, 3, 10, id="rare-passes"),
        pytest.param(1000, 997, 10, id="rare-failures"),
        pytest.param(500, 250, 1, id="k=1"),
    ],
)
def test_matches_comb_form(n: int, c: int, k: int) -> None:
    # Exact rationals from math.comb, compared with the float product form.
    at_k = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    hat_k = Fraction(math.comb(c, k), math.comb(n, k))
    assert pass_at_k(n, c, k) == pytest.approx(float(at_k), rel=1e-9, abs=1e-15)
    assert pass_hat_k(n, c, k) == pytest.approx(float(hat_k), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(
    ("n", "c", "k", "at_k", "hat_k"),
    [
        # c=7, n=10, k=3: pass^3 = C(7,3)/C(10,3) = 35/120; pass@3 = 1 - C(3,3)/C(10,3) = 119/120
        pytest.param(10, 7, 3, 119 / 120, 35 / 120, id="c=7-n=10-k=3"),
        # c=6, n=10, k=1: both are c/n = 6/10
        pytest.param(10, 6, 1, 0.6, 0.6, id="k=1-is-pass-rate"),
        # c=2, n=4, k=2: pass^2 = C(2,2)/C(4,2) = 1/6; pass@2 = 1 - C(2,2)/C(4,2) = 5/6
        pytest.param(4, 2, 2, 5 / 6, 1 / 6, id="c=2-n=4-k=2"),
        # c=1, n=3, k=3: n-c = 2 < 3 so every draw holds the pass; C(1,3) = 0
        pytest.param(3, 1, 3, 1.0, 0.0, id="n-c<k"),
        pytest.param(5, 0, 2, 0.0, 0.0, id="never-passes"),
        pytest.param(5, 5, 5, 1.0, 1.0, id="always-passes"),
    ],
)
def test_hand_computed(n: int, c: int, k: int, at_k: float, hat_k: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(at_k)
    assert pass_hat_k(n, c, k) == pytest.approx(hat_k)


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [
        pytest.param(2, 2, 3, id="n=2-k=3"),
        pytest.param(9, 4, 10, id="n=9-k=10"),
        pytest.param(0, 0, 1, id="no-trials"),
    ],
)
def test_undefined_when_n_below_k(n: int, c: int, k: int) -> None:
    # Not 0, not 1: k trials cannot be drawn from n < k.
    assert pass_at_k(n, c, k) is None
    assert pass_hat_k(n, c, k) is None


@pytest.mark.parametrize("estimator", [pass_at_k, pass_hat_k])
@pytest.mark.parametrize(
    ("n", "c", "k", "match"),
    [
        pytest.param(3, 4, 1, r"c=4 passes cannot exceed n=3 trials", id="c>n"),
        pytest.param(-1, 0, 1, r"non-negative, got n=-1, c=0", id="negative-n"),
        pytest.param(3, -1, 1, r"non-negative, got n=3, c=-1", id="negative-c"),
        pytest.param(3, 1, 0, r"positive integer, got k=0", id="k=0"),
        pytest.param(3, 1, -2, r"positive integer, got k=-2", id="negative-k"),
    ],
)
def test_rejects_bad_input(estimator, n: int, c: int, k: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        estimator(n, c, k)


# --- Wilson interval, runs needed, Fisher, Holm, nearest-rank percentile ------------------------

from scipy import stats as scipy_stats  # noqa: E402

from passhat.stats._estimators import (  # noqa: E402
    Z95,
    fisher_exact,
    holm,
    nearest_rank,
    runs_needed,
    wilson_interval,
    wilson_width,
)

WILSON_GRID = [(n, c) for n in range(1, 41) for c in range(n + 1)] + [(1000, 3), (1000, 999), (250, 125)]


def test_z95_is_the_normal_quantile() -> None:
    assert pytest.approx(scipy_stats.norm.ppf(0.975), abs=1e-12) == Z95


def test_wilson_matches_scipy() -> None:
    for n, c in WILSON_GRID:
        reference = scipy_stats.binomtest(c, n).proportion_ci(confidence_level=0.95, method="wilson")
        low, high = wilson_interval(n, c)
        assert (low, high) == (pytest.approx(reference.low, abs=1e-12), pytest.approx(reference.high, abs=1e-12))


def test_wilson_hand_computed() -> None:
    # c=6, n=10, z=1.96 (z² = 3.8416): center = (0.6 + z²/20) / (1 + z²/10) = 0.79208 / 1.38416 = 0.572246;
    # half = (z / 1.38416) sqrt(0.6 x 0.4 / 10 + z²/400) = 1.416021 x 0.183314 = 0.259577 -> [0.31267, 0.83182].
    low, high = wilson_interval(10, 6, z=1.96)
    assert (low, high) == (pytest.approx(0.31267, abs=1e-5), pytest.approx(0.83182, abs=1e-5))


def test_wilson_undefined_without_trials() -> None:
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize(
    ("n", "c", "width", "more"),
    [
        # rate 1/2: width = z / sqrt(N + z²) <= 0.2  <=>  N >= 24 z² = 24 x 3.84146 = 92.195 -> N = 93.
        pytest.param(10, 5, 0.2, 83, id="5/10"),
        pytest.param(2, 1, 0.2, 91, id="1/2"),
        # rate 1/2, width 0.1: N >= 99 z² = 380.30 -> N = 381.
        pytest.param(10, 5, 0.1, 371, id="5/10-width-0.1"),
        # rate 1 (or 0): interval [N/(N+z²), 1], width = z²/(N + z²) <= 0.2  <=>  N >= 4 z² = 15.37 -> 16.
        pytest.param(10, 10, 0.2, 6, id="10/10"),
        pytest.param(10, 0, 0.2, 6, id="0/10"),
        pytest.param(20, 20, 0.2, 0, id="20/20-already-narrow"),
    ],
)
def test_runs_needed_hand_computed(n: int, c: int, width: float, more: int) -> None:
    assert runs_needed(n, c, width) == more


@pytest.mark.parametrize("width", [0.1, 0.2, 0.35])
def test_runs_needed_matches_linear_search(width: float) -> None:
    for n, c in [(trials, passes) for trials in range(1, 16) for passes in range(trials + 1)]:
        m = 0
        while wilson_width(c / n, n + m) > width:
            m += 1
        assert runs_needed(n, c, width) == m, (n, c)


def test_wilson_width_at_integer_counts_is_scipys() -> None:
    # 5/10 needs 83 more: at n=93 with 46.5 passes the width is <= 0.2; scipy at 46/93 and 47/93 brackets it.
    for c in (46, 47):
        ci = scipy_stats.binomtest(c, 93).proportion_ci(method="wilson")
        assert ci.high - ci.low == pytest.approx(wilson_width(c / 93, 93), abs=1e-12)
    assert wilson_width(0.5, 93) <= 0.2 < wilson_width(0.5, 92)


def test_runs_needed_input() -> None:
    assert runs_needed(0, 0) is None
    with pytest.raises(ValueError, match=r"width must be between 0 and 1 \(exclusive\), got 1.5"):
        runs_needed(10, 5, 1.5)


FISHER_GRID = [
    (bn, bc, nn, nc) for bn in range(1, 9) for nn in range(1, 9) for bc in range(bn + 1) for nc in range(nn + 1)
]


@pytest.mark.parametrize(
    ("base_n", "base_c", "new_n", "new_c"), [(10, 3, 10, 10), (10, 7, 10, 9), (40, 31, 35, 12), (5, 0, 7, 0)]
)
def test_fisher_matches_scipy(base_n: int, base_c: int, new_n: int, new_c: int) -> None:
    table = [[base_c, base_n - base_c], [new_c, new_n - new_c]]
    expected = scipy_stats.fisher_exact(table, alternative="two-sided").pvalue
    assert fisher_exact(base_c, base_n, new_c, new_n) == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_fisher_whole_grid_matches_scipy() -> None:
    for base_n, base_c, new_n, new_c in FISHER_GRID:
        table = [[base_c, base_n - base_c], [new_c, new_n - new_c]]
        expected = scipy_stats.fisher_exact(table).pvalue
        assert fisher_exact(base_c, base_n, new_c, new_n) == pytest.approx(expected, rel=1e-9), table


def test_fisher_hand_computed() -> None:
    # 3/10 vs 10/10: 13 passes in 20 trials. P(base has x passes) = C(10,x) C(10,13-x) / C(20,13), x = 3..10.
    # x=3: 120 x 1 = 120; x=10: 1 x 120 = 120; every other x is likelier (x=4: 210 x 10 = 2100 ...).
    # p = 240 / C(20,13) = 240 / 77520 = 0.003096.
    assert fisher_exact(3, 10, 10, 10) == pytest.approx(240 / 77520)
    # 7/10 vs 9/10: 16 passes, x = 6..10, weights C(10,x) C(10,16-x) = 210, 1200, 2025, 1200, 210 (sum 4845 =
    # C(20,16)). Observed x=7 weighs 1200; x = 6, 7, 9, 10 weigh no more: p = 2820 / 4845 = 0.58204.
    assert fisher_exact(7, 10, 9, 10) == pytest.approx(2820 / 4845)


def test_holm_hand_computed() -> None:
    # m=4, sorted: 0.005 x 4 = 0.02; 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1 = 0.04 -> max so far 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # capped at 1: 0.5 x 2 = 1.0, then max(1.0, 0.6 x 1) = 1.0
    assert holm([0.5, 0.6]) == [1.0, 1.0]
    assert holm([0.003]) == [0.003]  # one test: nothing to adjust
    assert holm([]) == []


@pytest.mark.parametrize("seed", range(20))
def test_holm_agrees_with_the_step_down_procedure(seed: int) -> None:
    # Holm's procedure: walk p(1) <= p(2) <= ...; reject while p(j) < alpha / (m - j + 1), stop at the first miss.
    import random

    rng = random.Random(seed)
    p_values = [rng.random() ** 3 for _ in range(rng.randint(1, 12))]
    adjusted = holm(p_values)
    for alpha in (0.01, 0.05, 0.1, 0.2):
        rejected = set()
        for j, index in enumerate(sorted(range(len(p_values)), key=p_values.__getitem__)):
            if p_values[index] >= alpha / (len(p_values) - j):
                break
            rejected.add(index)
        assert {i for i, p in enumerate(adjusted) if p < alpha} == rejected


@pytest.mark.parametrize(
    "values",
    [[5.0], [3.0, 1.0, 2.0], [float(v) for v in range(1, 11)], [float(v % 7) for v in range(23)], [1.0] * 4 + [9.0]],
)
@pytest.mark.parametrize("percent", [50, 90, 100])
def test_nearest_rank_by_definition(values: list[float], percent: int) -> None:
    # The smallest observed value with at least percent% of the values at or below it.
    expected = min(v for v in values if 100 * sum(w <= v for w in values) >= percent * len(values))
    assert nearest_rank(values, percent) == expected


def test_nearest_rank_hand_computed() -> None:
    # 10 durations: rank ceil(0.9 x 10) = 9 -> the 9th smallest; 20: rank 18.
    assert nearest_rank([float(v) for v in range(10, 0, -1)], 90) == 9.0
    assert nearest_rank([float(v) for v in range(1, 21)], 90) == 18.0
    assert nearest_rank([], 90) is None


# --- the verdict's interval for pass^k and the trials that would decide it -----------------------------------------


def test_pass_hat_k_interval_is_wilson_to_the_kth() -> None:
    from passhat.stats._estimators import pass_hat_k_interval, wilson_interval

    # 6/10: Wilson [0.3126738, 0.8318197]; pass^3 in [0.3126738³, 0.8318197³] = [0.030568, 0.575561].
    low, high = pass_hat_k_interval(10, 6, 3) or (0, 0)
    assert (low, high) == (pytest.approx(0.3126738**3, rel=1e-6), pytest.approx(0.8318197**3, rel=1e-6))
    for n, c, k in [(10, 10, 10), (5, 0, 3), (3, 2, 7)]:  # n < k too: it needs the rate, not k draws
        wlow, whigh = wilson_interval(n, c) or (0, 0)
        assert pass_hat_k_interval(n, c, k) == (wlow**k, whigh**k)
    assert pass_hat_k_interval(0, 0, 3) is None


def _decided(n: float, rate: float, k: int, t: float) -> bool:
    from passhat.stats._estimators import Z95

    z2 = Z95 * Z95
    center = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 / (1 + z2 / n) * math.sqrt(rate * (1 - rate) / n + z2 / (4 * n * n))
    low, high = max(0.0, center - half), min(1.0, center + half)
    return low**k >= t or high**k < t


@pytest.mark.parametrize(
    ("n", "c", "k", "t"),
    [(10, 10, 10, 0.9), (10, 9, 3, 0.5), (20, 19, 7, 0.5), (10, 6, 10, 0.9), (4, 1, 2, 0.2), (30, 27, 5, 0.5)],
)
def test_runs_to_decide_is_the_first_count_that_decides(n: int, c: int, k: int, t: float) -> None:
    from passhat.stats._estimators import runs_to_decide

    more = runs_to_decide(n, c, k, t)
    assert more is not None
    assert _decided(n + more, c / n, k, t)
    assert more == 0 or not _decided(n + more - 1, c / n, k, t)


def test_runs_to_decide_hand_computed_and_never() -> None:
    from passhat.stats._estimators import runs_to_decide

    # 10/10 against pass^10 >= 0.9: all passes at N trials give Wilson low N / (N + z²); need (N / (N + 3.8415))^10
    # >= 0.9: N >= 363 (0.90008; N = 362 gives 0.89982): 353 more.
    assert runs_to_decide(10, 10, 10, 0.9) == 353
    assert runs_to_decide(10, 6, 10, 0.9) == 0  # already decided: not safe
    assert runs_to_decide(10, 5, 1, 0.5) is None  # the rate is exactly the threshold: no count decides it
    assert runs_to_decide(10, 10, 3, 1.0) is None  # all passes can never prove pass^3 >= 1
    assert runs_to_decide(0, 0, 3, 0.9) is None
    with pytest.raises(ValueError, match="threshold must be in"):
        runs_to_decide(10, 5, 1, 0.0)
