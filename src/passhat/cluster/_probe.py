"""`passhat validate` asks the cluster: every alive node runs a small probe task before the first trial.

What must be the same on every node: passhat (the trial code that runs there) and Python's minor version
(Ray pickles the trial's function and arguments), and what a trial needs there: git, the Claude Code CLI
bundled with claude-agent-sdk, bubblewrap unless `isolation: none`, and the programs the tasks' `setup`
commands start (a base is built on each node). A node that lacks one is named with the fix (exit 2).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import shutil
from pathlib import Path

from passhat.cluster._config import Executor
from passhat.cluster._driver import ClusterError, connect
from passhat.cluster._node import current_node, node_root
from passhat.common._errors import PasshatError

PROBE_TIMEOUT_S = 120.0


def _bundled_cli() -> str | None:
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or spec.origin is None:
        return None
    cli = Path(spec.origin).parent / "_bundled" / "claude"
    return str(cli) if os.access(cli, os.X_OK) else None


def facts(programs: tuple[str, ...]) -> dict:
    """What this node offers a trial (runs on each node as a Ray task)."""
    root = node_root(current_node())
    try:
        root.mkdir(parents=True, exist_ok=True)
        writable = os.access(root, os.W_OK)
    except OSError:
        writable = False
    return {
        "passhat": importlib.metadata.version("passhat"),
        "python": ".".join(platform.python_version_tuple()[:2]),
        "git": shutil.which("git"),
        "bwrap": shutil.which("bwrap"),
        "cli": _bundled_cli(),
        "missing": [program for program in programs if shutil.which(program) is None],
        "state": str(root),
        "writable": writable,
    }


def _problems(found: dict, need_bwrap: bool) -> list[str]:
    here = {"passhat": importlib.metadata.version("passhat"), "python": ".".join(platform.python_version_tuple()[:2])}
    problems = [f"{key} {found[key]} (the driver has {here[key]}): install the same on every node"
                for key in ("passhat", "python") if found[key] != here[key]]  # fmt: skip
    if not found["git"]:
        problems.append("no git on PATH: install git (patches are collected with it)")
    if not found["cli"]:
        problems.append("claude-agent-sdk's bundled Claude Code CLI is missing: pip install 'passhat[ray]' there")
    if need_bwrap and not found["bwrap"]:
        problems.append("no bwrap on PATH: install bubblewrap (or set isolation: none to run trials unconfined)")
    if found["missing"]:
        problems.append(f"the tasks' setup needs {', '.join(found['missing'])}, not on PATH: install it there")
    if not found["writable"]:
        problems.append(f"cannot write {found['state']}: set PASSHAT_RAY_STATE_DIR on the node to a writable folder")
    return problems


def check_cluster(
    executor: Executor,
    need_bwrap: bool,
    programs: tuple[str, ...] = (),
    field: str = "provider config field 'ray_address'",
) -> list[str]:
    """One line per fact; PasshatError naming the node and the fix at the first node that cannot run trials.
    `field`: where the address came from, for the error when nothing answers there."""
    try:
        ray = connect(executor)
    except ClusterError as error:
        msg = (f"{field}: {executor.address!r}: {error}; start the cluster "
               "(`ray start --head`) or give the head node's HOST:PORT")  # fmt: skip
        raise PasshatError(msg) from None
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [node for node in ray.nodes() if node.get("Alive")]
    cpus = sum(node.get("Resources", {}).get("CPU", 0) for node in nodes)
    probe = ray.remote(facts)
    refs = [
        probe.options(
            num_cpus=0, max_retries=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
        ).remote(programs)
        for node in nodes
    ]
    try:
        found = ray.get(refs, timeout=PROBE_TIMEOUT_S)
    except ray.exceptions.RayError as error:
        raise PasshatError(f"Ray cluster at {executor.address}: a node did not answer the probe ({error}); "
                           "check `ray status` and the node's logs") from None  # fmt: skip
    lines = [f"Ray cluster at {executor.address}: {len(nodes)} node(s) alive, {cpus:g} CPUs: "
             f"{int(cpus // executor.num_cpus)} trial(s) at once at ray_num_cpus {executor.num_cpus:g} "
             "(run promptfoo eval with -j at least that)"]  # fmt: skip
    for node, facts_found in zip(nodes, found, strict=True):
        where = f"Ray node {node['NodeID'][:12]} ({node.get('NodeManagerAddress')})"
        if problems := _problems(facts_found, need_bwrap):
            raise PasshatError(f"{where}: {'; '.join(problems)}")
        lines.append(f"{where}: passhat {facts_found['passhat']}, Python {facts_found['python']}, git, Claude Code "
                     f"CLI{', bwrap' if facts_found['bwrap'] else ''}; state in {facts_found['state']}")  # fmt: skip
    return lines
