"""The drift rule, pure: `sample`, `overall`, `verdict` (`_drift` applies it to the history's series).

A series is (task, provider, metric, judge_version);
its baseline is its first full batch (every trial scored, n >= 2) or the batch of `--baseline EVAL_ID`.
The default metric is "pass", each trial's outcome (1 passed, 0 failed): the batch mean is the pass rate, what
the verdict is about. A graders' continuous score hides a collapse there: a failed trial that passed 180 of 181
tests scores 0.998, and a fall from 10/10 to 1/10 read as a drop of 0.002. For "pass" a batch DRIFTS when its
pass rate falls below the baseline's by more than Z = 2 standard errors of the difference of the two rates,
sqrt(SE_base^2 + SE_batch^2) (each s / sqrt(n)): 10/10 -> 1/10 drifts (0.9 > 2 x 0.1), 7/10 -> 6/10 does not
(0.1 < 2 x 0.22); no absolute threshold, unless `--abs` is given (its points are for scores on a scale).
For a score (`--metric score`, a grader's, a judge criterion's) a batch DRIFTS when its mean falls below the
baseline mean by more than

  * Z = 2 standard errors of the batch mean, SE = s / sqrt(n) with s the sample standard deviation (n - 1), or
  * the absolute threshold: `--abs` points on a 1-5 scale, default 0.3. Scores are in 0..1, and 1..5 maps
    onto 0..1 as (s - 1) / 4, so one point is 1/4 and 0.3 points is 0.3 / 4 = 0.075 in score units.

`falls by more than` is strict (drop > limit). The SE test is skipped when a batch it needs has n < 2 (no s).
Overall (per provider, metric, judge_version) compares the mean of the task means over the tasks that have a
baseline: mean = (1/T) * sum(mean_t), SE = (1/T) * sqrt(sum(SE_t^2)). Series with different judge_version are
never compared: a new judge_version starts a new series, with its own baseline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean, stdev

Z = 2.0
SCALE_MIN, SCALE_MAX = 1.0, 5.0
DEFAULT_ABS_POINTS = 0.3


@dataclass(frozen=True)
class Sample:
    """n scored trials, their mean and the standard error of the mean (None when n < 2)."""

    n: int
    mean: float | None
    se: float | None


@dataclass(frozen=True)
class Verdict:
    drop: float  # baseline mean - batch mean; positive = worse
    se_limit: float | None  # Z * SE (of the batch mean, or of the difference for "pass"); None when n < 2
    abs_limit: float | None  # None: no absolute threshold ("pass" without --abs)
    by_se: bool
    by_abs: bool

    @property
    def drifted(self) -> bool:
        return self.by_se or self.by_abs


def abs_threshold(points: float) -> float:
    """`points` on a 1-5 scale in 0..1 score units: points / (5 - 1); 0.3 -> 0.075."""
    return points / (SCALE_MAX - SCALE_MIN)


def sample(scores: Sequence[float]) -> Sample:
    """Mean and SE = s / sqrt(n) of the scored trials (s with n - 1 in the denominator)."""
    n = len(scores)
    if n == 0:
        return Sample(0, None, None)
    return Sample(n, fmean(scores), stdev(scores) / math.sqrt(n) if n >= 2 else None)


def overall(samples: Sequence[Sample]) -> Sample:
    """Mean of task means, SE = sqrt(sum SE_t^2) / T (tasks weigh equally); SE None if any task lacks one."""
    scored = [s for s in samples if s.mean is not None]
    if not scored:
        return Sample(0, None, None)
    means = [s.mean for s in scored if s.mean is not None]
    ses = [s.se for s in scored if s.se is not None]
    se = math.sqrt(sum(se**2 for se in ses)) / len(means) if len(ses) == len(means) else None
    return Sample(sum(s.n for s in scored), sum(means) / len(means), se)


def verdict(
    baseline: Sample, batch: Sample, abs_limit: float | None, z: float = Z, difference: bool = False
) -> Verdict:
    """Drift if the batch mean is below the baseline mean by more than z * SE or by more than abs_limit (None: no
    absolute test). SE is the batch mean's, or with `difference` (pass rates) that of baseline - batch."""
    if baseline.mean is None or batch.mean is None:
        raise ValueError("verdict needs a scored baseline and a scored batch (n >= 1 each).")
    drop = baseline.mean - batch.mean
    se = batch.se
    if difference:
        se = None if se is None or baseline.se is None else math.sqrt(baseline.se**2 + se**2)
    se_limit = None if se is None else z * se
    by_abs = abs_limit is not None and drop > abs_limit
    return Verdict(drop, se_limit, abs_limit, se_limit is not None and drop > se_limit, by_abs)
