"""`fail_to_pass: auto` / `pass_to_pass: auto`: which tests a tests grader checks, learnt from runs; and which
test.patch a task applies (test_patch_of), read from task.yaml once per version of it.

The runs themselves are the tests grader's (graders._tests.compute_test_lists); this module holds what
is pure about them — sorting two "before" and two "after" runs into FAIL_TO_PASS, PASS_TO_PASS, flaky
and broken — and the cache: one JSON file per task version and grader command under
`<cache_root>/test-lists/`, written atomically, computed under a file lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passhat.tasks import Task
    from passhat.trial._outcome import TrialOutcome

AUTO = "auto"
_LIST_KEYS = ("fail_to_pass", "pass_to_pass")
# What decides the runs' results; a grader's name or its other list does not.
_RUN_KEYS = ("command", "junit", "timeout_s", "protected", "env", "pass_env")
_BAD = ("failed", "error", "missing")


@dataclass(frozen=True)
class TestLists:
    """What runs of the command at base + test.patch and base + test.patch + solution.patch showed."""

    __test__ = False  # not a pytest class

    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    flaky: tuple[str, ...]  # differed between two runs of one state: left out
    broken: tuple[str, ...]  # failed even with the solution: left out
    cache_file: Path | None

    def to_json(self) -> dict[str, list[str]]:
        return {
            "fail_to_pass": list(self.fail_to_pass),
            "pass_to_pass": list(self.pass_to_pass),
            "flaky": list(self.flaky),
            "broken": list(self.broken),
        }


def wants_auto(grader: Mapping[str, Any]) -> set[str]:
    """Which of fail_to_pass / pass_to_pass the grader leaves to `auto`."""
    return {key for key in _LIST_KEYS if grader.get(key) == AUTO}


def classify(before: Sequence[Mapping[str, str]], after: Sequence[Mapping[str, str]], file: Path | None) -> TestLists:
    """Sort the tests of two runs per state (test id → status) into the four lists, each sorted.

    A test absent from a run has status "missing" (a test file that fails to import at the base writes no
    case per test). FAIL_TO_PASS: failed, errored or missing in both befores, passed in both afters.
    PASS_TO_PASS: passed in all four. Flaky: the two runs of one state disagree. Broken: not flaky, and
    failed, errored or missing in both afters (skipped tests are none of these). A failure in one run and an
    error in the other are not flaky: both are "not passed"."""
    names = sorted({name for run in [*before, *after] for name in run})

    def statuses(runs: Sequence[Mapping[str, str]], name: str) -> set[str]:
        """What the runs said, a failure and an error (or absence) counting as the same "bad"."""
        return {"bad" if (status := run.get(name, "missing")) in _BAD else status for run in runs}

    f2p, p2p, flaky, broken = [], [], [], []
    for name in names:
        was, now = statuses(before, name), statuses(after, name)
        if len(was) > 1 or len(now) > 1:
            flaky.append(name)
        elif now == {"passed"}:
            if was == {"passed"}:
                p2p.append(name)
            elif was == {"bad"}:
                f2p.append(name)
        elif now == {"bad"}:
            broken.append(name)
    return TestLists(tuple(f2p), tuple(p2p), tuple(flaky), tuple(broken), file)


def cache_file(task: Task, grader: Mapping[str, Any], cache_root: Path) -> Path:
    """`<cache_root>/test-lists/<id>-<version>-<hash of the grader's run settings>.json`."""
    return version_cache_file(f"{task.id}-{task.version}", grader, cache_root)


def version_cache_file(task_version: str, grader: Mapping[str, Any], cache_root: Path) -> Path:
    """The same file named by `<id>-<version>`, as a trial's base folder is named: found without loading the task."""
    settings = {key: grader[key] for key in _RUN_KEYS if key in grader}
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]
    return cache_root / "test-lists" / f"{task_version}-{digest}.json"


def read_cached(file: Path) -> TestLists | None:
    """The lists saved in `file`, or None when there are none (or they cannot be read: computed again)."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        f2p, p2p, flaky, broken = (
            tuple(map(str, data[key])) for key in ("fail_to_pass", "pass_to_pass", "flaky", "broken")
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return TestLists(f2p, p2p, flaky, broken, file)


def test_patch_of(outcome: TrialOutcome) -> bytes | None:
    """The task's test.patch (passhat.tasks.task_test_patch). Which file it is comes from task.yaml, read once per
    version of it: the answer is kept in the state's cache under task.yaml's path, size and modification time, so a
    trial's grading neither imports nor runs a YAML parser for one field (issue 33). The file itself is read
    every time."""
    from passhat.tasks import test_patch_file, test_patch_name

    spec = outcome.task_dir.resolve() / "task.yaml"
    try:
        stat = spec.stat()
    except OSError:
        return None
    key = hashlib.sha256(f"{spec}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()[:32]
    kept = outcome.cache_root / "test-patch-names" / f"{key}.json"
    try:
        name = json.loads(kept.read_text(encoding="utf-8"))["name"]
        if name is not None and not isinstance(name, str):
            raise TypeError(name)  # not an answer this function wrote: read task.yaml again
    except (OSError, ValueError, KeyError, TypeError):
        name = test_patch_name(spec.parent)
        with contextlib.suppress(OSError):
            kept.parent.mkdir(parents=True, exist_ok=True)
            scratch = kept.with_name(f".{key}.{os.getpid()}.tmp")
            scratch.write_text(json.dumps({"name": name, "task_yaml": str(spec)}), encoding="utf-8")
            os.replace(scratch, kept)  # whole or absent: concurrent graders may write the same answer
    path = test_patch_file(spec.parent, name)
    return path.read_bytes() if path else None
