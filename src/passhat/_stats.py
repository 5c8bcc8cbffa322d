"""pass@k and pass^k for one task: pure functions of n trials, c passes and k.

Both are undefined when n < k and return None then — never a made-up 0 or 1.
"""

from __future__ import annotations

import math


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


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Probability that at least one of k trials passes: 1 - C(n-c, k) / C(n, k).

    The unbiased estimator of Chen et al. 2021, "Evaluating Large Language Models
    Trained on Code" (https://arxiv.org/abs/2107.03374), in its numerically stable
    product form. Returns None when n < k: k trials cannot be drawn from n.
    """
    _check(n, c, k)
    if n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """Probability that all of k trials pass: C(c, k) / C(n, k).

    pass^k of Yao et al. 2024, "tau-bench" (https://arxiv.org/abs/2406.12045).
    Returns None when n < k: k trials cannot be drawn from n.
    """
    _check(n, c, k)
    if n < k:
        return None
    return math.comb(c, k) / math.comb(n, k)
