"""What runs on a cluster node: one trial (the caller's function) with the node's own state dir.

Each node keeps its own passhat state under `$PASSHAT_RAY_STATE_DIR` (default `<tmp>/passhat-ray`), one
folder per Ray node id: the task files shipped by the driver (unpacked once per task version), the base
cache (built once per task version on this node), the sandboxes. The trial's artifacts are packed for the
driver and removed here; nothing of the trial stays on the node but the cached base. The files the provider
config names for the CLI (`claude_md`, `settings`) come with each trial and are placed under `config/`, named
by their content; MCP servers' programs are not shipped (they must be at the same path on every node).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passhat.cluster._config import EXECUTOR_KEYS
from passhat.cluster._ship import pack, unpack
from passhat.common._errors import PasshatError

STATE_ENV = "PASSHAT_RAY_STATE_DIR"
TrialFunction = Callable[[str, dict, dict], dict]


def node_root(node_id: str) -> Path:
    """This node's passhat folder (several nodes may share a machine: one folder per node)."""
    base = Path(os.environ.get(STATE_ENV) or Path(tempfile.gettempdir()) / "passhat-ray")
    return base / node_id[:16]


def current_node() -> str:
    import ray

    return str(ray.get_runtime_context().get_node_id())


def task_here(root: Path, task_id: str, version: str, bundle: list[Any]) -> Path:
    """The task's folder on this node, unpacked from the driver's bundle the first time it is needed.
    `bundle` holds the ObjectRef unresolved, so a node that has the task already never fetches it."""
    task_dir = root / "tasks" / version / task_id  # the folder is named as the task: load_task checks it
    if not (task_dir / "task.yaml").is_file():
        import ray

        unpack(ray.get(bundle[0]), task_dir)
    return task_dir


def place_files(root: Path, files: dict[str, tuple[str, bytes]]) -> dict[str, str]:
    """The config's files (field → (file name, content)) on this node, once per content: field → path here."""
    placed = {}
    for key, (name, content) in files.items():
        path = root / "config" / hashlib.sha256(content).hexdigest()[:16] / name
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            staging = path.with_name(f".{name}.{os.getpid()}")
            staging.write_bytes(content)
            os.replace(staging, path)
        placed[key] = str(path)
    return placed


def run_here(
    trial: TrialFunction, prompt: str, raw: dict, context: dict, task: tuple[str, str, list[Any]],
    files: dict[str, tuple[str, bytes]] | None = None,
) -> dict:  # fmt: skip
    """The Ray task: `trial(prompt, config, context)` on this node, with this node's state and task folders
    and the config's `files` placed here. Returns the response, the node id and the trial's artifacts (a tar,
    or None when no trial folder was made)."""
    node = current_node()
    root = node_root(node)
    task_id, version, bundle = task
    state = (root / "state").resolve()  # as the trial resolves its state_dir: artifacts_root must match
    try:
        task_dir = task_here(root, task_id, version, bundle)
        here = {key: value for key, value in raw.items() if key not in EXECUTOR_KEYS}
        here |= {"state_dir": str(state), "tasks_dir": str(root / "tasks"), **place_files(root, files or {})}
        variables = {**(context.get("vars") or {}), "task_dir": str(task_dir)}
        response = trial(prompt, here, {**context, "vars": variables})
    except PasshatError as error:
        response = {"error": f"passhat: {error}"}
    except OSError as error:  # the node's own disk: the infrastructure's fault, never the agent's
        response = {"error": f"infrastructure error on Ray node {node}: {error}"}
    metadata = response.get("metadata") or {}
    artifacts = None
    trial_dir = Path(metadata["trial_dir"]) if metadata.get("trial_dir") else None
    if trial_dir is not None and trial_dir.is_dir():
        artifacts = pack(trial_dir)
        shutil.rmtree(trial_dir, ignore_errors=True)
    return {"response": response, "node_id": node, "artifacts": artifacts, "artifacts_root": str(state / "artifacts")}
