from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest

from passhat._stats import pass_at_k, pass_hat_k


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
    assert pass_at_k(n, c, k) == pytest.approx(float(at_k), abs=1e-12)
    assert pass_hat_k(n, c, k) == pytest.approx(float(hat_k), abs=1e-12)


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
