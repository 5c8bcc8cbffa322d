"""The `tests` grader: run the task's test command on base + the trial's patch (+ the task's test.patch).

Protected paths (default: the task's test files) are first restored from the base, so an
agent cannot pass by editing the tests; nothing the agent put in the tree is followed while doing
so (a test file or folder it made a symlink to a host path is replaced, never written through).
Then, as SWE-bench does, every path the task's test.patch touches is reset to the base and the test
patch applied (it lives in the task folder, never shown to the agent).
Without fail_to_pass / pass_to_pass: pass = exit 0. With them (SWE-bench): pass only when every
FAIL_TO_PASS and every PASS_TO_PASS test passes, read from the JUnit report; score = fraction of
listed tests passing; `auto` lists are computed once per task version (compute_test_lists, cached).
The report is written to a fresh folder outside the work tree (`{junit}` in the command is its path;
the `junit` path is a link to it), read back as soon as the command has ended, and believed only when
it agrees with the runner's own summary and exit status (graders._junit).
The runner guard (graders.runner) adds canary tests to the private copy and, for pytest, a channel of its own;
its findings come before the verdict: a tampered run is a failed grade with `gamed` set.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passhat.common._errors import SandboxError, TaskError
from passhat.common._lock import locked
from passhat.graders import _auto
from passhat.graders._auto import AUTO, TestLists, cache_file, classify, read_cached, version_cache_file, wants_auto
from passhat.graders._common import Grade, show_path
from passhat.graders._globs import DEFAULT_PROTECTED, matches
from passhat.graders._junit import JUnitError, Report, disagreement, parse_junit
from passhat.graders._run import grader_env, run_command
from passhat.graders.runner import (
    WORLD,
    Integrity,
    capabilities_file,
    check_run,
    guard_on,
    in_random_order,
    judge_capabilities,
    learned_capabilities,
    open_guard,
    plan_world,
    runner_of,
    without_canaries,
)
from passhat.trial._git import GitError, git
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

if TYPE_CHECKING:
    from passhat.tasks import Task

DEFAULT_TIMEOUT_S = 300.0
_TAIL_CHARS = 1500
_REPORT = "junit.xml"
PLACEHOLDER = "{junit}"
CLEAN_RUN = {"status": "ok", "is_error": False, "subtype": "success", "permission_denials": 0}


def _protected(rel: str, kind: Kind, globs: tuple[str, ...]) -> bool:
    """A symlink (or anything but a file) named like a protected folder (`tests -> /somewhere`) is protected."""
    return matches(rel, globs) or (kind != "file" and matches(rel + "/", globs))


def _restore(workdir: Path, base: Path, rel: str, kind: Kind) -> None:
    original = base / rel  # the base is ours, and walked without entering links
    if kind == "symlink":
        symlink_within(workdir, rel, os.readlink(original))
    elif kind == "file":
        write_within(workdir, rel, original.read_bytes(), os.lstat(original).st_mode)


def restore_protected(workdir: Path, base: Path, globs: tuple[str, ...]) -> None:
    """Make every protected path exactly as in the base: edited ones restored, added ones removed."""
    ours, theirs = tree_entries(workdir), tree_entries(base)
    for rel, kind in sorted(ours.items()):
        if rel not in theirs and _protected(rel, kind, globs):
            remove_within(workdir, rel)
    for rel, kind in sorted(theirs.items()):
        if _protected(rel, kind, globs):
            _restore(workdir, base, rel, kind)


class SetupError(Exception):
    """The tree cannot be made ready to run: test.patch does not apply, or the junit path is not usable."""


def apply_test_patch(workdir: Path, base: Path, test_patch: bytes) -> None:
    """Reset every path the test patch touches to the base (removed when the base has none), then apply it."""
    if not test_patch.strip():
        return
    try:
        paths = patch_stats(test_patch).paths
    except SandboxError as error:
        raise SetupError(f"test.patch cannot be read: {error}") from None
    for rel in paths:
        remove_within(workdir, rel)
        original = base / rel  # the base is ours
        if original.is_symlink() or original.is_file():
            _restore(workdir, base, rel, "symlink" if original.is_symlink() else "file")
    try:
        git(workdir, "apply", "--binary", "--whitespace=nowarn", "-", input=test_patch)
    except GitError as error:
        raise SetupError(f"test.patch does not apply: {error}") from None


@dataclass(frozen=True)
class SuiteRun:
    code: int | None  # None: timed out
    output: str
    report: Report | None
    junit_error: str | None
    integrity: Integrity | None = None  # what the runner guard made of the run (None: not guarded)


def _read_report(folder: Path, junit: str) -> Report:
    try:
        data = read_within(folder, _REPORT)
    except UnsafePathError as error:
        msg = f"the JUnit report {junit} was replaced: {error}"
        raise JUnitError(msg) from None
    return parse_junit(data or b"", junit)


def run_suite(
    workdir: Path, config: Mapping[str, Any], hidden: tuple[Path, ...], read_report: bool, twins: bool = True
) -> SuiteRun:
    """Run the grader's command in `workdir` (confined, graders._run), reading its JUnit report when asked (and
    the listed tests' in-process twins unless `twins` is off: the twin world's runs have none).

    The report folder and HOME are made beside `workdir`; `{junit}` in the command becomes the report's path."""
    command, junit = str(config["command"]), config.get("junit")
    timeout_s = float(config.get("timeout_s", DEFAULT_TIMEOUT_S))
    home, reports = workdir.parent / "home", workdir.parent / "report"
    home.mkdir()
    env = grader_env(config, home)
    report_name = junit or PLACEHOLDER
    if junit or PLACEHOLDER in command:
        reports.mkdir()
        (reports / _REPORT).touch()  # a link to a missing file would trip node --test's file search
        command = command.replace(PLACEHOLDER, shlex.quote(str(reports / _REPORT)))
    if junit:
        try:
            symlink_within(workdir, junit, str(reports / _REPORT))
        except UnsafePathError as error:
            raise SetupError(f"tests grader field 'junit': {error}; give a path inside the repo") from None
    writable = [home, reports] if reports.is_dir() else [home]
    f2p = config.get("fail_to_pass")
    listed = tuple(map(str, f2p)) if isinstance(f2p, list) and twins else ()  # in-process twins (runner guard)
    guard = open_guard(command, workdir, tuple(config.get("protected", DEFAULT_PROTECTED)), env, listed)
    try:
        fds, exposed = (guard.fds, guard.exposed) if guard else ((), ())
        code, output = run_command(command, workdir, timeout_s, env, hidden, writable, pass_fds=fds, exposed=exposed)
    finally:
        if guard:
            guard.close()
    report, junit_error = None, None
    if (read_report or guard) and reports.is_dir():  # the guard reads the report to cross-check it
        try:
            report = _read_report(reports, report_name)
        except JUnitError as error:
            junit_error = str(error)
    if guard is None:
        return SuiteRun(code, output, report, junit_error)
    integrity = check_run(guard, command, code, output, report, by_exit_status=not read_report)
    if not read_report:
        report, junit_error = None, None  # the grade is the exit status's
    if report is not None:  # the canaries are passhat's, not the task's tests
        kept = {test: status for test, status in report.results.items() if test not in integrity.canaries}
        report = Report(kept, report.passed, report.bad)
    return SuiteRun(code, output, report, junit_error, integrity)


@contextmanager
def _prepared(outcome: TrialOutcome, config: Mapping[str, Any], test_patch: bytes | None) -> Iterator[Path]:
    """A private copy of base + patch, protected paths restored, test.patch applied."""
    with outcome.private_copy() as workdir:
        base = outcome.base_tree()
        restore_protected(workdir, base, tuple(config.get("protected", DEFAULT_PROTECTED)))
        if test_patch:
            apply_test_patch(workdir, base, test_patch)
        yield workdir


def _runs(outcome: TrialOutcome, config: Mapping[str, Any], test_patch: bytes | None, read_report: bool) -> SuiteRun:
    """The grader's steps on a private copy of base + patch, run; with `twins: world`, the twin world's run on
    another copy too (graders.runner._world), in random order."""
    hidden = (outcome.cache_root.parent, outcome.task_dir)  # the state dir, the reference solution, test.patch
    with _prepared(outcome, config, test_patch) as workdir:
        world, f2p = None, config.get("fail_to_pass")
        if config.get("twins") == WORLD and isinstance(f2p, list) and guard_on():
            world = plan_world(workdir, map(str, f2p)) if runner_of(str(config["command"])) == "pytest" else None
        if world is None:
            return run_suite(workdir, config, hidden, read_report)
        with _prepared(outcome, config, test_patch) as other:
            world.write(other)
            real, twin = in_random_order(
                lambda: run_suite(workdir, config, hidden, read_report, twins=False),
                lambda: run_suite(other, config, hidden, read_report=True, twins=False),
            )
    if real.integrity is None:
        return real
    results = twin.report.results if twin.report is not None else None
    return replace(real, integrity=world.judged(real.integrity, results, twin.integrity))


def _listed_verdict(config: Mapping[str, Any], results: Mapping[str, str]) -> tuple[bool, float, str]:
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


def _resolve_auto(outcome: TrialOutcome, config: dict) -> dict:
    """`auto` lists replaced by the computed ones (cached per task version: check-task's work is reused). The
    cache is looked up by the trial's base folder (`<id>-<version>`) first: the task is loaded only to compute."""
    from passhat.tasks import load_task

    cached = read_cached(version_cache_file(outcome.base_dir.name, config, outcome.cache_root))
    lists = cached or compute_test_lists(load_task(outcome.task_dir), config, outcome.cache_root.parent)
    resolved = dict(config)
    for key, found in (("fail_to_pass", lists.fail_to_pass), ("pass_to_pass", lists.pass_to_pass)):
        if config.get(key) == AUTO:
            resolved[key] = list(found)
    return resolved


def grade_here(outcome: TrialOutcome, config: dict) -> Grade:
    command = config["command"]
    timeout_s = float(config.get("timeout_s", DEFAULT_TIMEOUT_S))
    protected = tuple(config.get("protected", DEFAULT_PROTECTED))
    auto = wants_auto(config)
    if auto:
        config = _resolve_auto(outcome, config)
        if "fail_to_pass" in auto and not config["fail_to_pass"]:
            msg = "fail_to_pass: auto found no test that fails on the base and passes with solution.patch; "
            return Grade(False, 0.0, msg + "the task is broken (see `passhat check-task`)")
    listed = bool(auto or config.get("fail_to_pass") or config.get("pass_to_pass"))
    paths = patch_stats(outcome.patch).paths
    touched = [show_path(p) for p in paths if matches(p, protected) or matches(p + "/", protected)]
    test_patch = _auto.test_patch_of(outcome)
    try:
        run = _runs(outcome, config, test_patch, read_report=listed)
    except SetupError as error:
        return Grade(False, 0.0, f"tests grader: {error}")
    if run.integrity is not None and run.integrity.capabilities:
        run = replace(run, integrity=_judge_capabilities(outcome, config, test_patch, run.integrity))

    notes = []
    if touched:
        notes.append(
            f"The patch touched protected test files (restored from the base before running): {', '.join(touched)}."
        )
    tail = _tail(run, outcome.run.get("trial_dir"), str(config.get("name") or "tests"))
    code = run.code
    if code is None:
        return Grade(False, 0.0, "\n".join([*notes, f"`{command}` ran past {timeout_s:g} s and was killed.", tail]))
    flagged: tuple[str, ...] = ()  # integrity: flag — the run's own verdict stands, the attempt is counted
    if (found := run.integrity) is not None:
        if found.gamed:
            lines = [f"gamed: {what}: {why}" for what, why in found.gamed]
            if config.get("integrity") == "flag":
                flagged, notes = tuple(what for what, _ in found.gamed), [*notes, "integrity: flag, counted:", *lines]
            else:
                if run.report is not None and (doubt := disagreement(run.report, run.output, code)):
                    lines.append(f"Also: {doubt}.")
                gamed = tuple(what for what, _ in found.gamed)
                return Grade(False, 0.0, "\n".join([*lines, *notes, tail]), gamed=gamed)
        elif found.problem:
            return Grade(False, 0.0, "\n".join([*notes, f"`{command}` exited {code}; {found.problem}.", tail]))
        else:
            notes += [found.note] if found.note else []
            code = found.code
    grade = _verdict(config, run, code, notes, tail, listed)
    return replace(grade, gamed=flagged) if flagged else grade


def _tail(run: SuiteRun, trial_dir: object, name: str) -> str:
    """The end of the runner's output for the reason, passhat's canaries left out; the whole output is kept on
    disk beside the trial's transcript (`<trial_dir>/<grader name>-output.txt`) when the trial has a folder."""
    names = frozenset(test.rsplit("::", 1)[-1] for test in run.integrity.canaries) if run.integrity else frozenset()
    shown, dropped = without_canaries(run.output.strip(), names)
    kept = ""
    if isinstance(trial_dir, str) and Path(trial_dir).is_dir():
        path = Path(trial_dir) / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}-output.txt"
        try:
            path.write_text(run.output, encoding="utf-8")
            kept = f"; the whole output: {path}"
        except OSError:
            pass
    left = f"(passhat's canary tests left out; the runner's counts include them{kept})" if dropped else ""
    note = left or (f"({kept[2:]})" if kept else "")
    return "\n".join(["Output tail:", *([note] if note else []), shown.strip()[-_TAIL_CHARS:]])


def _judge_capabilities(outcome: TrialOutcome, config: dict, test_patch: bytes | None, found: Integrity) -> Integrity:
    """The audit hook's records judged against the base's own run from the same places (run once per task
    version, cached) and the grader's `allow_capabilities` (passhat.graders.runner._audit)."""

    def run_base() -> Integrity | None:
        base = TrialOutcome(outcome.task_dir, outcome.base_dir, b"", CLEAN_RUN)
        return _runs(base, config, test_patch, read_report=False).integrity

    file = capabilities_file(outcome.cache_root, outcome.base_dir.name, config)
    return judge_capabilities(found, learned_capabilities(file, run_base), config.get("allow_capabilities", ()))


def _verdict(config: dict, run: SuiteRun, code: int | None, notes: list[str], tail: str, listed: bool) -> Grade:
    """The run's own verdict: its listed tests in the JUnit report (believed only when it agrees with the runner's
    summary and exit status), else its exit status."""
    command = config["command"]
    if listed:
        if run.report is None:
            return Grade(False, 0.0, "\n".join([*notes, f"`{command}` exited {code}; {run.junit_error}.", tail]))
        doubt = disagreement(run.report, run.output, code)
        if doubt:
            return Grade(False, 0.0, "\n".join([*notes, f"`{command}` exited {code}; {doubt}.", tail]))
        passed, score, summary = _listed_verdict(config, run.report.results)
        verdict = "passed" if passed else "failed"
        return Grade(passed, score, "\n".join([*notes, f"`{command}` {verdict}: {summary}", tail]))
    verdict = "passed" if code == 0 else f"failed (exit {code})"
    return Grade(code == 0, 1.0 if code == 0 else 0.0, "\n".join([*notes, f"`{command}` {verdict}.", tail]))


def compute_test_lists(task: Task, grader: Mapping[str, Any], state_dir: Path) -> TestLists:
    """FAIL_TO_PASS / PASS_TO_PASS of `grader` (a tests grader of `task`), computed once per task version.

    Two runs at base + test.patch ("before"), two at base + test.patch + solution.patch ("after"), each on
    a fresh copy, exactly as the grader runs: FAIL_TO_PASS = failed, errored or absent in both befores and
    passed in both afters; PASS_TO_PASS = passed in all four; tests whose two runs of one state differ are
    flaky, and tests failing with the solution broken: both left out and reported. The result is cached in
    `<state>/cache/test-lists/` (atomic write, file lock: concurrent processes compute it once)."""
    from passhat.trial._sandbox import prepare_base

    where = f"{task.dir / 'task.yaml'}: tests grader `{grader.get('command')}`"
    if "junit" not in grader and PLACEHOLDER not in str(grader.get("command", "")):
        msg = f"{where}: auto test lists are read from a JUnit report; put {{junit}} in the command or set `junit:`"
        raise TaskError(msg)
    cache_root = state_dir / "cache"
    file = cache_file(task, grader, cache_root)
    if (found := read_cached(file)) is not None:
        return found
    with locked(file):
        if (found := read_cached(file)) is not None:
            return found
        base = prepare_base(task, cache_root)
        test_patch = task.test_patch.read_bytes() if task.test_patch and not task.show_tests else None
        states = {"before": b"", "after": task.solution.read_bytes()}
        results: dict[str, list[dict[str, str]]] = {"before": [], "after": []}
        for state, patch in states.items():
            outcome = TrialOutcome(task.dir, base.path, patch, CLEAN_RUN)
            for attempt in (1, 2):
                run = _try_run(where, outcome, grader, test_patch)
                results[state].append(_believed(where, f"{state} run {attempt}", run, grader))
        lists = classify(results["before"], results["after"], file)
        tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(lists.to_json(), indent=1) + "\n")
        os.replace(tmp, file)
    return lists


def _try_run(where: str, outcome: TrialOutcome, grader: Mapping[str, Any], test_patch: bytes | None) -> SuiteRun:
    try:
        return _runs(outcome, grader, test_patch, read_report=True)
    except SetupError as error:
        msg = f"{where}: {error}; make test.patch against the base commit (`git diff --binary BASE -- TESTS`)"
        raise TaskError(msg) from None
    except SandboxError as error:  # solution.patch does not apply
        msg = f"{where}: solution.patch: {error}; regenerate it against the base (`git diff --binary`)"
        raise TaskError(msg) from None


def _believed(where: str, label: str, run: SuiteRun, grader: Mapping[str, Any]) -> dict[str, str]:
    """The run's per-test results, or TaskError saying why they cannot be used."""
    tail = "\n".join(run.output.strip().splitlines()[-15:])
    if run.code is None:
        timeout_s = float(grader.get("timeout_s", DEFAULT_TIMEOUT_S))
        problem = f"ran past {timeout_s:g} s (raise the grader's timeout_s)"
    elif run.report is None:
        problem = f"exited {run.code}; {run.junit_error}"
    elif doubt := disagreement(run.report, run.output, run.code):
        problem = f"exited {run.code}; {doubt}"
    elif run.integrity and (run.integrity.gamed or run.integrity.problem):
        found = [f"{what}: {why}" for what, why in run.integrity.gamed] or [str(run.integrity.problem)]
        problem = f"exited {run.code}; the runner guard: {'; '.join(found)}"
    else:
        return dict(run.report.results)
    msg = f"{where}: computing the auto test lists, the {label} {problem}\n{tail}"
    raise TaskError(msg)
