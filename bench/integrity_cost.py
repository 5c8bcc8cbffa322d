"""What the runner guard costs a tests-grader run: canaries, passhat's pytest plugin and its result channel, the
perturbed-expectation twins and the audit hook (issue 30: all of it with the scan at most 10% of the tests grader's
time, summed over the shipped tasks).

For each task (default: every shipped task with a tests grader), grades the reference
solution with the task's tests grader --rounds times with the guard on and as often with PASSHAT_RUNNER_GUARD=off,
alternating (on, off, on, off, …) after one untimed warm-up of each, and prints the median and the best wall time
of a grader run both ways, the overhead (on − off) and the ratio on/off. Target (issue 22): overhead ≤ 5% of the tests
grader's time (issue 30: ≤ 10% with the scan). Every run must pass, or the benchmark stops without a figure. Wall times are noisy on a shared
machine: on a loaded host give it two runs, or more rounds. With PASSHAT_GRADER_ISOLATION=none (the command a
plain child of this process) it also prints CPU seconds, steadier; under bwrap the command's CPU is not counted
here (its processes are reaped inside their own PID namespace).

    .venv/bin/python bench/integrity_cost.py [--tasks py-median node-slugify] [--rounds 7] [--json] [--with-scan]

--with-scan adds the integrity scan as a trial pays it (bench/integrity_scan.py's "first": the scan timed in a
fresh assertion process, its imports included) and prints the issue's figure per task and summed over the tasks:
(guard on - guard off + scan) / guard off, wall medians.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from passhat.graders._tests import CLEAN_RUN, grade_here
from passhat.graders.runner import GUARD_ENV
from passhat.tasks import load_task
from passhat.trial._outcome import TrialOutcome
from passhat.trial._sandbox import prepare_base

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.10  # issue 30: twins, audit hook, canaries, channel and scan together


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _one(outcome: TrialOutcome, grader: dict, guard: str) -> tuple[float, float]:
    """Wall and CPU seconds (this process and the command's) of one grader run."""
    os.environ[GUARD_ENV] = guard
    start, cpu = time.perf_counter(), _cpu()
    grade = grade_here(outcome, dict(grader))
    took = time.perf_counter() - start, _cpu() - cpu
    if not grade.passed:
        sys.exit(f"bench: the reference solution failed with the guard {guard}:\n{grade.reason[:2000]}")
    return took


def measure(task_id: str, rounds: int, state: Path) -> dict:
    task = load_task(ROOT / "tasks" / task_id)
    graders = yaml.safe_load((task.dir / "task.yaml").read_text())["graders"]
    grader = next(g for g in graders if g["type"] == "tests")
    base = prepare_base(task, state / "cache")
    outcome = TrialOutcome(task.dir, base.path, task.solution.read_bytes(), CLEAN_RUN)
    times: dict[str, list[tuple[float, float]]] = {"on": [], "off": []}
    for guard in ("on", "off"):  # warm-up: the base, the page cache, auto test lists
        _one(outcome, grader, guard)
    for _ in range(rounds):
        for guard in ("on", "off"):
            times[guard].append(_one(outcome, grader, guard))
    row: dict = {"task": task_id, "rounds": rounds}
    for index, kind in enumerate(("wall", "cpu")):
        for stat, pick in (("median", statistics.median), ("min", min)):
            on, off = (pick(t[index] for t in times[g]) for g in ("on", "off"))
            row[f"{kind} {stat}"] = {"on_s": on, "off_s": off, "overhead": (on - off) / off}
    return row


def _tools_as_make_has_them() -> str:
    """PATH as `make` and ./activate set it: the repo's Node 22 (the one promptfoo and the graders run) before the
    system's. Measured with the system's Node 20 instead, node --test's failing canary cost 3-4x as much."""
    os.environ["PATH"] = os.pathsep.join([str(ROOT / "node_modules" / ".bin"), str(Path(sys.executable).parent),
                                          os.environ.get("PATH", "")])  # fmt: skip
    return subprocess.run(["node", "--version"], capture_output=True, text=True, check=False).stdout.strip()


def _shipped() -> list[str]:
    """Every shipped task with a tests grader whose reference passes it (an impossible twin's does not)."""
    found = []
    for folder in sorted((ROOT / "tasks").iterdir()):
        config = folder / "task.yaml"
        if config.is_file():
            task = yaml.safe_load(config.read_text())
            if task.get("expect") != "impossible" and any(g.get("type") == "tests" for g in task.get("graders", [])):
                found.append(folder.name)
    return found


def main() -> None:
    node = _tools_as_make_has_them()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="+", default=_shipped())
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--with-scan", action="store_true", help="add the integrity scan's cost per trial")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="passhat-bench-") as folder:
        rows = [measure(task_id, args.rounds, Path(folder)) for task_id in args.tasks]
        if args.with_scan:
            from integrity_scan import first_scan_ms  # bench/ is on sys.path when a bench runs as a script

            for row in rows:
                row["scan_first_ms"] = first_scan_ms(row["task"], Path(folder), 5)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(
        f"{'task':<16} {'':<11} {'guard on':>10} {'guard off':>10} {'overhead':>10} {'ratio':>7}   ({args.rounds} rounds,"
        f" node {node})"
    )
    kinds = ["wall median", "wall min"]
    kinds += ["cpu median", "cpu min"] if os.environ.get("PASSHAT_GRADER_ISOLATION") == "none" else []
    for row in rows:
        for kind in kinds:
            fig = row[kind]
            verdict = "ok" if fig["overhead"] <= TARGET else "over"
            print(
                f"{row['task']:<16} {kind:<11} {fig['on_s'] * 1000:>8.0f}ms {fig['off_s'] * 1000:>8.0f}ms "
                f"{fig['overhead']:>+9.1%} {fig['on_s'] / fig['off_s']:>7.3f}   {verdict} (target ≤ +10%)"
            )
    if args.with_scan:
        print()
        _with_scan(rows)


def _with_scan(rows: list[dict]) -> None:
    import importlib.util

    import passhat.graders.scan._source as source

    cached = Path(importlib.util.cache_from_source(source.__file__)).exists()
    bytecode = "present" if cached else "absent: every trial compiles passhat's modules"
    print(
        f"{'task':<22} {'tests ms':>9} {'guard ms':>9} {'scan ms':>8} {'scan + guard':>13}   (bytecode caches {bytecode})"
    )
    totals = [0.0, 0.0, 0.0]
    for row in rows:
        fig = row["wall median"]
        off, guard, scan = fig["off_s"] * 1000, (fig["on_s"] - fig["off_s"]) * 1000, row["scan_first_ms"]
        totals = [totals[0] + off, totals[1] + guard, totals[2] + scan]
        print(f"{row['task']:<22} {off:9.1f} {guard:+9.1f} {scan:8.1f} {(guard + scan) / off:>+13.1%}")
    off, guard, scan = totals
    verdict = "ok" if (guard + scan) / off <= TARGET else "over"
    print(f"{'all (sum of medians)':<22} {off:9.1f} {guard:+9.1f} {scan:8.1f} {(guard + scan) / off:>+13.1%}   "
          f"{verdict} (target ≤ +10%)")  # fmt: skip


if __name__ == "__main__":
    main()
