"""grader_components: one component per grader of a saved row, whichever shape the row has — one assertion per
grader (evals before the combined assertion) or the one assertion of the deterministic graders, which Promptfoo
saves as its own component (graders nested) followed by flattened copies."""

from __future__ import annotations

import copy
import json

from conftest import ROOT

from passhat.judge._status import grader_components, unscored_by_judge

OLD = ROOT / "tests" / "report" / "data" / "ctrl-c-then-resume" / "results.json"  # one assertion per grader
NEW = ROOT / "tests" / "judge" / "data" / "one-graders-assertion" / "results.json"  # README: how it was made


def _rows(path):
    return [r for r in json.loads(path.read_text())["results"]["results"] if r.get("gradingResult")]


def _row(label: str, task: str) -> dict:
    [row] = [r for r in _rows(NEW) if r["provider"]["label"] == label and r["vars"]["task_id"] == task]
    return row


def _seen(components):
    return [(c["assertion"]["metric"], c["pass"], c["score"]) for c in components]


def test_an_old_row_gives_its_components_as_they_are():
    for row in _rows(OLD):
        assert grader_components(row) == row["gradingResult"]["componentResults"]


def test_a_new_row_gives_each_grader_once_with_its_metric_and_config():
    row = _row("noop", "write-changelog")
    saved = row["gradingResult"]["componentResults"]
    assert len(saved) == 1 + 4 + 1  # the graders' assertion, its 4 flattened copies, the judge
    components = grader_components(row)
    assert _seen(components) == [
        ("tests", False, 5 / 6),  # 5 of 6 listed tests pass on the untouched base
        ("files", False, 0.5),  # 1 of 2 checks holds
        ("diff-scope", True, 1),
        ("health", True, 1),
        ("judge", False, 0),
    ]
    assert [c["assertion"]["config"]["type"] for c in components] == [
        "tests",
        "files",
        "diff-scope",
        "health",
        "rubric",
    ]
    assert all("componentResults" not in c for c in components)
    # and each named score of the row is its grader's score
    assert {m: row["namedScores"][m] for m, _, _ in _seen(components)} == {m: s for m, _, s in _seen(components)}


def test_a_combined_component_without_flattened_copies_is_read_from_inside():
    row = copy.deepcopy(_row("noop", "py-rename-var"))
    saved = row["gradingResult"]["componentResults"]
    row["gradingResult"]["componentResults"] = saved[:1]  # as a Promptfoo that nests without flattening
    assert _seen(grader_components(row)) == _seen(grader_components(_row("noop", "py-rename-var")))
    assert [m for m, _, _ in _seen(grader_components(row))] == ["tests", "files", "diff-scope", "health"]


def test_rows_without_grading_give_nothing():
    for row in ({}, {"gradingResult": None}, {"gradingResult": {"componentResults": None}}, {"gradingResult": []}):
        assert grader_components(row) == []


def test_unscored_by_judge_looks_inside_the_combined_assertion():
    row = copy.deepcopy(_row("oracle", "write-changelog"))
    judge = row["gradingResult"]["componentResults"][-1]
    judge.update({"pass": False, "score": 0, "reason": "UNSCORED: the judge's reply had no verdict"})
    row["namedScores"]["judge_unscored"] = 1
    assert unscored_by_judge(row)  # every deterministic grader passed: neither passed nor failed
    failed = copy.deepcopy(row)
    for part in (failed["gradingResult"]["componentResults"][0]["componentResults"][1],
                 failed["gradingResult"]["componentResults"][2]):  # fmt: skip
        part.update({"pass": False, "score": 0.5, "reason": "1/2 file checks hold"})
    failed["gradingResult"]["componentResults"][0]["pass"] = False
    assert not unscored_by_judge(failed)  # files failed: the trial failed whatever the judge said
