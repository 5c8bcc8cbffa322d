"""The `tests` grader: base + the trial's patch in a fresh directory, run the task's test command.

pass = exit code 0 within the timeout; reason = the tail of the output.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from passhat.graders._common import Grade, TrialOutcome

DEFAULT_TIMEOUT_S = 300.0
_TAIL_CHARS = 1500


def run_command(command: str, cwd: Path, timeout_s: float) -> tuple[int | None, str]:
    """Run in its own process group; on timeout the whole group is killed. None = timed out."""
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "CI": "true",
    }
    proc = subprocess.Popen(
        command, shell=True, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        return proc.returncode, out.decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out.decode(errors="replace")


def grade_tests(outcome: TrialOutcome, config: dict) -> Grade:
    command = config["command"]
    timeout_s = float(config.get("timeout_s", DEFAULT_TIMEOUT_S))
    with outcome.materialized() as workdir:
        code, output = run_command(command, workdir, timeout_s)
    tail = output.strip()[-_TAIL_CHARS:]
    if code is None:
        return Grade(False, 0.0, f"`{command}` ran past {timeout_s:g} s and was killed. Output tail:\n{tail}")
    verdict = "passed" if code == 0 else f"failed (exit {code})"
    return Grade(code == 0, 1.0 if code == 0 else 0.0, f"`{command}` {verdict}. Output tail:\n{tail}")
