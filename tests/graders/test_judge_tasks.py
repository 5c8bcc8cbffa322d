"""The judge in the suite: the judged example task, check-task (the rubric is validated, the call skipped),
the judge kinds' grade functions used by regrade, the unscored status a report can count, and — e2e — a real
`promptfoo eval` whose rows carry the judge's named scores, judge_version and unscored flag."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT, TASKS

from passhat.cli import main
from passhat.graders import TrialOutcome, grade, grader_kinds, load_graded_task, preflight
from passhat.graders._check import check_task
from passhat.graders._suite import ONE_FILE, promptfoo_test
from passhat.graders.view import view_of
from passhat.judge import RubricError, unscored_by_judge
from passhat.tasks._load import load_task
from passhat.trial._sandbox import prepare_base

TASK = "write-changelog"


def test_the_judged_task_has_a_rubric_grader_beside_cheap_deterministic_ones():
    task = load_task(TASKS / TASK)
    types = [g["type"] for g in task.graders]
    assert "rubric" in types and "tests" in types and "files" in types
    test = promptfoo_test(task, ROOT / "assertions")
    [judge] = [a for a in test["assert"] if a["config"].get("type") == "rubric"]
    assert judge["value"].endswith(f"assertions/{ONE_FILE}") and judge["metric"] == "judge"
    assert (ROOT / "assertions" / ONE_FILE).is_file()


def test_check_task_validates_the_rubric_and_skips_the_call(tmp_path):
    check = check_task(load_task(TASKS / TASK), tmp_path)
    assert check.ok and check.reference_failures == ()
    assert "judge" in check.empty_passes  # skipped, so it neither blocks the reference nor fails the empty patch
    assert "tests#0" not in check.empty_passes


def test_check_task_cli_names_the_judge(tmp_path, capsys):
    assert main(["check-task", str(TASKS / TASK), "--state-dir", str(tmp_path)]) == 0
    assert "ok      write-changelog: reference passes all 5 graders; empty patch fails tests#0, files#1 " \
           "(gets through diff-scope#2, health#3, judge)" in capsys.readouterr().out  # fmt: skip


def test_check_task_says_why_a_broken_rubric_breaks_the_task(tmp_path, capsys):
    task = tmp_path / "tasks" / TASK
    shutil.copytree(TASKS / TASK, task)
    data = yaml.safe_load((task / "task.yaml").read_text())
    data["graders"][-1]["rubric"] = "agent-outptu"
    (task / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["check-task", str(task), "--state-dir", str(tmp_path / "state")]) == 2
    err = capsys.readouterr().err
    assert "field 'rubric': 'agent-outptu' not found" in err and "\n" not in err.strip()


def test_judges_have_a_preflight():
    task = load_task(TASKS / TASK)
    [line] = preflight([task])
    assert line.startswith("write-changelog: graders[4] rubric agent-output, judge_version ")
    with pytest.raises(
        RubricError, match=r"task\.yaml: graders\[0\]: rubric grader config: field 'rubric': 'x' not found"
    ):
        preflight([dataclasses.replace(task, graders=({"type": "rubric", "rubric": "x"},))])


def test_the_task_schema_rejects_bad_judge_settings(tmp_path):
    task = tmp_path / TASK
    shutil.copytree(TASKS / TASK, task)
    data = yaml.safe_load((task / "task.yaml").read_text())
    data["graders"][-1]["max_attempts"] = 9
    (task / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(Exception, match=r"graders\[4\]\.max_attempts"):
        load_graded_task(task)


def test_graders_entry_judges_a_saved_outcome(fake_model, monkeypatch, tmp_path):
    monkeypatch.setenv("PASSHAT_FAKE_MODEL_URL", fake_model.url)
    task = load_task(TASKS / TASK)
    base = prepare_base(task, tmp_path / "cache")
    patch = tmp_path / "patch.diff"
    patch.write_bytes(task.solution.read_bytes())
    run = {"task_id": TASK, "repeat_index": 0, "patch_path": str(patch), "output": "Prepared 1.3.0."}
    outcome = TrialOutcome(task.dir, base.path, patch.read_bytes(), run)
    # `judge`: the diff holds every added line of the reference → excellent everywhere → 1.0
    solved = grade(outcome, {"type": "rubric", "rubric": "agent-output"})
    assert solved.passed and solved.score == 1.0 and solved.reason.startswith("PASS: overall 1.000 >= 0.7")
    empty = grade(TrialOutcome(task.dir, base.path, b"", run), {"type": "rubric", "rubric": "agent-output"})
    assert not empty.passed and empty.score == 0.0  # nothing of the reference → failed everywhere
    unscored = grader_kinds()["rubric"].grade(
        view_of(outcome), {"type": "rubric", "rubric": "agent-output", "fake_script": "judge-malformed"}
    )
    assert not unscored.passed and unscored.reason.startswith("UNSCORED: ")
    pair = grader_kinds()["pairwise"].grade(view_of(outcome), {"type": "pairwise"})
    assert pair.passed and pair.score == 0.5  # the same diff as the reference: a tie


def _row(named: dict, components: list[tuple[bool, str]]) -> dict:
    return {
        "namedScores": named,
        "gradingResult": {"componentResults": [{"pass": p, "reason": r} for p, r in components]},
    }


@pytest.mark.parametrize(
    ("row", "unscored"),
    [
        pytest.param(_row({"judge_unscored": 1}, [(True, "ok"), (False, "UNSCORED: malformed")]), True, id="only-judge"),
        pytest.param(_row({"judge_unscored": 0.5}, [(True, "ok"), (False, "UNSCORED: x"), (True, "PASS")]), True,
                     id="one-of-two-judges"),
        pytest.param(_row({"judge_unscored": 1}, [(False, "tests failed"), (False, "UNSCORED: x")]), False,
                     id="failed-anyway"),
        pytest.param(_row({"judge_unscored": 0}, [(False, "FAIL: overall 0.4")]), False, id="scored-fail"),
        pytest.param({"namedScores": {}}, False, id="no-judge"),
    ],
)  # fmt: skip
def test_unscored_by_judge(row, unscored):
    assert unscored_by_judge(row) is unscored


@pytest.mark.e2e
def test_promptfoo_eval_carries_the_judges_scores_and_the_unscored_flag(fake_model, tmp_path):
    """A real `promptfoo eval --repeat 2` (echo provider: no agent needed) with three judges per row."""
    config = {
        "description": "judge e2e", "prompts": ["{{prompt}}"], "providers": [{"id": "echo", "label": "echo"}],
        "tests": [{
            "description": TASK,
            "vars": {"task_id": TASK, "task_dir": str(TASKS / TASK), "prompt": "Prepare release 1.3.0"},
            "metadata": {"task_id": TASK},
            "assert": [
                {"type": "python", "value": f"file://{ROOT}/assertions/grader.py", "metric": "judge",
                 "config": {"type": "rubric", "name": "judge", "rubric": "agent-output", "fake_script": "judge:0.8"}},
                {"type": "python", "value": f"file://{ROOT}/assertions/grader.py", "metric": "broken",
                 "config": {"type": "rubric", "name": "broken", "rubric": "agent-output", "fake_script": "judge-malformed"}},
                {"type": "python", "value": f"file://{ROOT}/assertions/grader.py", "metric": "pairwise",
                 "config": {"type": "pairwise", "fake_script": "judge-first"}},
            ],
        }],
    }  # fmt: skip
    (tmp_path / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    env = {**os.environ, "PASSHAT_FAKE_MODEL_URL": fake_model.url, "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_PYTHON": sys.executable,
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo-home")}  # fmt: skip
    proc = subprocess.run(["promptfoo", "eval", "-c", "promptfooconfig.yaml", "--repeat", "2", "--no-cache",
                           "--no-progress-bar", "-o", "results.json"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode in (0, 100), proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = json.loads((tmp_path / "results.json").read_text())["results"]["results"]
    assert len(rows) == 2
    for row in rows:
        named = row["namedScores"]
        assert named["judge.completeness"] == pytest.approx(0.8)  # a criterion is a column in the viewer
        assert named["pairwise.position_bias"] == 1  # the swap caught the biased judge
        assert named["judge_unscored"] > 0  # one of the three judges could not be read
        by_metric = {c["assertion"]["metric"]: c for c in row["gradingResult"]["componentResults"]}
        assert by_metric["broken"]["reason"].startswith("UNSCORED: judge reply malformed after 3 attempt(s)")
        assert len(by_metric["judge"]["metadata"]["judge_version"]) == 12
        assert by_metric["pairwise"]["metadata"]["winner"] == "tie"
        assert unscored_by_judge(row)  # every other assertion passed: the row is unscored, not failed
    report = subprocess.run(["passhat", "report", "results.json", "--k", "1", "--format", "json"], cwd=tmp_path,
                            capture_output=True, text=True, env=env)  # fmt: skip
    assert report.returncode == 1 and "measured nothing" in report.stderr, report.stderr  # every row unscored
    judged = {d["judge"]: d for d in json.loads(report.stdout)["judge"]}
    assert judged["judge"]["scripted"] and judged["pairwise"]["scripted"]  # the scripted model's canned scores
    for form in ("table", "md", "html"):  # every text says so, beside the judge's name
        shown = subprocess.run(["passhat", "report", "results.json", "--k", "1", "--format", form], cwd=tmp_path,
                               capture_output=True, text=True, env=env).stdout  # fmt: skip
        shown = " ".join(shown.split())  # the title wraps at 120 columns
        assert "judge†" in shown and "the scripted judge (passhat fake-model): canned scores" in shown, (form, shown)
    noise = subprocess.run(["passhat", "judge-noise", "results.json", "--times", "2"], cwd=tmp_path, capture_output=True,
                           text=True, env=env)  # fmt: skip
    assert noise.returncode == 0 and "pass verdicts agree on 2/2 trials (1.00)" in noise.stdout, noise.stderr
