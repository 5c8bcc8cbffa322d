"""Running a team grader: in a child process of the assertion's, on the host, with a timeout.

Why a child and not a call: Promptfoo's python worker reads the assertion process's stdout as its control
channel (`\\nDONE|…`) and its stdin for commands, and runs the assertions of many rows in one process. So the
grader runs with stdin from /dev/null, stdout into a file passhat reads (anything printed there fails the grade,
saying what was printed), and a deadline (`timeout_s`): SIGTERM, then SIGKILL of its process group. Whatever
it does — raises, hangs, prints, exits — it is one failed grade with a one-line reason, and the assertion's
other graders are graded as if it were not there. The child is no sandbox: the grader is the team's code, as
trusted as passhat; what keeps it from following the agent's links by accident is the view it gets.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from passhat.graders._common import Grade
from passhat.trial._outcome import TrialOutcome

DEFAULT_TIMEOUT_S = 60.0
GRACE_S = 2.0  # after SIGTERM, before SIGKILL
SHOWN = 200  # characters of what a grader printed, in its reason


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the child stops a command it runs and says where it was), then SIGKILL of its process group."""
    for sent, grace in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sent)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            continue


def run_team_grader(outcome: TrialOutcome, config: dict) -> Grade:
    """The grade a team grader (`type: python`, its `file` resolved at task load) gives `outcome`."""
    file, function = Path(config["file"]), str(config.get("function", "grade"))
    timeout_s = float(config.get("timeout_s", DEFAULT_TIMEOUT_S))
    label = f"{file}:{function}"
    spec = {
        "file": str(file),
        "function": function,
        "settings": config.get("settings", {}),
        "threshold": config.get("threshold"),
        "task_dir": str(outcome.task_dir),
        "base_dir": str(outcome.base_dir),
        "patch": base64.b64encode(outcome.patch).decode(),
        "run": outcome.run,
    }
    with tempfile.TemporaryDirectory(prefix="passhat-grader-") as scratch:
        spec_file, result_file, printed_file = (Path(scratch) / n for n in ("spec.json", "result.json", "stdout"))
        spec_file.write_text(json.dumps(spec, default=str), encoding="utf-8")
        argv = [sys.executable, "-m", "passhat.graders.team._child", str(spec_file), str(result_file)]
        with printed_file.open("wb") as printed:
            proc = subprocess.Popen(
                argv, cwd=file.parent, stdin=subprocess.DEVNULL, stdout=printed, start_new_session=True
            )
            try:
                code: int | None = proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                _stop(proc)  # a timeout, or what the grader left running in its process group
        shown = printed_file.read_bytes()[: SHOWN * 4].decode(errors="replace")
        result = json.loads(result_file.read_text(encoding="utf-8")) if result_file.is_file() else None
    if code is None:
        where = f" at {result['stopped_at']}" if result and "stopped_at" in result else ""
        return Grade(False, 0.0, f"{label}: ran past its timeout_s ({timeout_s:g} s) and was stopped{where}")
    if result is None:
        return Grade(False, 0.0, f"{label}: the grader's process ended (exit {code}) without a grade")
    if "error" in result:
        return Grade(False, 0.0, str(result["error"]))
    if shown:
        return Grade(
            False,
            0.0,
            f"{label}: printed to stdout ({' '.join(shown.split())[:SHOWN]!r}); stdout is Promptfoo's control channel "
            "in the assertion's process: put it in the reason, or print to sys.stderr",
        )
    return Grade(bool(result["pass"]), float(result["score"]), str(result["reason"]))
