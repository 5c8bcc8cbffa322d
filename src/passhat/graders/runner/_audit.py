"""The capability rule (runner-capability): what the audit hook saw the tree's non-test code do is judged against
what the unpatched base's own run does from the same place — (event, file, function), learned once per task
version and cached — and against the events the task allows (`allow_capabilities` of the tests grader). Libraries
and the project's own code that use frames honestly do so in the base already; what a patch brings in does not.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from passhat.common._lock import locked
from passhat.graders.runner._verdict import Capability, Integrity

RULE = "runner-capability"
Place = tuple[str, str, str]  # (event, file, function)
_EVENTS = 2  # the version of what the audit hook records (2: the opening of a test file's source)


def capabilities_file(cache_root: Path, base_name: str, config: Mapping[str, Any]) -> Path:
    """`<cache>/capabilities/<base folder (task version)>-<hash of the run settings>.json`."""
    settings = {key: config.get(key) for key in ("command", "protected", "env", "junit")}
    settings["events"] = _EVENTS  # what the hook records: a place learned before it recorded more is learned again
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return cache_root / "capabilities" / f"{base_name}-{digest}.json"


def _read(file: Path) -> frozenset[Place] | None:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        return frozenset((str(e), str(f), str(n)) for e, f, n in data["places"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def learned_capabilities(file: Path, run_base: Callable[[], Integrity | None]) -> frozenset[Place]:
    """The places of the base's own run (run once, under a file lock; cached in `file`)."""
    if (found := _read(file)) is not None:
        return found
    with locked(file):
        if (found := _read(file)) is not None:
            return found
        base = run_base()
        places = frozenset(_place(c) for c in (base.capabilities if base else ()))
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"places": sorted(places)}) + "\n")
        os.replace(tmp, file)
    return places


def _place(capability: Capability) -> Place:
    event, rel, _line, function = capability
    return (event, rel, function)


def judge_capabilities(integrity: Integrity, allowed: frozenset[Place], allow_events: Iterable[str]) -> Integrity:
    """`integrity` with a runner-capability finding per capability neither the base's run nor the task allows."""
    allow = set(allow_events)
    new = [c for c in integrity.capabilities if _place(c) not in allowed and not {c[0], c[0].split(":")[0]} & allow]
    if not new:
        return integrity
    found = tuple(
        (f"{RULE} at {rel}:{line}", f"{event} in {function}(): the base's own run does not do this from there")
        for event, rel, line, function in new[:10]
    )
    return replace(integrity, gamed=integrity.gamed + found, problem=None)
