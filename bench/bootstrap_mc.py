"""How far from its converged value can the mean pass^k interval land, and what does it cost?

The report's interval for mean pass^k is a cluster-bootstrap percentile interval (src/passhat/stats/_bootstrap.py).
For small suites it is computed from the exact bootstrap law (stats/_exact.py: no Monte Carlo error); above a
work budget it is sampled from a seed, by default in doubling batches until the estimated error of each bound
is small (`--resamples N`: exactly N). The Monte Carlo error of a bound is its standard deviation across seeds.
This bench draws suites of many shapes (number of tasks, trials per task, pass rates), computes every interval
at `--seeds` seeds, and prints per suite shape how many intervals were exact or sampled (and the most resamples
used), the largest standard deviation of a bound across seeds, the largest distance of a bound from the seeds'
median, and the mean time per interval set (ks 1,3,5,7,10 of one provider).

    .venv/bin/python bench/bootstrap_mc.py                                   # the defaults
    .venv/bin/python bench/bootstrap_mc.py --resamples 2000 --exact-work 0   # the old way: 2000, always sampled

Target: every standard deviation below 0.005.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from passhat.stats._bootstrap import mean_pass_hat_k_bootstrap
from passhat.stats._exact import WORK

KS = (1, 3, 5, 7, 10)
SHAPES = {  # name: (tasks, trial counts to draw from, pass probabilities to draw from)
    "3 tasks, n=10": (3, [10], [1.0, 0.9, 0.7, 0.5, 0.0]),
    "demo: 10 tasks, n=10, p=0.7": (10, [10], [0.7]),
    "10 tasks, n=10, mixed": (10, [10], [1.0, 1.0, 0.9, 0.7, 0.5, 0.2, 0.0]),
    "10 tasks, n=8..10 (infra errors)": (10, [8, 9, 10], [1.0, 0.9, 0.7, 0.5, 0.0]),
    "20 tasks, n=5..20": (20, [5, 10, 20], [1.0, 0.9, 0.7, 0.5, 0.0]),
    "30 tasks, n=10, mixed": (30, [10], [1.0, 1.0, 0.9, 0.7, 0.5, 0.2, 0.0]),
    "50 tasks, n=8..10, mostly pass": (50, [8, 9, 10], [1.0, 1.0, 1.0, 0.95, 0.8]),
    "100 tasks, n=10, mixed": (100, [10], [1.0, 1.0, 0.9, 0.7, 0.5, 0.2, 0.0]),
    "100 tasks, n=8..10, mixed": (100, [8, 9, 10], [1.0, 1.0, 0.9, 0.7, 0.5, 0.2, 0.0]),
    "300 tasks, n=10, mixed": (300, [10], [1.0, 1.0, 0.9, 0.7, 0.5, 0.2, 0.0]),
    "1000 tasks, n=10, mixed": (1000, [10], [1.0, 1.0, 0.9, 0.7, 0.5, 0.2, 0.0]),
}


def suite(tasks: int, ns: list[int], ps: list[float], rng: random.Random) -> list[tuple[int, int]]:
    out = []
    for _ in range(tasks):
        n, p = rng.choice(ns), rng.choice(ps)
        out.append((n, sum(rng.random() < p for _ in range(n))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resamples", type=int, help="exactly this many (default: until the estimate is small)")
    parser.add_argument("--exact-work", type=float, default=WORK, help="0: always Monte Carlo")
    parser.add_argument("--seeds", type=int, default=10, help="seeds per suite (the spread is measured over them)")
    parser.add_argument("--suites", type=int, default=3, help="suites drawn per shape")
    args = parser.parse_args()
    resamples = "adaptive" if args.resamples is None else args.resamples
    print(f"resamples {resamples}, exact work budget {args.exact_work:g}, {args.seeds} seeds, ks {KS}")
    print(f"{'suite shape':36} {'exact':>5} {'MC':>3} {'max R':>6} {'max SD':>7} {'max |dev|':>9} {'ms/set':>7}")
    worst = 0.0
    for name, (tasks, ns, ps) in SHAPES.items():
        rng = random.Random(name)
        sd = dev = 0.0
        exact = sampled = most = 0
        times = []
        for _ in range(args.suites):
            counts = suite(tasks, ns, ps, rng)
            bounds: dict[int, tuple[list[float], list[float]]] = {k: ([], []) for k in KS}
            for seed in range(args.seeds):
                started = time.perf_counter()
                found = mean_pass_hat_k_bootstrap(
                    counts, KS, resamples=args.resamples, seed=seed, exact_work=args.exact_work
                )
                times.append(time.perf_counter() - started)
                for k, b in found.items():
                    if b is not None:
                        bounds[k][0].append(b.interval[0])
                        bounds[k][1].append(b.interval[1])
                        most = max(most, b.resamples)
                        if seed == 0:
                            exact += b.method == "exact"
                            sampled += b.method == "monte-carlo"
            for low, high in bounds.values():
                for values in (low, high):
                    if len(values) > 1:
                        sd = max(sd, statistics.stdev(values))
                        middle = statistics.median(values)
                        dev = max(dev, max(abs(v - middle) for v in values))
        worst = max(worst, sd)
        print(f"{name:36} {exact:5} {sampled:3} {most:6} {sd:7.4f} {dev:9.4f} {1000 * statistics.fmean(times):7.0f}")
    print(f"largest standard deviation of a bound: {worst:.4f} ({'under' if worst < 0.005 else 'NOT under'} 0.005)")


if __name__ == "__main__":
    main()
