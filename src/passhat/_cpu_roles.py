"""Role markers for bench/where_cpu_goes.py, off unless `PASSHAT_CPU_ROLES=DIR` is set.

Kernel process accounting names a process by its pid, parent and command, and every one of passhat's Python
processes is `python`. With the variable set, each of passhat's Promptfoo entry points (the provider worker, an
assertion, an extension hook, the test generator) says what it is: it appends lines `<what> <CPU seconds>` to
`DIR/<pid>`, e.g. `role assertion`, `stage start 0.21` (its CPU so far: interpreter, Promptfoo's wrapper, the
entry file), `stage grader:tests 0.05`. It changes nothing else about the process (no subreaper: zombies it never reaped
would hold a trial's process group alive). Unset, an entry point pays one environment lookup.
"""

from __future__ import annotations

import os
import time

VAR = "PASSHAT_CPU_ROLES"
_marked: set[int] = set()


def enabled() -> bool:
    return bool(os.environ.get(VAR))


def note(line: str) -> None:
    """Append `line` to this process's marker file (nothing when the variable is unset)."""
    folder = os.environ.get(VAR)
    if not folder:
        return
    with open(os.path.join(folder, str(os.getpid())), "a", encoding="utf-8") as out:
        out.write(line + "\n")


def mark(role: str) -> None:
    """Say this process's role (once per process) with its CPU so far."""
    if not enabled() or os.getpid() in _marked:
        return
    _marked.add(os.getpid())
    note(f"role {role}")
    note(f"stage start {time.process_time():.4f}")


def stage(name: str, seconds: float) -> None:
    """Record `seconds` of this process's (or thread's) CPU spent on `name`."""
    if enabled():
        note(f"stage {name} {seconds:.4f}")
