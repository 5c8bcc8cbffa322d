"""A whole suite through passhat vs the serial bash loop it replaces (issue #13, item 1).

Both paths run the same tasks × repeats with the same bundled Claude Code CLI against the same scripted
model (`oracle`: every trial applies the task's solution.patch), in one run, alternating rounds:

  passhat  `promptfoo eval --repeat R -j J --no-cache` of promptfooconfig.yaml with every grader on
           (tests, files, diff-scope, health), confined trials, results file written
  loop     bench/seed_loop.sh: per trial `git worktree add` → `claude --bare -p` → the task's test command
           → patch kept → worktree removed; one trial after another

Target: passhat ≤ 0.6× the loop's wall time. One untimed warm-up of each path first (bases are built
once per task version; Python and Node warm their caches). Every passhat row must pass and every loop
trial's test command must pass, or the benchmark stops without a ratio.

    python bench/suite_vs_loop.py [--tasks a,b,c,d] [--repeat 10] [--jobs 2] [--rounds 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from passhat.common._fake_route import route_url
from passhat.fake_model import start_in_thread
from passhat.tasks._load import Task, load_task
from passhat.tasks._source import export_source
from passhat.trial._agent import bundled_cli

ROOT = Path(__file__).resolve().parent.parent
TASKS = ("bump-version", "py-median", "py-rename-var", "py-extract-function")
TARGET = 0.6


class BenchError(Exception):
    pass


def loop_repo(task: Task, scratch: Path) -> Path:
    """The task's files in a git repo of their own, as the loop's user would have them."""
    repo = scratch / f"repo-{task.id}"
    export_source(task, repo, scratch / "cache")
    if task.setup:
        subprocess.run(task.setup, shell=True, cwd=repo, check=True, capture_output=True)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *args]
        subprocess.run(git, cwd=repo, check=True, capture_output=True)
    return repo


def test_command(task: Task) -> str:
    grader = next(g for g in task.graders if g["type"] == "tests")
    return str(grader["command"]).replace("{junit}", ".bench-junit.xml")


def write_plan(tasks: list[Task], repos: dict[str, Path], url: str, repeat: int, folder: Path, offset: int) -> Path:
    lines = []
    for task in tasks:
        prompt = folder / f"prompt-{task.id}.txt"
        prompt.write_text(task.prompt)
        for r in range(repeat):
            route = route_url(url, task.id, offset + r)
            lines.append("\t".join([task.id, str(r), route, str(repos[task.id]), str(prompt), test_command(task)]))
    plan = folder / f"plan-{offset}.tsv"
    plan.write_text("\n".join(lines) + "\n")
    return plan


def bench_environment() -> dict[str, str]:
    """The environment both paths run in: the repo's Node 22 and venv first on PATH, and Python free to write its
    bytecode caches, as on a machine with the default settings. With PYTHONDONTWRITEBYTECODE set (some CI images,
    this project's development machines), pytest rewrites the asserts of every auto-loaded plugin's package from
    source on each run (anyio's, installed with the agent SDK: 0.2-0.3 CPU-s a run) and caches nothing: that
    burdened the loop's pytest runs and not passhat's guarded ones, which load those plugins without the rewrite."""
    env = {**os.environ, "PATH": f"{ROOT / 'node_modules/.bin'}:{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def machine_cpu() -> float:
    """CPU seconds the whole machine has spent busy (user, nice, system, irq, softirq: /proc/stat). Not this
    process's children: a confined trial's processes run in their own pid namespace, and what bubblewrap's
    init reaps there never reaches our rusage. So run this on an otherwise idle machine."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:8]]
    return (sum(fields[:3]) + fields[5] + fields[6]) / os.sysconf("SC_CLK_TCK")


def run_loop(plan: Path, out: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(["bash", str(ROOT / "bench" / "seed_loop.sh"), str(plan), str(out)], env=env, check=True)
    wall = time.perf_counter() - started
    failed = [p.stem for p in out.glob("*.status") if p.read_text().strip() != "pass"]
    if failed:
        raise BenchError(f"loop trials whose tests failed: {sorted(failed)}; the loop measured broken trials")
    return wall


CLI_MODES = {"full": {}, "bare": {"bare": True}}  # --cli: the example suite's CLI, or the loop's `claude --bare`


def run_passhat(
    tasks: list[Task], repeat: int, jobs: int, url: str, state: Path, out: Path, env: dict, cli: str = "full"
) -> float:
    """The example suite as a user runs it; passhat's state (bases) in `state`, shared across rounds. `cli`: the
    suite's own CLI mode (full Claude Code), or `bare` (`bare: true`: the mode the loop runs, like for like)."""
    data = yaml.safe_load((ROOT / "promptfooconfig.yaml").read_text().replace("file://", f"file://{ROOT}/"))
    data["providers"][0].setdefault("config", {}).update({"state_dir": str(state), **CLI_MODES[cli]})
    config = out.with_name("promptfooconfig.yaml")
    config.write_text(yaml.safe_dump(data))
    run_env = {
        **env,
        "PASSHAT_TASKS": ",".join(t.id for t in tasks),
        "PASSHAT_FAKE_MODEL_URL": url,
        "PROMPTFOO_CONFIG_DIR": str(state / "promptfoo"),
    }
    command = ["promptfoo", "eval", "-c", str(config), "--repeat", str(repeat), "-j", str(jobs), "--no-cache"]
    started = time.perf_counter()
    proc = subprocess.run([*command, "-o", str(out)], env=run_env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if not out.is_file():
        raise BenchError(f"promptfoo eval wrote no results (exit {proc.returncode}): {proc.stderr[-1500:]}")
    rows = json.loads(out.read_text())["results"]["results"]
    bad = [(r["vars"].get("task_id"), r.get("error") or "failed") for r in rows if not r.get("success")]
    if len(rows) != repeat * len(tasks) or bad:
        raise BenchError(f"passhat rows: {len(rows)} (want {repeat * len(tasks)}), not passed: {bad[:5]}")
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cli", choices=sorted(CLI_MODES), default="full",
                        help="passhat's CLI mode: full (the example suite's) or bare (the loop's, like for like)")  # fmt: skip
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tasks = [load_task(ROOT / "tasks" / name) for name in args.tasks.split(",")]
    env = bench_environment()
    env |= {"CLAUDE_CLI": str(bundled_cli()), "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}
    server = start_in_thread(ROOT / "tasks", "oracle")
    times: dict[str, list[float]] = {"passhat": [], "loop": []}
    cpus: dict[str, list[float]] = {"passhat": [], "loop": []}  # the machine's busy CPU seconds during each path
    try:
        with tempfile.TemporaryDirectory(prefix="passhat-suite-bench-") as tmp:
            scratch = Path(tmp)
            repos = {task.id: loop_repo(task, scratch) for task in tasks}
            for round_ in range(args.rounds + 1):  # round 0: warm-up, not timed
                repeat = 1 if round_ == 0 else args.repeat
                folder = scratch / f"round-{round_}"
                folder.mkdir()
                plan = write_plan(tasks, repos, server.url, repeat, folder, offset=1000 * round_)
                cpu = machine_cpu()
                loop = run_loop(plan, folder / "loop", env)
                cpu, loop_cpu = machine_cpu(), machine_cpu() - cpu
                state = scratch / "passhat-state"
                ours = run_passhat(tasks, repeat, args.jobs, server.url, state, folder / "results.json", env, args.cli)
                ours_cpu = machine_cpu() - cpu
                if round_:
                    times["loop"].append(loop)
                    times["passhat"].append(ours)
                    cpus["loop"].append(loop_cpu)
                    cpus["passhat"].append(ours_cpu)
                    print(f"round {round_}: passhat {ours:.1f} s ({ours_cpu:.1f} CPU-s), "
                          f"loop {loop:.1f} s ({loop_cpu:.1f} CPU-s)", file=sys.stderr)  # fmt: skip
    except BenchError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 1
    finally:
        server.stop()
    passhat, loop = statistics.median(times["passhat"]), statistics.median(times["loop"])
    result = {
        "tasks": [t.id for t in tasks],
        "repeat": args.repeat,
        "cli": args.cli,
        "jobs": args.jobs,
        "passhat_s": times["passhat"],
        "loop_s": times["loop"],
        "passhat_machine_cpu_s": cpus["passhat"],
        "loop_machine_cpu_s": cpus["loop"],
        "ratio_median": passhat / loop,
        "target": TARGET,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        trials = args.repeat * len(tasks)
        print(f"suite: {len(tasks)} tasks × {args.repeat} repeats = {trials} trials, passhat -j {args.jobs}")
        print(f"  CLI: passhat's {args.cli}, the loop's --bare")
        print(f"  passhat (every grader on)  median {passhat:6.1f} s   rounds {times['passhat']}")
        print(f"  seed bash loop (serial)    median {loop:6.1f} s   rounds {times['loop']}")
        print(f"  ratio passhat/loop         {passhat / loop:.2f}   (target ≤ {TARGET})")
        ours_cpu, loop_cpu, cores = statistics.median(cpus["passhat"]), statistics.median(cpus["loop"]), os.cpu_count()
        print(f"  machine CPU-s passhat/loop {ours_cpu / loop_cpu:.2f}   (medians {ours_cpu:.1f} / {loop_cpu:.1f})")
        # With every CPU busy, a suite can take no less than its CPU seconds / CPUs: the ratio's floor.
        print(f"  floor at {cores} CPUs busy: the loop's own work {loop_cpu / cores / loop:.2f}, "
              f"passhat's work {ours_cpu / cores / loop:.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
