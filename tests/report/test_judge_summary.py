"""The judge's scores in a saved eval, per task, provider, judge and judge_version (for `passhat report`)."""

from __future__ import annotations

import json

import pytest

from passhat.report._judge_summary import judge_summary, judge_summary_lines


def _component(metric: str, score: float, passed: bool, version: str, criteria: dict | None = None,
               unscored: bool = False, kind: str = "rubric", **extra) -> dict:  # fmt: skip
    meta = {"judge_version": version, "judge_unscored": unscored, "rubric": "agent-output" if kind == "rubric" else None,
            "criteria": {k: {"value": v} for k, v in (criteria or {}).items()}, **extra}  # fmt: skip
    return {"pass": passed, "score": score, "reason": "UNSCORED: x" if unscored else "PASS",
            "metadata": meta, "assertion": {"metric": metric, "config": {"type": kind}}}  # fmt: skip


def _row(task: str, *components: dict) -> dict:
    return {"provider": {"id": "p", "label": "claude-code"}, "response": {"metadata": {"task_id": task}},
            "gradingResult": {"componentResults": [
                {"pass": True, "score": 1, "assertion": {"config": {"type": "tests"}}}, *components]}}  # fmt: skip


def test_means_per_task_judge_and_version(tmp_path):
    rows = [
        _row("a", _component("judge", 0.8, True, "v1", {"style": 0.8, "correctness": 1.0})),
        _row("a", _component("judge", 0.4, False, "v1", {"style": 0.3, "correctness": 0.6})),
        _row("a", _component("judge", 0.0, False, "v1", unscored=True)),
        _row("a", _component("judge", 1.0, True, "v2", {"style": 1.0, "correctness": 1.0})),  # another judge
        _row("b", _component("pairwise", 0.5, True, "p1", kind="pairwise", against="the task's reference",
                             winner="tie", position_bias=True)),
    ]  # fmt: skip
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"results": {"version": 3, "results": rows}}))
    data = {(d["task"], d["judge_version"]): d for d in judge_summary(path)}
    v1 = data[("a", "v1")]
    # scored 0.8 and 0.4 → mean 0.6; style (0.8 + 0.3)/2 = 0.55; correctness (1.0 + 0.6)/2 = 0.8; the unscored one apart
    assert v1["scored"] == 2 and v1["unscored"] == 1 and v1["passes"] == 1
    assert v1["mean_score"] == pytest.approx(0.6)
    assert v1["criteria"] == {"style": pytest.approx(0.55), "correctness": pytest.approx(0.8)}
    assert data[("a", "v2")]["mean_score"] == 1.0  # never averaged with v1
    assert data[("b", "p1")]["winners"] == {"tie": 1} and data[("b", "p1")]["position_bias"] == 1
    lines = judge_summary_lines(path)
    assert lines[1].startswith("LLM judge (scores 0..1; compare only within one judge_version")
    assert any(
        "a     claude-code  judge" in line and "v1" in line and "0.600   1/2" in line for line in lines[2].splitlines()
    )


def test_no_judge_no_lines(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(_row("a")) + "\n")
    assert judge_summary_lines(path) == []
