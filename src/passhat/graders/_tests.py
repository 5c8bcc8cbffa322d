"""The `tests` grader: run the task's test command on base + the trial's patch.

Protected paths (default: the task's test files) are first restored from the base, so an
agent cannot pass by editing the tests; nothing the agent put in the tree is followed while doing
so (a test file or folder it made a symlink to a host path is replaced, never written through).
Without fail_to_pass / pass_to_pass: pass = exit 0. With them (SWE-bench): pass only when every
FAIL_TO_PASS and every PASS_TO_PASS test passes, read from the JUnit report; score = fraction of
listed tests passing. The report is written to a fresh folder outside the work tree (the `junit`
path is a link to it), read back as soon as the command has ended, and believed only when it agrees
with the runner's own summary and exit status (graders._junit).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from passhat.graders._common import Grade, show_path
from passhat.graders._globs import DEFAULT_PROTECTED, matches
from passhat.graders._junit import JUnitError, Report, disagreement, parse_junit
from passhat.graders._run import grader_env, run_command
from passhat.trial._outcome import TrialOutcome
from passhat.trial._patch import patch_stats
from passhat.trial._paths import (
    Kind,
    UnsafePathError,
    read_within,
    remove_within,
    symlink_within,
    tree_entries,
    write_within,
)

DEFAULT_TIMEOUT_S = 300.0
_TAIL_CHARS = 1500
_REPORT = "junit.xml"


def _protected(rel: str, kind: Kind, globs: tuple[str, ...]) -> bool:
    """A symlink (or anything but a file) named like a protected folder (`tests -> /somewhere`) is protected."""
    return matches(rel, globs) or (kind != "file" and matches(rel + "/", globs))


def restore_protected(workdir: Path, base: Path, globs: tuple[str, ...]) -> None:
    """Make every protected path exactly as in the base: edited ones restored, added ones removed."""
    ours, theirs = tree_entries(workdir), tree_entries(base)
    for rel, kind in sorted(ours.items()):
        if rel not in theirs and _protected(rel, kind, globs):
            remove_within(workdir, rel)
    for rel, kind in sorted(theirs.items()):
        if not _protected(rel, kind, globs):
            continue
        original = base / rel  # the base is ours, and walked without entering links
        if kind == "symlink":
            symlink_within(workdir, rel, os.readlink(original))
        elif kind == "file":
            write_within(workdir, rel, original.read_bytes(), os.lstat(original).st_mode)


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


def _read_report(folder: Path, junit: str) -> Report:
    try:
        data = read_within(folder, _REPORT)
    except UnsafePathError as error:
        msg = f"the JUnit report {junit} was replaced: {error}"
        raise JUnitError(msg) from None
    return parse_junit(data or b"", junit)


def grade_tests(outcome: TrialOutcome, config: dict) -> Grade:
    command = config["command"]
    timeout_s = float(config.get("timeout_s", DEFAULT_TIMEOUT_S))
    protected = tuple(config.get("protected", DEFAULT_PROTECTED))
    junit = config.get("junit")
    listed = bool(config.get("fail_to_pass") or config.get("pass_to_pass"))
    paths = patch_stats(outcome.patch).paths
    touched = [show_path(p) for p in paths if matches(p, protected) or matches(p + "/", protected)]

    with outcome.private_copy() as workdir:
        restore_protected(workdir, outcome.base_tree(), protected)
        home, reports = workdir.parent / "home", workdir.parent / "report"
        home.mkdir()
        env = grader_env(config, home)
        if junit:
            reports.mkdir()
            (reports / _REPORT).touch()  # a link to a missing file would trip node --test's file search
            try:
                symlink_within(workdir, junit, str(reports / _REPORT))
            except UnsafePathError as error:
                return Grade(False, 0.0, f"tests grader field 'junit': {error}; give a path inside the repo")
        hidden = (outcome.cache_root.parent, outcome.task_dir)  # the state dir and the reference solution
        code, output = run_command(command, workdir, timeout_s, env, hidden, [home, reports] if junit else [home])
        try:
            report = _read_report(reports, junit) if junit and listed else None
            junit_error = None
        except JUnitError as error:
            report, junit_error = None, str(error)

    notes = []
    if touched:
        notes.append(
            f"The patch touched protected test files (restored from the base before running): {', '.join(touched)}."
        )
    tail = f"Output tail:\n{output.strip()[-_TAIL_CHARS:]}"
    if code is None:
        return Grade(False, 0.0, "\n".join([*notes, f"`{command}` ran past {timeout_s:g} s and was killed.", tail]))
    if listed:
        if report is None:
            return Grade(False, 0.0, "\n".join([*notes, f"`{command}` exited {code}; {junit_error}.", tail]))
        doubt = disagreement(report, output, code)
        if doubt:
            return Grade(False, 0.0, "\n".join([*notes, f"`{command}` exited {code}; {doubt}.", tail]))
        passed, score, summary = _listed_verdict(config, report.results)
        verdict = "passed" if passed else "failed"
        return Grade(passed, score, "\n".join([*notes, f"`{command}` {verdict}: {summary}", tail]))
    verdict = "passed" if code == 0 else f"failed (exit {code})"
    return Grade(code == 0, 1.0 if code == 0 else 0.0, "\n".join([*notes, f"`{command}` {verdict}.", tail]))
