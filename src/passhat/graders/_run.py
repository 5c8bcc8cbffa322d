"""Running a task's test command on the agent's code: confined where bwrap works, bounded, and with an
environment of its own.

The command runs code the agent wrote, so it gets nothing of passhat's environment (API keys, cloud
credentials, tokens): only PATH (passhat's venv first), HOME (a private folder beside the work dir),
LANG, CI=true and PYTHONDONTWRITEBYTECODE=1, plus what the grader declares in task.yaml —
`env: {NAME: value}`, and `pass_env: [NAME, ...]` for host variables passed through by name.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from passhat.common._errors import PasshatError
from passhat.trial._isolation import bwrap_arguments, confinement, sandbox_command, tree_uid
from passhat.trial._limits import Limits, chown_tree, chown_written

GRADER_ISOLATION_ENV = "PASSHAT_GRADER_ISOLATION"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _bad(kind: object, field: str, value: object, fix: str) -> PasshatError:
    return PasshatError(f"{kind} grader field {field!r}: {value!r}: {fix}")


def grader_env(config: Mapping[str, object], home: Path) -> dict[str, str]:
    """The command's whole environment: the fixed few, then pass_env's host values, then env (of `config`, an
    item of task.yaml's graders: its `type` names it in a message)."""
    kind = config.get("type", "tests")
    declared = config.get("env", {})
    passed = config.get("pass_env", [])
    if not isinstance(declared, Mapping) or not all(
        isinstance(k, str) and _NAME.match(k) and isinstance(v, str) for k, v in declared.items()
    ):
        raise _bad(kind, "env", declared, 'give a mapping of variable names to strings, e.g. env: {TZ: "UTC"}')
    if not isinstance(passed, list) or not all(isinstance(n, str) and _NAME.match(n) for n in passed):
        raise _bad(kind, "pass_env", passed, "give a list of host variable names, e.g. pass_env: [JAVA_HOME]")
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "LANG": os.environ.get("LANG") or "C.UTF-8",
        "CI": "true",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update({name: os.environ[name] for name in passed if name in os.environ})
    env.update(declared)
    return env


def run_command(
    command: str,
    cwd: Path,
    timeout_s: float,
    env: Mapping[str, str],
    hidden: tuple[Path, ...] = (),
    writable: Iterable[Path] = (),
    limits: Limits | None = None,
    *,
    pass_fds: tuple[int, ...] = (),
    exposed: tuple[Path, ...] = (),
) -> tuple[int | None, str]:
    """Run in its own process group, killed whole when it ends or times out. None = timed out.

    The command runs the agent's code, so where bubblewrap works it runs confined like the trial:
    read-only system, only `cwd` and `writable` (its HOME, the report folder) writable, host HOME and
    `hidden` paths out of sight, under the trial's uid (the owner of `cwd`: its base's uid), seccomp filter
    and `limits`, with no network.
    `pass_fds` are passed on to the command (passhat's runner guard: its setup pipe and result file, opened
    outside the sandbox's view); `exposed` are folders bound read-only inside it (the guard's plugin).
    PASSHAT_GRADER_ISOLATION=none opts out.
    """
    limits = limits or Limits()
    argv = ["/bin/sh", "-c", command]
    found = confinement("none" if os.environ.get(GRADER_ISOLATION_ENV) == "none" else "auto")
    with tempfile.TemporaryFile() as args_file:
        if found.bwrap:  # as the trial: own uid, no network at all, seccomp, limits (passhat.trial._isolation)
            uid = tree_uid(cwd)  # the tree is its base's uid's already: only what passhat wrote there is given
            extra = list(writable)
            if uid is not None:
                chown_written(cwd, uid)  # e.g. restored test files: an overlay's upper dir, never the whole tree
                chown_tree(*extra, uid=uid)
            writable = [cwd, *extra]
            view = bwrap_arguments(
                cwd, writable, hidden, env["PATH"], Path(sys.executable), exposed=exposed, tmpfs_mb=limits.tmpfs_mb
            )
            args_file.write(b"".join(arg.encode() + b"\0" for arg in view))
            args_file.seek(0)
            prefix = sandbox_command(found.bwrap, args_file.fileno(), uid, limits.file_mb, limits.processes, None)
            argv = [*prefix, *argv]
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(*pass_fds, *((args_file.fileno(),) if found.bwrap else ())),
        )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        code = None
    except BaseException:  # the caller stopped (a team grader at its timeout): the command goes with it
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    try:  # what it left behind cannot touch the report once the command has ended
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return code, out.decode(errors="replace")
