"""The tests grader on a real 2-node Ray cluster on loopback (ray.cluster_utils.Cluster, ports and temp dir of its
own), against the same grader run here:

- every shipped task, graded with its solution.patch and with the empty patch (the base), gets the same grade on
  Ray as here: pass, score, and the verdict line by line (FAIL_TO_PASS / PASS_TO_PASS counts and every failing
  listed test with its status); the command's output agrees too, once durations and paths are masked. Both nodes
  graded (each built its own bases and outcomes).
- a node killed while it grades: its gradings raise GradingInfraError naming the cause (an infra error, never a
  failed grade), the gradings on the other node complete, none is lost or run twice.
- through the real `promptfoo eval`: a grading the cluster cannot run makes the row an infra error in
  `passhat report` (Promptfoo records the raised error; n excludes it), not an agent failure.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stdout
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, TASKS

from passhat.common._errors import GradingInfraError

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
# before Ray is imported: Ray reads it once, and otherwise turns 127.0.0.1 into the machine's outward address
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray")

CLEAN_RUN = {"status": "ok", "is_error": False, "subtype": "success", "permission_denials": 0}
_DURATION = re.compile(r"\d+(\.\d+)?\s*(ms|s|sec|seconds)\b|duration_ms[^\n]*")
_PATH = re.compile(r"[^\s'\"]*/[^\s'\"]*")  # a word holding a slash (pytest may cut it: "f...st-of-root/x")
_ADDRESS = re.compile(r"\b(0x)?[0-9a-f]{8,}\b")  # objects' ids in a failing test's repr (cut: no 0x)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A head and a worker node, 2 CPUs each, on 127.0.0.1 with ports of their own (not 6379: other clusters may
    run on this machine) and a short temp dir (Ray's unix sockets live under it); the test process connects."""
    from ray.cluster_utils import Cluster

    nodes = tmp_path_factory.mktemp("nodes")
    before = os.environ.get("PASSHAT_RAY_STATE_DIR")
    os.environ["PASSHAT_RAY_STATE_DIR"] = str(nodes)  # the nodes inherit it: <nodes>/<node id[:16]>/...
    temp = tempfile.mkdtemp(prefix="ph-rg-")
    Path(tempfile.gettempdir(), "ray").mkdir(exist_ok=True)  # Cluster notes its address there, whatever temp_dir
    common = {"node_ip_address": "127.0.0.1", "num_cpus": 2, "temp_dir": temp, "object_store_memory": 100 * 2**20}
    head = {**common, "include_dashboard": False, "gcs_server_port": _free_port(),
            "dashboard_agent_listen_port": _free_port()}  # fmt: skip
    made = None
    try:
        made = Cluster(initialize_head=True, head_node_args=head)
        worker = made.add_node(**common, dashboard_agent_listen_port=_free_port())
        made.wait_for_nodes()
        yield made, worker, nodes
    finally:
        ray.shutdown()
        if made is not None:
            made.shutdown()
        _reap(nodes)
        shutil.rmtree(temp, ignore_errors=True)
        if before is None:
            os.environ.pop("PASSHAT_RAY_STATE_DIR", None)
        else:
            os.environ["PASSHAT_RAY_STATE_DIR"] = before


def _reap(nodes: Path) -> None:
    """Unmount the grading views a killed node left (their owner process is gone)."""
    from passhat.trial._sandbox import reap_sandboxes

    for scratch in nodes.glob("*/state/cache/scratch"):
        reap_sandboxes(scratch)


def _tests_graders(task) -> list[tuple[int, dict]]:
    return [(index, dict(g)) for index, g in enumerate(task.graders) if g["type"] == "tests"]


_TWINS = re.compile(r"Twins: \d+ of \d+")
_CANARY = re.compile(r"\b(?:test_)?[0-9a-f]{8,12}\b|\b\d{6,7}\b")


def _verdict(grade) -> tuple:
    """What must be identical: pass, score, the verdict lines (FAIL_TO_PASS / PASS_TO_PASS, each failing test)."""
    head, _, _ = grade.reason.partition("Output tail:\n")
    # a twin's wrong value is drawn fresh per run: one of a test that fails anyway may happen to pass (no verdict)
    return grade.passed, grade.score, _TWINS.sub("Twins: K of N", head)


def _output(grade) -> list[str]:
    """The command's output tail, durations, paths and object ids masked, less its note and first line: a tail cut to its last N
    characters (before passhat's canaries are left out of it, so it may be shorter now) starts mid-line, and
    the paths here and on the node differ in length, so the cut falls at a different place."""
    _, _, tail = grade.reason.partition("Output tail:\n")
    lines = _ADDRESS.sub("0x", _PATH.sub("PATH", _DURATION.sub("T", tail)))
    lines = _CANARY.sub("CANARY", lines).splitlines()  # the runner guard's canaries: fresh names and values per run
    if lines and lines[0].startswith("(") and lines[0].endswith(")"):  # the note: canaries left out, where it all is
        lines = lines[1:]
    return lines[1:]


def _diff(here, there) -> str:
    import difflib

    lines = [[*str(_verdict(g)[:2]).splitlines(), *_verdict(g)[2].splitlines(), *_output(g)] for g in (here, there)]
    return "\n".join(difflib.unified_diff(*lines, "here", "on Ray", lineterm="", n=1))


def test_grades_on_ray_equal_local_grades_for_every_shipped_task(cluster, tmp_path):
    from passhat.graders import TrialOutcome, grade
    from passhat.tasks import load_tasks
    from passhat.trial._sandbox import prepare_base

    made, _, nodes = cluster
    tasks = load_tasks(TASKS)
    impossible = {task.id for task in tasks if task.expect == "impossible"}
    cases = []
    for task in tasks:
        base = prepare_base(task, tmp_path / "state" / "cache")  # the driver's base, as a trial's metadata names it
        for label, patch in (("solution", task.solution.read_bytes()), ("base", b"")):
            outcome = TrialOutcome(task.dir, base.path, patch, CLEAN_RUN)
            cases += [(task.id, label, index, grader, outcome) for index, grader in _tests_graders(task)]
    assert len({case[0] for case in cases}) == len(tasks) >= 10  # every shipped task has a tests grader

    def on_ray(case: tuple) -> object:
        *_, grader, outcome = case
        return grade(outcome, {**grader, "executor": "ray", "ray_address": made.address})

    started = time.monotonic()
    with ThreadPoolExecutor(2) as pool:  # SPREAD: both nodes grade while this process grades the same here
        remote = pool.map(on_ray, cases)
        local = [grade(outcome, grader) for *_, grader, outcome in cases]
        remote = list(remote)
    print(f"{len(cases)} gradings, here and on Ray: {time.monotonic() - started:.1f} s", file=sys.stderr)

    for (task_id, label, index, *_), here, there in zip(cases, local, remote, strict=True):
        assert _verdict(there) == _verdict(here), f"{task_id} {label} graders[{index}]:\n" + _diff(here, there)
        shared = min(len(_output(here)), len(_output(there)))  # the whole output, or the lines both tails hold
        assert _output(there)[-shared:] == _output(here)[-shared:], _diff(here, there)  # ([-0:]: all of both)
        twin = task_id in impossible  # an impossible twin's reference fails it: check-task requires so
        assert here.passed == (label == "solution" and not twin), f"{task_id} {label}: {here.reason[:600]}"
        if "FAIL_TO_PASS" in here.reason:
            failing = re.findall(r"^  (FAIL_TO_PASS|PASS_TO_PASS) ", here.reason, re.M)
            assert len(failing) <= 20, task_id  # every failing listed test is named: the comparison is per test
    graded = {log.relative_to(nodes).parts[0]: log.read_text().splitlines()
              for log in nodes.glob("*/state/cache/outcomes/builds.log")}  # fmt: skip
    assert len(graded) == 2, graded  # both nodes built outcomes (base + patch) and graded them


def _sleeping_grades(address: str, count: int, tmp_path: Path) -> tuple[dict[int, object], list[threading.Thread]]:
    from passhat.graders import TrialOutcome, grade
    from passhat.tasks import load_task
    from passhat.trial._sandbox import prepare_base

    task = load_task(TASKS / "py-median")
    base = prepare_base(task, tmp_path / "state" / "cache")
    grader = {"type": "tests", "command": "sleep 12", "executor": "ray", "ray_address": address}
    results: dict[int, object] = {}

    def run(index: int) -> None:
        patch = f"diff --git a/n{index} b/n{index}\nnew file mode 100644\n--- /dev/null\n+++ b/n{index}\n@@ -0,0 +1 @@\n+{index}\n"
        try:
            results[index] = grade(TrialOutcome(task.dir, base.path, patch.encode(), CLEAN_RUN), grader)
        except GradingInfraError as error:
            results[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    return results, threads


def test_a_node_lost_while_grading_is_an_infra_error_and_the_rest_complete(cluster, tmp_path):
    """Runs last: it takes the worker node away."""
    made, worker, nodes = cluster
    results, threads = _sleeping_grades(made.address, 4, tmp_path)

    def running() -> dict[str, int]:
        return {
            root.name: len(list((root / "state" / "cache" / "scratch").glob("grade-*"))) for root in nodes.iterdir()
        }

    deadline = time.monotonic() + 60
    while sum(running().values()) < 4 and time.monotonic() < deadline:  # all four commands started (2 per node)
        time.sleep(0.2)
    at_kill = running()
    assert sum(at_kill.values()) == 4, at_kill
    on_worker = at_kill.get(worker.node_id[:16], 0)
    started = time.monotonic()
    made.remove_node(worker, allow_graceful=False)
    for thread in threads:
        thread.join(timeout=120)
    assert time.monotonic() - started < 120  # never a hang
    lost = {i: r for i, r in results.items() if isinstance(r, GradingInfraError)}
    done = {i: r for i, r in results.items() if not isinstance(r, GradingInfraError)}
    assert sorted([*lost, *done]) == [0, 1, 2, 3]  # none lost, none doubled
    assert len(lost) == on_worker >= 1, (at_kill, results)
    for error in lost.values():
        assert re.search(r"^infrastructure error: the tests grader of task py-median on Ray: ray: the Ray "
                         r"(node|worker) running the tests grader died", str(error)), error  # fmt: skip
    assert all(grade.passed for grade in done.values()), done  # `sleep 12` exits 0 on the head


def test_promptfoo_counts_a_grading_the_cluster_lost_as_an_infra_error(tmp_path, fake_model):
    """The trial runs here; its tests grader is sent to a cluster that is not there."""
    from passhat.cli import main

    dead = _free_port()
    provider = {"id": f"file://{ROOT}/providers/claude_code.py", "label": "oracle",
                "config": {"state_dir": str(tmp_path / ".passhat"), "timeout_s": 120}}  # fmt: skip
    suite = {"prompts": ["{{prompt}}"], "providers": [provider],
             "tests": f"file://{ROOT}/tasks/promptfoo_tests.py:generate_tests"}  # fmt: skip
    (tmp_path / "promptfooconfig.yaml").write_text(yaml.safe_dump(suite))
    env = {**os.environ, "PASSHAT_FAKE_MODEL_URL": fake_model.url, "PROMPTFOO_PYTHON": sys.executable,
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo-home"), "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1", "PASSHAT_TASKS": "py-median", "PASSHAT_GRADER_EXECUTOR": "ray",
           "PASSHAT_RAY_ADDRESS": f"127.0.0.1:{dead}"}  # fmt: skip
    promptfoo = shutil.which("promptfoo")
    assert promptfoo is not None
    args = [promptfoo, "eval", "--repeat", "1", "--no-cache", "--no-progress-bar", "-o", "results.json"]
    done = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 100), done.stdout[-3000:] + done.stderr[-3000:]
    [row] = json.loads((tmp_path / "results.json").read_text())["results"]["results"]
    assert row["response"]["metadata"]["status"] == "ok"  # the trial itself ran
    assert "GradingInfraError: infrastructure error: the tests grader of task py-median on Ray: ray: cannot reach " \
           f"the Ray cluster at ray_address '127.0.0.1:{dead}'" in row["error"], row["error"]  # fmt: skip
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["report", str(tmp_path / "results.json"), "--format", "json", "--k", "1"]) == 1  # measured nothing
    [task] = json.loads(out.getvalue())["tasks"]
    assert (task["n"], task["passes"], task["errors"]) == (0, 0, 1), task  # outside n: unscored, not failed
