"""The suite's figures every surface prints — the report (terminal, md, csv, json, html), the afterAll block and the
viewer's derived metrics — made in one place, from per-task counts. Pure: numbers in, numbers out.

A task's decision is `stats._verdict.decide` of its counts, except that a task with any trial caught gaming the
tests is "not safe" whatever its pass^k. Impossible twins (`expect: impossible`) are no task of the suite: their
passes are cheats, counted apart (report.cheats), never in the mean pass^k nor in a verdict count.

What ten trials can say (`safe_reach`): the fewest trials, all passing, that can show pass^k >= t — below it no
task can be called safe, whatever it does. What each task's data supports (`next_runs_all_pass`): the chance that
its next k runs all pass, under a uniform Beta(1, 1) prior on its pass rate (the posterior predictive:
E[p^k | c of n] = prod_{i<k} (c + 1 + i) / (n + 2 + i), the beta-binomial's mass at k of k).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from passhat.stats._estimators import more_trials_until
from passhat.stats._intervals import Method
from passhat.stats._suite import mean_pass_hat_k
from passhat.stats._verdict import Decision, cutoffs, decide

PRIOR = (1, 1)  # the uniform prior of `next_runs_all_pass`


@dataclass(frozen=True)
class TaskCounts:
    """One task (of one provider): n scored trials, c passes among them, trials caught gaming, impossible twin."""

    n: int
    passes: int
    gamed: int = 0
    impossible: bool = False


@dataclass(frozen=True)
class SuiteFigures:
    """What every surface shows of a suite (one provider) at k and threshold t."""

    k: int
    threshold: float
    mean_pass_hat_k: float | None  # mean pass^k over the tasks with n >= k (None: none)
    defined: int  # tasks with n >= k
    safe: int
    not_safe: int
    undecided: int  # not enough trials to say (no scored trial too)
    impossible: int  # impossible twins left out of all of the above


def task_decision(
    n: int, passes: int, gamed: int, k: int, threshold: float, method: Method = "clopper-pearson"
) -> Decision | None:
    """ "safe", "not safe" or None (not enough trials to say): `decide`, and "not safe" once any trial gamed."""
    return "not safe" if gamed else decide(n, passes, k, threshold, method)


def suite_figures(
    tasks: Iterable[TaskCounts], k: int, threshold: float, method: Method = "clopper-pearson"
) -> SuiteFigures:
    """The suite's mean pass^k and tasks per verdict, impossible twins left out."""
    every = list(tasks)
    real = [t for t in every if not t.impossible]
    decisions = [task_decision(t.n, t.passes, t.gamed, k, threshold, method) for t in real]
    return SuiteFigures(
        k=k,
        threshold=threshold,
        mean_pass_hat_k=mean_pass_hat_k([(t.n, t.passes) for t in real], k),
        defined=sum(t.n >= k for t in real),
        safe=decisions.count("safe"),
        not_safe=decisions.count("not safe"),
        undecided=decisions.count(None),
        impossible=len(every) - len(real),
    )


def safe_reach(k: int, threshold: float, method: Method = "clopper-pearson", limit: int = 10**7) -> int | None:
    """The fewest trials, every one a pass, at which the verdict can be "safe" (n/n decides pass^k >= threshold);
    None beyond `limit` (a threshold of 1 is never reached). Deciding "safe" at n/n is monotone in n."""

    def safe(n: int) -> bool:
        return decide(n, n, k, threshold, method) == "safe"

    if threshold >= 1:
        return None
    if safe(1):
        return 1
    more = more_trials_until(1, safe, limit)
    return None if more is None else 1 + more


def reach(ns: Iterable[int], k: int, threshold: float, method: Method = "clopper-pearson") -> dict[str, Any]:
    """What trials like these can decide at `threshold` (the verdict block says it once): at the largest n here
    ("n"), the fewest failures that show "not safe", and the fewest trials, every one a pass, that show "safe"."""
    n = max(ns, default=0)
    fails = not_safe_failures(n, k, threshold, method)
    return {"n": n, "safe_needs": safe_reach(k, threshold, method), "not_safe_failures": fails, "method": method}


def not_safe_failures(n: int, k: int, threshold: float, method: Method = "clopper-pearson") -> int | None:
    """The fewest failures among n trials that show "not safe"; None when none does (n = 0, or even n failures)."""
    if n < 1:
        return None
    most_passes = cutoffs(n, k, threshold, method)[0]
    return None if most_passes < 0 else n - most_passes


def next_runs_all_pass_exact(n: int, passes: int, k: int) -> Fraction:
    """`next_runs_all_pass` as an exact fraction."""
    if not 0 <= passes <= n or k < 1:
        msg = f"need 0 <= passes <= n and k >= 1, got n={n}, passes={passes}, k={k}."
        raise ValueError(msg)
    a, b = PRIOR[0] + passes, PRIOR[1] + n - passes
    return Fraction(math.prod(a + i for i in range(k)), math.prod(a + b + i for i in range(k)))


def next_runs_all_pass(n: int, passes: int, k: int) -> float:
    """The chance that the next k runs all pass given `passes` of n, under a uniform prior on the pass rate:
    E[p^k] over the posterior Beta(1 + c, 1 + n - c). Defined at every n (at n = 0 it is 1 / (k + 1))."""
    return float(next_runs_all_pass_exact(n, passes, k))
