"""Trials (and grader runs) as Ray tasks on a Ray cluster: `executor: ray` in the provider config.

The driver (a Promptfoo Python worker) ships the task's files through Ray's object store, runs the caller's
trial function on some node (its own state dir: base cache, sandboxes), and brings the artifacts back into
the driver's artifacts folder. A fault of the cluster (a dead node, a killed worker, no cluster) is an
infrastructure error with the cause, never the agent's failure; Ray's own retries stay off. A grader's run
(the tests grader's) goes to the cluster the same way (`run_for_task`: passhat.cluster._grading; where it runs: `grader_executor`, in _config).

May import: passhat.common._errors, tasks. Ray itself is imported only when a trial or a check needs it.
Exports: Executor, EXECUTOR_KEYS, parse_executor, run_on_ray, check_cluster, grader_executor, run_for_task,
without_executor.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from passhat.cluster._config import EXECUTOR_KEYS, Executor, grader_executor, parse_executor, without_executor

if TYPE_CHECKING:
    from passhat.cluster._driver import run_on_ray
    from passhat.cluster._grading import run_for_task
    from passhat.cluster._probe import check_cluster

# Imported when first used: every tests grader asks `grader_executor` where to run, and a local run should not
# pay for the Ray side (tarfile, logging, importlib.metadata: ~17 ms in each Promptfoo assertion process).
_ON_USE = {"run_on_ray": "_driver", "run_for_task": "_grading", "check_cluster": "_probe"}


def __getattr__(name: str) -> Any:
    if name not in _ON_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_ON_USE[name]}"), name)


__all__ = [
    "EXECUTOR_KEYS",
    "Executor",
    "check_cluster",
    "grader_executor",
    "parse_executor",
    "run_for_task",
    "run_on_ray",
    "without_executor",
]
