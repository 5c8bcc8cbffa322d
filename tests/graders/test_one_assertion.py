"""The one Promptfoo assertion of a trial's deterministic graders (passhat.graders._live.grade_all_promptfoo):
every grader on one outcome in one process, one component and one named score per grader; and `passhat regrade`
writing rows of the same shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from calc_task import JUNIT_TESTS, fix_add, make_trial

from passhat.graders._common import Grade, combined_result, component
from passhat.graders._live import grade_all_promptfoo
from passhat.graders._regrade import graded_components
from passhat.judge._status import grader_components
from passhat.trial._outcome import TrialOutcome

FILES_OK = {"type": "files", "checks": [{"path": "calc.py", "contains": "a + b"}]}
FILES_BAD = {"type": "files", "name": "no-todo", "checks": [{"path": "calc.py", "contains": "TODO"}]}
GRADERS = [JUNIT_TESTS, FILES_OK, FILES_BAD, {"type": "diff-scope", "allow": ["calc.py"]}, {"type": "health"}]


@pytest.fixture
def trial(tmp_path):
    return make_trial(tmp_path)


def _context(graders: list[dict], metadata: dict) -> dict:
    return {"config": {"graders": graders}, "providerResponse": {"metadata": metadata}}


def test_every_grader_is_one_component_with_its_metric_and_config(trial):
    result = grade_all_promptfoo(_context(GRADERS, trial(fix_add)))
    parts = result["componentResults"]
    assert [(p["assertion"]["metric"], p["pass"], p["score"]) for p in parts] == [
        ("tests", True, 1.0),
        ("files", True, 1.0),
        ("no-todo", False, 0.0),  # a grader's `name` is its metric
        ("diff-scope", True, 1.0),
        ("health", True, 1.0),
    ]
    assert [p["assertion"]["config"] for p in parts] == GRADERS
    assert result["pass"] is False and result["score"] == pytest.approx(4 / 5)  # (1+1+0+1+1)/5
    assert result["reason"] == "no-todo: 0/1 file checks hold; calc.py does not contain 'TODO'"
    assert result["namedScores"] == {
        "tests": 1.0, "files": 1.0, "no-todo": 0.0, "diff-scope": 1.0, "health": 1.0,
        "gamed": 0.0,  # no grader caught an attempt to game the tests
    }  # fmt: skip
    # Promptfoo multiplies these by the assertion's weight (5 graders): each metric then weighs 1, as before
    assert result["namedScoreWeights"] == dict.fromkeys(result["namedScores"], 1 / 5)


def test_two_graders_of_one_metric_score_their_mean_and_weigh_two(trial):
    result = grade_all_promptfoo(_context([FILES_OK, {**FILES_BAD, "name": "files"}], trial(fix_add)))
    assert result["namedScores"] == {"files": 0.5, "gamed": 0.0}  # (1 + 0) / 2, as Promptfoo averages two
    assert result["namedScoreWeights"] == {"files": 1.0, "gamed": 0.5}  # 2 graders / weight 2; gamed: one flag


def test_a_grader_that_caught_gaming_flags_the_trial_whatever_its_grade():
    """`gamed` is one flag per trial (named score 1, whichever grader caught it), beside the graders' scores."""
    caught = Grade(True, 1.0, "passes, but flagged", gamed=("runner-internals at pkg/__init__.py:3",))
    parts = [component(caught, {"type": "integrity"}), component(Grade(True, 1.0, "ok"), {"type": "health"})]
    result = combined_result(parts)
    assert result["pass"] is True and result["namedScores"]["gamed"] == 1.0
    assert parts[0]["metadata"] == {"gamed": ["runner-internals at pkg/__init__.py:3"]}


def test_the_outcome_is_built_once_and_graders_run_in_this_process(trial, tmp_path):
    metadata = trial(fix_add)
    code = (
        "import json, sys; from passhat.graders._live import grade_all_promptfoo as g;"
        "print(json.dumps(g(json.loads(sys.argv[1]))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(_context(GRADERS, metadata))], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["componentResults"]) == len(GRADERS)
    builds = (tmp_path / "state" / "cache" / "outcomes" / "builds.log").read_text().splitlines()
    assert len(builds) == 1


def test_a_trial_without_an_outcome_fails_every_grader_with_the_reason(trial, capsys):
    metadata = trial()
    Path(metadata["patch_path"]).unlink()
    result = grade_all_promptfoo(_context(GRADERS, metadata))
    assert result["pass"] is False and result["score"] == 0
    assert len(result["componentResults"]) == len(GRADERS)
    for part in result["componentResults"]:
        assert part["pass"] is False and "grader could not run: the trial's patch" in part["reason"]
    assert "is gone; regrade needs the artifacts folder" in capsys.readouterr().err


def test_a_patch_that_does_not_apply_fails_the_graders_that_read_the_tree(trial):
    metadata = trial()
    Path(metadata["patch_path"]).write_text(
        "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-nope\n+x\n"
    )
    result = grade_all_promptfoo(_context(GRADERS, metadata))
    verdicts = {p["assertion"]["metric"]: p for p in result["componentResults"]}
    for metric in ("tests", "files", "no-todo"):
        assert "the patch does not apply to the base" in verdicts[metric]["reason"]
    assert verdicts["health"]["pass"] is True  # the run itself ended cleanly


def test_regrade_saves_the_shape_promptfoo_saves(trial):
    outcome = TrialOutcome.from_metadata(trial(fix_add))
    saved, per_grader = graded_components(outcome, GRADERS)
    combined = saved[0]
    assert combined["assertion"]["weight"] == len(GRADERS) and "metric" not in combined["assertion"]
    assert combined["assertion"]["value"] == "file://assertions/graders.py"
    assert combined["componentResults"] == per_grader == saved[1:]  # nested, then flattened copies
    assert grader_components({"gradingResult": {"componentResults": saved}}) == per_grader
