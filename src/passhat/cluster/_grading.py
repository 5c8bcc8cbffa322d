"""Grading on the cluster: a grader's run (the `tests` grader: base + patch, the task's test command) as a Ray task.

Asked for with `executor: ray` in the grader's config (task.yaml) or PASSHAT_GRADER_EXECUTOR=ray; the cluster is
the grader's `ray_address`, else PASSHAT_RAY_ADDRESS, else the one the trial ran on (its metadata's
`ray_address`), else `auto`. The node gets the task's files through the object store (unpacked once per node and
task version) and the patch as an argument, builds the base in its own cache, and runs the same grader code as
here: the grade is the one local grading gives. An error passhat raises there (a patch that does not apply, a
task whose `auto` test lists cannot be computed) is raised here again, as a local run raises it.

A fault of the cluster (none at the address, a dead node or worker, a node that cannot build the base) raises
GradingInfraError with the cause: the grading is lost, not failed. Ray's retries stay off, as for trials, so a
grading fault is always seen; `passhat regrade` grades such rows again without rerunning the agent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from passhat.cluster._config import Executor
from passhat.cluster._driver import ClusterError, _bundle, cause, connect
from passhat.cluster._node import current_node, node_root, task_here
from passhat.common._errors import GradingInfraError, PasshatError, SandboxError

if TYPE_CHECKING:
    from passhat.tasks._load import Task

TaskFunction = Callable[..., Any]  # (task_dir, state_dir, *args) on the node
_remote: list[Any] = []


def call_here(function: TaskFunction, task: tuple[str, str, list[Any]], args: tuple) -> Any:
    """The Ray task: `function(task_dir, state_dir, *args)` with this node's task folder and state dir."""
    root = node_root(current_node())
    task_id, version, bundle = task
    try:
        task_dir = task_here(root, task_id, version, bundle)
    except OSError as error:  # the node's own disk
        msg = f"the task's files cannot be unpacked on Ray node {current_node()[:12]}: {error}"
        raise GradingInfraError(msg) from None
    return function(task_dir, root / "state", *args)


def run_for_task(function: TaskFunction, task: Task, args: tuple, executor: Executor, grader: str = "tests") -> Any:
    """`function(task_dir, state_dir, *args)` as a Ray task on some node of `executor`'s cluster: its result, or
    the passhat error it raised there. GradingInfraError naming the `grader` and the cause when the cluster could
    not run it."""
    what = f"{grader} grader"
    label = f"infrastructure error: the {what} of task {task.id} on Ray"
    if task.base_git is not None and "://" not in task.base_git:
        msg = (f"{label}: the task's base is the local git repository {task.base_git}, which cluster nodes cannot "
               "read; give base.git as a URL every node can clone, or grade with executor: local")  # fmt: skip
        raise GradingInfraError(msg)
    try:
        ray = connect(executor)
        if not _remote:
            _remote.append(ray.remote(call_here))
        bundle = [_bundle(ray, task)]  # in a list: the node resolves it only if it lacks the task
        ref = _remote[0].options(**executor.task_options()).remote(function, (task.id, task.version, bundle), args)
    except ClusterError as error:
        raise GradingInfraError(f"{label}: ray: {error}") from None
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as error:
        found = error.cause
        if isinstance(found, PasshatError | SandboxError):  # passhat's own verdict on the input, as here
            raise found from None  # (error.cause: the exception as raised there)
        raise GradingInfraError(f"{label}: ray: {cause(error, what)}") from None
    except ray.exceptions.RayError as error:
        raise GradingInfraError(f"{label}: ray: {cause(error, what)}") from None
