"""Is the verdict wrong in at most 5% of runs, at every pass rate — at a fixed n, and when rounds stop on a verdict?

A verdict is wrong when it says "safe" while pass^k = p^k < threshold, or "not safe" while p^k >= threshold
("not enough trials to say" is never wrong). For each k in --ks at the threshold --safe-at, over a grid of pass
rates from 0.05 to 0.999, dense near the rate at which each verdict flips (threshold^(1/k)):

- fixed n in {5, 10, 15, 20, 30, 50}: the error rate computed exactly, sum over c of P(c | n, p) [verdict wrong],
  for Wilson (the old verdict), Clopper-Pearson (the fixed-n verdict now) and the mixture;
- the stopping rule (rounds of --round up to --max-trials, the verdict re-checked after every round, stop when
  decided): --runs simulated runs per rate (seeded), for the mixture (the rounds' verdict now), the naive rule
  (Wilson re-checked after every round) and Clopper-Pearson re-checked after every round.

    .venv/bin/python bench/verdict_coverage.py               # defaults: ks 1,3,10 at 0.9; rounds of 5 up to 60
    .venv/bin/python bench/verdict_coverage.py --ks 10 --runs 2000

Prints per method the largest error rate over the grid (and where), per n or for the rule. Target: at most 5% for
Clopper-Pearson at every n and for the mixture under stopping; the bench shows Wilson failing it.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from passhat.stats._intervals import Method
from passhat.stats._verdict import decide

FIXED_N = (5, 10, 15, 20, 30, 50)
METHODS: tuple[Method, ...] = ("wilson", "clopper-pearson", "mixture")
RULES: tuple[Method, ...] = ("mixture", "wilson", "clopper-pearson")


def grid(ks: tuple[int, ...], threshold: float) -> list[float]:
    rates = {round(0.05 * i, 4) for i in range(1, 20)} | {0.96, 0.97, 0.98, 0.99, 0.995, 0.999}
    for k in ks:
        flip = threshold ** (1 / k)
        for step in (0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.03):
            rates |= {round(flip - step, 5), round(flip + step, 5)}
        rates.add(round(flip, 6))
    return sorted(r for r in rates if 0.05 <= r <= 0.999)


def _table(n: int, k: int, threshold: float, method: Method) -> np.ndarray:
    """verdict per c = 0..n: +1 safe, -1 not safe, 0 undecided."""
    code = {"safe": 1, "not safe": -1, None: 0}
    return np.array([code[decide(n, c, k, threshold, method)] for c in range(n + 1)])


def _wrong(verdicts: np.ndarray, p: float, k: int, threshold: float) -> np.ndarray:
    return verdicts == (-1 if p**k >= threshold else 1)


def fixed_error(n: int, p: float, k: int, threshold: float, table: np.ndarray) -> float:
    pmf = np.array([math.comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n + 1)])
    return float(pmf[_wrong(table, p, k, threshold)].sum())


def rule_error(p: float, k: int, threshold: float, tables: dict[int, np.ndarray], size: int, runs: int,
               rng: np.random.Generator) -> tuple[float, float]:  # fmt: skip
    """(share of runs the stopping rule got wrong, mean trials used)."""
    looks = sorted(tables)
    passes = np.cumsum(rng.binomial(1, p, size=(runs, looks[-1])), axis=1)
    verdict = np.zeros(runs, dtype=int)
    used = np.full(runs, looks[-1])
    for n in looks:
        now = tables[n][passes[:, n - 1]]
        fresh = (verdict == 0) & (now != 0)
        verdict[fresh], used[fresh] = now[fresh], n
    return float(_wrong(verdict, p, k, threshold).mean()), float(used.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ks", default="1,3,10")
    parser.add_argument("--safe-at", type=float, default=0.9)
    parser.add_argument("--round", type=int, default=5)
    parser.add_argument("--max-trials", type=int, default=60)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args()
    ks = tuple(int(k) for k in args.ks.split(","))
    rates, rng = grid(ks, args.safe_at), np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"{len(rates)} pass rates from {rates[0]} to {rates[-1]}; threshold {args.safe_at}; ks {ks}")
    for k in ks:
        print(f"\nk = {k}: the verdict flips at p = {args.safe_at ** (1 / k):.5f}")
        print("  fixed n (exact)    " + "  ".join(f"{m:>26}" for m in METHODS))
        for n in FIXED_N:
            cells = []
            for method in METHODS:
                table = _table(n, k, args.safe_at, method)
                worst = max((fixed_error(n, p, k, args.safe_at, table), p) for p in rates)
                cells.append(f"{worst[0]:7.2%} at p={worst[1]:<8g}{' FAILS' if worst[0] > 0.05 else '     '}")
            print(f"  n = {n:<3}            " + "  ".join(f"{c:>26}" for c in cells))
        looks = range(args.round, args.max_trials + 1, args.round)
        print(f"  stopping rule, rounds of {args.round} up to {args.max_trials}, {args.runs} runs per rate:")
        for method in RULES:
            tables = {n: _table(n, k, args.safe_at, method) for n in looks}
            results = [(*rule_error(p, k, args.safe_at, tables, args.round, args.runs, rng), p) for p in rates]
            worst = max(results)
            name = {"mixture": "mixture (the rule)", "wilson": "naive: Wilson each round",
                    "clopper-pearson": "Clopper-Pearson each round"}[method]  # fmt: skip
            print(f"    {name:<28} worst {worst[0]:7.2%} at p={worst[2]:<8g}"
                  f"{' FAILS' if worst[0] > 0.05 else ' holds'}; mean trials at that rate {worst[1]:.1f}")  # fmt: skip
    if 10 in ks:
        print("\nthe issue's example, k = 10 at 0.9, p = 0.99 (truly safe: 0.99^10 = 0.904): called 'not safe' in")
        for n in (10, 15):
            figures = [f"{fixed_error(n, 0.99, 10, 0.9, _table(n, 10, 0.9, m)):.1%} ({m})" for m in METHODS]
            print(f"  n = {n}: " + ", ".join(figures))
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
