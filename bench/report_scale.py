"""How fast, and in how much memory, does `passhat report` read a large results file?

Builds a promptfoo-shaped results file (default 100,000 rows of about 3 KB each, ~300 MB, written
the way promptfoo 0.123 writes `-o results.json`: JSON.stringify(output, null, 2)), then runs, each
in its own process, timed, with peak RSS from wait4():

- passhat: `passhat report FILE --format json`, the streaming reader (a file this big is read in two
           halves, by this process and a forked one: see src/passhat/_parallel.py);
- naive:   `json.load` of the whole file + a pandas groupby producing the same per-task summary
           (n, passes, infra errors, pass@k / pass^k, mean cost, mean turns, mean and p90 latency).

    .venv/bin/python bench/report_scale.py                      # 100,000 rows, JSON
    .venv/bin/python bench/report_scale.py --rows 20000 --jsonl # also time a .jsonl of the same rows

Targets: passhat under 5 s and under 500 MB peak RSS. If pandas is not installed the naive
baseline is skipped and the bench says so (`pip install pandas` in the venv: the bench needs it,
passhat does not). Wall time depends on what else the machine runs: the CPU seconds (both
processes) and the 1-minute load average are printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIERS = ("simple", "medium", "complex", "very-complex")

NAIVE = textwrap.dedent(
    """
    import json, math, sys
    import pandas as pd

    with open(sys.argv[1]) as f:
        data = json.load(f)
    rows = data["results"]["results"]
    meta = lambda r: {**(r.get("metadata") or {}), **((r.get("response") or {}).get("metadata") or {})}
    df = pd.DataFrame(
        {
            "task": meta(r).get("task_id") or r["testCase"].get("description"),
            "provider": r["provider"].get("label") or r["provider"]["id"],
            "success": r["success"],
            "error": r["failureReason"] == 2,
            "cost": r.get("cost"),
            "turns": meta(r).get("num_turns"),
            "latency": r.get("latencyMs"),
        }
        for r in rows
    )
    scored = df[~df["error"]]
    out = scored.groupby(["task", "provider"]).agg(
        n=("success", "size"), passes=("success", "sum"), mean_turns=("turns", "mean"),
        mean_latency=("latency", "mean"), p90_latency=("latency", lambda s: s.quantile(0.9)),
    )
    out["errors"] = df[df["error"]].groupby(["task", "provider"]).size().reindex(out.index, fill_value=0)
    out["mean_cost"] = df.groupby(["task", "provider"])["cost"].mean()
    for k in (1, 3, 5, 10):
        counts = list(zip(out.n, out.passes))
        out[f"pass^{k}"] = [math.comb(c, k) / math.comb(n, k) if n >= k else None for n, c in counts]
        out[f"pass@{k}"] = [1 - math.comb(n - c, k) / math.comb(n, k) if n >= k else None for n, c in counts]
    print(out.reset_index().to_json(orient="records"))
    """
)


def make_row(task: str, tier: str, provider: str, repeat: int, outcome: str, rng: random.Random) -> dict:
    """One row as promptfoo 0.123 writes it for passhat's provider and a tests grader."""
    turns = rng.randint(2, 30)
    cost = round(rng.uniform(0.01, 0.6), 6)
    duration = rng.randint(20_000, 400_000)
    trial_dir = f".passhat/artifacts/eval-Xy7/{task}/r{repeat:03d}-{rng.getrandbits(32):08x}"
    record = {
        "task_id": task, "task_version": f"{rng.getrandbits(64):016x}", "repeat_index": repeat,
        "status": "infra_error" if outcome == "error" else ("ok" if rng.random() > 0.03 else "timeout"),
        "subtype": "success", "is_error": outcome == "error", "num_turns": turns, "duration_ms": duration,
        "duration_api_ms": duration // 3, "wall_s": duration / 1000 + 0.8, "cost_usd": cost,
        "trial_dir": trial_dir, "model": "claude-sonnet-4-5",
        "error": "API error 529 (overloaded) after 3 retries" if outcome == "error" else None,
    }  # fmt: skip
    test_meta = {"task_id": task, "tier": tier, "task_version": record["task_version"]}
    passed = outcome == "pass"
    grade = {
        "pass": passed,
        "score": 1.0 if passed else 0.0,
        "reason": "14 tests passed" if passed else "2 of 14 tests failed",
        "assertion": {"type": "python", "value": "file://assertions/tests.py", "config": {"command": "pytest -q"}},
    }
    row = {
        "cost": cost,
        "error": {"pass": None, "fail": grade["reason"], "error": f"infrastructure error: {record['error']}"}[outcome],
        "failureReason": {"pass": 0, "fail": 1, "error": 2}[outcome],
        "gradingResult": None if outcome == "error" else {
            **grade, "componentResults": [{k: grade[k] for k in ("pass", "score", "reason")}]},
        "id": f"{rng.getrandbits(128):032x}",
        "latencyMs": duration + 800,
        "metadata": {**test_meta, **record},
        "namedScores": {"tests": grade["score"]},
        "prompt": {"raw": f"Fix the failing tests in {task}. Keep the public API; run the test suite before you "
                          "finish and summarise what you changed.", "label": "task prompt"},
        "promptId": "5f3b2c0e", "promptIdx": 0,
        "provider": {"id": "file://providers/claude_code.py", "label": provider},
        "response": {"output": None if outcome == "error" else "Fixed the off-by-one in src/app.py and added a test.",
                     "cost": cost, "tokenUsage": {"prompt": 41000, "completion": 2100, "cached": 0, "total": 43100},
                     "metadata": record, **({"error": record["error"]} if outcome == "error" else {})},
        "score": grade["score"],
        "success": passed,
        "testCase": {"description": f"{task}: fix the failing tests", "vars": {"task_id": task},
                     "assert": [grade["assertion"]], "metadata": test_meta},
        "testIdx": 0,
        "vars": {"task_id": task},
    }  # fmt: skip
    return row


def rows(count: int, tasks: int, providers: int, seed: int):
    """`count` rows: tasks x providers x repeats, outcomes from a per-task pass probability."""
    rng = random.Random(seed)
    repeats = max(1, count // (tasks * providers))
    rates = [1.0 if i % 3 else rng.choice((0.0, 0.3, 0.7, 0.9)) for i in range(tasks)]
    index = 0
    for repeat in range(repeats):
        for t in range(tasks):
            for p in range(providers):
                if index == count:
                    return
                roll = rng.random()
                outcome = "error" if roll < 0.005 else ("pass" if rng.random() < rates[t] else "fail")
                row = make_row(f"task-{t:04d}", TIERS[t % 4], f"provider-{p}", repeat, outcome, rng)
                row["testIdx"] = index
                yield row
                index += 1


def write_json(path: Path, count: int, tasks: int, providers: int, seed: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write(
            '{\n  "evalId": "eval-Xy7-2026-11-30T12:29:57",\n  "results": {\n    "version": 3,\n'
            '    "timestamp": "2026-11-30T12:29:57.000Z",\n    "prompts": [],\n    "results": [\n'
        )
        for i, row in enumerate(rows(count, tasks, providers, seed)):
            text = json.dumps(row, indent=2).replace("\n", "\n      ")
            out.write(("" if i == 0 else ",\n") + "      " + text)
        out.write('\n    ],\n    "stats": {"successes": 0, "failures": 0, "errors": 0}\n  },\n'
                  '  "config": {"description": "passhat scale bench"},\n  "shareableUrl": null\n}\n')  # fmt: skip


def write_jsonl(path: Path, count: int, tasks: int, providers: int, seed: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for row in rows(count, tasks, providers, seed):
            out.write(json.dumps(row) + "\n")


def measure(command: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one command in its own process (wait4's rusage)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{command[:3]} failed: {process.stderr.read().decode()[-400:]}")  # type: ignore[union-attr]
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--providers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", type=Path, help="where to write the files (default: a temporary directory)")
    parser.add_argument("--jsonl", action="store_true", help="also build and time the same rows as .jsonl")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        files = [Path(tmp) / "results.json"]
        started = time.perf_counter()
        write_json(files[0], args.rows, args.tasks, args.providers, args.seed)
        if args.jsonl:
            files.append(Path(tmp) / "results.jsonl")
            write_jsonl(files[1], args.rows, args.tasks, args.providers, args.seed)
        print(f"built {args.rows} rows in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        figures: dict[str, object] = {"rows": args.rows, "tasks": args.tasks, "providers": args.providers}
        for path in files:
            size = path.stat().st_size / 1e6
            wall, cpu, rss = measure([sys.executable, "-m", "passhat.cli", "report", str(path), "--format", "json"])
            figures[path.suffix[1:]] = {"file_mb": round(size, 1), "bytes_per_row": round(size * 1e6 / args.rows),
                                        "passhat_s": round(wall, 2), "passhat_cpu_s": round(cpu, 2),
                                        "passhat_peak_rss_mb": round(rss)}  # fmt: skip
        try:
            import pandas  # noqa: F401
        except ImportError:
            figures["naive"] = "pandas is not installed: skipped the json.load + pandas baseline (pip install pandas)"
        else:
            wall, cpu, rss = measure([sys.executable, "-c", NAIVE, str(files[0])])
            mine: dict = figures["json"]  # type: ignore[assignment]
            figures["naive"] = {
                "naive_s": round(wall, 2), "naive_cpu_s": round(cpu, 2), "naive_peak_rss_mb": round(rss),
                "time_ratio_passhat_over_naive": round(mine["passhat_s"] / wall, 2),
                "cpu_ratio_passhat_over_naive": round(mine["passhat_cpu_s"] / cpu, 2),
                "rss_ratio_passhat_over_naive": round(mine["passhat_peak_rss_mb"] / rss, 3),
            }  # fmt: skip
        figures["load_average_1min"] = os.getloadavg()[0]

    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{args.rows} rows, {args.tasks} tasks x {args.providers} providers "
          f"(1-min load average {figures['load_average_1min']:.1f} on {os.cpu_count()} CPUs)")  # fmt: skip
    for kind in ("json", "jsonl"):
        if kind in figures:
            f: dict = figures[kind]  # type: ignore[assignment]
            print(
                f"passhat report (.{kind}, {f['file_mb']} MB, {f['bytes_per_row']} B/row): {f['passhat_s']} s wall, "
                f"{f['passhat_cpu_s']} s CPU, peak RSS {f['passhat_peak_rss_mb']} MB  (targets: < 5 s, < 500 MB)"
            )
    naive = figures["naive"]
    if isinstance(naive, str):
        print(naive)
    else:
        print(
            f"json.load + pandas (.json): {naive['naive_s']} s wall, {naive['naive_cpu_s']} s CPU, "
            f"peak RSS {naive['naive_peak_rss_mb']} MB"
        )
        print(
            f"ratio passhat/naive: wall {naive['time_ratio_passhat_over_naive']}, "
            f"CPU {naive['cpu_ratio_passhat_over_naive']}, peak RSS {naive['rss_ratio_passhat_over_naive']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
