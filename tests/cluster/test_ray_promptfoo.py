"""`executor: ray` end to end, as a user runs it: a 2-node Ray cluster on loopback (ray.cluster_utils.Cluster:
a head and a worker node, each its own raylet and processes), the real `promptfoo eval --repeat 4 -j 4` through
our provider, whose Promptfoo workers connect to it by `ray_address`, the real bundled Claude Code CLI on the
nodes against the scripted model, graders on the driver, then `passhat report`.

- `passhat validate` probes both nodes; the trials spread over both; each patch holds only its own trial's edits
  (byte for byte the patch the same seeded trial makes locally); the report's counts are those of the same eval
  with executor: local.
- A worker node killed (SIGKILL to its raylet, its other processes and everything they started) while two
  trials run on it: exactly those two rows are infra errors naming the cause, the others complete, every
  (task, repeat) has one row, and `promptfoo eval --retry-errors --repeat 4` completes the eval on the node left.

(`ray start --address 127.0.0.1:PORT` cannot add a second node on loopback: Ray 2.60 either refuses a
multi-node cluster, with RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, or rewrites 127.0.0.1 to the machine's outward
address, where a head started with --node-ip-address 127.0.0.1 does not listen.)
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, TASKS

from passhat.cli import main
from passhat.fake_model import start_in_thread
from passhat.trial._sandbox import reap_sandboxes

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray: pip install -e '.[ray]'"),
]
RUN = ("py-median", "py-rename-var")
REPEAT = 4
JOBS = 4  # promptfoo's concurrent calls = trials in flight = Ray tasks, one CPU each: both nodes' 2 CPUs busy
FLAKY_P, FLAKY_SEED = 0.5, 11  # py-median passes 3 of 4, py-rename-var 2 of 4
# Fault test: the model holds every agent reply SLOW s. A request younger than WAITING is still held for at least
# SLOW - WAITING s; WAITING above half a trial's request period (SLOW plus the CLI's own time) lets two trials'
# windows meet.
SLOW, WAITING = 1.0, 0.6
STATE_ENV = "PASSHAT_RAY_STATE_DIR"
# Before Ray is imported: Ray reads it once; without it a node given 127.0.0.1 is reached at the machine's
# outward address (passhat sets it itself in the Promptfoo workers, for a loopback ray_address).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
_SANDBOX = re.compile(r"(?P<task>.+)-r(?P<repeat>\d{3})-[0-9a-f]{8}")


def expected_oracle(task_id: str, trial: int) -> bool:
    """Computed here, independently of passhat: sha256("seed:task:trial"), first 16 hex digits, < p."""
    digest = hashlib.sha256(f"{FLAKY_SEED}:{task_id}:{trial}".encode()).hexdigest()
    return int(digest[:16], 16) / 16**16 < FLAKY_P


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class RayCluster:
    made: Any  # ray.cluster_utils.Cluster: a head and a worker node, separate processes on this machine
    worker: Any  # its worker node (ray._private.node.Node)
    state: Path  # the nodes' PASSHAT_RAY_STATE_DIR: <state>/<node id[:16]>/{tasks,state}

    @property
    def address(self) -> str:
        return str(self.made.address)

    def node_ids(self) -> dict[str, str]:
        return {"head": self.made.head_node.node_id[:16], "worker": self.worker.node_id[:16]}

    def in_flight(self, node_id: str) -> set[tuple[str, int]]:
        """(task, repeat) of the trials whose sandbox exists on that node now."""
        try:
            names = os.listdir(self.state / node_id / "state" / "sandboxes")
        except FileNotFoundError:
            return set()
        return {(match["task"], int(match["repeat"])) for name in names if (match := _SANDBOX.fullmatch(name))}

    def kill_worker(self) -> None:
        """The worker node dies as a machine does: SIGKILL to its raylet, its other processes and everything
        they started (its Ray workers, the trials in them), at once; then Ray's bookkeeping forgets it."""
        started = [info.process.pid for infos in self.worker.all_processes.values() for info in infos]
        for pid in [*started, *_descendants(started)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.made.remove_node(self.worker, allow_graceful=False)


def _descendants(pids: list[int]) -> list[int]:
    """Every process below `pids` (from /proc: a Ray worker is the raylet's child, a trial's CLI the worker's)."""
    children: dict[int, list[int]] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        children.setdefault(parent, []).append(int(pid))
    found, todo = [], list(pids)
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@contextlib.contextmanager
def ray_cluster(root: Path) -> Iterator[RayCluster]:
    """A head and a worker node, 2 CPUs each, on 127.0.0.1 (every port its own: the machine may run other
    clusters); all their processes stopped on the way out, also on failure."""
    from ray.cluster_utils import Cluster

    temp = Path(tempfile.mkdtemp(prefix="ph-ray-"))  # short: Ray's unix sockets live under it (108-byte limit)
    state, before = root / "nodes", os.environ.get(STATE_ENV)
    os.environ[STATE_ENV] = str(state)  # the nodes' processes inherit it
    node = {"node_ip_address": "127.0.0.1", "num_cpus": 2, "temp_dir": str(temp)}
    made = None
    try:
        made = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False,
                                                             "dashboard_agent_listen_port": _free_port()})  # fmt: skip
        worker = made.add_node(**node)
        made.wait_for_nodes()
        yield RayCluster(made, worker, state)
    finally:
        if made is not None:
            made.shutdown()
        for sandboxes in state.glob("*/state/sandboxes"):  # a killed node's trials left their mounts: passhat
            reap_sandboxes(sandboxes)  # reaps them when the node's next trial starts; this node has none
        if before is None:
            os.environ.pop(STATE_ENV, None)
        else:
            os.environ[STATE_ENV] = before
        shutil.rmtree(temp, ignore_errors=True)


def _eval_env(work: Path, model_url: str) -> dict[str, str]:
    env = {
        **os.environ,
        "PASSHAT_FAKE_MODEL_URL": model_url,
        "PROMPTFOO_PYTHON": sys.executable,
        "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo-home"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PASSHAT_TASKS": ",".join(RUN),
    }
    for name in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "PASSHAT_RAY_STATE_DIR", "RAY_ADDRESS"):
        env.pop(name, None)  # passhat sets what the driver needs itself; the nodes' state dirs are theirs
    return env


def _write_config(work: Path, label: str, config: dict) -> None:
    provider = {"id": f"file://{ROOT}/providers/claude_code.py", "label": label,
                "config": {"state_dir": str(work / ".passhat"), "timeout_s": 120, **config}}  # fmt: skip
    suite = {"prompts": ["{{prompt}}"], "providers": [provider],
             "tests": f"file://{ROOT}/tasks/promptfoo_tests.py:generate_tests"}  # fmt: skip
    work.mkdir(parents=True, exist_ok=True)
    (work / "promptfooconfig.yaml").write_text(yaml.safe_dump(suite))


def _validate(work: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`passhat validate` of the eval's config, until it sees both nodes (a worker registers with the head a
    moment after `ray start` returns) or fails."""
    validate = [sys.executable, "-m", "passhat.cli", "validate", "promptfooconfig.yaml", "--repeat", str(REPEAT)]
    deadline = time.monotonic() + 60
    while True:
        checked = subprocess.run(validate, cwd=work, env=env, capture_output=True, text=True, timeout=180)
        if checked.returncode or "2 node(s) alive" in checked.stdout or time.monotonic() > deadline:
            return checked
        time.sleep(1)


def _eval_args() -> list[str]:
    promptfoo = shutil.which("promptfoo")
    assert promptfoo is not None
    return [promptfoo, "eval", "--repeat", str(REPEAT), "-j", str(JOBS), "--no-cache", "--no-progress-bar",
            "-o", "results.json"]  # fmt: skip


def _promptfoo(work: Path, env: dict[str, str], args: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 100), done.stdout[-3000:] + done.stderr[-3000:]  # 100: some test failed
    return done


def _rows(work: Path) -> list[dict]:
    return list(json.loads((work / "results.json").read_text())["results"]["results"])


def _key(row: dict) -> tuple[str, int]:
    meta = row["response"]["metadata"]
    return meta["task_id"], meta["repeat_index"]


def _report(path: Path) -> dict[str, dict]:
    import io
    from contextlib import redirect_stdout

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["report", str(path), "--format", "json", "--k", "1,2,4"]) == 0
    return {row["task"]: row for row in json.loads(out.getvalue())["tasks"]}


def _counts(report: dict[str, dict]) -> dict[str, tuple]:
    return {task: (row["n"], row["passes"], row["errors"], row["missing_repeats"], row["duplicate_repeats"])
            for task, row in report.items()}  # fmt: skip


@pytest.fixture(scope="module")
def flaky_model():
    server = start_in_thread(TASKS, f"flaky:{FLAKY_P}:{FLAKY_SEED}")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def local_eval(tmp_path_factory, flaky_model):
    work = tmp_path_factory.mktemp("local")
    _write_config(work, "flaky", {})
    started = time.monotonic()
    _promptfoo(work, _eval_env(work, flaky_model.url), _eval_args())
    print(f"local eval: {time.monotonic() - started:.1f} s", file=sys.stderr)
    return work


@pytest.fixture(scope="module")
def ray_eval(tmp_path_factory, flaky_model):
    """The eval on the cluster; the cluster is stopped before the tests look (the fault test makes its own)."""
    root = tmp_path_factory.mktemp("ray")
    work = root / "eval"
    with ray_cluster(root) as cluster:
        _write_config(work, "flaky", {"executor": "ray", "ray_address": cluster.address})
        env = _eval_env(work, flaky_model.url)
        checked = _validate(work, env)
        started = time.monotonic()
        _promptfoo(work, env, _eval_args())
        print(f"ray eval: {time.monotonic() - started:.1f} s", file=sys.stderr)
        node_ids = cluster.node_ids()
    return work, checked, node_ids, root


def test_validate_asks_every_node_before_the_first_trial(ray_eval):
    _, checked, node_ids, _ = ray_eval
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "2 node(s) alive, 4 CPUs: 4 trial(s) at once at ray_num_cpus 1" in checked.stdout, checked.stdout
    assert len(re.findall(r"^Ray node \w+ \(127\.0\.0\.1\): passhat ", checked.stdout, re.M)) == 2, checked.stdout
    assert checked.stdout.rstrip().endswith("ok: ready to run"), checked.stdout


def test_trials_ran_on_both_nodes_once_each_and_came_home(ray_eval):
    work, _, node_ids, root = ray_eval
    rows = _rows(work)
    assert sorted(_key(r) for r in rows) == sorted((task, r) for task in RUN for r in range(REPEAT))
    assert [r["error"] for r in rows if r["failureReason"] == 2] == []
    metas = [r["response"]["metadata"] for r in rows]
    assert {m["executor"] for m in metas} == {"ray"}
    assert {m["ray_node_id"][:16] for m in metas} == set(node_ids.values()), node_ids  # SPREAD: both nodes
    state = work / ".passhat"
    for meta in metas:  # artifacts at home, under the driver's state dir, one folder per trial
        trial_dir = Path(meta["trial_dir"])
        assert trial_dir.parent.parent.parent == state / "artifacts", trial_dir
        assert Path(meta["patch_path"]).is_file() and Path(meta["transcript_path"]).is_file()
        assert json.loads((trial_dir / "trial.json").read_text())["ray_node_id"] == meta["ray_node_id"]
        assert meta["task_dir"] == str(TASKS / meta["task_id"])
    assert len({m["trial_dir"] for m in metas}) == len(metas)
    left = list(root.glob("nodes/*/state/artifacts/*/*/*"))  # the nodes keep no trial folder
    assert left == [], left


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}  # fmt: skip


def test_each_patch_holds_only_its_own_trials_edits(ray_eval, local_eval, tmp_path):
    work, *_ = ray_eval
    local = {_key(row): row for row in _rows(local_eval)}
    for index, row in enumerate(_rows(work)):
        meta = row["response"]["metadata"]
        key = _key(row)
        patch = Path(meta["patch_path"]).read_bytes()
        assert patch == Path(local[key]["response"]["metadata"]["patch_path"]).read_bytes(), key
        assert row["success"] is expected_oracle(*key), (key, row.get("gradingResult", {}).get("reason"))
        if not row["success"]:
            assert patch == b"" and meta["changed_paths"] == [], key
            continue
        solved, rebuilt = tmp_path / f"solved-{index}", tmp_path / f"rebuilt-{index}"
        for folder in (solved, rebuilt):
            shutil.copytree(TASKS / meta["task_id"] / "repo", folder)
        subprocess.run(["git", "apply", str(TASKS / meta["task_id"] / "solution.patch")], cwd=solved, check=True)
        subprocess.run(["git", "apply", "--binary", "-"], input=patch, cwd=rebuilt, check=True)
        assert _tree(rebuilt) == _tree(solved), key


def test_report_counts_equal_the_local_eval(ray_eval, local_eval):
    work, *_ = ray_eval
    on_ray, here = _report(work / "results.json"), _report(local_eval / "results.json")
    expected = {task: (REPEAT, sum(expected_oracle(task, r) for r in range(REPEAT)), 0, [], []) for task in RUN}
    assert _counts(here) == expected  # py-median 3/4, py-rename-var 2/4
    assert _counts(on_ray) == expected
    for task in RUN:
        assert on_ray[task]["pass_hat_k"] == here[task]["pass_hat_k"]


def test_a_killed_worker_node_is_infra_errors_then_retry_errors_completes(tmp_path):
    server = start_in_thread(TASKS, f"slow:{SLOW}")  # oracle, each reply late: a trial is in flight most of the time
    work = tmp_path / "eval"
    steps = [(task, r) for task in RUN for r in range(REPEAT)]
    try:
        with ray_cluster(tmp_path) as cluster:
            _write_config(work, "slow", {"executor": "ray", "ray_address": cluster.address})
            env, worker_id = _eval_env(work, server.url), cluster.node_ids()["worker"]
            checked = _validate(work, env)
            assert "2 node(s) alive" in checked.stdout, checked.stdout + checked.stderr
            with open(tmp_path / "first.log", "w") as log:
                first = subprocess.Popen(_eval_args(), cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)  # fmt: skip
                # Kill when the worker runs two trials (all its CPUs) and each waits for a model reply asked for
                # less than WAITING s ago (held SLOW s): neither can end, and no other trial start there, before
                # the node is gone.
                seen = dict.fromkeys(steps, (0, 0.0))
                deadline, killed = time.monotonic() + 240, set()
                while time.monotonic() < deadline and first.poll() is None:
                    now = time.monotonic()
                    for step in steps:
                        if (count := server.requests_total((*step, None))) != seen[step][0]:
                            seen[step] = (count, now)
                    on_worker = cluster.in_flight(worker_id)
                    if len(on_worker) == 2 and all(seen[s][0] and now - seen[s][1] < WAITING for s in on_worker):
                        killed = on_worker
                        break
                    time.sleep(0.02)
                assert killed, f"no moment with 2 trials waiting on the worker; see {tmp_path / 'first.log'}"
                cluster.kill_worker()
                stopped = time.monotonic()
                first.wait(timeout=300)
                first_s = time.monotonic() - stopped
            assert first.returncode in (0, 100), (tmp_path / "first.log").read_text()[-3000:]
            rows = _rows(work)
            after_kill = _report(work / "results.json")
            shutil.copy(work / "results.json", tmp_path / "after-kill.json")  # --retry-errors rewrites it

            retried = _promptfoo(work, env, [*_eval_args()[:2], "--retry-errors", "--repeat", str(REPEAT),
                                             "--no-progress-bar"])  # fmt: skip
            final_rows = _rows(work)
            final = _report(work / "results.json")
    finally:
        server.stop()

    assert first_s < 180  # never a hang: the lost trials come back as errors, the rest run on the head
    # Exactly the killed node's two trials are infra errors, with the cause; every other row completed.
    assert sorted(_key(r) for r in rows) == sorted(steps)  # one row per (task, repeat): none lost, none doubled
    errors = {_key(r): r["error"] for r in rows if r["failureReason"] == 2}
    assert set(errors) == killed, (errors, killed)
    for (task, repeat), error in errors.items():
        assert error.startswith(f"infrastructure error in task {task} trial {repeat}: ray: the Ray "), error
        assert re.search(r"the Ray (node|worker) running the trial died", error), error
    done = [r for r in rows if _key(r) not in killed]
    assert all(r["success"] for r in done), [(_key(r), r.get("error")) for r in done if not r["success"]]
    for task in RUN:
        lost = sum(1 for t, _ in killed if t == task)
        assert _counts(after_kill)[task] == (REPEAT - lost, REPEAT - lost, lost, [], []), after_kill[task]

    # --retry-errors --repeat N: the error rows again, on the node that is left; then complete, each row once.
    assert f"Found {len(killed)} ERROR results to retry" in retried.stdout + retried.stderr
    assert sorted(_key(r) for r in final_rows) == sorted(steps)
    assert [r for r in final_rows if not r["success"]] == []
    assert _counts(final) == {task: (REPEAT, REPEAT, 0, [], []) for task in RUN}
    rerun = [r["response"]["metadata"]["ray_node_id"][:16] for r in final_rows if _key(r) in killed]
    assert len(rerun) == len(killed) and worker_id not in rerun, (rerun, worker_id)
