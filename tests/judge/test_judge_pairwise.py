"""Pairwise comparison (grader type `pairwise`) through `assertions/grader.py` and the scripted judge:
two passes with the positions swapped; a position-biased judge ends in TIE + position_bias, a consistent
one names the right winner; N shuffles take a majority vote with agreement as the confidence."""

from __future__ import annotations

import json

import pytest
from conftest import TASKS
from test_judge import TASK, context, judge_requests, load_assertion

from passhat.judge._pairwise import Decision, Vote, combine_swapped, majority, win_score

REFERENCE = (TASKS / TASK / "solution.patch").read_text()


@pytest.fixture
def judge_env(fake_model, monkeypatch):
    monkeypatch.setenv("PASSHAT_FAKE_MODEL_URL", fake_model.url)
    return fake_model


@pytest.fixture
def pairwise_judge():
    return load_assertion("grader")  # the entry of one grader of any kind: `pairwise` in its config


def _patch(tmp_path, text: str):
    path = tmp_path / "patch.diff"
    path.write_text(text)
    return path


def test_a_position_biased_judge_yields_a_tie_flagged_position_bias(judge_env, pairwise_judge, tmp_path):
    # judge-first says "A" whatever A is: pass 1 (trial first) → trial, pass 2 (reference first) → reference
    result = pairwise_judge(
        "Done.", context({"type": "pairwise", "fake_script": "judge-first"}, patch_path=_patch(tmp_path, ""))
    )
    meta = result["metadata"]
    assert [(v["order"], v["position"], v["winner"]) for v in meta["votes"]] == [
        ("output_first", "A", "output"), ("reference_first", "A", "reference")]  # fmt: skip
    assert meta["winner"] == "tie" and meta["confidence"] == 0.5 and meta["position_bias"] is True
    assert result["namedScores"] == {"judge_unscored": 0.0, "pairwise.position_bias": 1.0, "pairwise.confidence": 0.5}
    assert result["score"] == 0.5 and result["pass"] is True  # pass_on win_or_tie (default)
    assert "TIE, confidence 0.50 (position_bias: the verdict followed the position" in result["reason"]
    # the two requests really swapped the answers
    bodies = [r["body"]["messages"][0]["content"] for r in judge_requests(judge_env)]
    assert bodies[0].split("<answer_b>")[1].count("+## [1.3.0]") == 1  # reference second, then first
    assert bodies[1].split("<answer_b>")[0].count("+## [1.3.0]") == 1


def test_a_position_biased_tie_fails_when_only_a_win_passes(judge_env, pairwise_judge):
    result = pairwise_judge("Done.", context({"type": "pairwise", "fake_script": "judge-first", "pass_on": "win"}))
    assert result["pass"] is False and result["metadata"]["winner"] == "tie"


def test_a_consistent_judge_names_the_reference_when_the_trial_did_nothing(judge_env, pairwise_judge, tmp_path):
    # `judge`: the answer whose diff adds more lines wins; empty diff vs the reference's 15 added lines
    result = pairwise_judge(
        "Done.", context({"type": "pairwise", "fake_script": "judge"}, patch_path=_patch(tmp_path, ""))
    )
    meta = result["metadata"]
    assert [v["position"] for v in meta["votes"]] == ["B", "A"]  # the reference, wherever it stood
    assert meta["winner"] == "reference" and meta["position_bias"] is False
    assert meta["confidence"] == pytest.approx(0.9)  # mean of 0.9 and 0.9
    assert result["score"] == pytest.approx(0.1) and result["pass"] is False  # 1 - 0.9


def test_a_consistent_judge_names_the_trial_when_it_did_more(judge_env, pairwise_judge, tmp_path):
    more = REFERENCE + "+extra line one\n+extra line two\n"
    result = pairwise_judge("Done.", context({"type": "pairwise"}, patch_path=_patch(tmp_path, more)))
    assert result["metadata"]["winner"] == "output" and result["score"] == pytest.approx(0.9) and result["pass"] is True
    assert result["reason"].startswith(
        "PASS: the trial's answer wins, confidence 0.90 [pairwise vs the task's reference"
    )


def test_equal_answers_tie_without_position_bias(judge_env, pairwise_judge, tmp_path):
    result = pairwise_judge("Done.", context({"type": "pairwise"}, patch_path=_patch(tmp_path, REFERENCE)))
    assert result["metadata"]["winner"] == "tie" and result["metadata"]["position_bias"] is False


def test_shuffles_vote_and_report_agreement(judge_env, pairwise_judge, tmp_path):
    # judge-longer is consistent: the reference (final text + 15-line diff) is longer than "Done." + an empty diff,
    # so all 5 passes pick it whatever the order: winner reference, confidence 5/5 = 1.0
    config = {"type": "pairwise", "fake_script": "judge-longer", "shuffles": 5}
    result = pairwise_judge("Done.", context(config, patch_path=_patch(tmp_path, "")))
    meta = result["metadata"]
    assert len(meta["votes"]) == 5 and meta["winner"] == "reference" and meta["confidence"] == 1.0
    assert result["score"] == 0.0


def test_shuffles_with_a_position_biased_judge(judge_env, pairwise_judge):
    config = {"type": "pairwise", "fake_script": "judge-first", "shuffles": 5}
    meta = pairwise_judge("Done.", context(config, trial=3))["metadata"]
    orders = [v["order"] for v in meta["votes"]]
    firsts = orders.count("output_first")
    assert 0 < firsts < 5, orders  # seeded orders for task write-changelog trial 3: both occur
    expected = "output" if firsts > 5 - firsts else "reference"
    assert meta["winner"] == expected and meta["confidence"] == pytest.approx(max(firsts, 5 - firsts) / 5)
    assert meta["position_bias"] is True  # every pass said "A" while the order changed


def test_against_another_eval(judge_env, pairwise_judge, tmp_path):
    other = tmp_path / "other-patch.diff"
    other.write_text(REFERENCE)
    rows = [{"provider": {"label": "baseline"}, "response": {"output": "Baseline did it all.", "metadata": {
        "task_id": TASK, "repeat_index": 0, "patch_path": str(other)}}}]  # fmt: skip
    results = tmp_path / "baseline.json"
    results.write_text(json.dumps({"results": {"version": 3, "results": rows}}))
    config = {"type": "pairwise", "against_results": str(results), "against_provider": "baseline"}
    result = pairwise_judge("Done.", context(config, patch_path=_patch(tmp_path, "")))
    assert result["metadata"]["against"] == "baseline.json [baseline]" and result["metadata"]["winner"] == "reference"
    missing = pairwise_judge("Done.", context({**config, "against_provider": "nobody"}))
    assert missing["reason"].startswith("pairwise grader could not run: ")
    assert "has no row for task 'write-changelog' and provider 'nobody'" in missing["reason"]


def test_a_malformed_pairwise_judge_leaves_the_trial_unscored(judge_env, pairwise_judge):
    result = pairwise_judge("Done.", context({"type": "pairwise", "fake_script": "judge-malformed", "max_attempts": 2}))
    assert len(judge_requests(judge_env)) == 2  # the first pass gave up after 2 attempts; no second pass
    assert result["reason"].startswith("UNSCORED: judge reply malformed after 2 attempt(s)")
    assert result["namedScores"] == {"judge_unscored": 1.0} and result["pass"] is False and result["score"] == 0.0


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        pytest.param(Vote("output_first", "A", 0.9), Vote("reference_first", "B", 0.7), Decision("output", 0.8, False),
                     id="consistent-output"),  # mean(0.9, 0.7) = 0.8
        pytest.param(Vote("output_first", "B", 0.6), Vote("reference_first", "A", 1.0), Decision("reference", 0.8, False),
                     id="consistent-reference"),
        pytest.param(Vote("output_first", "A", 0.9), Vote("reference_first", "A", 0.9), Decision("tie", 0.5, True),
                     id="always-A"),
        pytest.param(Vote("output_first", "tie", 0.5), Vote("reference_first", "B", 0.9), Decision("tie", 0.5, True),
                     id="tie-vs-win"),
        pytest.param(Vote("output_first", "tie", 0.5), Vote("reference_first", "tie", 0.5), Decision("tie", 0.5, False),
                     id="both-tie"),
    ],
)  # fmt: skip
def test_combine_swapped(first, second, expected):
    got = combine_swapped(first, second)
    assert (got.winner, got.position_bias) == (expected.winner, expected.position_bias)
    assert got.confidence == pytest.approx(expected.confidence)


def test_majority_and_score():
    votes = [Vote("output_first", "A", 0.9), Vote("reference_first", "B", 0.9), Vote("output_first", "B", 0.9)]
    # winners: output, output, reference → output, agreement 2/3
    decision = majority(votes)
    assert decision.winner == "output" and decision.confidence == pytest.approx(2 / 3) and not decision.position_bias
    assert win_score(decision) == pytest.approx(2 / 3)
    split = majority([Vote("output_first", "A", 0.9), Vote("output_first", "B", 0.9)])
    assert split == Decision("tie", 0.5, False)  # 1 vs 1: no plurality
    assert win_score(Decision("reference", 0.75, False)) == 0.25
