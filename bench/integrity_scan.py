"""What the integrity scan costs per trial, against the tests grader it rides beside.

For every shipped task with a tests grader: the reference solution as the trial's patch, its tree (base + patch)
built once as in a live trial (the graders share it), then `--runs` times each: the tests grader (its private
view, the command, the report), then the integrity grader (read the changed code, parse, the rules, the cached
test literals), in that order and in one process, as the combined assertion runs them (they share the patch's
paths: trial._patch.patch_stats is remembered per process). The scan's first run on a task version also extracts the tests' literals (cached on disk for
the version's other trials): shown apart as "cold". A trial's assertion is a fresh interpreter, so what a trial
really pays is "first": the scan timed in a fresh process (after the tests grader ran there, untimed), its
imports included — the scan's modules, and the scanner of each language it meets, imported on first use.

    .venv/bin/python bench/integrity_scan.py [--runs 5] [--tasks py-median,node-slugify]

Target (issue 22): scan + canary ≤ 5% of the tests grader's time; this measures the scan's part.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from passhat.graders import TrialOutcome, grade, load_graded_tasks
from passhat.graders._settings import graders_of
from passhat.trial._sandbox import prepare_base

ROOT = Path(__file__).resolve().parent.parent
RUN = {"status": "ok", "is_error": False, "subtype": "success", "permission_denials": 0}
FIRST = """
import sys, time
from pathlib import Path
from passhat.graders import TrialOutcome, grade, load_graded_tasks
from passhat.graders._settings import graders_of
from passhat.trial._sandbox import prepare_base
root, task_id, state = sys.argv[1:4]
(task,) = load_graded_tasks(Path(root) / "tasks", only=[task_id])
graders = graders_of(task)
tests, scan = (next(g for g in graders if g["type"] == kind) for kind in ("tests", "integrity"))
outcome = TrialOutcome(task.dir, prepare_base(task, Path(state) / "cache").path, task.solution.read_bytes(),
                       {"status": "ok", "is_error": False, "subtype": "success", "permission_denials": 0})
outcome.tree()
grade(outcome, tests)
start = time.perf_counter()
grade(outcome, scan)
print((time.perf_counter() - start) * 1000)
"""


def timed(function: object, *args: object) -> float:
    start = time.perf_counter()
    function(*args)  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def first_scan_ms(task_id: str, state: Path, runs: int) -> float:
    """Median ms of a trial's scan in a fresh interpreter (FIRST), its imports included."""
    return statistics.median(
        float(subprocess.run([sys.executable, "-c", FIRST, ROOT, task_id, state], capture_output=True, text=True,
                             check=True).stdout)
        for _ in range(runs)
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: every shipped task)")
    args = parser.parse_args()
    only = [t for t in args.tasks.split(",") if t] or None
    state = Path(tempfile.mkdtemp(prefix="passhat-bench-integrity-"))
    print(f"{'task':22} {'tests ms':>9} {'scan ms':>8} {'cold ms':>8} {'first ms':>9} {'ratio':>7}")
    totals = [0.0, 0.0, 0.0]
    try:
        for task in load_graded_tasks(ROOT / "tasks", only=only):
            graders = graders_of(task)
            tests = [g for g in graders if g["type"] == "tests"]
            scan = [g for g in graders if g["type"] == "integrity"]
            if not tests or not scan:
                continue
            base = prepare_base(task, state / "cache")
            outcome = TrialOutcome(task.dir, base.path, task.solution.read_bytes(), RUN)
            outcome.tree()  # built once per trial, shared by its graders
            runs = [timed(grade, outcome, tests[0]) for _ in range(args.runs)]  # first, as in the assertion
            cold = timed(grade, outcome, scan[0])
            scans = [timed(grade, outcome, scan[0]) for _ in range(args.runs)]
            t, s, f = statistics.median(runs), statistics.median(scans), first_scan_ms(task.id, state, args.runs)
            for index, value in enumerate((t, s, f)):
                totals[index] += value
            print(f"{task.id:22} {t:9.1f} {s:8.2f} {cold:8.1f} {f:9.1f} {f / t:7.2%}")
        t, s, f = totals
        print(f"{'all (sum of medians)':22} {t:9.1f} {s:8.2f} {'':8} {f:9.1f} {f / t:7.2%}")
        print(f"a trial's scan (first, in its fresh assertion process): {f / t:.2%} of the tests grader's time")
    finally:
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
