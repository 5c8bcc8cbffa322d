"""Trial throughput on a Ray cluster, 1 node vs 2 nodes, and what the driver costs per in-flight trial (issue #14).

The same trials (default: 40 of py-median, scripted `oracle` model) run twice through passhat's provider
(`call_api` with `executor: ray`, as a Promptfoo worker calls it), all submitted at once from a thread pool in
this process — the driver — so every trial is in flight from the start:

  1 node   a loopback Ray cluster of one node with --cpus-per-node CPUs (default 1): one trial at a time
  2 nodes  the same cluster after a second node of the same size joined: two at a time

Each node runs the whole trial (base from its own cache, sandbox, the bundled Claude Code CLI, patch) and ships the
artifacts back. Both nodes share this machine's cores, so the ratio says how well passhat's driver and Ray's
scheduling keep added nodes busy, not what a second machine would add to the CPU. An untimed warm-up of one trial
per node first (a node builds its base of the task once; Ray starts its worker processes).

Printed per phase: trials/s, and the driver's CPU seconds (this process: passhat, the threads, Ray's core worker;
not the nodes, not the scripted model, which runs as a process of its own) per trial; the driver's RSS before
the trials and its peak while all of them are in flight, and so the RSS per in-flight trial. Then the ratio
(2 nodes / 1 node) and the throughput per worker CPU (trials/hour). A Promptfoo eval holds one Python worker
per concurrent call (-j), so `--worker-probe` (default on) also measures one such worker: a fresh process that
imports the provider, connects to the cluster and runs one trial (its RSS and unique memory).

Every trial must end with its patch holding exactly the files solution.patch changes, or the bench stops.

    python bench/ray_throughput.py [--task py-median] [--trials 40] [--cpus-per-node 1] [--no-worker-probe] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # before Ray is imported: keep 127.0.0.1 (loopback only)


class BenchError(Exception):
    pass


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rss_mb(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def changed_paths(patch: str) -> set[str]:
    return {line.split(" b/", 1)[1] for line in patch.splitlines() if line.startswith("diff --git a/")}


def start_model(scratch: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`passhat fake-model` as a process of its own: its CPU is not the driver's."""
    url_file = scratch / "model.url"
    command = [sys.executable, "-m", "passhat.cli", "fake-model", "--tasks-dir", str(ROOT / "tasks"),
               "--url-file", str(url_file)]  # fmt: skip
    model = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not (url_file.is_file() and url_file.read_text().strip()):
        if model.poll() is not None or time.monotonic() > deadline:
            raise BenchError("passhat fake-model did not start")
        time.sleep(0.05)
    return model, url_file.read_text().strip()


class Peak:
    """The driver's peak RSS while a phase runs (sampled every 20 ms)."""

    def __init__(self) -> None:
        self.peak = rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss_mb())

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def trial(config: dict, task_id: str, prompt: str, index: int, evaluation: str) -> dict:
    from passhat.trial import call_api

    context = {"vars": {"task_id": task_id}, "repeatIndex": index, "evaluationId": evaluation}
    return call_api(prompt, {"config": config}, context)


def phase(config: dict, task, trials: int, evaluation: str, expected: set[str]) -> dict:
    """All `trials` submitted at once; wall, driver CPU, driver RSS (before, peak), the nodes that ran them."""
    import gc

    gc.collect()
    before_rss, before_cpu = rss_mb(), cpu_s()
    started = time.perf_counter()
    with Peak() as peak, ThreadPoolExecutor(trials) as pool:
        responses = list(pool.map(lambda i: trial(config, task.id, task.prompt, i, evaluation), range(trials)))
    wall, cpu = time.perf_counter() - started, cpu_s() - before_cpu
    for index, response in enumerate(responses):
        if "error" in response:
            raise BenchError(f"{evaluation} trial {index}: {response['error']}")
        got = changed_paths(Path(response["metadata"]["patch_path"]).read_text())
        if got != expected:
            meta = response["metadata"]
            why = {key: meta.get(key) for key in ("status", "subtype", "is_error", "num_turns", "duration_ms")}
            raise BenchError(f"{evaluation} trial {index} changed {sorted(got)}, not {sorted(expected)}: {why}, "
                             f"output {str(response.get('output'))[:300]!r}")  # fmt: skip
    nodes = sorted({r["metadata"]["ray_node_id"][:12] for r in responses})
    return {
        "trials": trials,
        "wall_s": wall,
        "trials_per_s": trials / wall,
        "driver_cpu_s": cpu,
        "driver_cpu_s_per_trial": cpu / trials,
        "driver_rss_before_mb": before_rss,
        "driver_rss_peak_mb": peak.peak,
        "driver_rss_per_in_flight_trial_mb": (peak.peak - before_rss) / trials,
        "nodes_used": nodes,
    }


PROBE = """
import json, os, resource, sys, time
started = time.perf_counter()
from passhat.trial import call_api
config, task_id, prompt = json.loads(sys.argv[1])
response = call_api(prompt, {"config": config}, {"vars": {"task_id": task_id}, "repeatIndex": 0, "evaluationId": "probe"})
own = resource.getrusage(resource.RUSAGE_SELF)
rollup = dict(line.split(":", 1) for line in open("/proc/self/smaps_rollup").read().splitlines()[1:])
kb = lambda name: int(rollup[name].split()[0])
print(json.dumps({"error": response.get("error"), "rss_mb": kb("Rss") / 1024, "pss_mb": kb("Pss") / 1024,
                  "uss_mb": (kb("Private_Clean") + kb("Private_Dirty")) / 1024, "cpu_s": own.ru_utime + own.ru_stime,
                  "wall_s": time.perf_counter() - started}))
"""


def worker_probe(config: dict, task) -> dict:
    """One Promptfoo-worker-like process: import the provider, connect to the cluster, run one trial."""
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps([config, task.id, task.prompt])],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        raise BenchError(f"worker probe failed (exit {done.returncode}): {done.stderr[-1500:]}")
    found = json.loads(lines[-1])
    if found["error"]:
        raise BenchError(f"worker probe trial: {found['error']}")
    return found


def measure(task_id: str, trials: int, cpus: int, probe: bool) -> dict:
    import ray
    from ray.cluster_utils import Cluster

    from passhat.tasks import load_task

    task = load_task(ROOT / "tasks" / task_id)
    expected = changed_paths(task.solution.read_text())
    scratch = Path(tempfile.mkdtemp(prefix="ph-rt-"))  # short: Ray's unix sockets live under it
    os.environ["PASSHAT_RAY_STATE_DIR"] = str(scratch / "nodes")  # the nodes inherit it
    model, url = start_model(scratch)
    Path(tempfile.gettempdir(), "ray").mkdir(exist_ok=True)  # Cluster notes its address there, whatever temp_dir
    common = {"node_ip_address": "127.0.0.1", "num_cpus": cpus, "temp_dir": str(scratch / "ray"),
              "object_store_memory": 100 * 2**20}  # fmt: skip
    cluster = Cluster(initialize_head=True, head_node_args={**common, "include_dashboard": False,
                      "gcs_server_port": free_port(), "dashboard_agent_listen_port": free_port()})  # fmt: skip
    try:
        os.environ["PASSHAT_FAKE_MODEL_URL"] = url
        config = {"basePath": str(ROOT), "state_dir": str(scratch / "driver"), "executor": "ray",
                  "ray_address": cluster.address, "timeout_s": 300, "timeout": 330000}  # fmt: skip
        figures: dict = {"task": task.id, "cpus_per_node": cpus, "machine_cpus": os.cpu_count()}
        print("warm-up: 1 node", file=sys.stderr, flush=True)
        phase(config, task, 1, "warm-1", expected)
        print(f"1 node: {trials} trials", file=sys.stderr, flush=True)
        figures["one_node"] = phase(config, task, trials, "one-node", expected)
        cluster.add_node(**common, dashboard_agent_listen_port=free_port())
        cluster.wait_for_nodes()
        print("warm-up: 2 nodes", file=sys.stderr, flush=True)
        phase(config, task, 2 * cpus, "warm-2", expected)  # SPREAD: the new node builds its base here
        print(f"2 nodes: {trials} trials", file=sys.stderr, flush=True)
        figures["two_nodes"] = phase(config, task, trials, "two-nodes", expected)
        if probe:
            print("worker probe", file=sys.stderr, flush=True)
            figures["promptfoo_worker"] = worker_probe(config, task)
    finally:
        ray.shutdown()
        cluster.shutdown()
        model.terminate()
        model.wait(timeout=10)
        shutil.rmtree(scratch, ignore_errors=True)
    one, two = figures["one_node"], figures["two_nodes"]
    figures["ratio_two_over_one"] = two["trials_per_s"] / one["trials_per_s"]
    figures["trials_per_hour_per_worker_cpu"] = two["trials_per_s"] * 3600 / (2 * cpus)
    return figures


def report(f: dict) -> str:
    lines = [
        f"task {f['task']}, {f['one_node']['trials']} trials per phase, all in flight at once; "
        f"{f['cpus_per_node']} CPU(s) per node, this machine {f['machine_cpus']} cores",
        f"{'phase':8} {'trials/s':>9} {'wall s':>7} {'driver CPU s/trial':>19} {'driver RSS MB':>14} "
        f"{'peak MB':>8} {'MB/in-flight trial':>19}  nodes",
    ]
    for name, key in (("1 node", "one_node"), ("2 nodes", "two_nodes")):
        p = f[key]
        lines.append(f"{name:8} {p['trials_per_s']:9.3f} {p['wall_s']:7.1f} {p['driver_cpu_s_per_trial']:19.3f} "
                     f"{p['driver_rss_before_mb']:14.0f} {p['driver_rss_peak_mb']:8.0f} "
                     f"{p['driver_rss_per_in_flight_trial_mb']:19.2f}  {', '.join(p['nodes_used'])}")  # fmt: skip
    lines += [f"ratio 2 nodes / 1 node: {f['ratio_two_over_one']:.2f}",
              f"throughput per worker CPU: {f['trials_per_hour_per_worker_cpu']:.0f} trials/hour (scripted model)"]  # fmt: skip
    two = f["two_nodes"]
    per_1000_cpu = two["driver_cpu_s_per_trial"] * 1000
    per_1000_mb = two["driver_rss_per_in_flight_trial_mb"] * 1000
    lines.append(f"driver per 1,000 trials (one process, thread per trial): {per_1000_cpu:.0f} CPU s in all; "
                 f"{per_1000_mb:.0f} MB of RSS for 1,000 in flight")  # fmt: skip
    if probe := f.get("promptfoo_worker"):
        lines.append(f"one Promptfoo-style worker process (import, connect, 1 trial): RSS {probe['rss_mb']:.0f} MB, "
                     f"PSS {probe['pss_mb']:.0f} MB, unique {probe['uss_mb']:.0f} MB, CPU {probe['cpu_s']:.1f} s "
                     f"(-j N holds N of them)")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="py-median", help="task id under tasks/ (default py-median)")
    parser.add_argument("--trials", type=int, default=40, help="trials per phase (default 40)")
    parser.add_argument("--cpus-per-node", type=int, default=1, help="Ray CPUs of each node (default 1)")
    parser.add_argument("--no-worker-probe", dest="probe", action="store_false", help="skip the worker probe")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.trials < 1 or args.cpus_per_node < 1:
        parser.error("--trials and --cpus-per-node: use at least 1")
    try:
        figures = measure(args.task, args.trials, args.cpus_per_node, args.probe)
    except BenchError as error:
        print(f"ray_throughput: error: {error}", file=sys.stderr)
        return 1
    print(json.dumps(figures, indent=2) if args.json else report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
