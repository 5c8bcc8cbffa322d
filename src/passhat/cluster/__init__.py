"""Trials (and grader runs) as Ray tasks on a Ray cluster: `executor: ray` in the provider config.

The driver (a Promptfoo Python worker) ships the task's files through Ray's object store, runs the caller's
trial function on some node (its own state dir: base cache, sandboxes), and brings the artifacts back into
the driver's artifacts folder. A fault of the cluster (a dead node, a killed worker, no cluster) is an
infrastructure error with the cause, never the agent's failure; Ray's own retries stay off. A grader's run
(the tests grader's) goes to the cluster the same way (`run_for_task`, `grader_executor`: passhat.cluster._grading).

May import: passhat._errors, tasks. Ray itself is imported only when a trial or a check needs it.
Exports: Executor, EXECUTOR_KEYS, parse_executor, run_on_ray, check_cluster, grader_executor, run_for_task,
without_executor.
"""

from __future__ import annotations

from passhat.cluster._config import EXECUTOR_KEYS, Executor, parse_executor
from passhat.cluster._driver import run_on_ray
from passhat.cluster._grading import grader_executor, run_for_task, without_executor
from passhat.cluster._probe import check_cluster

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
