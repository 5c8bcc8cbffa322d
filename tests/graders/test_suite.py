"""The tests generator: one Promptfoo test per task; its deterministic graders as ONE python assertion (weight =
their count, no metric of its own), each judge as an assertion with its metric — which is which, from the
registry of grader kinds."""

from __future__ import annotations

from conftest import ROOT, TASKS

from passhat.graders import grader_kinds, load_graded_task
from passhat.graders._settings import graders_of
from passhat.graders._suite import ALL_FILE, ONE_FILE, promptfoo_test


def test_the_deterministic_graders_are_one_assertion_in_task_order():
    task = load_graded_task(TASKS / "py-rename-var")
    [assertion] = promptfoo_test(task, ROOT / "assertions")["assert"]
    assert assertion == {
        "type": "python",
        "value": f"file://{ROOT / 'assertions' / ALL_FILE}",
        "weight": 5,  # the row's score stays the mean over its 5 graders
        "config": {"graders": list(graders_of(task))},
    }
    # the task's graders, then the integrity scan every task with a tests grader gets (kinds/integrity.py)
    types = ["tests", "files", "diff-scope", "health", "integrity"]
    assert [g["type"] for g in assertion["config"]["graders"]] == types
    assert all(grader_kinds()[g["type"]].deterministic for g in task.graders)
    assert (ROOT / "assertions" / ALL_FILE).is_file()


def test_a_judge_keeps_an_assertion_of_its_own():
    task = load_graded_task(TASKS / "write-changelog")
    graders, judge = promptfoo_test(task, ROOT / "assertions")["assert"]
    assert graders["weight"] == 5 and "metric" not in graders  # tests, files, diff-scope, health + integrity
    assert judge["value"] == f"file://{ROOT / 'assertions' / ONE_FILE}"
    assert judge["metric"] == "judge" and judge["config"]["type"] == "rubric"
    assert not grader_kinds()["rubric"].deterministic


def test_a_function_names_each_assertion():
    task = load_graded_task(TASKS / "write-changelog")
    values = [a["value"] for a in promptfoo_test(task, lambda which: f"entry:{which}")["assert"]]
    assert values == ["entry:all", "entry:one"]
