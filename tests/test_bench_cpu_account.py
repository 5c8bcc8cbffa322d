"""bench/where_cpu_goes.py reads kernel process accounting (acct_v3 records) and puts each process of a run in a
phase by its ancestry and passhat's role markers; here on records written by hand."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
_spec = importlib.util.spec_from_file_location("where_cpu_goes", ROOT / "bench" / "where_cpu_goes.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["where_cpu_goes"] = bench  # dataclasses look their module up
_spec.loader.exec_module(bench)


def _comp(ticks: int) -> int:
    exponent = 0
    while ticks >= 1 << 13:
        ticks >>= 3
        exponent += 1
    return exponent << 13 | ticks


def record(pid: int, ppid: int, cpu_s: float, comm: str, start: int = 100, forked: bool = False) -> bytes:
    ticks = round(cpu_s * bench.AHZ)
    return bench.ACCT_V3.pack(int(forked), 3, 0, 0, 0, 0, pid, ppid, start, 0.0, _comp(ticks), _comp(0),
                              0, 0, 0, 0, 0, 0, comm.encode())  # fmt: skip


def test_comp_t_and_record_layout():
    assert bench.ACCT_V3.size == 64
    assert bench._comp(_comp(123_456)) == 123_456 // 8 * 8  # 13-bit mantissa: exact to 1/8 at this size
    (proc,) = bench.read_pacct(record(7, 1, 12.34, "pytest"))
    assert (proc.pid, proc.ppid, proc.cpu, proc.comm, proc.forked) == (7, 1, 12.34, "pytest", False)


def test_a_torn_or_foreign_file_is_refused():
    with pytest.raises(bench.BenchError, match="64"):
        bench.read_pacct(record(7, 1, 1.0, "x")[:-3])
    with pytest.raises(bench.BenchError, match="version 2"):
        bench.read_pacct(record(7, 1, 1.0, "x").replace(b"\x00\x03", b"\x00\x02", 1))


def test_the_loop_split_into_cli_tests_and_shell():
    data = b"".join([
        record(20, 10, 0.01, "bash"),  # seed_loop.sh, a child of the bench (pid 10)
        record(21, 20, 0.0, "git"),  # worktree add
        record(22, 20, 0.02, "bash", start=101, forked=True),  # the trial's subshell
        record(23, 22, 0.0, "cat"),
        record(24, 22, 0.9, "JSCWarmUp", start=100),  # the CLI (a thread's name), "before" its parent: rounding
        record(25, 24, 0.05, "git"),  # the CLI's own git
        record(26, 22, 0.0, "git"),
        record(27, 22, 0.4, "python"),  # the test command
        record(28, 10, 0.0, "accton"),
    ])  # fmt: skip
    procs = bench.read_pacct(data)
    account = bench.account_loop(bench.Tree(procs), 10)
    assert dict(account.phases) == pytest.approx(
        {
            "loop: shell, git worktree": 0.03,
            "agent CLI": 0.9,
            "agent CLI's children (git, tools)": 0.05,
            "tests' command": 0.4,
        }
    )


def test_passhat_by_roles_and_confinement():
    data = b"".join([
        record(30, 10, 5.0, "tokio-runtime-w"),  # promptfoo's node
        record(31, 30, 0.3, "python"),  # the generator
        record(32, 30, 2.0, "python"),  # a provider worker
        record(33, 32, 0.01, "git"),  # base preparation
        record(34, 32, 0.0, "bwrap"),
        record(35, 1, 0.0, "bwrap", forked=True),  # its outer half killed first: passed to init
        record(36, 35, 1.1, "JITWorker"),  # the CLI, confined
        record(37, 36, 0.1, "git"),
        record(38, 30, 0.5, "python"),  # an assertion
        record(39, 38, 0.0, "bwrap"),
        record(40, 39, 0.0, "bwrap", forked=True),
        record(41, 40, 0.45, "python"),  # its test command
        record(42, 30, 0.2, "python"),  # afterEach
        record(43, 30, 0.1, "python"),  # unmarked: promptfoo's own probe
        record(44, 10, 0.2, "node"),  # another child of the bench
        record(50, 1, 0.3, "bwrap", forked=True),  # someone else's: no outer bwrap of ours just before it
    ])  # fmt: skip
    roles = {
        31: ("generator", {"start": 0.1}),
        32: ("provider", {"start": 0.1, "trial-thread": 1.5, "reaper": 0.2}),
        38: ("assertion", {"start": 0.1, "import": 0.15, "grader:tests": 0.1, "grader:files": 0.05}),
        42: ("hook:afterEach", {"start": 0.1, "import": 0.05}),
    }
    account = bench.account_passhat(bench.Tree(bench.read_pacct(data)), 10, roles)
    assert dict(account.phases) == pytest.approx({
        "promptfoo (node)": 5.0, "promptfoo: other children": 0.1, "test generator": 0.3,
        "provider worker: trials' thread": 1.5, "provider worker: proxy, other threads, start-up": 0.3,
        bench.MEASUREMENT: 0.2,
        "sandbox and base set-up (bwrap, git, cp)": 0.01, "agent CLI": 1.1, "agent CLI's children (git, tools)": 0.1,
        "assertions: interpreter start-up": 0.1, "assertions: imports": 0.15, "assertions: graders' Python": 0.15,
        "  of which grader:tests": 0.1, "  of which grader:files": 0.05, "assertions: exit, result": 0.1,
        "tests' command": 0.45, "hook afterEach": 0.2, "other (unmarked)": 0.2,
    })  # fmt: skip
    assert account.interpreters["assertion"][0]["cpu"] == 0.5


def test_promptfoos_floor_is_every_tree_the_bench_started_and_bounds_the_ratio():
    data = b"".join([
        record(30, 10, 2.5, "node"),  # promptfoo, a child of the bench (pid 10)
        record(31, 30, 0.12, "python"),  # an assertion's interpreter
        record(32, 30, 0.10, "python"),  # an afterEach hook's
        record(33, 31, 0.02, "python"),  # what an interpreter starts counts too
        record(40, 99, 5.0, "cc1"),  # another process of the machine: not the bench's
        record(41, 10, 0.0, "accton"),
    ])  # fmt: skip
    floor = bench.floor_cpu(bench.read_pacct(data), root_ppid=10)
    assert floor == pytest.approx(2.74)
    result = {"promptfoo_floor_cpu_s": 13.0, "loop": {"total_cpu_s": 50.0}, "passhat": {"total_cpu_s": 80.0}}
    lines = bench.floor_lines(result)
    assert "13.00 CPU-s" in lines[0]
    assert "= 1.26" in lines[1]  # (50 + 13) / 50: no extension of this shape goes lower
    assert "17.00 CPU-s (34.0% of the loop)" in lines[2]
    assert bench.floor_lines({"promptfoo_floor_cpu_s": None}) == []


def test_both_paths_run_with_bytecode_caches_allowed(monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # set on some machines: it burdened only the loop's pytest
    env = bench.svl.bench_environment()
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["PATH"].split(":")[0] == str(ROOT / "node_modules" / ".bin")
