"""Direct scoring (grader type `rubric`) through the path a user takes: Promptfoo's python assertion
(`assertions/grader.py`, type rubric) → passhat.judge → the real anthropic client → the scripted judge.

Arithmetic is written in the comments: overall = sum(weight x level value); pass = overall >= threshold.
agent-output weights: instruction_following 0.30, completeness 0.25, tool_efficiency 0.20,
reasoning_quality 0.15, coherence 0.10; levels 5 excellent 1.0, 4 good 0.8, 3 acceptable 0.6, 2 poor 0.3,
1 failed 0.0.
"""

from __future__ import annotations

import importlib.util
import json
import shutil

import pytest
from conftest import ROOT, TASKS

from passhat.judge import CriterionScore, weighted_overall
from passhat.judge._direct import length_factor, same_model

TASK = "write-changelog"
CRITERIA = ["instruction_following", "completeness", "tool_efficiency", "reasoning_quality", "coherence"]


def load_assertion(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "assertions" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.get_assert


def context(config: dict, patch_path=None, model=None, trial: int = 0, task_dir=None) -> dict:
    """What Promptfoo hands a python assertion for one trial of the write-changelog task."""
    task_dir = str(task_dir or TASKS / TASK)
    metadata = {"task_id": TASK, "repeat_index": trial, "task_dir": task_dir, "model": model}
    if patch_path is not None:
        metadata["patch_path"] = str(patch_path)
    return {
        "prompt": "Prepare release 1.3.0 of tinyconf.",
        "vars": {"task_id": TASK, "task_dir": task_dir, "prompt": "Prepare release 1.3.0 of tinyconf."},
        "test": {"description": TASK, "metadata": {"task_id": TASK}},
        "providerResponse": {"output": "Done.", "metadata": metadata},
        "config": config,
    }


@pytest.fixture
def judge_env(fake_model, monkeypatch):
    monkeypatch.setenv("PASSHAT_FAKE_MODEL_URL", fake_model.url)
    monkeypatch.delenv("PASSHAT_REAL_CLAUDE", raising=False)
    return fake_model


@pytest.fixture
def rubric_judge():
    return load_assertion("grader")  # the entry of one grader of any kind: `rubric` in its config


def judge_requests(server, task=TASK):
    return [r for r in server.requests if r["task_id"] == task and r["script"] == "judge"]


def test_uniform_good_scores_pass_and_every_criterion_is_a_named_score(judge_env, rubric_judge):
    # judge:0.8 → every criterion at "good" (0.8): overall = 0.8 x (0.30+0.25+0.20+0.15+0.10) = 0.8 >= 0.7 → pass
    result = rubric_judge("Done.", context({"type": "rubric", "name": "judge", "rubric": "agent-output",
                                            "fake_script": "judge:0.8"}))  # fmt: skip
    assert result["pass"] is True
    assert result["score"] == pytest.approx(0.8)
    assert result["namedScores"] == {"judge_unscored": 0.0, **{f"judge.{c}": pytest.approx(0.8) for c in CRITERIA}}
    assert result["reason"].startswith("PASS: overall 0.800 >= 0.7 [rubric agent-output, judge_version ")
    assert "instruction_following 4/5 good" in result["reason"]
    meta = result["metadata"]
    assert meta["judge_unscored"] is False and meta["judge_attempts"] == 1
    assert meta["criteria"]["completeness"] == {"points": 4, "label": "good", "value": 0.8, "weight": 0.25,
                                                "evidence": ["passhat scripted judge (judge): target 0.80"],
                                                "justification": "scripted: the level nearest 0.80",
                                                "improvement": "scripted: none"}  # fmt: skip


def test_nearest_level_below_threshold_fails(judge_env, rubric_judge):
    # judge:0.5 → nearest level is acceptable 0.6 (|0.6-0.5| = 0.1 < |0.3-0.5| = 0.2): overall 0.6 < 0.7 → fail
    result = rubric_judge("Done.", context({"type": "rubric", "rubric": "agent-output", "fake_script": "judge:0.5"}))
    assert result["pass"] is False
    assert result["score"] == pytest.approx(0.6)
    assert result["reason"].startswith("FAIL: overall 0.600 < 0.7")
    assert result["namedScores"]["rubric.coherence"] == pytest.approx(0.6)  # metric defaults to the type


@pytest.mark.parametrize(
    ("points", "threshold", "overall", "passed"),
    [
        # 5,4,3,2,1: 0.30x1.0 + 0.25x0.8 + 0.20x0.6 + 0.15x0.3 + 0.10x0.0 = 0.30+0.20+0.12+0.045+0 = 0.665 < 0.7
        pytest.param("5,4,3,2,1", None, 0.665, False, id="mixed-fails-at-0.7"),
        # the same scores pass a lowered threshold: 0.665 >= 0.65
        pytest.param("5,4,3,2,1", 0.65, 0.665, True, id="threshold-override"),
        # 1,2,3,4,5: 0.30x0.0 + 0.25x0.3 + 0.20x0.6 + 0.15x0.8 + 0.10x1.0 = 0+0.075+0.12+0.12+0.10 = 0.415
        pytest.param("1,2,3,4,5", None, 0.415, False, id="reversed"),
        # 5,5,5,4,1: 0.30+0.25+0.20 + 0.15x0.8 + 0 = 0.87 >= 0.85 (a critical-style threshold)
        pytest.param("5,5,5,4,1", 0.85, 0.87, True, id="critical-threshold"),
        # exactly at the threshold passes: 4,4,4,4,4 = 0.8 >= 0.8
        pytest.param("4", 0.8, 0.8, True, id="at-threshold"),
    ],
)
def test_weighted_overall_matches_hand_arithmetic(judge_env, rubric_judge, points, threshold, overall, passed):
    config = {"type": "rubric", "rubric": "agent-output", "fake_script": f"judge-points:{points}"}
    if threshold is not None:
        config["threshold"] = threshold
    result = rubric_judge("Done.", context(config))
    assert result["score"] == pytest.approx(overall)
    assert result["pass"] is passed


def test_weighted_overall_pure():
    # 0.5 x 1.0 + 0.3 x 0.6 + 0.2 x 0.3 = 0.5 + 0.18 + 0.06 = 0.74
    scores = (CriterionScore("a", 0.5, 5, "excellent", 1.0), CriterionScore("b", 0.3, 3, "acceptable", 0.6),
              CriterionScore("c", 0.2, 2, "poor", 0.3))  # fmt: skip
    assert weighted_overall(scores) == pytest.approx(0.74)


def test_three_point_rubric(judge_env, rubric_judge):
    # code-readability: naming 0.30, structure 0.30, comments 0.20, simplicity 0.20; good 1.0 / acceptable 0.5 / poor 0
    # points 3,2,2,1: 0.30x1.0 + 0.30x0.5 + 0.20x0.5 + 0.20x0 = 0.30+0.15+0.10 = 0.55 < 0.7
    result = rubric_judge("Done.", context({"type": "rubric", "rubric": "code-readability",
                                            "fake_script": "judge-points:3,2,2,1"}))  # fmt: skip
    assert result["score"] == pytest.approx(0.55) and result["pass"] is False
    assert "naming 3/3 good; structure 2/3 acceptable" in result["reason"]


def test_conciseness_criterion_rescales_the_others(judge_env, rubric_judge):
    # + conciseness (weight 0.1): the five criteria scaled by 0.9; points 5,5,5,5,5 then conciseness 1 (failed):
    # 0.9 x 1.0 + 0.1 x 0.0 = 0.9
    result = rubric_judge("Done.", context({"type": "rubric", "rubric": "agent-output", "conciseness": True,
                                            "fake_script": "judge-points:5,5,5,5,5,1"}))  # fmt: skip
    assert result["score"] == pytest.approx(0.9)
    assert result["namedScores"]["rubric.conciseness"] == 0.0
    assert result["metadata"]["criteria"]["instruction_following"]["weight"] == pytest.approx(0.27)  # 0.30 x 0.9


def test_length_normalized_score(judge_env, rubric_judge):
    # budget 100 characters; the final text is 400 (no diff): factor (100/400)^0.5 = 0.5; 0.8 x 0.5 = 0.4 < 0.7
    config = {"type": "rubric", "rubric": "agent-output", "fake_script": "judge:0.8", "length_normalize": True,
              "length_budget": 100}  # fmt: skip
    result = rubric_judge("x" * 400, context(config))
    assert result["namedScores"]["rubric.length_normalized"] == pytest.approx(0.4)
    assert result["score"] == pytest.approx(0.4) and result["pass"] is False
    assert result["metadata"]["overall"] == pytest.approx(0.8)
    assert "length-normalized overall 0.400 < 0.7" in result["reason"]
    assert length_factor(100, 100) == 1.0 and length_factor(900, 100) == pytest.approx(1 / 3)


def test_the_judge_sees_task_output_diff_and_ground_truth_and_is_told_not_to_reward_length(
    judge_env, rubric_judge, tmp_path
):
    patch = tmp_path / "patch.diff"
    patch.write_text("diff --git a/CHANGELOG.md b/CHANGELOG.md\n+## [1.3.0] - 2026-12-01\n")
    rubric_judge("My final words.", context({"type": "rubric", "rubric": "agent-output", "fake_script": "judge:0.8"},
                                            patch_path=patch))  # fmt: skip
    body = judge_requests(judge_env)[-1]["body"]
    user = body["messages"][0]["content"]
    assert "<task>\nPrepare release 1.3.0 of tinyconf.\n</task>" in user
    assert "<agent_final_message>\nMy final words.\n</agent_final_message>" in user
    assert "+## [1.3.0] - 2026-12-01" in user.split("<agent_diff>")[1]
    assert (TASKS / TASK / "solution.patch").read_text().strip() in user  # the reference patch
    assert "<reference_output>\nPrepared 1.3.0" in user  # task.yaml reference_output
    assert "Length is not quality" in body["system"]
    assert "temperature" not in body  # the default model (Claude 5.5) takes no sampling parameters
    assert body["tool_choice"] == {"type": "tool", "name": "record_grades"}
    one = body["tools"][0]["input_schema"]["properties"]["criteria"]["properties"]["completeness"]
    assert list(one["properties"]) == ["evidence", "justification", "score", "improvement"]  # evidence first
    assert one["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]


def test_temperature_zero_where_the_model_takes_it(judge_env, rubric_judge):
    result = rubric_judge("Done.", context({"type": "rubric", "rubric": "agent-output", "fake_script": "judge:0.8",
                                            "model": "claude-haiku-4-5"}))  # fmt: skip
    assert judge_requests(judge_env)[-1]["body"]["temperature"] == 0
    assert result["metadata"]["judge_temperature"] == 0


def test_a_malformed_judge_is_retried_a_bounded_number_of_times_then_the_trial_is_unscored(judge_env, rubric_judge):
    result = rubric_judge("Done.", context({"type": "rubric", "name": "judge", "rubric": "agent-output",
                                            "fake_script": "judge-malformed"}))  # fmt: skip
    assert len(judge_requests(judge_env)) == 3  # max_attempts default 3: a text reply, a score off the scale, {}
    assert result["pass"] is False and result["score"] == 0.0
    assert result["reason"].startswith("UNSCORED: judge reply malformed after 3 attempt(s); last: record_grades input")
    assert result["namedScores"] == {"judge_unscored": 1.0}  # no criterion scores: nothing to average as a 0
    assert result["metadata"]["judge_unscored"] is True and result["metadata"]["judge_attempts"] == 3
    assert result["metadata"]["judge_version"] in result["reason"]


def test_retries_say_what_was_wrong_and_a_later_good_reply_counts(judge_env, rubric_judge):
    result = rubric_judge("Done.", context({"type": "rubric", "rubric": "agent-output", "fake_script": "judge-malformed:2",
                                            "max_attempts": 3}))  # fmt: skip
    assert result["metadata"]["judge_unscored"] is False and result["metadata"]["judge_attempts"] == 3
    assert result["namedScores"]["judge_unscored"] == 0.0
    bodies = [r["body"] for r in judge_requests(judge_env)]
    assert [len(b["messages"]) for b in bodies] == [1, 3, 5]  # each retry resends the bad reply and the problem
    second_feedback = bodies[2]["messages"][-1]["content"]
    assert second_feedback[0]["type"] == "tool_result" and second_feedback[0]["is_error"] is True
    assert "99 is not one of [1, 2, 3, 4, 5]" in second_feedback[0]["content"]


def test_max_attempts_bounds_the_calls(judge_env, rubric_judge):
    result = rubric_judge("Done.", context({"type": "rubric", "rubric": "agent-output", "fake_script": "judge-malformed",
                                            "max_attempts": 1}))  # fmt: skip
    assert len(judge_requests(judge_env)) == 1
    assert result["reason"].startswith(
        "UNSCORED: judge reply malformed after 1 attempt(s); last: no call of record_grades"
    )


def test_an_api_outage_leaves_the_trial_unscored(judge_env, rubric_judge):
    result = rubric_judge("Done.", context({"type": "rubric", "rubric": "agent-output", "fake_script": "error:500"}))
    assert result["reason"].startswith("UNSCORED: judge API error after the SDK's retries: InternalServerError")
    assert result["namedScores"] == {"judge_unscored": 1.0} and result["pass"] is False


def test_without_an_endpoint_the_trial_is_unscored_not_failed(monkeypatch, rubric_judge):
    monkeypatch.delenv("PASSHAT_FAKE_MODEL_URL", raising=False)
    monkeypatch.delenv("PASSHAT_REAL_CLAUDE", raising=False)
    result = rubric_judge("Done.", context({"type": "rubric", "rubric": "agent-output"}))
    assert result["reason"].startswith("UNSCORED: no judge endpoint: set PASSHAT_FAKE_MODEL_URL")
    assert result["namedScores"] == {"judge_unscored": 1.0}


def test_judge_version_is_recorded_and_changes_with_rubric_model_and_scale(judge_env, rubric_judge, tmp_path):
    def version(config, task_dir=None):
        result = rubric_judge(
            "Done.", context({"type": "rubric", "fake_script": "judge:0.8", **config}, task_dir=task_dir)
        )
        assert f"judge_version {result['metadata']['judge_version']}" in result["reason"]
        return result["metadata"]["judge_version"]

    base = version({"rubric": "agent-output"})
    assert len(base) == 12 and version({"rubric": "agent-output"}) == base  # same judge, same version
    assert version({"rubric": "agent-output", "model": "claude-opus-4-1"}) != base
    assert version({"rubric": "code-change"}) != base
    assert version({"rubric": "agent-output", "conciseness": True}) != base
    assert version({"rubric": "agent-output", "threshold": 0.9}) == base  # the threshold does not change scores
    edited = tmp_path / "rubrics" / "agent-output.yaml"  # one word changed in a level description
    edited.parent.mkdir()
    edited.write_text((ROOT / "rubrics" / "agent-output.yaml").read_text().replace("briefly", "concisely"))
    assert version({"rubric": str(edited)}) != base


def test_self_judging_is_warned(judge_env, rubric_judge, capsys):
    config = {"type": "rubric", "rubric": "agent-output", "fake_script": "judge:0.8", "model": "claude-sonnet-4-6"}
    result = rubric_judge("Done.", context(config, model="claude-sonnet-4-6-20260101"))
    assert (
        "WARNING: judge model claude-sonnet-4-6 is the agent's model (claude-sonnet-4-6-20260101)" in result["reason"]
    )
    assert result["metadata"]["self_judging"] is True
    assert "self-enhancement bias" in capsys.readouterr().err
    other = rubric_judge("Done.", context(config, model="claude-haiku-4-5"))
    assert "WARNING" not in other["reason"] and other["metadata"]["self_judging"] is False


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [("claude-sonnet-4-5", "claude-sonnet-4-5", True), ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929", True),
     ("claude-sonnet-4-5", "claude-sonnet-4", False), ("claude-sonnet-4-5", None, False),
     ("claude-opus-4-1-latest", "Claude-Opus-4-1", True)],
)  # fmt: skip
def test_same_model(a, b, same):
    assert same_model(a, b) is same


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param({"rubrik": "agent-output"}, "rubric grader config: field 'rubrik': 'agent-output': unknown field",
                     id="typo"),
        pytest.param({}, "rubric grader config: field 'rubric': None: name a rubric", id="no-rubric"),
        pytest.param({"rubric": "nope"}, "field 'rubric': 'nope' not found (tried ", id="missing-rubric"),
        pytest.param({"rubric": "agent-output", "threshold": 7}, "field 'threshold': 7: the overall score is in 0..1",
                     id="threshold"),
        pytest.param({"rubric": "agent-output", "max_attempts": 50}, "field 'max_attempts': 50: use 1..5",
                     id="unbounded-retries"),
    ],
)  # fmt: skip
def test_bad_settings_fail_the_assertion_with_the_fix(judge_env, rubric_judge, config, message):
    result = rubric_judge("Done.", context({"type": "rubric", **config}))
    assert result["pass"] is False and result["score"] == 0.0
    assert result["reason"].startswith("rubric grader could not run: ")
    assert message in result["reason"]


def test_a_task_local_rubric_is_found_next_to_task_yaml(judge_env, rubric_judge, tmp_path):
    task = tmp_path / "tasks" / TASK
    shutil.copytree(TASKS / TASK, task)
    (task / "mine.yaml").write_text((ROOT / "rubrics" / "code-readability.yaml").read_text()
                                    .replace("name: code-readability", "name: mine"))  # fmt: skip
    result = rubric_judge(
        "Done.", context({"type": "rubric", "rubric": "mine.yaml", "fake_script": "judge:1"}, task_dir=task)
    )
    assert result["pass"] is True and "[rubric mine," in result["reason"]


def test_grading_result_is_json_serializable(judge_env, rubric_judge):
    result = rubric_judge("Done.", context({"type": "rubric", "rubric": "agent-output", "fake_script": "judge:0.8"}))
    assert json.loads(json.dumps(result)) == result
