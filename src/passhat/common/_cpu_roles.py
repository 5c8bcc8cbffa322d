"""Role markers for bench/where_cpu_goes.py, off unless `PASSHAT_CPU_ROLES=DIR` is set.

Kernel process accounting names a process by its pid, parent and command, and every one of passhat's Python
processes is `python`. With the variable set, each of passhat's Promptfoo entry points (the provider worker, an
assertion, an extension hook, the test generator) says what it is: it appends lines `<what> <CPU seconds>` to
`DIR/<pid>`, e.g. `role assertion`, `stage start 0.21` (its CPU so far: interpreter, Promptfoo's wrapper, the
entry file), `stage grader:tests 0.05`. It also makes the process a child subreaper (Linux prctl): bubblewrap's inner half,
whose outer half dies first when a trial's process group is killed, then passes to it rather than to init, and the
bench finds it in its tree. A thread reaps those orphans (zombies that never exec'd: no subprocess of ours waits
for one), or they would keep the trial's process group alive. Unset, an entry point pays one environment lookup.
"""

from __future__ import annotations

import os
import threading
import time

VAR = "PASSHAT_CPU_ROLES"
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
_PF_FORKNOEXEC = 0x40  # /proc/PID/stat flags: forked and never exec'd
REAP_S = 0.25  # a trial's end may wait twice this for its group's last zombie (its CPU: a /proc scan per period)
REAP_NOTE_S = 2.0
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
    _adopt_orphans()


def _adopt_orphans() -> None:
    import ctypes  # only when measuring

    try:
        if ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
            threading.Thread(target=_reap_orphans, name="passhat-cpu-roles-reaper", daemon=True).start()
    except (OSError, AttributeError):  # not Linux: the bench places fewer processes, nothing else changes
        pass


def orphans(me: int) -> list[int]:
    """This process's children that are zombies and never exec'd (inherited orphans: bubblewrap's inner half)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{me}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{me}/task/{task}/children", encoding="ascii") as listing:
                children = [int(pid) for pid in listing.read().split()]
        except (OSError, ValueError):
            continue
        for pid in children:
            try:
                with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] == "Z" and int(fields[6]) & _PF_FORKNOEXEC:  # state, flags (fields 3 and 9 of stat)
                found.append(pid)
    return found


def _reap_orphans() -> None:
    """Every REAP_S, the orphans seen in the scan before too: a zombie this process forked itself is waited for by
    the code that forked it as soon as it exits, and reaping it first would make that wait fail (ECHILD); one still
    there a period later is an orphan nobody waits for. What this thread spends is the measurement's own cost
    (`stage reaper`, left out of the account)."""
    me, spent, noted, before = os.getpid(), 0.0, time.monotonic(), set[int]()
    while True:
        started = time.thread_time()
        now = set(orphans(me))
        for pid in now & before:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        before = now
        spent += time.thread_time() - started
        if time.monotonic() - noted > REAP_NOTE_S:
            stage("reaper", spent)
            spent, noted = 0.0, time.monotonic()
        time.sleep(REAP_S)


def stage(name: str, seconds: float) -> None:
    """Record `seconds` of this process's (or thread's) CPU spent on `name`."""
    if enabled():
        note(f"stage {name} {seconds:.4f}")
