"""The shipped task set: enough tasks, every tier, both languages, well-formed SWE-bench style test lists.

These are static checks on tasks/*/task.yaml; that each reference solution passes every grader and the empty
patch fails one is checked by running the graders (tests/test_graders.py, `passhat check-task --all`).
"""

from __future__ import annotations

from collections import Counter
from typing import get_args

import pytest
from conftest import SHIPPED_TASKS, TASKS

from passhat.tasks._load import Tier, load_tasks

LANGUAGES = {"python", "node"}
JUNK = {"__pycache__", ".pytest_cache", "node_modules", ".git", ".passhat-junit.xml"}


@pytest.fixture(scope="module")
def tasks():
    return load_tasks(TASKS)


def _tests_graders(task):
    return [g for g in task.graders if g["type"] == "tests"]


def test_there_are_at_least_eight_tasks(tasks):
    assert len(tasks) >= 8, [t.id for t in tasks]


def test_every_tier_has_a_task(tasks):
    tiers = Counter(t.tier for t in tasks)
    assert set(tiers) == set(get_args(Tier)), tiers


def test_both_languages_are_covered(tasks):
    languages = Counter(t.language for t in tasks)
    assert set(languages) == LANGUAGES, languages  # every task says python or node, nothing else
    assert languages["node"] >= 2 and languages["python"] >= 3, languages


@pytest.mark.parametrize("task_id", SHIPPED_TASKS)
def test_every_task_is_graded_by_tests_diff_scope_and_health(tasks, task_id):
    task = next(t for t in tasks if t.id == task_id)
    types = Counter(g["type"] for g in task.graders)
    assert types["tests"] >= 1 and types["diff-scope"] == 1 and types["health"] == 1, types


@pytest.mark.parametrize("task_id", SHIPPED_TASKS)
def test_fail_to_pass_lists_are_well_formed(tasks, task_id):
    task = next(t for t in tasks if t.id == task_id)
    for grader in _tests_graders(task):
        fail_to_pass, pass_to_pass = grader.get("fail_to_pass", []), grader.get("pass_to_pass", [])
        if not (fail_to_pass or pass_to_pass):
            continue
        assert grader.get("junit") or "{junit}" in grader["command"], f"{task_id}: test ids need a JUnit report"
        if "auto" in (fail_to_pass, pass_to_pass):  # computed by runs; check-task fails an empty FAIL_TO_PASS
            continue
        assert fail_to_pass, f"{task_id}: no fail_to_pass ids, so the empty patch would pass"
        assert len(set(fail_to_pass)) == len(fail_to_pass), f"{task_id}: duplicate fail_to_pass ids"
        assert len(set(pass_to_pass)) == len(pass_to_pass), f"{task_id}: duplicate pass_to_pass ids"
        assert set(fail_to_pass).isdisjoint(pass_to_pass), sorted(set(fail_to_pass) & set(pass_to_pass))


def test_every_shipped_task_uses_junit_test_ids(tasks):
    without = [t.id for t in tasks if not any(g.get("fail_to_pass") for g in _tests_graders(t))]
    assert without == []


@pytest.mark.parametrize("task_id", SHIPPED_TASKS)
def test_repos_hold_no_caches_or_reports(task_id):
    found = [p for p in (TASKS / task_id / "repo").rglob("*") if p.name in JUNK or p.suffix == ".pyc"]
    assert found == []


def test_third_party_code_says_where_it_came_from(tasks):
    borrowed = [t for t in tasks if "third-party" in t.tags]
    assert borrowed, "the set should hold at least one task built from a real third-party package"
    for task in borrowed:
        assert (task.repo / "PROVENANCE.md").is_file(), task.id
        assert (task.repo / "LICENSE").is_file(), task.id


@pytest.mark.parametrize("task_id", SHIPPED_TASKS)
def test_python_repos_carry_their_own_pytest_config(tasks, task_id):
    # Without one, pytest walks up from the grading copy and may adopt a parent project's config: other
    # rootdir, other test ids (every listed id "missing from the report"), other addopts/filterwarnings.
    task = next(t for t in tasks if t.id == task_id)
    if task.language != "python":
        pytest.skip("not a Python task")
    markers = {
        "pytest.ini": "[pytest]",
        "tox.ini": "[pytest]",
        "pyproject.toml": "[tool.pytest.ini_options]",
        "setup.cfg": "[tool:pytest]",
    }
    assert any(
        (task.repo / name).is_file() and marker in (task.repo / name).read_text(encoding="utf-8")
        for name, marker in markers.items()
    ), f"{task_id}: add a pytest.ini ([pytest] section) at the repo root"


def test_the_example_suite_ships_an_impossible_twin(tasks):
    """Made by `passhat task impossible` (check-task --all checks that the reference fails it): the same task as
    its source but for one changed expected value, one prompt line and `expect: impossible`."""
    twins = [t for t in tasks if t.expect == "impossible"]
    assert [t.id for t in twins] == ["py-median-impossible"]
    twin, source = twins[0], next(t for t in tasks if t.id == "py-median")
    assert twin.graders == source.graders and twin.prompt.startswith(source.prompt)
    before, after = source.test_patch.read_text().splitlines(), twin.test_patch.read_text().splitlines()
    changed = [(old, new) for old, new in zip(before, after, strict=True) if old != new]
    assert len(changed) == 1 and changed[0][0].startswith("+")
