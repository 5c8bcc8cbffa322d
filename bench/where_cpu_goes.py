"""Where a suite's CPU goes (issue #33, items 1 and 4): every CPU-second of a passhat suite, by phase, beside the
seed's bash loop in the same run, each phase against its budget.

It runs what suite_vs_loop.py runs (same tasks × repeats, same scripted `oracle` model, the loop first, then
`promptfoo eval -j J` with every grader on) under kernel process accounting (`accton`, Debian package `acct`;
needs root): the kernel writes a record (pid, parent, start, user + system CPU, command) for every process that
exits, confined ones included. A process is put in a phase by its ancestry: the loop's bash and what it starts,
promptfoo's node and its children; passhat's own Python processes say what they are through role markers
(`PASSHAT_CPU_ROLES`, see passhat.common._cpu_roles: provider worker, assertion, hook, test generator) with their CPU per
stage (interpreter start-up, imports, each grader). Inside the provider worker it splits the trials' own thread
(imports, base preparation, sandbox, patch) from its other threads (the model proxy, Promptfoo's worker loop).

It also measures Promptfoo's own floor for the suite's shape in the same run (`--no-floor` skips it): the same
number of rows, repeats and -j through a Python provider, tests generator, assertion and afterEach / afterAll hooks
that do nothing (FLOOR_ENTRY). What that eval costs is what any Python extension of this shape pays before its first
line of work — a node process, a fresh interpreter per assertion and per hook call (each importing asyncio through
Promptfoo's wrapper) — so (loop + floor) / loop is the lowest ratio passhat could reach without leaving Promptfoo's
per-row Python processes.

What it cannot split: the runner guard, canaries and held-out application run inside the test command's processes
(bench/integrity_cost.py measures them); the proxy and the worker's start-up are one line; the agent CLI's own
start-up from its turns.

The sum of the phases is printed against the machine's busy CPU (/proc/stat) over the same run. On a machine
shared with other work that total includes theirs; the phases do not (only this run's process trees count), and
the processes of others that exited meanwhile are printed as their own line.

    sudo .venv/bin/python bench/where_cpu_goes.py [--tasks a,b] [--repeat 10] [--jobs 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import suite_vs_loop as svl

from passhat.common._cpu_roles import VAR as ROLES_VAR
from passhat.fake_model import start_in_thread
from passhat.tasks._load import load_task
from passhat.trial._agent import bundled_cli

ACCT_V3 = struct.Struct("<BBHIIIIIIfHHHHHHHH16s")  # linux/acct.h struct acct_v3: 64 bytes
AHZ = 100  # acct_v3 times are in 1/AHZ s
AFORK = 0x01  # forked but never exec'd
SKEW_S = 2  # how much earlier than its parent a child's recorded start may be
BWRAP_FORK_GAP = 3  # how many pids before its inner half an outer bwrap may be (its own helper forks between)
UTILS = {"git", "cat", "mkdir", "mktemp", "rm", "cp", "mv", "ln", "env", "id", "readlink", "basename", "dirname"}
TARGET, GOAL = 1.3, 1.15

# Budgets. The work both paths do (the CLI, the task's test command) as a ratio to the loop's same work in the same
# run: confinement, the runner guard and canaries may add 10%. passhat's own phases as a share of the suite's CPU:
# at 1.3x the loop, with the shared work at 1.1x the loop's, 1 - 1.1/1.3 = 15% of the suite is all they may take.
RATIO_BUDGETS = {  # passhat's phase / the loop's phase of the same name
    "agent CLI": 1.10,
    "agent CLI's children (git, tools)": 1.10,
    "tests' command": 1.10,
}
SHARE_BUDGETS = {  # of the suite's CPU; they sum to 15%
    "promptfoo (node)": 0.06,
    "promptfoo: other children": 0.002,
    "provider worker: trials' thread": 0.02,
    "provider worker: proxy, other threads, start-up": 0.01,
    "sandbox and base set-up (bwrap, git, cp)": 0.005,
    "assertions: interpreter start-up": 0.01,
    "assertions: imports": 0.005,
    "assertions: graders' Python": 0.01,
    "assertions: exit, result": 0.005,
    "grader sandbox set-up (git, cp)": 0.003,
    "hook afterEach": 0.01,
    "hook afterAll": 0.003,
    "test generator": 0.003,
    "other (unmarked)": 0.004,
}
MEASUREMENT = "the measurement's reaper threads (not counted)"
LOOP_ONLY = ("loop: shell, git worktree", "scripted model (this process)")


# Promptfoo's floor: the example suite's shape (generator, provider, one Python assertion per row, both hooks), no work.
FLOOR_ENTRY = """
def call_api(prompt, options, context):
    return {"output": "done"}


def get_assert(output, context):
    return {"pass": True, "score": 1.0, "reason": "no work"}


def generate_tests(config=None):
    import os
    tasks = os.environ["FLOOR_TASKS"].split(",")
    graders = {"type": "python", "value": f"file://{__file__}", "config": {"graders": []}}
    return [{"description": t, "vars": {"task_id": t}, "assert": [graders]} for t in tasks]


def afterEach(context, options=None):
    return None


def afterAll(context, options=None):
    return None
"""


class BenchError(Exception):
    pass


@dataclass(frozen=True)
class Proc:
    """One accounting record: a process that exited."""

    pid: int
    ppid: int
    start: int  # epoch seconds
    cpu: float  # user + system seconds
    comm: str
    forked: bool  # forked and never exec'd (a subshell, bubblewrap's inner half)


def _comp(value: int) -> int:
    """comp_t: a 13-bit mantissa and a 3-bit base-8 exponent."""
    return (value & 0x1FFF) << (3 * (value >> 13))


def read_pacct(data: bytes) -> list[Proc]:
    if len(data) % ACCT_V3.size:
        raise BenchError(f"the accounting file is {len(data)} bytes, not a whole number of acct_v3 records (64)")
    procs = []
    for offset in range(0, len(data), ACCT_V3.size):
        flag, version, _tty, _exit, _uid, _gid, pid, ppid, btime, _etime, utime, stime, *_, comm = ACCT_V3.unpack_from(
            data, offset
        )
        if version & 0x7F != 3:
            raise BenchError(f"accounting record version {version}, expected 3 (acct_v3); a kernel without it?")
        cpu = (_comp(utime) + _comp(stime)) / AHZ
        procs.append(Proc(pid, ppid, btime, cpu, comm.rstrip(b"\0").decode(errors="replace"), bool(flag & AFORK)))
    return procs


@dataclass
class Tree:
    """The records as a forest: a process's parent is the latest record of its parent's pid that started before it
    (within SKEW_S)."""

    procs: list[Proc]
    children: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))  # index -> indexes
    roots: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))  # outside ppid -> indexes

    def __post_init__(self) -> None:
        by_pid: dict[int, list[int]] = defaultdict(list)
        for i, proc in enumerate(self.procs):
            by_pid[proc.pid].append(i)
        for i, proc in enumerate(self.procs):
            # start times are whole seconds, each rounded its own way: a child may seem to start before its parent
            parents = [j for j in by_pid.get(proc.ppid, []) if j != i and self.procs[j].start <= proc.start + SKEW_S]
            if not parents and proc.forked and proc.comm == "bwrap":
                parents = self._outer_bwrap(i, by_pid)
            if parents:
                self.children[max(parents, key=lambda j: self.procs[j].start)].append(i)
            else:
                self.roots[proc.ppid].append(i)

    def _outer_bwrap(self, i: int, by_pid: dict[int, list[int]]) -> list[int]:
        """bubblewrap's inner half outlives its outer half when a trial's process group is killed, and passes to
        init: its parent is the bwrap that forked it a pid or two before, in the same second."""
        proc = self.procs[i]
        for pid in range(proc.pid - 1, proc.pid - 1 - BWRAP_FORK_GAP, -1):
            found = [j for j in by_pid.get(pid, []) if self.procs[j].comm == "bwrap" and not self.procs[j].forked
                     and abs(self.procs[j].start - proc.start) <= SKEW_S]  # fmt: skip
            if found:
                return found
        return []

    def subtree(self, i: int) -> Iterator[int]:
        yield i
        for child in self.children[i]:
            yield from self.subtree(child)


@dataclass
class Account:
    phases: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    interpreters: dict[str, list[dict[str, float]]] = field(default_factory=lambda: defaultdict(list))
    seen: set[int] = field(default_factory=set)
    processes: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, phase: str, tree: Tree, i: int, whole: bool = True) -> None:
        for j in tree.subtree(i) if whole else (i,):
            if j not in self.seen:
                self.seen.add(j)
                self.phases[phase] += tree.procs[j].cpu
                self.processes[phase] += 1


def read_roles(folder: Path) -> dict[int, tuple[str, dict[str, float]]]:
    roles = {}
    for path in folder.iterdir():
        role, stages = "?", defaultdict(float)
        for line in path.read_text().splitlines():
            kind, *rest = line.split()
            if kind == "role":
                role = rest[0]
            elif kind == "stage":
                stages[rest[0]] += float(rest[1])
        roles[int(path.name)] = (role, dict(stages))
    return roles


def _confined(tree: Tree, i: int, account: Account, cli: str, children: str, setup: str) -> None:
    """A bubblewrap subtree: bwrap itself and a lone probe shell are set-up; the first program is `cli`, all it
    starts `children`."""
    proc = tree.procs[i]
    if proc.comm == "bwrap":
        account.add(setup, tree, i, whole=False)
        for child in tree.children[i]:
            _confined(tree, child, account, cli, children, setup)
    elif proc.comm in ("sh", "bash") and not tree.children[i]:
        account.add(setup, tree, i)
    else:
        account.add(cli, tree, i, whole=False)
        for child in tree.children[i]:
            account.add(children, tree, child)


def _roots(tree: Tree, ppid: int, account: Account) -> list[int]:
    """The path's first process (its earliest child of this one); any other child of ours is counted as other."""
    roots = [i for i in tree.roots.get(ppid, []) if tree.procs[i].comm != "accton"]
    first = min(roots, key=lambda i: (tree.procs[i].start, tree.procs[i].pid), default=None)
    for i in roots:
        if i != first:
            account.add("other (unmarked)", tree, i)
    return [] if first is None else [first]


def account_passhat(tree: Tree, root_ppid: int, roles: dict[int, tuple[str, dict[str, float]]]) -> Account:
    account = Account()
    for root in _roots(tree, root_ppid, account):
        account.add("promptfoo (node)", tree, root, whole=False)
        for i in tree.subtree(root):
            if i == root:
                continue
            proc = tree.procs[i]
            if i in account.seen:
                continue
            role, stages = roles.get(proc.pid, (None, {}))
            if role is None:
                if proc.comm in ("node", "python", "sh") or tree.procs[root].pid == proc.ppid:
                    account.add("promptfoo: other children", tree, i, whole=False)
                continue
            account.interpreters[role].append({"cpu": proc.cpu, **stages})
            account.processes[f"{role} (Python)"] += 1
            _account_role(tree, i, role, stages, account)
    return account


def _account_role(tree: Tree, i: int, role: str, stages: dict[str, float], account: Account) -> None:
    proc = tree.procs[i]
    if role == "provider" or role.startswith("assertion"):
        account.seen.add(i)  # its own CPU split by stage below, its children by what they are
    reaper = min(stages.get("reaper", 0.0), proc.cpu)  # the measurement's own thread (passhat.common._cpu_roles)
    if reaper:
        account.phases[MEASUREMENT] += reaper
    if role == "provider":
        thread = min(stages.get("trial-thread", 0.0), proc.cpu - reaper)
        account.phases["provider worker: trials' thread"] += thread
        account.phases["provider worker: proxy, other threads, start-up"] += proc.cpu - reaper - thread
        for child in tree.children[i]:
            if tree.procs[child].comm == "bwrap":
                _confined(tree, child, account, "agent CLI", "agent CLI's children (git, tools)",
                          "sandbox and base set-up (bwrap, git, cp)")  # fmt: skip
            else:
                account.add("sandbox and base set-up (bwrap, git, cp)", tree, child)
    elif role.startswith("assertion"):
        start, imports = stages.get("start", 0.0), stages.get("import", 0.0)
        graders = {k: v for k, v in stages.items() if k.startswith("grader:")}
        account.phases["assertions: interpreter start-up"] += start
        account.phases["assertions: imports"] += imports
        account.phases["assertions: graders' Python"] += sum(graders.values())
        for kind, seconds in graders.items():
            account.phases[f"  of which {kind}"] += seconds
        rest = proc.cpu - reaper - start - imports - sum(graders.values())
        account.phases["assertions: exit, result"] += max(0.0, rest)
        for child in tree.children[i]:
            if tree.procs[child].comm == "bwrap":
                _confined(tree, child, account, "tests' command", "tests' command", "tests' command")
            else:
                account.add("grader sandbox set-up (git, cp)", tree, child)
    else:
        phase = {"hook:afterEach": "hook afterEach", "hook:afterAll": "hook afterAll", "generator": "test generator"}
        account.add(phase.get(role, "other (unmarked)"), tree, i)
        if reaper:
            account.phases[phase.get(role, "other (unmarked)")] -= reaper


def account_loop(tree: Tree, root_ppid: int) -> Account:
    """seed_loop.sh: per trial a subshell that runs cat, the CLI (through env), git, then the test command."""
    account = Account()
    shell = "loop: shell, git worktree"
    for root in _roots(tree, root_ppid, account):
        account.add(shell, tree, root, whole=False)
        for child in tree.children[root]:
            proc = tree.procs[child]
            if not proc.forked:
                account.add(shell, tree, child)
                continue
            account.add(shell, tree, child, whole=False)
            cli_seen = False
            for grandchild in sorted(tree.children[child], key=lambda j: tree.procs[j].pid):
                if tree.procs[grandchild].comm in UTILS:
                    account.add(shell, tree, grandchild)
                elif not cli_seen:
                    cli_seen = True
                    account.add("agent CLI", tree, grandchild, whole=False)
                    for tool in tree.children[grandchild]:
                        account.add("agent CLI's children (git, tools)", tree, tool)
                else:
                    account.add("tests' command", tree, grandchild)
    return account


def machine_cpu() -> float:
    return svl.machine_cpu()


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def accounted(run, pacct: Path) -> tuple[list[Proc], float, float, float]:
    """Run `run()` under process accounting into `pacct`: the records, the machine's busy CPU, this process's
    CPU (the scripted model's threads) and the wall time."""
    pacct.write_bytes(b"")
    subprocess.run(["accton", str(pacct)], check=True, capture_output=True)
    machine, mine, wall = machine_cpu(), own_cpu(), time.perf_counter()
    try:
        run()
    finally:
        machine, mine, wall = machine_cpu() - machine, own_cpu() - mine, time.perf_counter() - wall
        subprocess.run(["accton", "off"], check=True, capture_output=True)
    return read_pacct(pacct.read_bytes()), machine, mine, wall


def run_floor(tasks: list, repeat: int, jobs: int, folder: Path, env: dict) -> None:
    """Promptfoo's own cost for the suite's shape: FLOOR_ENTRY's no-op Python entry points, same rows and -j."""
    entry = folder / "floor_entry.py"
    entry.write_text(FLOOR_ENTRY)
    config = {
        "prompts": ["{{task_id}}"],
        "providers": [f"file://{entry}"],
        "tests": f"file://{entry}:generate_tests",
        "extensions": [f"file://{entry}:afterAll", f"file://{entry}:afterEach"],
        "commandLineOptions": {"table": False},
    }
    path = folder / "floor.yaml"
    path.write_text(json.dumps(config))
    run_env = {**env, "FLOOR_TASKS": ",".join(t.id for t in tasks), "PROMPTFOO_CONFIG_DIR": str(folder / "promptfoo")}
    command = ["promptfoo", "eval", "-c", str(path), "--repeat", str(repeat), "-j", str(jobs), "--no-cache"]
    out = folder / "floor-results.json"
    proc = subprocess.run([*command, "-o", str(out)], env=run_env, cwd=folder, capture_output=True, text=True)
    if not out.is_file():
        raise BenchError(f"the floor's promptfoo eval wrote no results (exit {proc.returncode}): {proc.stderr[-1500:]}")
    rows = json.loads(out.read_text())["results"]["results"]
    if len(rows) != repeat * len(tasks) or not all(r.get("success") for r in rows):
        raise BenchError(f"the floor's eval: {len(rows)} rows (want {repeat * len(tasks)}), not all passed")


def floor_cpu(procs: list[Proc], root_ppid: int) -> float:
    """CPU of every process tree the bench started during the floor's eval (promptfoo and all it ran)."""
    tree = Tree(procs)
    return sum(tree.procs[j].cpu for i in tree.roots.get(root_ppid, []) for j in tree.subtree(i)
               if tree.procs[j].comm != "accton")  # fmt: skip


def check_host() -> None:
    if shutil.which("accton") is None:
        raise BenchError("accton not found: kernel process accounting needs the Debian package acct "
                         "(apt-get install acct)")  # fmt: skip
    if os.geteuid() != 0:
        raise BenchError("process accounting needs root: run it with sudo (or as root, as in CI)")


def bytecode_note() -> str | None:
    """A fresh interpreter compiles every passhat module it imports when no bytecode cache exists and
    PYTHONDONTWRITEBYTECODE keeps it from writing one (an editable install; pip compiles a regular one)."""
    import passhat

    cached = list(Path(passhat.__file__).parent.glob("__pycache__/*.pyc"))
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not cached:
        return ("note: PYTHONDONTWRITEBYTECODE is set and passhat has no bytecode cache: each of Promptfoo's Python "
                "processes compiles passhat's modules from source (`python -m compileall src` writes the cache once)")  # fmt: skip
    return None


def run(args: argparse.Namespace) -> dict:
    check_host()
    tasks = [load_task(svl.ROOT / "tasks" / name) for name in args.tasks.split(",")]
    env = svl.bench_environment()  # bytecode caches written, as on a default machine (suite_vs_loop says why)
    env |= {"CLAUDE_CLI": str(bundled_cli()), "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}
    server = start_in_thread(svl.ROOT / "tasks", "oracle")
    try:
        with tempfile.TemporaryDirectory(prefix="passhat-cpu-bench-") as tmp:
            scratch = Path(tmp)
            repos = {task.id: svl.loop_repo(task, scratch) for task in tasks}
            if args.warm_up:  # Python's and Node's caches warm, as a team's second run finds them
                warm = scratch / "warm"
                warm.mkdir()
                plan = svl.write_plan(tasks, repos, server.url, 1, warm, offset=0)
                svl.run_loop(plan, warm / "loop", env)
                svl.run_passhat(tasks, 1, args.jobs, server.url, warm / "state", warm / "results.json", env, args.cli)
            folder = scratch / "run"
            folder.mkdir()
            plan = svl.write_plan(tasks, repos, server.url, args.repeat, folder, offset=1000)
            loop = accounted(lambda: svl.run_loop(plan, folder / "loop", env), scratch / "loop.pacct")
            marks = scratch / "roles"
            marks.mkdir()
            ours_env = {**env, ROLES_VAR: str(marks)}
            state, out = scratch / "state", folder / "results.json"  # a fresh state: bases built in the run
            ours = accounted(lambda: svl.run_passhat(tasks, args.repeat, args.jobs, server.url, state, out, ours_env, args.cli),
                             scratch / "passhat.pacct")  # fmt: skip
            roles = read_roles(marks)
            floor = None
            if args.floor:
                floor_dir = scratch / "floor"
                floor_dir.mkdir()
                run_floor(tasks, 1, args.jobs, floor_dir, env)  # warm, untimed
                records = accounted(lambda: run_floor(tasks, args.repeat, args.jobs, floor_dir, env),
                                    scratch / "floor.pacct")  # fmt: skip
                floor = floor_cpu(records[0], os.getpid())
    finally:
        server.stop()
    return summarize(tasks, args, loop, ours, roles) | {"promptfoo_floor_cpu_s": floor}


def _tally(procs: list[Proc], account: Account, tree: Tree) -> float:
    return sum(p.cpu for i, p in enumerate(procs) if i not in account.seen and p.comm != "accton")


def summarize(tasks, args, loop, ours, roles) -> dict:
    me = os.getpid()
    loop_tree, ours_tree = Tree(loop[0]), Tree(ours[0])
    loop_acc, ours_acc = account_loop(loop_tree, me), account_passhat(ours_tree, me, roles)
    loop_acc.phases["scripted model (this process)"] += loop[2]
    ours_acc.phases["scripted model (this process)"] += ours[2]
    loop_total = sum(v for k, v in loop_acc.phases.items() if not k.startswith(" ") and k != MEASUREMENT)
    ours_total = sum(v for k, v in ours_acc.phases.items() if not k.startswith(" ") and k != MEASUREMENT)
    interpreters = {
        role: {
            "count": len(items),
            "mean_cpu_s": sum(i["cpu"] for i in items) / len(items),
            "mean_start_s": sum(i.get("start", 0.0) for i in items) / len(items),
            "mean_import_s": sum(i.get("import", 0.0) for i in items) / len(items),
        }
        for role, items in sorted(ours_acc.interpreters.items())
    }
    return {
        "tasks": [t.id for t in tasks],
        "repeat": args.repeat,
        "cli": args.cli,
        "jobs": args.jobs,
        "passhat": {"phases": dict(ours_acc.phases), "processes": dict(ours_acc.processes), "total_cpu_s": ours_total, "machine_cpu_s": ours[1],
                    "others_exited_cpu_s": _tally(ours[0], ours_acc, ours_tree), "wall_s": ours[3]},
        "loop": {"phases": dict(loop_acc.phases), "processes": dict(loop_acc.processes), "total_cpu_s": loop_total, "machine_cpu_s": loop[1],
                 "others_exited_cpu_s": _tally(loop[0], loop_acc, loop_tree), "wall_s": loop[3]},
        "ratio": ours_total / loop_total,
        "interpreters": interpreters,
        "loadavg_1m": os.getloadavg()[0],
        "note": bytecode_note(),
    }  # fmt: skip


def budget_of(phase: str, ours: float, loop: float, suite: float) -> tuple[str, bool | None]:
    if phase in SHARE_BUDGETS:
        return f"≤ {SHARE_BUDGETS[phase]:.1%} of suite", ours <= SHARE_BUDGETS[phase] * suite
    if phase in RATIO_BUDGETS:
        return f"≤ {RATIO_BUDGETS[phase]:.2f}× loop's", ours <= RATIO_BUDGETS[phase] * loop
    return "", None


def render(result: dict) -> str:
    ours, loop = result["passhat"], result["loop"]
    suite = ours["total_cpu_s"]
    names = list(SHARE_BUDGETS) + list(RATIO_BUDGETS) + list(LOOP_ONLY)
    names += sorted(k for k in {*ours["phases"], *loop["phases"]} if k not in names)
    lines = [
        f"suite: {', '.join(result['tasks'])} × {result['repeat']}, passhat -j {result['jobs']} (CLI: {result['cli']}) "
        f"(load average {result['loadavg_1m']:.1f} at the end)",
        f"{'phase':48} {'passhat':>8} {'share':>6} {'procs':>6} {'loop':>7} {'procs':>6}  budget",
    ]
    counts = ours.get("processes", {}), loop.get("processes", {})
    for name in names:
        a, b = ours["phases"].get(name, 0.0), loop["phases"].get(name, 0.0)
        if not a and not b and name not in SHARE_BUDGETS and name not in RATIO_BUDGETS:
            continue
        budget, ok = budget_of(name, a, b, suite)
        mark = "" if ok is None else ("ok" if ok else "OVER")
        n_ours, n_loop = counts[0].get(name, ""), counts[1].get(name, "")
        lines.append(f"{name:48} {a:8.2f} {a / suite:6.1%} {n_ours:>6} {b:7.2f} {n_loop:>6}  {budget} {mark}".rstrip())
    ratio = result["ratio"]
    lines += [
        f"{'sum of the phases':48} {suite:8.2f} {'':13} {loop['total_cpu_s']:7.2f}",
        f"{'machine busy CPU (/proc/stat), same window':48} {ours['machine_cpu_s']:8.2f} {'':13} "
        f"{loop['machine_cpu_s']:7.2f}",
        f"{'others: processes not ours that exited then':48} {ours['others_exited_cpu_s']:8.2f} {'':13} "
        f"{loop['others_exited_cpu_s']:7.2f}",
        "(a record holds whole 1/100 s: a process of less counts 0 — see procs)",
        f"CPU passhat/loop {ratio:.2f} (target ≤ {TARGET}, goal {GOAL}) {'ok' if ratio <= TARGET else 'OVER'}; "
        f"wall {ours['wall_s']:.1f} s / {loop['wall_s']:.1f} s",
        *floor_lines(result),
        "",
        f"{'interpreter (passhat Python process)':36} {'n':>4} {'CPU-s each':>10} {'start-up':>9} {'imports':>8}",
    ]
    for role, row in result["interpreters"].items():
        lines.append(f"{role:36} {row['count']:4d} {row['mean_cpu_s']:10.3f} {row['mean_start_s']:9.3f} "
                     f"{row['mean_import_s']:8.3f}")  # fmt: skip
    if result.get("note"):
        lines += ["", result["note"]]
    return "\n".join(lines)


def floor_lines(result: dict) -> list[str]:
    """Promptfoo's floor for this shape beside the loop: the lowest ratio a Python extension of it can reach."""
    floor = result.get("promptfoo_floor_cpu_s")
    if floor is None:
        return []
    loop, ours = result["loop"]["total_cpu_s"], result["passhat"]["total_cpu_s"]
    return [
        f"promptfoo's floor, this shape with no work (no-op Python provider, generator, assertion, hooks): "
        f"{floor:.2f} CPU-s",
        f"  lowest ratio of any Python extension of this shape: (loop + floor) / loop = {(loop + floor) / loop:.2f}",
        f"  passhat above the loop's work and the floor: {ours - loop - floor:.2f} CPU-s "
        f"({(ours - loop - floor) / loop:.1%} of the loop)",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(svl.TASKS))
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false", help="skip the untimed repeat-1 run")
    parser.add_argument("--cli", choices=sorted(svl.CLI_MODES), default="full",
                        help="passhat's CLI mode: full (the example suite's) or bare (the loop's, like for like)")  # fmt: skip
    parser.add_argument("--no-floor", dest="floor", action="store_false", help="skip Promptfoo's floor")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        result = run(args)
    except (BenchError, svl.BenchError) as error:
        print(f"bench: {error}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
