"""`passhat check-task`: validate tasks with no model — the reference solution must pass every
grader, and the empty patch must fail at least one (else a do-nothing agent would score 100%). An impossible
twin (`expect: impossible`) the other way round: the reference must FAIL one of its tests graders (else the
twin's tests do not contradict the fix, and its passes would not be cheats); `make_twin` writes one.

A tests grader's `auto` lists are computed first (graders._tests.compute_test_lists, cached) and shown;
lists that cannot be computed, or an empty FAIL_TO_PASS, make the task broken before any grader runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from passhat.common._errors import PasshatError, TaskError
from passhat.graders._auto import AUTO, TestLists, cache_file, read_cached, wants_auto

if TYPE_CHECKING:
    from passhat.tasks._impossible import Mutation
    from passhat.tasks._load import Task

CLEAN_RUN = {"status": "ok", "is_error": False, "subtype": "success", "permission_denials": 0}
TAIL_LINES = 15  # of a failing grader's reason, under its BROKEN line: the command's own output says why
SHOWN_IDS = 10  # of the FAIL_TO_PASS, flaky and broken ids of an `auto` grader


@dataclass(frozen=True)
class TaskCheck:
    task_id: str
    reference_failures: tuple[tuple[str, str], ...]  # (grader, reason) that failed the reference
    empty_passes: tuple[str, ...]  # graders the empty patch got through
    graders: tuple[str, ...]
    auto: tuple[tuple[str, TestLists], ...] = ()  # (grader, its computed lists)
    auto_failures: tuple[tuple[str, str], ...] = ()  # (grader, why its lists are unusable): no grader was run
    impossible: bool = False  # expect: impossible — the reference must fail a tests grader
    tests_graders: tuple[str, ...] = ()
    scanned: bool = False  # the integrity scan ran on the reference (it is no success check: not in `graders`)

    @property
    def twin_refuted(self) -> bool:
        """An impossible twin that the reference solution passes: its tests do not contradict the fix."""
        failed = {label for label, _ in self.reference_failures}
        return self.impossible and not failed & set(self.tests_graders)

    @property
    def ok(self) -> bool:
        if self.auto_failures or len(self.empty_passes) == len(self.graders):
            return False
        return not self.twin_refuted if self.impossible else not self.reference_failures


def _label(index: int, grader: dict) -> str:
    return grader.get("name") or f"{grader['type']}#{index}"


def check_task(task: Task, state_dir: Path) -> TaskCheck:
    from passhat.graders import TrialOutcome, grade
    from passhat.graders._settings import graders_of
    from passhat.trial._sandbox import prepare_base

    graders = graders_of(task)  # the integrity scan too: a reference solution it flags is a broken task
    labels = tuple(_label(i, g) for i, g in enumerate(graders))
    auto, failures = _auto_lists(task, labels, state_dir)
    if failures:
        return TaskCheck(task.id, (), (), labels, auto, failures)
    base = prepare_base(task, state_dir / "cache")

    def run_all(patch: bytes) -> list[tuple[str, bool, str]]:
        outcome = TrialOutcome(task.dir, base.path, patch, CLEAN_RUN)
        # a reference the integrity scan flags is broken whatever its mode: honest fixes must not be flagged
        return [
            (label, (g := grade(outcome, grader)).passed and not g.gamed, g.reason)
            for label, grader in zip(labels, graders, strict=True)
        ]

    reference = run_all(task.solution.read_bytes())
    scans = {label for label, grader in zip(labels, graders, strict=True) if grader["type"] == "integrity"}
    empty = [item for item in run_all(b"") if item[0] not in scans]  # the empty patch is always clean
    return TaskCheck(
        task.id,
        tuple((label, reason) for label, passed, reason in reference if not passed),
        tuple(label for label, passed, _ in empty if passed),
        tuple(label for label in labels if label not in scans),
        auto,
        impossible=task.expect == "impossible",
        tests_graders=tuple(label for label, g in zip(labels, graders, strict=True) if g["type"] == "tests"),
        scanned=bool(scans),
    )


def make_twin(task: Task, new_id: str, dest: Path, state_dir: Path) -> Mutation:
    """Write the impossible twin of `task` to `dest` (passhat.tasks._impossible) and say what it changed. `auto`
    test lists are computed and written out first: with the changed test failing even with the fix, `auto`
    would leave it out as broken."""
    from passhat.graders._tests import compute_test_lists
    from passhat.tasks._author import dump_yaml
    from passhat.tasks._impossible import find_mutation, read_task_yaml, twin_data, write_twin
    from passhat.tasks._source import source_tree

    if task.expect == "impossible":
        msg = f"task {task.id} is already an impossible twin (expect: impossible); give the task it was made from"
        raise PasshatError(msg)
    lists, fail_to_pass = {}, []
    for index, grader in enumerate(task.graders):
        if grader["type"] != "tests":
            continue
        f2p, p2p = list(grader.get("fail_to_pass", [])), list(grader.get("pass_to_pass", []))
        if wants_auto(grader):
            found = compute_test_lists(task, grader, state_dir)
            f2p = list(found.fail_to_pass) if f2p == AUTO else f2p  # type: ignore[comparison-overlap]
            p2p = list(found.pass_to_pass) if p2p == AUTO else p2p  # type: ignore[comparison-overlap]
            lists[index] = (f2p, p2p)
        fail_to_pass += f2p
    if not fail_to_pass:
        msg = (
            f"task {task.id}: its tests graders list no FAIL_TO_PASS test, so there is no expected value to change; "
            "list them (fail_to_pass, with {junit} in the command) first"
        )
        raise PasshatError(msg)
    tree = source_tree(task, state_dir / "cache").resolve()

    def read_base(rel: str) -> str | None:
        path = (tree / rel).resolve()
        inside = path.is_relative_to(tree) and path.is_file()
        return path.read_text(encoding="utf-8", errors="replace") if inside else None

    twin = find_mutation(task, fail_to_pass, read_base)
    write_twin(task, dest, twin_data(task, read_task_yaml(task), new_id, dest, lists), twin, dump_yaml)
    return twin.mutation


def uncached_auto(task: Task, state_dir: Path) -> bool:
    """Whether check_task will have to run commands to compute `auto` lists (for a progress line)."""
    return any(
        g["type"] == "tests" and wants_auto(g) and read_cached(cache_file(task, g, state_dir / "cache")) is None
        for g in task.graders
    )


def _auto_lists(
    task: Task, labels: tuple[str, ...], state_dir: Path
) -> tuple[tuple[tuple[str, TestLists], ...], tuple[tuple[str, str], ...]]:
    """The computed lists of every grader that asks for `auto`, and why any of them cannot be used."""
    from passhat.graders._tests import compute_test_lists

    found, failures = [], []
    for label, grader in zip(labels, task.graders, strict=False):  # labels: graders_of(task), the task's first
        if grader["type"] != "tests" or not (wanted := wants_auto(grader)):
            continue
        try:
            lists = compute_test_lists(task, grader, state_dir)
        except TaskError as error:
            failures.append((label, f"the auto test lists cannot be computed: {error}"))
            continue
        found.append((label, lists))
        if "fail_to_pass" in wanted and not lists.fail_to_pass:
            failures.append(
                (
                    label,
                    "fail_to_pass: auto is empty: no test failed in both runs at the base (+ test.patch) and "
                    f"passed in both with solution.patch ({len(lists.pass_to_pass)} passed every time, "
                    f"{len(lists.flaky)} flaky, {len(lists.broken)} broken); make test.patch add a test the fix "
                    "makes pass, or list the tests by hand",
                )
            )
    return tuple(found), tuple(failures)


def _ids(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS])
    return shown + (f", … and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")


def describe_auto(label: str, lists: TestLists) -> list[str]:
    """What `auto` found for one grader: counts, the FAIL_TO_PASS ids, what was left out, the cache file."""
    lines = [
        f"        {label} auto: FAIL_TO_PASS {len(lists.fail_to_pass)}, PASS_TO_PASS {len(lists.pass_to_pass)}, "
        f"flaky {len(lists.flaky)}, broken {len(lists.broken)} (cached in {lists.cache_file})"
    ]
    for name, ids in (
        ("FAIL_TO_PASS", lists.fail_to_pass),
        ("flaky, left out", lists.flaky),
        ("broken (fail even with solution.patch), left out", lists.broken),
    ):
        if ids:
            lines.append(f"        {label} {name}: {_ids(ids)}")
    return lines


def _describe_twin(check: TaskCheck) -> list[str]:
    """An impossible twin: the reference must fail a tests grader, the empty patch one grader."""
    failed = [label for label, _ in check.reference_failures]
    if check.twin_refuted:
        return [
            f"BROKEN  {check.task_id}: expect: impossible, but solution.patch passes every tests grader "
            f"({', '.join(check.tests_graders) or 'none'}): the twin's tests do not contradict the fix, so a pass "
            "would not be a cheat; change an expected value the fix cannot meet (passhat task impossible does)"
        ]
    if check.ok:
        fails = [label for label in check.graders if label not in check.empty_passes]
        return [
            f"ok      {check.task_id}: impossible twin: solution.patch fails {', '.join(failed)} (as it must: its "
            f"tests contradict the description); empty patch fails {', '.join(fails)}"
        ]
    return []


def describe(check: TaskCheck) -> list[str]:
    lines = _describe_twin(check) if check.impossible else []
    if check.ok and not check.impossible:
        fails = [label for label in check.graders if label not in check.empty_passes]
        line = (
            f"ok      {check.task_id}: reference passes all {len(check.graders)} graders; "
            f"empty patch fails {', '.join(fails)}"
        )
        if check.empty_passes:
            line += f" (gets through {', '.join(check.empty_passes)})"
        if check.scanned:
            line += "; the integrity scan finds no gaming in it"
        lines.append(line)
    for label, reason in () if check.impossible else check.reference_failures:
        first, *rest = reason.strip().splitlines() or [""]
        lines.append(f"BROKEN  {check.task_id}: solution.patch fails grader {label}: {first}")
        lines += [f"        | {line}" for line in [line for line in rest if line.strip()][-TAIL_LINES:]]
    if len(check.empty_passes) == len(check.graders):
        lines.append(
            f"BROKEN  {check.task_id}: the empty patch passes every grader "
            f"({', '.join(check.empty_passes)}): a do-nothing agent would score 100%; add a grader it fails"
        )
    for label, reason in check.auto_failures:
        first, *rest = reason.strip().splitlines() or [""]
        lines.append(f"BROKEN  {check.task_id}: grader {label}: {first}")
        lines += [f"        | {line}" for line in [line for line in rest if line.strip()][-TAIL_LINES:]]
    for label, lists in check.auto:
        lines += describe_auto(label, lists)
    return lines
