"""The tests generator: one Promptfoo test per task; its deterministic graders as ONE python assertion (weight =
their count, no metric of its own), each judge as an assertion with its metric."""

from __future__ import annotations

from conftest import ROOT, TASKS

from passhat.tasks._load import load_task
from passhat.tasks._suite import GRADERS_FILE, promptfoo_test


def test_the_deterministic_graders_are_one_assertion_in_task_order():
    task = load_task(TASKS / "py-rename-var")
    [assertion] = promptfoo_test(task, ROOT / "assertions")["assert"]
    assert assertion == {
        "type": "python",
        "value": f"file://{ROOT / 'assertions' / GRADERS_FILE}",
        "weight": 4,  # the row's score stays the mean over its 4 graders
        "config": {"graders": [dict(g) for g in task.graders]},
    }
    assert [g["type"] for g in assertion["config"]["graders"]] == ["tests", "files", "diff-scope", "health"]
    assert (ROOT / "assertions" / GRADERS_FILE).is_file()


def test_a_judge_keeps_an_assertion_of_its_own():
    task = load_task(TASKS / "write-changelog")
    graders, judge = promptfoo_test(task, ROOT / "assertions")["assert"]
    assert graders["weight"] == 4 and "metric" not in graders
    assert judge["value"].endswith("assertions/rubric_judge.py")
    assert judge["metric"] == "judge" and judge["config"]["type"] == "rubric"


def test_a_function_names_each_assertion():
    task = load_task(TASKS / "write-changelog")
    values = [a["value"] for a in promptfoo_test(task, lambda kind: f"entry:{kind}")["assert"]]
    assert values == ["entry:graders", "entry:rubric"]
