"""Agreement between two raters (judge and human, or the judge with itself): pure functions, no I/O.

Undefined figures are None, never a made-up 0 or 1: kappa when chance agreement is total, Spearman's
rho when a rater gives every item the same score, precision when the judge passes nothing, F1 when neither
rater ever says pass.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Literal

Weights = Literal["none", "linear", "quadratic"]


def cohen_kappa(
    a: Sequence[int], b: Sequence[int], categories: Sequence[int], weights: Weights = "quadratic"
) -> float | None:
    """Cohen's kappa (1960); weighted (Cohen 1968) for ordinal scales: disagreement weight between categories
    i and j (their positions in `categories`) is |i-j|/(K-1) (linear) or (i-j)^2/(K-1)^2 (quadratic), 0/1 for none.
    kappa_w = 1 - sum(w * observed) / sum(w * expected), expected = the product of the two raters' marginals."""
    if len(a) != len(b):
        raise ValueError(f"two raters need the same items: {len(a)} vs {len(b)} ratings")
    if not a:
        return None
    index = {c: i for i, c in enumerate(categories)}
    unknown = sorted({x for x in (*a, *b) if x not in index})
    if unknown:
        raise ValueError(f"ratings {unknown} are not among the categories {list(categories)}")
    k, n = len(categories), len(a)
    span = max(k - 1, 1)

    def weight(i: int, j: int) -> float:
        if weights == "linear":
            return abs(i - j) / span
        if weights == "quadratic":
            return (i - j) ** 2 / span**2
        return 0.0 if i == j else 1.0

    row = [0] * k
    col = [0] * k
    observed = 0.0
    for x, y in zip(a, b, strict=True):
        i, j = index[x], index[y]
        row[i] += 1
        col[j] += 1
        observed += weight(i, j)
    expected = math.fsum(weight(i, j) * row[i] * col[j] for i in range(k) for j in range(k)) / n
    if expected == 0:
        return None
    return 1.0 - observed / expected


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks; ties get the mean of the ranks they span (as scipy.stats.rankdata 'average')."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        mean_rank = (start + end) / 2 + 1
        for position in range(start, end + 1):
            out[order[position]] = mean_rank
        start = end + 1
    return out


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    if len(x) != len(y) or len(x) < 2:
        return None
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = math.fsum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = math.fsum((a - mx) ** 2 for a in x)
    syy = math.fsum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho: Pearson's r of the tie-averaged ranks (as scipy.stats.spearmanr)."""
    return pearson(ranks(x), ranks(y))


def precision_recall_f1(truth: Sequence[bool], predicted: Sequence[bool]) -> dict[str, float | int | None]:
    """Of the pass verdict, `truth` the human's, `predicted` the judge's; pass is the positive class."""
    tp = sum(t and p for t, p in zip(truth, predicted, strict=True))
    fp = sum(p and not t for t, p in zip(truth, predicted, strict=True))
    fn = sum(t and not p for t, p in zip(truth, predicted, strict=True))
    tn = len(truth) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    # F1 = 2 TP / (2 TP + FP + FN), the harmonic mean where both are defined; 0 when TP = 0 and FP + FN > 0 (as
    # scikit-learn's f1_score, even with one of precision and recall undefined); None with no positive at all.
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    accuracy = (tp + tn) / len(truth) if truth else None
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision, "recall": recall, "f1": f1,
            "accuracy": accuracy}  # fmt: skip


def sign_test_p(above: int, below: int) -> float | None:
    """Two-sided exact sign test: P(a split at least this uneven | each sign 1/2); ties left out."""
    n = above + below
    if n == 0:
        return None
    k = min(above, below)
    tail: float = math.fsum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def sample_sd(values: Sequence[float]) -> float | None:
    """Standard deviation with n - 1; None below two values."""
    return statistics.stdev(values) if len(values) >= 2 else None


def pooled_sd(groups: Sequence[Sequence[float]]) -> float | None:
    """sqrt of the mean within-group variance (n - 1 each) over the groups with two or more values."""
    variances = [statistics.variance(g) for g in groups if len(g) >= 2]
    return math.sqrt(statistics.fmean(variances)) if variances else None
