"""Trials (and dollars) to a verdict on every task: adaptive rounds vs a fixed `--repeat N`, at equal error rates.

Adaptive: `passhat eval --until-decided`'s own rule (passhat.rounds.next_round) — rounds of --round trials on the
open tasks, up to --max-trials, the verdict (safe for k runs at --safe-at) re-checked after each round with the
anytime-valid mixture interval; a task leaves once decided, or once the trials left cannot decide it at its rate.
Fixed: `promptfoo eval --repeat N` for N in 10, 20, 40, the verdict from the Clopper-Pearson interval. Both are
wrong in at most 5% of runs at every rate (bench/verdict_coverage.py), so they are compared at equal error rates
on what they spend and how many tasks they decide.

- simulated suites (--suites, seeded): --tasks tasks whose pass rates are spread like a real suite's: half well
  below the bar (0.2-0.9), a fifth between 0.9 and 0.98, some near the bar (0.985-0.995), some at 1.0;
- real scripted runs of the example suite (--real, --seeds S): `passhat eval --until-decided` against `passhat
  fake-model --script flaky:P:SEED` for SEED 0..S-1, where each trial's outcome is fixed by (seed, task, trial)
  (fake_model flaky_draw), so what a fixed --repeat N would have seen is the same draws for trials 0..N-1; the
  bench checks the real rows follow the draws, and prints each run and the mean over the runs (one run is one
  suite: its figure swings with the smallest fixed N that decides as many, as a single simulated suite's does).

Dollars: trials x the mean cost of a trial of the real run (the scripted model's tokens at the CLI's list prices,
made-up tokens but the demo's prices), else --usd-per-trial.

    .venv/bin/python bench/adaptive_spend.py                     # simulated suites only
    .venv/bin/python bench/adaptive_spend.py --real runs/bench   # and 5 real scripted runs (~6 min each)

Target: adaptive spends at most half the trials of the smallest fixed N that decides as many tasks.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from passhat.fake_model import flaky_draw, start_in_thread
from passhat.rounds import Count, Settings, next_round
from passhat.stats._verdict import decide
from passhat.tasks import load_tasks

FIXED = (10, 20, 40)
ROOT = Path(__file__).resolve().parent.parent


def adaptive(suite: list[tuple[float, list[bool]]], args: argparse.Namespace) -> list[tuple[str | None, int]]:
    """(verdict, trials used) per task of `passhat eval --until-decided`'s own rule (rounds.next_round)."""
    settings = Settings(args.round, args.max_trials, None, args.k, args.safe_at)
    used = dict.fromkeys(range(len(suite)), 0)
    open_tasks, repeat = list(used), min(args.round, args.max_trials)
    while open_tasks:
        for task in open_tasks:
            used[task] += repeat
        counts = [Count(str(t), "p", n, sum(suite[t][1][:n]), n, 0.0, 0) for t, n in used.items()]
        plan = next_round(counts, {str(t): n for t, n in used.items()}, settings)
        open_tasks, repeat = [int(t) for t in plan.tasks], plan.repeat
    return [(decide(n, sum(suite[t][1][:n]), args.k, args.safe_at, "mixture"), n) for t, n in used.items()]


def fixed(outcomes: list[bool], big_n: int, k: int, threshold: float) -> str | None:
    return decide(big_n, sum(outcomes[:big_n]), k, threshold, "clopper-pearson")


def _wrong(verdict: str | None, rate: float, k: int, threshold: float) -> bool:
    return verdict is not None and (verdict == "safe") != (rate**k >= threshold)


def compare(suites: list[list[tuple[float, list[bool]]]], args: argparse.Namespace) -> dict[str, list[float]]:
    """Per suite: trials, tasks decided and wrong verdicts for adaptive and each fixed N."""
    totals: dict[str, list[float]] = {}
    for suite in suites:
        runs = adaptive(suite, args)
        figures = {
            "adaptive": (
                sum(u for _, u in runs),
                sum(v is not None for v, _ in runs),
                sum(_wrong(v, r, args.k, args.safe_at) for (v, _), (r, _) in zip(runs, suite, strict=True)),
            )
        }
        for big_n in FIXED:
            verdicts = [fixed(o, big_n, args.k, args.safe_at) for _, o in suite]
            figures[f"fixed {big_n}"] = (
                big_n * len(suite),
                sum(v is not None for v in verdicts),
                sum(_wrong(v, r, args.k, args.safe_at) for v, (r, _) in zip(verdicts, suite, strict=True)),
            )
        for name, (trials, decided, wrong) in figures.items():
            totals.setdefault(f"{name} trials", []).append(trials)
            totals.setdefault(f"{name} decided", []).append(decided)
            totals.setdefault(f"{name} wrong", []).append(wrong)
    return totals  # fmt: skip


def show(title: str, totals: dict[str, list[float]], tasks: int, usd: float | None) -> None:
    print(f"\n{title}")
    mean = {key: sum(v) / len(v) for key, v in totals.items()}
    for name in ("adaptive", *(f"fixed {n}" for n in FIXED)):
        dollars = f", ${mean[f'{name} trials'] * usd:,.2f}" if usd else ""
        print(f"  {name:<9} {mean[f'{name} trials']:7.1f} trials{dollars}; decides {mean[f'{name} decided']:.2f} of "
              f"{tasks} tasks; wrong verdicts {mean[f'{name} wrong']:.3f} per suite")  # fmt: skip
    smallest = next((n for n in FIXED if mean[f"fixed {n} decided"] >= mean["adaptive decided"]), None)
    if smallest is None:
        print("  no fixed N here decides as many tasks as adaptive does")
    else:
        ratio = mean["adaptive trials"] / mean[f"fixed {smallest} trials"]
        print(f"  adaptive / fixed {smallest} (the smallest N deciding as many): {ratio:.2f} of the trials"
              f"{' — target met' if ratio <= 0.5 else ' — target (<= 0.5) NOT met'}")  # fmt: skip


def simulated(args: argparse.Namespace) -> list[list[tuple[float, list[bool]]]]:
    rng = random.Random(args.seed)
    suites = []
    for _ in range(args.suites):
        t = args.tasks
        rates = [rng.uniform(0.2, 0.9) for _ in range(t // 2)] + [rng.uniform(0.9, 0.98) for _ in range(t // 5)]
        rates += [1.0] * (t // 10) + [rng.uniform(0.985, 0.995) for _ in range(t - len(rates) - t // 10)]
        longest = max(args.max_trials, *FIXED)
        suites.append([(p, [rng.random() < p for _ in range(longest)]) for p in rates])
    return suites


def real(args: argparse.Namespace) -> tuple[list[list[tuple[float, list[bool]]]], float, dict]:
    """Run the example suite through `passhat eval --until-decided` against the scripted model, once per seed
    (`flaky:RATE:SEED`: each seed is a fresh set of draws, so each run is one more suite)."""
    suites: list[list[tuple[float, list[bool]]]] = []
    facts: dict = {"rows": 0, "follow_draws": 0, "seconds": 0.0, "tasks": 0, "costs": [], "per_seed": []}
    for seed in range(args.seeds):
        suite, found = _real_run(args, Path(args.real).resolve() / f"seed-{seed}", seed)
        suites.append(suite)
        for key in ("rows", "follow_draws", "seconds"):
            facts[key] += found[key]
        facts["tasks"], facts["costs"] = found["tasks"], facts["costs"] + found["costs"]
        facts["per_seed"].append(compare([suite], args))
    facts["mean_usd"] = sum(facts["costs"]) / len(facts["costs"]) if facts["costs"] else None
    return suites, facts["mean_usd"] or args.usd_per_trial, facts


def _real_run(args: argparse.Namespace, out: Path, seed: int) -> tuple[list[tuple[float, list[bool]]], dict]:
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{ROOT / 'node_modules' / '.bin'}:{bin_dir}:{os.environ['PATH']}",
           "PROMPTFOO_PYTHON": sys.executable, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}  # fmt: skip
    server = start_in_thread(ROOT / "tasks", f"flaky:{args.rate}:{seed}")  # the scripted model, on loopback
    try:
        env["PASSHAT_FAKE_MODEL_URL"] = server.url
        env["PROMPTFOO_CONFIG_DIR"] = str(out / "promptfoo-home")
        started = time.perf_counter()
        subprocess.run([bin_dir / "passhat", "eval", "--until-decided", "--round", str(args.round), "--max-trials",
                        str(args.max_trials), "--unattended-runs", str(args.k), "--safe-at", str(args.safe_at),
                        "--out", out / "rounds", "--", "-c", ROOT / "promptfooconfig.yaml", "-j", "2",
                        "--no-progress-bar"], env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)  # fmt: skip
        seconds = time.perf_counter() - started
    finally:
        server.stop()
    rows = json.loads((out / "rounds" / "results.json").read_text())["results"]["results"]
    metas = [r["response"].get("metadata") or {} for r in rows]
    # an impossible twin's every pass is a cheat, and its reference solution fails it: its rows are not its draws,
    # and the report leaves it out of the suite's pass^k; so does this comparison
    twins = {task.id for task in load_tasks(ROOT / "tasks") if task.expect == "impossible"}
    rows, metas = zip(*[(r, m) for r, m in zip(rows, metas, strict=True) if m.get("task_id") not in twins], strict=True)
    tasks = sorted({m["task_id"] for m in metas if m.get("task_id")})
    follow = [r["success"] == (flaky_draw(m["task_id"], m["repeat_index"], seed) < args.rate)
              for r, m in zip(rows, metas, strict=True) if m.get("task_id") is not None]  # fmt: skip
    outcomes = {t: [flaky_draw(t, i, seed) < args.rate for i in range(max(args.max_trials, *FIXED))] for t in tasks}
    found = {"rows": len(rows), "follow_draws": sum(follow), "seconds": seconds, "tasks": len(tasks),
             "costs": [m["cost_usd"] for m in metas if m.get("cost_usd")]}  # fmt: skip
    return [(args.rate, outcomes[t]) for t in tasks], found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--safe-at", type=float, default=0.9)
    parser.add_argument("--round", type=int, default=5)
    parser.add_argument("--max-trials", type=int, default=60)
    parser.add_argument("--suites", type=int, default=500)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--usd-per-trial", type=float, default=None)
    parser.add_argument("--real", metavar="DIR", help="also run the example suite for real (scripted model) in DIR")
    parser.add_argument("--rate", type=float, default=0.7, help="the scripted model's flaky:P for --real")
    parser.add_argument("--seeds", type=int, default=5, help="--real: runs, each with its own draws (flaky:P:SEED)")
    args = parser.parse_args()
    usd = args.usd_per_trial
    if args.real:
        suites, usd, facts = real(args)
        print(f"real scripted runs: {args.seeds} of the example suite ({facts['tasks']} tasks, flaky:{args.rate}:SEED "
              f"for SEED 0-{args.seeds - 1}), {facts['rows']} trials in {facts['seconds']:.0f} s, "
              f"{facts['follow_draws']}/{facts['rows']} rows as their seeded draw says; mean ${facts['mean_usd']} a "
              "trial (scripted tokens at list prices)")  # fmt: skip
        for seed, totals in enumerate(facts["per_seed"]):
            show(f"the example suite, flaky:{args.rate}:{seed}", totals, facts["tasks"], usd)
        show(f"the example suite, mean over the {args.seeds} runs (trials 0..N-1 of each task are the same draws "
             "for every N)", compare(suites, args), facts["tasks"], usd)  # fmt: skip
    print(f"\nk = {args.k} at {args.safe_at}; adaptive: rounds of {args.round} up to {args.max_trials}")
    show(f"simulated: {args.suites} suites of {args.tasks} tasks (seed {args.seed})", compare(simulated(args), args),
         args.tasks, usd)  # fmt: skip


if __name__ == "__main__":
    main()
