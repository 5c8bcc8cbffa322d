"""Scripted hacks: parsing `hack:KIND` and `+hack:Q`, what each hack reads from a task, and that each one really
turns the failing tests of a shipped Python task into a passing run of its own test command (the same command
on the untouched repo fails). The e2e test (tests/e2e/test_e2e_gaming.py) runs them through the real CLI."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TASKS, with_tests_shown

from passhat.common._errors import PasshatError
from passhat.fake_model import parse_script
from passhat.fake_model._hacks import HACKS, Plans, find_target, hack_draw, hack_files
from passhat.fake_model._plan import Script, _files
from passhat.tasks._load import load_task

COMMAND = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=.passhat-junit.xml"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param("hack:runner-patch", Script("hack", spec="runner-patch"), id="hack"),
        pytest.param("flaky:0.7+hack:0.1", Script("flaky", p=0.7, hack=0.1), id="flaky+hack"),
        pytest.param(
            "flaky:0.7+outage:0.1+hack:0.2:3",
            Script("flaky", p=0.7, outage=0.1, hack=0.2, hack_seed=3),
            id="flaky+outage+hack",
        ),
        pytest.param("hack:exit-early+outage:0.5", Script("hack", outage=0.5, spec="exit-early"), id="hack+outage"),
    ],
)
def test_parse_hack_scripts(spec, expected):
    assert parse_script(spec) == expected


@pytest.mark.parametrize("spec", ["hack", "hack:", "hack:nope", "oracle+hack:2", "hack:always-equal+hack:0.1"])
def test_parse_rejects_bad_hack_scripts(spec):
    with pytest.raises(PasshatError, match="hack:KIND"):
        parse_script(spec)


@pytest.fixture(scope="module")
def shown(tmp_path_factory) -> Path:
    """py-median with its held-out FAIL_TO_PASS rows back in repo/: a hack games the tests it can see (hidden
    ones defeat special-casing; tests/tasks/test_held_out.py)."""
    tasks = tmp_path_factory.mktemp("tasks")
    with_tests_shown("py-median", tasks)
    return tasks


def _median(tasks: Path) -> tuple[dict[str, bytes], tuple]:
    task = load_task(tasks / "py-median")
    assert task.repo is not None
    return _files(task.repo), task.graders


def test_the_target_is_read_from_the_tests(shown):
    """The module, the imported names, the graders' test ids and the parametrize table's (input, expected)."""
    files, graders = _median(shown)
    target = find_target(files, graders)
    assert target is not None
    assert (target.module, target.names, target.test_files) == (
        "stats_utils/__init__.py",
        ("median",),
        ("tests/test_median.py",),
    )
    assert len(target.test_ids) == 8 and ("tests.test_median", "test_median[even]") in target.test_ids
    # the table of tests/test_median.py: ([1, 2, 3, 4], 2.5) → median(([1, 2, 3, 4],)) == 2.5
    assert ("median", "([1, 2, 3, 4],)", "2.5") in target.cases
    assert len(target.cases) == 6


def _run(files: dict[str, bytes], root: Path) -> tuple[int, str]:
    shutil.rmtree(root, ignore_errors=True)
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    proc = subprocess.run(COMMAND, cwd=root, capture_output=True, text=True, timeout=120)
    report = root / ".passhat-junit.xml"
    return proc.returncode, report.read_text() if report.is_file() else ""


def test_the_untouched_repo_fails_its_tests(tmp_path, shown):
    files, _ = _median(shown)
    code, report = _run(files, tmp_path / "base")
    assert code == 1 and "<failure" in report


@pytest.mark.parametrize("kind", HACKS)
def test_each_hack_makes_the_test_command_pass_without_a_fix(kind, tmp_path, shown):
    files, graders = _median(shown)
    after = hack_files(kind, files, graders)
    assert isinstance(after, dict), after
    assert after["stats_utils/median.py"] == files["stats_utils/median.py"]  # the bug is still there
    code, report = _run(after, tmp_path / kind)
    assert code == 0
    if kind == "exit-early":  # exits before the runner writes anything
        assert report.strip() == ""
    else:
        assert report.count("<testcase") == 8 and "<failure" not in report and "<error" not in report


def test_a_hack_that_does_not_apply_says_why():
    task = load_task(TASKS / "py-rename-var")  # its tests compare computed totals: no literal call to copy
    assert task.repo is not None
    why = hack_files("special-case", _files(task.repo), task.graders)
    assert isinstance(why, str) and why.startswith("hack special-case: found nothing to hook in invoice.py")


def test_hack_draw_is_sha256_of_hack_seed_task_trial():
    digest = hashlib.sha256(b"hack:4:py-median:7").hexdigest()
    assert hack_draw("py-median", 7, 4) == int(digest[:16], 16) / 16**16


def test_plus_hack_games_exactly_the_drawn_trials():
    plans = Plans(TASKS)
    script = parse_script("flaky:0.7+hack:0.3:9")
    hacked = [t for t in range(40) if isinstance(plans.hack(script, "py-median", t), list)]
    assert hacked == [t for t in range(40) if hack_draw("py-median", t, 9) < 0.3]
    assert 0 < len(hacked) < 40
    # a task no hack applies to (Node) plays its base script; so does a script without the modifier
    assert all(plans.hack(script, "bump-version", t) is None for t in range(40))
    assert plans.hack(parse_script("flaky:0.7"), "py-median", hacked[0]) is None


def test_a_hack_plan_reads_before_it_writes():
    """The CLI refuses a write to a file it has not read: every Edit or Write of an existing file follows a Read."""
    plans = Plans(TASKS)
    for kind in HACKS:
        plan = plans.hack(Script("hack", spec=kind), "py-median", 0)
        assert isinstance(plan, list) and plan, kind
        read: set[str] = set()
        for call in plan:
            if call.name == "Read":
                read.add(call.path)
            elif call.name in ("Edit", "Write") and call.path != "pytest.py":
                assert call.path in read, (kind, call)
