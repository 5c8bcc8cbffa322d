"""The `tests` grader: run the task's test command on base + the trial's patch.

Protected paths (default: the task's test files) are first restored from the base, so an
agent cannot pass by editing the tests. Without fail_to_pass / pass_to_pass: pass = exit 0.
With them (SWE-bench): pass only when every FAIL_TO_PASS and every PASS_TO_PASS test passes,
read from the JUnit report; score = fraction of listed tests passing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from passhat.graders._common import Grade
from passhat.graders._globs import DEFAULT_PROTECTED, matches
from passhat.graders._junit import JUnitError, read_junit
from passhat.trial._isolation import bwrap_arguments, confinement
from passhat.trial._outcome import TrialOutcome
from passhat.trial._patch import patch_stats

DEFAULT_TIMEOUT_S = 300.0
GRADER_ISOLATION_ENV = "PASSHAT_GRADER_ISOLATION"
_TAIL_CHARS = 1500


def run_command(command: str, cwd: Path, timeout_s: float, hidden: tuple[Path, ...] = ()) -> tuple[int | None, str]:
    """Run in its own process group; on timeout the whole group is killed. None = timed out.

    The command runs the agent's code, so where bubblewrap works it runs confined like the trial:
    read-only system, only `cwd` (and a HOME beside it) writable, host HOME and `hidden` paths out of
    sight. PASSHAT_GRADER_ISOLATION=none opts out.
    """
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "CI": "true",
    }
    argv = ["/bin/sh", "-c", command]
    found = confinement("none" if os.environ.get(GRADER_ISOLATION_ENV) == "none" else "auto")
    if found.bwrap:
        home = cwd.parent / "home"
        home.mkdir(exist_ok=True)
        env["HOME"] = str(home)
        view = bwrap_arguments(cwd, [cwd, home], hidden, env["PATH"], Path(sys.executable))
        argv = [found.bwrap, *view, "--", *argv]
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        return proc.returncode, out.decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out.decode(errors="replace")


def _files(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if (p.is_file() or p.is_symlink()) and ".git" not in p.relative_to(root).parts
    }


def restore_protected(workdir: Path, base: Path, globs: tuple[str, ...]) -> None:
    """Make every protected path exactly as in the base: edited ones restored, added ones removed."""
    for path in sorted(_files(workdir) | _files(base)):
        if not matches(path, globs):
            continue
        target, original = workdir / path, base / path
        if original.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(original, target)
        elif target.exists() or target.is_symlink():
            target.unlink()


def _listed_verdict(config: dict, results: Mapping[str, str]) -> tuple[bool, float, str]:
    f2p, p2p = list(config.get("fail_to_pass", [])), list(config.get("pass_to_pass", []))
    listed = f2p + p2p
    failing = [test for test in listed if results.get(test) != "passed"]
    passed = len(listed) - len(failing)
    lines = [
        f"FAIL_TO_PASS {len(f2p) - sum(t in failing for t in f2p)}/{len(f2p)}, "
        f"PASS_TO_PASS {len(p2p) - sum(t in failing for t in p2p)}/{len(p2p)}"
    ]
    for test in failing[:20]:
        kind = "FAIL_TO_PASS" if test in f2p else "PASS_TO_PASS"
        lines.append(f"  {kind} {test}: {results.get(test, 'missing from the report')}")
    if len(failing) > 20:
        lines.append(f"  … and {len(failing) - 20} more")
    return not failing, passed / len(listed) if listed else 1.0, "\n".join(lines)


def grade_tests(outcome: TrialOutcome, config: dict) -> Grade:
    command = config["command"]
    timeout_s = float(config.get("timeout_s", DEFAULT_TIMEOUT_S))
    protected = tuple(config.get("protected", DEFAULT_PROTECTED))
    junit = config.get("junit")
    listed = bool(config.get("fail_to_pass") or config.get("pass_to_pass"))
    touched = [path for path in patch_stats(outcome.patch).paths if matches(path, protected)]

    with outcome.private_copy() as workdir:
        restore_protected(workdir, outcome.base_tree(), protected)
        if junit:
            (workdir / junit).unlink(missing_ok=True)
        hidden = (outcome.cache_root.parent, outcome.task_dir)  # the state dir and the reference solution
        code, output = run_command(command, workdir, timeout_s, hidden)
        try:
            results = read_junit(workdir / junit) if junit and listed else None
            junit_error = None
        except JUnitError as error:
            results, junit_error = None, str(error)

    notes = []
    if touched:
        notes.append(
            f"The patch touched protected test files (restored from the base before running): {', '.join(touched)}."
        )
    tail = f"Output tail:\n{output.strip()[-_TAIL_CHARS:]}"
    if code is None:
        return Grade(False, 0.0, "\n".join([*notes, f"`{command}` ran past {timeout_s:g} s and was killed.", tail]))
    if listed:
        if results is None:
            return Grade(False, 0.0, "\n".join([*notes, f"`{command}` exited {code}; {junit_error}.", tail]))
        passed, score, summary = _listed_verdict(config, results)
        verdict = "passed" if passed else "failed"
        return Grade(passed, score, "\n".join([*notes, f"`{command}` {verdict}: {summary}", tail]))
    verdict = "passed" if code == 0 else f"failed (exit {code})"
    return Grade(code == 0, 1.0 if code == 0 else 0.0, "\n".join([*notes, f"`{command}` {verdict}.", tail]))
