"""run_on_ray on a real 2-node Ray cluster on loopback (ray.cluster_utils.Cluster), with a stand-in trial
function: trials spread over both nodes, artifacts come home and leave the node, a killed node's trial
is an infra error with the cause (Ray does not run it again), the other trials complete."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import TASKS

pytestmark = pytest.mark.e2e
# before Ray is imported: Ray reads it once, and otherwise turns 127.0.0.1 into the machine's outward address
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from ray.cluster_utils import Cluster

    os.environ["PASSHAT_RAY_STATE_DIR"] = str(tmp_path_factory.mktemp("nodes"))
    local = {"node_ip_address": "127.0.0.1", "num_cpus": 2}
    made = Cluster(initialize_head=True, head_node_args={**local, "include_dashboard": False})
    worker = made.add_node(**local)
    made.wait_for_nodes()
    yield made, worker
    ray.shutdown()
    made.shutdown()


def _trial_writing_artifacts(seconds: float):
    def trial(prompt: str, raw: dict, context: dict) -> dict:  # pickled by value: the nodes lack tests/
        import os
        import time
        from pathlib import Path

        time.sleep(seconds)
        trial_dir = Path(raw["state_dir"]) / "artifacts" / "ev" / "py-median" / f"r{context['repeatIndex']:03d}"
        trial_dir.mkdir(parents=True)
        (trial_dir / "patch.diff").write_text(f"patch {context['repeatIndex']}\n")
        (trial_dir / "trial.json").write_text("{}")
        base = Path(raw["state_dir"]) / "cache" / "bases" / "py-median-v"
        task_dir = Path(context["vars"]["task_dir"])
        metadata = {"trial_dir": str(trial_dir), "base_dir": str(base), "task_dir": str(task_dir), "pid": os.getpid(),
                    "task_yaml": (task_dir / "task.yaml").is_file(), "repeat_index": context["repeatIndex"]}  # fmt: skip
        return {"output": prompt, "metadata": metadata}

    return trial


def _run(cluster_address: str, state: Path, trial, repeat: int, raw: dict | None = None) -> dict:
    from passhat.cluster import Executor, run_on_ray
    from passhat.tasks import load_task

    executor = Executor("ray", cluster_address, 1.0, None)
    where = {"task_id": "py-median", "repeat_index": repeat, "status": "infra_error"}
    context = {"vars": {"task_id": "py-median"}, "repeatIndex": repeat}
    raw = {"executor": "ray", **(raw or {})}
    return run_on_ray(trial, "hi", raw, context, executor, load_task(TASKS / "py-median"), state, where)


def _trial_reading_its_files():
    def trial(prompt: str, raw: dict, context: dict) -> dict:  # pickled by value: the nodes lack tests/
        from pathlib import Path

        return {"output": Path(raw["claude_md"]).read_text(), "metadata": {"claude_md": raw["claude_md"]}}

    return trial


def test_the_files_the_config_names_go_with_the_trial(cluster, tmp_path):
    made, _ = cluster
    (tmp_path / "contexts").mkdir()
    (tmp_path / "contexts" / "terse.md").write_text("Be terse.\n")
    raw = {"basePath": str(tmp_path), "claude_md": "contexts/terse.md"}  # relative to the config, on the driver
    response = _run(made.address, tmp_path / ".passhat", _trial_reading_its_files(), 0, raw)
    assert response.get("output") == "Be terse.\n", response
    node_copy = Path(response["metadata"]["claude_md"])  # the node's own copy, named by content
    assert node_copy.is_relative_to(os.environ["PASSHAT_RAY_STATE_DIR"]) and node_copy.name == "terse.md"


def test_trials_spread_and_artifacts_come_home(cluster, tmp_path):
    made, _ = cluster
    state = tmp_path / ".passhat"
    with ThreadPoolExecutor(4) as pool:
        responses = list(pool.map(lambda r: _run(made.address, state, _trial_writing_artifacts(1.0), r), range(4)))
    nodes = {response["metadata"]["ray_node_id"] for response in responses}
    assert len(nodes) == 2  # SPREAD: both nodes ran trials
    for repeat, response in enumerate(responses):
        meta = response["metadata"]
        assert meta["executor"] == "ray" and meta["task_yaml"]  # the task's files reached the node
        assert meta["trial_dir"] == str(state / "artifacts" / "ev" / "py-median" / f"r{repeat:03d}")
        assert Path(meta["patch_path"]).read_text() == f"patch {repeat}\n"  # its own artifacts, at home
        assert meta["base_dir"] == str(state / "cache" / "bases" / "py-median-v")
        assert meta["task_dir"] == str(TASKS / "py-median")
    for node in nodes:  # shipped once per node and task version; the trial folders left the node
        root = Path(os.environ["PASSHAT_RAY_STATE_DIR"]) / node[:16]
        assert [p.name for p in (root / "tasks").iterdir()] != []
        assert not list((root / "state" / "artifacts" / "ev" / "py-median").iterdir())


def test_a_killed_node_is_an_infra_error_and_the_rest_complete(cluster, tmp_path):
    made, worker = cluster
    state = tmp_path / ".passhat"
    results: dict[int, dict] = {}

    def run(repeat: int) -> None:
        results[repeat] = _run(made.address, state, _trial_writing_artifacts(8.0), repeat)

    threads = [threading.Thread(target=run, args=(r,)) for r in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(4)  # all four in flight (2 per node)
    started = time.monotonic()
    made.remove_node(worker, allow_graceful=False)
    for thread in threads:
        thread.join(timeout=120)
    assert time.monotonic() - started < 120  # never a hang
    errors = {r: resp["error"] for r, resp in results.items() if "error" in resp}
    done = {r for r, resp in results.items() if "output" in resp}
    assert len(errors) == 2 and len(done) == 2, results  # the worker's two lost, the head's two complete
    for error in errors.values():
        assert "infrastructure error in task py-median" in error and "ray: the Ray" in error, error
    assert sorted([*errors, *done]) == [0, 1, 2, 3]  # none lost, none doubled
