"""The driver's side of `executor: ray`: connect once per process, ship the task once per task version,
run the trial as a Ray task, turn a fault of the cluster into an infrastructure error, bring artifacts home.

Ray's task retries are off (`max_retries=0`): a trial retried by Ray after its node died would run twice for
one Promptfoo row — the first run may have spent tokens, and a flaky task gets a second draw that the
counts never show. The row becomes an infra error instead, and `promptfoo eval --retry-errors --repeat N`
reruns exactly those rows.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passhat.cluster._config import Executor
from passhat.cluster._node import TrialFunction, run_here
from passhat.cluster._ship import pack, unpack

if TYPE_CHECKING:
    from passhat.tasks._load import Task

LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray keeps 127.0.0.1 instead of the machine's address
REACH_TIMEOUT_S = 10.0
_connected: dict[str, str] = {}  # this process's cluster address
_bundles: dict[tuple[Path, str], Any] = {}  # (task dir, version) → ObjectRef of its files
_remote: list[Any] = []
_lock = threading.Lock()
SHIPPED_FILES = ("claude_md", "settings")  # config fields naming a file the trial reads: it goes with the trial


class ClusterError(Exception):
    """The cluster could not run the trial: the cause, for the infra error's reason."""


def connect(executor: Executor) -> Any:
    """`ray`, connected to the executor's cluster (once per process); ClusterError when it cannot be."""
    with _lock:  # one ray.init per process, also when threads submit trials
        return _connect(executor)


def _connect(executor: Executor) -> Any:
    if executor.loopback and "ray" not in sys.modules:
        # Ray rewrites 127.0.0.1 to the machine's outward address before it connects, and a cluster started
        # with --node-ip-address 127.0.0.1 listens on loopback only; its single-machine mode keeps loopback.
        os.environ.setdefault(LOOPBACK_ENV, "0")
    if executor.address != "auto":  # ray.init waits forever on an address where nothing listens
        host, _, port = executor.address.rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT_S).close()
        except OSError as error:
            msg = f"cannot reach the Ray cluster at ray_address {executor.address!r} ({error.strerror or error})"
            raise ClusterError(msg) from None
    import ray

    if ray.is_initialized():
        if _connected.get("address") not in (None, executor.address):
            msg = f"this process is connected to the Ray cluster at {_connected['address']}, not {executor.address}"
            raise ClusterError(msg)
        return ray
    try:
        ray.init(
            address=executor.address,
            namespace="passhat",
            log_to_driver=False,  # the nodes' output stays in their logs: a Promptfoo worker's stdout is its channel
            logging_level=logging.WARNING,
            configure_logging=True,
        )
    except (ConnectionError, RuntimeError, ValueError) as error:
        msg = f"cannot reach the Ray cluster at ray_address {executor.address!r} ({_first_line(error)})"
        raise ClusterError(msg) from None
    _connected["address"] = executor.address
    _bundles.clear()  # object refs of an earlier connection (ray.shutdown, then another cluster) are gone with it
    return ray


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def cause(error: BaseException, what: str = "trial") -> str:
    """What went wrong on the cluster running `what` (the trial, a grader's run), in the words an operator acts on."""
    import ray.exceptions as rex

    if isinstance(error, rex.OutOfMemoryError):
        return f"Ray killed the {what}'s worker for memory on its node (raise ray_memory_mb) — {_first_line(error)}"
    if isinstance(error, rex.NodeDiedError):
        return f"the Ray node running the {what} died — {_first_line(error)}"
    if isinstance(error, rex.WorkerCrashedError):
        return (
            f"the Ray worker running the {what} died (its node was lost or its process killed) — {_first_line(error)}"
        )
    if isinstance(error, rex.TaskUnschedulableError | rex.ActorUnschedulableError):
        return f"no Ray node can run the {what} (ray_num_cpus / ray_memory_mb too large?) — {_first_line(error)}"
    if isinstance(error, rex.ObjectLostError):  # it ended, but its result was in a node's store that is gone
        return f"the {what}'s result was lost with its Ray node before it reached the driver — {_first_line(error)}"
    if isinstance(error, rex.RayTaskError):
        return f"passhat failed on the Ray node — {_first_line(error.cause or error)}"
    return _first_line(error)


def _bundle(ray: Any, task: Task) -> Any:
    key = (task.dir, task.version)
    if key not in _bundles:
        _bundles[key] = ray.put(pack(task.dir))
    return _bundles[key]


def _submit(ray: Any, executor: Executor, trial: TrialFunction, prompt: str, raw: dict, context: dict, task: Task) -> Any:  # fmt: skip
    if not _remote:
        _remote.append(ray.remote(run_here))
    bundle = [_bundle(ray, task)]  # in a list: the node resolves it only if it lacks the task
    base = Path(raw.get("basePath") or os.getcwd())  # as parse_config resolves them (it checked they exist)
    files = {key: (Path(raw[key]).name, (base / raw[key]).resolve().read_bytes())
             for key in SHIPPED_FILES if isinstance(raw.get(key), str)}  # fmt: skip
    return _remote[0].options(**executor.task_options()).remote(trial, prompt, raw, context, (task.id, task.version, bundle), files)  # fmt: skip


def _home(result: dict, state_dir: Path, task: Task) -> dict:
    """The node's response with its artifacts unpacked under the driver's artifacts folder, paths rewritten."""
    response: dict = result["response"]
    metadata = response.setdefault("metadata", {})
    if result["artifacts"] is not None:
        relative = Path(metadata["trial_dir"]).relative_to(result["artifacts_root"])
        trial_dir = unpack(result["artifacts"], state_dir / "artifacts" / relative)
        metadata |= {
            "trial_dir": str(trial_dir),
            "patch_path": str(trial_dir / "patch.diff"),
            "transcript_path": str(trial_dir / "transcript.jsonl"),
            "task_dir": str(task.dir),  # graders on the driver rebuild the base here (same task version)
            "base_dir": str(state_dir / "cache" / "bases" / Path(metadata["base_dir"]).name),
        }
    metadata |= {"executor": "ray", "ray_node_id": result["node_id"]}
    if result["artifacts"] is not None and (trial_dir / "trial.json").is_file():
        (trial_dir / "trial.json").write_text(json.dumps(metadata, indent=2, default=str))
    return response


def run_on_ray(
    trial: TrialFunction, prompt: str, raw: dict, context: dict, executor: Executor, task: Task, state_dir: Path,
    where: dict,
) -> dict:  # fmt: skip
    """One trial as a Ray task: the provider's response, as `trial` would give it here, plus `executor` and
    `ray_node_id` in its metadata. `where` is the metadata of an infra error (task, repeat, status)."""
    failed = {**where, "executor": "ray"}
    label = f"infrastructure error in task {task.id} trial {where.get('repeat_index')}"
    if task.base_git is not None and "://" not in task.base_git:
        msg = (f"{label}: its base is the local git repository {task.base_git}, which cluster nodes cannot read; "
               "give base.git as a URL every node can clone, or use executor: local")  # fmt: skip
        return {"error": msg, "metadata": failed}
    try:
        ray = connect(executor)
        ref = _submit(ray, executor, trial, prompt, raw, context, task)
    except ClusterError as error:
        return {"error": f"{label}: ray: {error}", "metadata": failed}
    except OSError as error:  # a file the config names, gone since the config was checked
        return {"error": f"{label}: cannot read {error.filename} ({error.strerror})", "metadata": failed}
    try:
        result = ray.get(ref)
    except ray.exceptions.RayError as error:
        return {"error": f"{label}: ray: {cause(error)}", "metadata": failed}
    response = _home(result, state_dir, task)
    response["metadata"] = {**failed, **response["metadata"]}  # a node's early error still names task and repeat
    response["metadata"]["ray_address"] = executor.address  # a grader sent to the cluster goes to the same one
    return response
