"""`passhat judge-noise RESULTS.json --times N`: the same saved outputs regraded N times through the real
client and the scripted judge; the judge's own disagreement per criterion and for the pass verdict."""

from __future__ import annotations

import json

import pytest
from conftest import TASKS
from test_judge import TASK

from passhat.cli import main
from passhat.judge._noise import Series, summary


@pytest.fixture
def judge_env(fake_model, monkeypatch):
    monkeypatch.setenv("PASSHAT_FAKE_MODEL_URL", fake_model.url)
    return fake_model


def _row(trial: int, patch, config: dict, failure: int = 1) -> dict:
    meta = {"task_id": TASK, "repeat_index": trial, "task_dir": str(TASKS / TASK), "patch_path": str(patch)}
    return {
        "provider": {"id": "file://providers/claude_code.py", "label": "claude-code"},
        "vars": {"task_id": TASK, "prompt": "Prepare release 1.3.0."},
        "response": {"output": f"Done {trial}.", "metadata": meta},
        "failureReason": failure,
        "gradingResult": {"componentResults": [
            {"pass": True, "score": 1, "reason": "ok", "assertion": {"type": "python", "config": {"type": "health"}}},
            {"pass": True, "score": 0.8, "reason": "PASS", "assertion": {"type": "python", "metric": config.get("name"),
                                                                          "config": config}},
        ]},
    }  # fmt: skip


def _results(tmp_path, config: dict, trials: int = 3) -> str:
    patch = tmp_path / "patch.diff"
    patch.write_text((TASKS / TASK / "solution.patch").read_text())
    rows = [_row(i, patch, config) for i in range(trials)]
    rows.append({**_row(9, patch, config, failure=2), "gradingResult": None})  # an infra error: not regraded
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"evalId": "e", "results": {"version": 3, "results": rows}}))
    return str(path)


def test_a_deterministic_judge_has_no_noise(judge_env, tmp_path, capsys):
    path = _results(tmp_path, {"type": "rubric", "name": "judge", "rubric": "agent-output", "fake_script": "judge:0.8"})
    assert main(["judge-noise", path, "--times", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("judge judge (rubric agent-output, judge_version ")
    assert ": 3 trial(s) x 2 regrades" in out
    assert "instruction_following      0.000          0                 0/3" in out
    assert "pass verdicts agree on 3/3 trials (1.00); unscored regrades: 0 of 6" in out
    assert len([r for r in judge_env.requests if r["script"] == "judge"]) == 6  # 3 trials x 2, the infra error skipped


def test_a_noisy_judge_shows_its_disagreement(judge_env, tmp_path, capsys):
    path = _results(
        tmp_path, {"type": "rubric", "name": "judge", "rubric": "agent-output", "fake_script": "judge-noisy"}
    )
    assert main(["judge-noise", path, "--times", "3", "--format", "json", "-j", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    [grader] = data["graders"]
    assert grader["regrades"] == 9 and grader["unscored"] == 0 and grader["trials"] == 3
    sds = {c["criterion"]: c["pooled_sd"] for c in grader["criteria"]}
    assert set(sds) == {"instruction_following", "completeness", "tool_efficiency", "reasoning_quality", "coherence",
                        "(overall, 0..1)"}  # fmt: skip
    assert any(sd > 0 for sd in sds.values())
    assert all(c["max_range"] <= 2 for c in grader["criteria"] if c["criterion"] != "(overall, 0..1)")


def test_unscored_regrades_are_counted_not_scored(judge_env, tmp_path, capsys):
    path = _results(
        tmp_path, {"type": "rubric", "rubric": "agent-output", "fake_script": "judge-malformed", "max_attempts": 1}
    )
    assert main(["judge-noise", path]) == 0
    out = capsys.readouterr().out
    assert "pass verdicts: fewer than two scored regrades per trial; nothing to compare" in out


def test_pairwise_winner_agreement(judge_env, tmp_path, capsys):
    path = _results(tmp_path, {"type": "pairwise", "fake_script": "judge-first"}, trials=2)
    assert main(["judge-noise", path, "--times", "2"]) == 0
    out = capsys.readouterr().out
    assert "judge pairwise (pairwise vs the task's reference" in out
    assert "winners agree on 2/2 trials (1.00)" in out  # a biased judge is consistently biased: TIE every time


def test_summary_pooled_sd_by_hand():
    s = Series("judge", "rubric", "agent-output", {"v1"}, points={"style": [[4, 5], [3, 3], [2, 4]]},
               verdicts=[["pass", "pass"], ["fail", "pass"], ["fail", "fail"]], regrades=6)  # fmt: skip
    d = summary(s)
    # variances (n - 1): [4,5] 0.5, [3,3] 0, [2,4] 2 → pooled sqrt((0.5 + 0 + 2)/3) = sqrt(0.8333) = 0.9129
    [style] = d["criteria"]
    assert style["pooled_sd"] == pytest.approx((2.5 / 3) ** 0.5)
    assert style["max_range"] == 2 and style["trials_disagreeing"] == 2
    assert d["verdict_agreement"] == pytest.approx(2 / 3) and d["trials_agreeing"] == 2


def test_without_an_endpoint_it_refuses(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("PASSHAT_FAKE_MODEL_URL", raising=False)
    monkeypatch.delenv("PASSHAT_REAL_CLAUDE", raising=False)
    assert main(["judge-noise", str(tmp_path / "r.json")]) == 2
    assert "judge-noise: no judge endpoint: set PASSHAT_FAKE_MODEL_URL" in capsys.readouterr().err


def test_times_must_allow_a_comparison(capsys):
    with pytest.raises(SystemExit):
        main(["judge-noise", "r.json", "--times", "1"])
    assert "--times '1': regrade at least twice" in capsys.readouterr().err


def test_a_file_with_no_judge(judge_env, tmp_path, capsys):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"results": {"version": 3, "results": []}}))
    assert main(["judge-noise", str(path)]) == 0
    assert "no row was graded by a rubric or pairwise grader" in capsys.readouterr().out
