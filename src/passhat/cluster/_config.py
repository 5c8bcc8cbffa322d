"""The provider config's executor fields (`executor`, `ray_address`, `ray_num_cpus`, `ray_memory_mb`), checked."""

from __future__ import annotations

import difflib
import importlib.util
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from passhat.common._errors import PasshatError

ExecutorKind = Literal["local", "ray"]
EXECUTOR_KEYS = frozenset({"executor", "ray_address", "ray_num_cpus", "ray_memory_mb"})
_KINDS = ("local", "ray")
_ADDRESS = re.compile(r"(?P<host>[A-Za-z0-9.-]+|\[[0-9A-Fa-f:]+\]):(?P<port>[0-9]{1,5})")
_INSTALL = "pip install 'passhat[ray]' (the same on every node of the cluster)"


@dataclass(frozen=True)
class Executor:
    """Where a trial runs: here (`local`, the default) or as a Ray task on a cluster node (`ray`)."""

    kind: ExecutorKind = "local"
    address: str = "auto"  # Ray's bootstrap address: `auto` (the cluster `ray start` made here) or HOST:PORT
    num_cpus: float = 1.0  # Ray resources one trial holds while it runs
    memory_mb: int | None = None  # None: Ray reserves no memory for it (the trial's own limits still apply)

    @property
    def loopback(self) -> bool:
        return self.address.split(":")[0] in ("127.0.0.1", "localhost")

    def task_options(self) -> dict[str, object]:
        """Ray's options for one trial or grader run: its resources, spread over the nodes, and no retries
        (a run retried by Ray would be counted, or paid for, twice: passhat.cluster._driver says why)."""
        options: dict[str, object] = {"num_cpus": self.num_cpus, "max_retries": 0, "retry_exceptions": False,
                                      "scheduling_strategy": "SPREAD"}  # fmt: skip
        if self.memory_mb is not None:
            options["memory"] = self.memory_mb * 2**20
        return options


def parse_executor(raw: Mapping, names: Mapping[str, str] | None = None, subject: str = "trial") -> Executor:
    """The executor fields of a provider config (other keys are not looked at); one clear error otherwise.

    `names`: how an error names a field that did not come from the provider config (default `provider config
    field 'KEY'`), e.g. a tests grader's field or an environment variable; `subject`: what runs (a trial)."""

    def bad(key: str, value: object, fix: str) -> PasshatError:
        return PasshatError(f"{(names or {}).get(key) or f'provider config field {key!r}'}: {value!r}: {fix}")

    kind = raw.get("executor", "local")
    if kind not in _KINDS:
        near = difflib.get_close_matches(str(kind), _KINDS, n=1, cutoff=0.5)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise bad("executor", kind, f"{hint}use local ({subject}s on this machine, the default) or ray (each "
                  f"{subject} a Ray task on a cluster node)")  # fmt: skip
    if kind == "local":
        stray = sorted(key for key in EXECUTOR_KEYS - {"executor"} if key in raw)
        if stray:
            raise bad(stray[0], raw[stray[0]], "only read with `executor: ray`; set executor: ray or remove it")
        return Executor()
    if importlib.util.find_spec("ray") is None:
        raise bad("executor", kind, f"Ray is not installed in this Python; {_INSTALL}")
    address = raw.get("ray_address", "auto")
    match = _ADDRESS.fullmatch(address) if isinstance(address, str) else None
    if address != "auto" and (match is None or not 0 < int(match["port"]) < 65536):
        raise bad("ray_address", address, "use auto (the cluster `ray start` started on this machine) or the "
                  "head node's HOST:PORT (its GCS address, e.g. 10.0.0.5:6379)")  # fmt: skip
    cpus = raw.get("ray_num_cpus", 1)
    if isinstance(cpus, bool) or not isinstance(cpus, int | float) or not 0 < cpus <= 1024:
        raise bad("ray_num_cpus", cpus, f"use the CPUs one {subject} holds on its node, a number above 0 (e.g. 1 "
                  "or 0.5)")  # fmt: skip
    memory = raw.get("ray_memory_mb")
    if memory is not None and (isinstance(memory, bool) or not isinstance(memory, int) or memory < 1):
        raise bad("ray_memory_mb", memory, f"use the MB of memory Ray reserves per {subject}, a whole number (e.g. "
                  "4096)")  # fmt: skip
    return Executor("ray", address, float(cpus), memory)


GRADER_EXECUTOR_ENV = "PASSHAT_GRADER_EXECUTOR"
RAY_ADDRESS_ENV = "PASSHAT_RAY_ADDRESS"


def grader_executor(config: Mapping[str, Any], trial_address: str | None = None, grader: str = "tests") -> Executor:
    """Where a grader's run goes: the grader config's executor fields, else the environment's, else local.
    `trial_address`: the cluster the trial ran on (its metadata), used when nothing else names one."""
    raw = {key: config[key] for key in EXECUTOR_KEYS if key in config}
    names = {key: f"{grader} grader field {key!r}" for key in raw}
    if "executor" not in raw and (kind := os.environ.get(GRADER_EXECUTOR_ENV, "").strip()):
        raw["executor"], names["executor"] = kind, f"environment variable {GRADER_EXECUTOR_ENV}"
    if raw.get("executor") == "ray" and "ray_address" not in raw:
        if address := os.environ.get(RAY_ADDRESS_ENV, "").strip():
            raw["ray_address"], names["ray_address"] = address, f"environment variable {RAY_ADDRESS_ENV}"
        elif trial_address:
            raw["ray_address"], names["ray_address"] = trial_address, "the trial's metadata field 'ray_address'"
    return parse_executor(raw, names, subject=f"{grader} grader run")


def without_executor(config: Mapping[str, Any]) -> dict:
    """The grader config as the node runs it: here, locally."""
    return {key: value for key, value in config.items() if key not in EXECUTOR_KEYS}
