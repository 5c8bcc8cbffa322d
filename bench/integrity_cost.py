"""What the whole integrity defence costs a tests-grader run (issue 30: twins, audit hook, canaries, channel, late
hooks and the scan together at most 10% of the tests grader's time, summed over the shipped tasks).

CPU seconds, not wall time (the machine is shared): each grader run is timed as this process's and its reaped
children's CPU (resource.getrusage RUSAGE_SELF + RUSAGE_CHILDREN: the command's whole process tree, waited for).
Under bwrap the command's processes are reaped inside their own PID namespace and not counted here, so the bench
runs the graders with PASSHAT_GRADER_ISOLATION=none (the guard's work is the same either way).

For each task (default: every shipped task with a tests grader whose reference passes it), the reference solution
is graded with the task's tests grader with every defence on and with PASSHAT_RUNNER_GUARD=off, alternating (the
order flipped each round) after one untimed warm-up of each; the medians of --rounds runs are compared, and the
minima (the least disturbed run of each: on a loaded machine CPU seconds grow with the contention too). The scan:
the integrity grader timed in a fresh interpreter after the tests grader ran there (its imports included, as a
trial pays it), CPU, median of --scan-runs after one untimed run. The figure: (sum of on − sum of off + sum of
scan) / sum of off, from the medians and from the minima.

Like for like, so the figure is the defences' cost and nothing else:
- Plugins: the guard turns pytest's plugin auto-load off and loads the environment's `pytest11` plugins itself
  (passhat_guard_loader); pytest's own auto-load also rewrites the asserts of each such plugin's whole package,
  which it compiles from source on every run (the grader writes no bytecode): anyio's (installed with the agent
  SDK) cost 0.2-0.3 CPU-s per run, more than the defences. The guard-off run of a pytest task therefore loads the
  plugins as the guard does (`_same_plugins`), else the figure would count that saving against the defences' cost.
  `--autoload-baseline` keeps pytest's own auto-load in the guard-off run.
- The scan's imports: passhat's modules load from bytecode as in any install (a bytecode cache under the bench's
  temporary folder), not compiled from source on every import as PYTHONDONTWRITEBYTECODE (set on our dev
  machines) would make them.
`--parts` also times the run with the twins off and with the audit hook off (their share: on − without).

    .venv/bin/python bench/integrity_cost.py [--tasks py-median node-slugify] [--rounds 7] [--parts] [--json]
                                             [--autoload-baseline] [--twins world]

Every run must pass, or the benchmark stops without a figure.
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
from passhat.graders.runner._guard import AUDIT_ENV, LOADER, PLUGIN_DIR, TWINS_ENV, runner_of
from passhat.tasks import load_task
from passhat.trial._outcome import TrialOutcome
from passhat.trial._sandbox import prepare_base

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.10  # issue 30: twins, audit hook, canaries, channel, late hooks and scan together
CONFIGS = {"on": {}, "off": {GUARD_ENV: "off"}, "no-twins": {TWINS_ENV: "off"}, "no-audit": {AUDIT_ENV: "off"}}
SCAN = """
import sys, time
from pathlib import Path
from passhat.graders import TrialOutcome, grade, load_graded_tasks
from passhat.graders._settings import graders_of
from passhat.trial._sandbox import prepare_base
root, task_id, state = sys.argv[1:4]
(task,) = load_graded_tasks(Path(root) / "tasks", only=[task_id])
graders = graders_of(task)
tests, scan = (next((g for g in graders if g["type"] == kind), None) for kind in ("tests", "integrity"))
if scan is None:
    print(0.0)
    sys.exit(0)
outcome = TrialOutcome(task.dir, prepare_base(task, Path(state) / "cache").path, task.solution.read_bytes(),
                       {"status": "ok", "is_error": False, "subtype": "success", "permission_denials": 0})
outcome.tree()
grade(outcome, tests)
start = time.process_time()
grade(outcome, scan)
print(time.process_time() - start)
"""


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _same_plugins(grader: dict) -> dict:
    """`grader` for the guard-off run of a pytest command: the environment's pytest plugins loaded as the guard
    loads them (auto-load off, passhat_guard_loader named in PYTEST_PLUGINS; see the module's docstring). A task
    that turns auto-load off itself keeps it off under the guard: its grader is left as it is."""
    env = dict(grader.get("env") or {})
    if runner_of(str(grader["command"])) != "pytest" or env.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return grader
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTEST_PLUGINS"] = ",".join(filter(None, [LOADER, env.get("PYTEST_PLUGINS", "")]))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLUGIN_DIR), env.get("PYTHONPATH", "")]))
    return {**grader, "env": env}


def _one(outcome: TrialOutcome, grader: dict, config: str, baseline: dict) -> tuple[float, float]:
    """CPU and wall seconds of one grader run (this process and the command's reaped process tree). `baseline`:
    the grader as the guard-off run gets it."""
    for name in (GUARD_ENV, TWINS_ENV, AUDIT_ENV):
        os.environ.pop(name, None)
    os.environ.update(CONFIGS[config])
    cpu, start = _cpu(), time.perf_counter()
    grade = grade_here(outcome, dict(baseline if config == "off" else grader))
    took = _cpu() - cpu, time.perf_counter() - start
    if not grade.passed:
        sys.exit(f"bench: the reference solution failed ({config}):\n{grade.reason[:2000]}")
    return took


def _scan_cpu(task_id: str, state: Path, runs: int) -> float:
    """Median CPU seconds of the integrity scan in a fresh interpreter (0 for a task without one), after one untimed
    run: its per-task cache filled, passhat's modules' bytecode written (under `state`, as an install has it)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(state / "pycache")
    found = []
    for _ in range(runs + 1):
        done = subprocess.run([sys.executable, "-c", SCAN, str(ROOT), task_id, str(state)], capture_output=True,
                              text=True, check=True, env=env)  # fmt: skip
        found.append(float(done.stdout.strip().splitlines()[-1]))
    return statistics.median(found[1:])


def measure(
    task_id: str, rounds: int, state: Path, configs: list[str], scan_runs: int, autoload: bool, twins: str | None
) -> dict:
    task = load_task(ROOT / "tasks" / task_id)
    graders = yaml.safe_load((task.dir / "task.yaml").read_text())["graders"]
    grader = next(g for g in graders if g["type"] == "tests")
    grader = {**grader, "twins": twins} if twins else grader
    baseline = grader if autoload else _same_plugins(grader)
    base = prepare_base(task, state / "cache")
    outcome = TrialOutcome(task.dir, base.path, task.solution.read_bytes(), CLEAN_RUN)
    times: dict[str, list[tuple[float, float]]] = {config: [] for config in configs}
    for config in configs:  # warm-up: the base, the page cache, auto test lists, the base's learned capabilities
        _one(outcome, grader, config, baseline)
    for round_ in range(rounds):
        for config in configs if round_ % 2 == 0 else configs[::-1]:
            times[config].append(_one(outcome, grader, config, baseline))
    row: dict = {"task": task_id, "rounds": rounds}
    for config in configs:
        row[config] = {
            "cpu_s": statistics.median(t[0] for t in times[config]),
            "cpu_min_s": min(t[0] for t in times[config]),
            "wall_s": statistics.median(t[1] for t in times[config]),
        }
    row["scan_cpu_s"] = _scan_cpu(task_id, state, scan_runs) if scan_runs else 0.0
    return row


def _tools_as_make_has_them() -> str:
    """PATH as `make` and ./activate set it: the repo's Node 22 (the one promptfoo and the graders run) first."""
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
    os.environ.setdefault("PASSHAT_GRADER_ISOLATION", "none")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="+", default=_shipped())
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--scan-runs", type=int, default=3)
    parser.add_argument("--parts", action="store_true", help="also time the run without the twins, the audit hook")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--autoload-baseline", action="store_true", help="pytest's own plugin auto-load when off")
    parser.add_argument("--twins", choices=["in-process", "world"], help="the tests grader's `twins:` when on")
    args = parser.parse_args()
    configs = ["on", "off", *(["no-twins", "no-audit"] if args.parts else [])]
    with tempfile.TemporaryDirectory(prefix="passhat-bench-") as folder:
        rows = [
            measure(task_id, args.rounds, Path(folder), configs, args.scan_runs, args.autoload_baseline, args.twins)
            for task_id in args.tasks
        ]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    parts = "  twins   audit" if args.parts else ""
    baseline = "pytest's own plugin auto-load" if args.autoload_baseline else "plugins loaded as the guard does"
    print(f"CPU seconds, medians of {args.rounds} alternating runs; node {node};"
          f" isolation {os.environ['PASSHAT_GRADER_ISOLATION']}; guard off: {baseline}")  # fmt: skip
    print(f"{'task':<22} {'off ms':>8} {'on ms':>8} {'guard':>8} {'scan ms':>8} {'cost':>8} {'(minima)':>9}{parts}")
    totals = {"off": 0.0, "on": 0.0, "scan": 0.0, "off_min": 0.0, "on_min": 0.0}
    for row in rows:
        off, on, scan = row["off"]["cpu_s"] * 1000, row["on"]["cpu_s"] * 1000, row["scan_cpu_s"] * 1000
        off_min, on_min = row["off"]["cpu_min_s"] * 1000, row["on"]["cpu_min_s"] * 1000
        for key, value in (("off", off), ("on", on), ("scan", scan), ("off_min", off_min), ("on_min", on_min)):
            totals[key] += value
        extra = ""
        if args.parts:
            extra = "".join(f" {(on - row[c]['cpu_s'] * 1000) / off:>+7.1%}" for c in ("no-twins", "no-audit"))
        print(f"{row['task']:<22} {off:8.0f} {on:8.0f} {(on - off) / off:>+8.1%} {scan:8.0f}"
              f" {(on - off + scan) / off:>+8.1%} {(on_min - off_min + scan) / off_min:>+9.1%}{extra}")  # fmt: skip
    off, on, scan = totals["off"], totals["on"], totals["scan"]
    cost, by_minima = (on - off + scan) / off, (totals["on_min"] - totals["off_min"] + scan) / totals["off_min"]
    verdict = " and ".join("ok" if figure <= TARGET else "over" for figure in (cost, by_minima))
    print(f"{'all (sum over tasks)':<22} {off:8.0f} {on:8.0f} {(on - off) / off:>+8.1%} {scan:8.0f} {cost:>+8.1%}"
          f" {by_minima:>+9.1%}   {verdict} (target ≤ +{TARGET:.0%})")  # fmt: skip
    wall_off, wall_on = (sum(row[config]["wall_s"] for row in rows) * 1000 for config in ("off", "on"))
    by_wall = (wall_on - wall_off + scan) / wall_off  # the scan's CPU as its time: one thread, no waiting
    print(f"{'by wall time (medians)':<22} {wall_off:8.0f} {wall_on:8.0f} {(wall_on - wall_off) / wall_off:>+8.1%}"
          f" {scan:8.0f} {by_wall:>+8.1%}            {'ok' if by_wall <= TARGET else 'over'}"
          f" (isolation {os.environ['PASSHAT_GRADER_ISOLATION']}: `PASSHAT_GRADER_ISOLATION=auto` times the"
          " grader as shipped, in bwrap, whose CPU this bench cannot see)")  # fmt: skip


if __name__ == "__main__":
    main()
