"""How fast, and in how much memory, does `passhat report` read a million-row results file? (issue #13 item 3)

Builds promptfoo-shaped results files (default 1,000,000 rows of about 3 KB each as `-o results.json`, ~3.2 GB,
written as promptfoo 0.123 writes it: JSON.stringify(output, null, 2); and the same rows as `-o results.jsonl`,
~2 GB), then runs, each in its own process, timed, with CPU seconds and peak RSS from wait4():

- passhat:     `passhat report FILE --format json` (msgspec decodes the rows in batches; a file this big is
               read in two halves, by this process and a forked one: see src/passhat/report/totals/_parallel.py);
- naive JSON:  `json.load` of the whole file + dicts, the same per-task table (NAIVE_JSON below);
- naive JSONL: a 20-line `json.loads` per line, the same per-task table (NAIVE_JSONL below).

    .venv/bin/python bench/report_scale.py                         # 1,000,000 rows, JSON and JSONL
    .venv/bin/python bench/report_scale.py --rows 100000 --rounds 2
    .venv/bin/python bench/report_scale.py --dir /tmp/big --keep   # write once, then reuse the files

Targets (issue 33): passhat's CPU seconds at most 0.5x the naive script's in the same run, for each form (the
median of the per-round ratios: `--rounds 3` runs them alternating, 3 of each), and < 500 MB peak RSS; the last
lines print both against them. CPU, not wall: on a shared machine the wall depends on what else runs (the
1-minute load average is printed beside each run). `--rows 300000 --rounds 3` is the issue's measurement.
passhat runs with its bytecode cache written first, as an install has it (`compile_passhat`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
TIERS = ("simple", "medium", "complex", "very-complex")
CPU_RATIO_TARGET = 0.5  # passhat's CPU seconds / the naive script's, median of the rounds (issue 33)
PEAK_RSS_TARGET_MB = 500

_TABLE = """
    def table(rows):  # per (task, provider): n, passes, errors, mean cost, mean turns, mean and p90 latency, pass^k
        groups = {}
        for r in rows:
            meta = {**(r.get("metadata") or {}), **((r.get("response") or {}).get("metadata") or {})}
            provider = r["provider"].get("label") or r["provider"]["id"]
            g = groups.setdefault((meta.get("task_id") or r["testCase"].get("description"), provider),
                                  {"n": 0, "passes": 0, "errors": 0, "costs": [], "turns": [], "latency": []})
            if r["failureReason"] == 2:
                g["errors"] += 1
                continue
            g["n"] += 1
            g["passes"] += r["success"]
            g["costs"] += [r["cost"]] if r.get("cost") is not None else []
            g["turns"] += [meta["num_turns"]] if meta.get("num_turns") is not None else []
            g["latency"] += [r["latencyMs"]] if r.get("latencyMs") is not None else []
        out = []
        for (task, provider), g in sorted(groups.items()):
            n, c, lat = g["n"], g["passes"], sorted(g["latency"])
            mean = lambda xs: sum(xs) / len(xs) if xs else None
            out.append({"task": task, "provider": provider, "n": n, "passes": c, "errors": g["errors"],
                        "mean_cost": mean(g["costs"]), "mean_turns": mean(g["turns"]), "mean_latency": mean(lat),
                        "p90_latency": lat[max(0, math.ceil(0.9 * len(lat)) - 1)] if lat else None,
                        **{f"pass^{k}": math.comb(c, k) / math.comb(n, k) if n >= k else None for k in (1, 3, 5)}})
        return out
"""
NAIVE_JSON = textwrap.dedent(
    """
    import json, math, sys
    """
    + _TABLE
    + """
    with open(sys.argv[1]) as f:
        data = json.load(f)
    print(json.dumps(table(data["results"]["results"])))
    """
)
NAIVE_JSONL = textwrap.dedent(
    """
    import json, math, sys
    """
    + _TABLE
    + """
    with open(sys.argv[1], "rb") as f:
        print(json.dumps(table(json.loads(line) for line in f if line.strip())))
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


_FORMAT = msgspec.json.Encoder()


def pretty(row: dict) -> bytes:
    """`json.dumps(row, indent=2)`, in C (the same text: keys in order, ", "/": " and 2-space indents)."""
    return msgspec.json.format(_FORMAT.encode(row), indent=2)


def write_json(path: Path, count: int, tasks: int, providers: int, seed: int) -> None:
    with path.open("wb") as out:
        out.write(
            b'{\n  "evalId": "eval-Xy7-2026-11-30T12:29:57",\n  "results": {\n    "version": 3,\n'
            b'    "timestamp": "2026-11-30T12:29:57.000Z",\n    "prompts": [],\n    "results": [\n'
        )
        for i, row in enumerate(rows(count, tasks, providers, seed)):
            out.write((b"" if i == 0 else b",\n") + b"      " + pretty(row).replace(b"\n", b"\n      "))
        out.write(b'\n    ],\n    "stats": {"successes": 0, "failures": 0, "errors": 0}\n  },\n'
                  b'  "config": {"description": "passhat scale bench"},\n  "shareableUrl": null\n}\n')  # fmt: skip


def write_jsonl(path: Path, count: int, tasks: int, providers: int, seed: int) -> None:
    with path.open("wb") as out:
        for row in rows(count, tasks, providers, seed):
            out.write(json.dumps(row).encode() + b"\n")


def compile_passhat() -> None:
    """Write passhat's bytecode cache, as `make install` does (compileall): its modules then load as in any install,
    not compiled from source on every run, as PYTHONDONTWRITEBYTECODE (set on our dev machines) would leave them
    in a fresh checkout (~0.1 CPU-s a run). The naive scripts import only the standard library, cached already."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "passhat")], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip


def measure(command: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one command in its own process (wait4's rusage: the
    process and the children it waited for, so passhat's forked reader too)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{command[:3]} failed: {process.stderr.read().decode()[-400:]}")  # type: ignore[union-attr]
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _figures(wall: float, cpu: float, rss: float) -> dict[str, float]:
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_rss_mb": round(rss)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--providers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=1, help="alternate passhat and the naive script N times")
    parser.add_argument("--dir", type=Path, help="where to write the files (default: a temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the files in --dir and reuse them next time")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--only", choices=("json", "jsonl"), help="measure one form only (both are written)")
    args = parser.parse_args()
    if args.keep and args.dir is None:
        parser.error("--keep needs --dir")
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = (
            args.dir / f"report-scale-{args.rows}-{args.tasks}-{args.providers}-{args.seed}" if args.keep else Path(tmp)
        )
        folder.mkdir(parents=True, exist_ok=True)
        files = {"json": folder / "results.json", "jsonl": folder / "results.jsonl"}
        started = time.perf_counter()
        for kind, write in (("json", write_json), ("jsonl", write_jsonl)):
            done = folder / f".{kind}-written"
            if not done.exists():
                write(files[kind], args.rows, args.tasks, args.providers, args.seed)
                done.touch()
        print(f"files ready in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        compile_passhat()
        figures: dict[str, object] = {"rows": args.rows, "tasks": args.tasks, "providers": args.providers}
        for kind, naive in (("json", NAIVE_JSON), ("jsonl", NAIVE_JSONL)):
            if args.only not in (None, kind):
                continue
            path = files[kind]
            runs = []
            for _ in range(args.rounds):
                mine = _figures(
                    *measure([sys.executable, "-m", "passhat.cli", "report", str(path), "--format", "json"])
                )
                theirs = _figures(*measure([sys.executable, "-c", naive, str(path)]))
                runs.append({"passhat": mine, "naive": theirs, "load_average_1min": round(os.getloadavg()[0], 1),
                             "ratio_passhat_over_naive": {k: round(mine[k] / theirs[k], 3) for k in mine}})  # fmt: skip
            ratios = [run["ratio_passhat_over_naive"]["cpu_s"] for run in runs]  # type: ignore[index]
            figures[kind] = {"file_mb": round(path.stat().st_size / 1e6), "runs": runs,
                             "median_cpu_ratio": round(statistics.median(ratios), 3),
                             "cpu_ratio_range": [min(ratios), max(ratios)],
                             "peak_rss_mb": max(run["passhat"]["peak_rss_mb"] for run in runs)}  # fmt: skip

    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{args.rows:,} rows, {args.tasks} tasks x {args.providers} providers, {os.cpu_count()} CPUs")
    print(f"targets: passhat CPU <= {CPU_RATIO_TARGET}x the naive script's (median of the rounds), "
          f"peak RSS < {PEAK_RSS_TARGET_MB} MB")  # fmt: skip
    for kind, reference in (("json", "json.load + dicts"), ("jsonl", "json.loads per line")):
        if kind not in figures:
            continue
        f: dict = figures[kind]  # type: ignore[assignment]
        for number, run in enumerate(f["runs"], 1):
            mine, theirs, ratio = run["passhat"], run["naive"], run["ratio_passhat_over_naive"]
            print(
                f".{kind} ({f['file_mb']} MB) run {number} (load {run['load_average_1min']}): "
                f"passhat {mine['wall_s']} s wall, {mine['cpu_s']} s CPU, {mine['peak_rss_mb']} MB | "
                f"{reference} {theirs['wall_s']} s, {theirs['cpu_s']} s CPU, {theirs['peak_rss_mb']} MB | "
                f"ratio wall {ratio['wall_s']}, CPU {ratio['cpu_s']}, RSS {ratio['peak_rss_mb']}"
            )
    for kind in ("json", "jsonl"):
        if kind not in figures:
            continue
        f = figures[kind]  # type: ignore[assignment]
        ratio, (low, high), rss = f["median_cpu_ratio"], f["cpu_ratio_range"], f["peak_rss_mb"]
        print(
            f".{kind}: CPU ratio passhat/naive {ratio} (median of {len(f['runs'])}; {low}-{high}), target <= "
            f"{CPU_RATIO_TARGET}: {'met' if ratio <= CPU_RATIO_TARGET else 'MISSED'}; peak RSS {rss} MB, target < "
            f"{PEAK_RSS_TARGET_MB}: {'met' if rss < PEAK_RSS_TARGET_MB else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
