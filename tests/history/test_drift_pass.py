"""`passhat drift` on the pass/fail outcome, its default metric: a collapse of the pass rate is drift even when the
graders' continuous score hardly moves (a failed trial that passed 180 of 181 tests scores 0.998)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_drift import results

from passhat.cli import main
from passhat.history._drift import sample, verdict

CRITERIA = {"judge": 0.9, "judge.clarity": 0.9, "tests": 1.0}


def outcomes(root: Path, eval_id: str, day: int, passed: int, n: int, **named: float) -> str:
    """One task, n trials, the first `passed` passing (score 1.0), the rest failing with a score of 0.998."""
    path = Path(results(root, eval_id, day, {"alpha": [1.0] * n}, named=CRITERIA | named))
    data = json.loads(path.read_text())
    for row in data["results"]["results"][passed:]:
        row.update(success=False, failureReason=1, score=0.998, error="tests: 180 of 181 passed")
        row["gradingResult"].update({"pass": False, "score": 0.998})
        row["namedScores"] = {**row["namedScores"], "tests": 180 / 181, "Δsuite_pass_hat_10": -0.1}
    path.write_text(json.dumps(data))
    return str(path)


def drift(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["drift", *args])
    return code, capsys.readouterr().out


def test_ten_of_ten_to_one_of_ten_drifts_under_the_default_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "h.db")
    assert drift(capsys, outcomes(tmp_path, "e1", 1, 10, 10), "--db", db)[0] == 0
    code, out = drift(capsys, outcomes(tmp_path, "e2", 2, 1, 10), "--db", db, "--fail-on-drift")
    assert code == 1
    # Pass rate 10/10 -> 1/10: drop 0.9. SE: baseline 0 (all alike), batch sqrt(0.1 x 0.9 x 10/9) / sqrt(10) = 0.1;
    # SE of the difference sqrt(0^2 + 0.1^2) = 0.1, 2xSE = 0.2 < 0.9: drift.
    alpha = next(line for line in out.splitlines() if line.startswith("alpha "))
    assert alpha.split()[4:] == ["10", "1.000", "10", "0.100", "0.900", "0.200", "DRIFT"]
    assert "DRIFT alpha [sonnet]: mean 1.000 -> 0.100, drop 0.900 (> 2xSE 0.200)." in out
    assert "metric pass (each trial passed 1 / failed 0: the mean is the pass rate)" in out


def test_noise_in_the_pass_rate_is_not_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "h.db")
    drift(capsys, outcomes(tmp_path, "e1", 1, 7, 10), "--db", db)
    code, out = drift(capsys, outcomes(tmp_path, "e2", 2, 6, 10), "--db", db, "--fail-on-drift", "--format", "json")
    (alpha,) = json.loads(out)["series"]
    # 7/10 -> 6/10: drop 0.1. SEs sqrt(0.21 x 10/9 / 10) = 0.1528 and sqrt(0.24 x 10/9 / 10) = 0.1633; the difference's
    # sqrt(0.02333 + 0.02667) = 0.2236, 2xSE = 0.447 > 0.1: no drift, and no absolute threshold on a pass rate.
    assert (code, alpha["metric"], alpha["status"]) == (0, "pass", "ok")
    assert alpha["verdict"]["se_limit"] == pytest.approx(2 * 0.05**0.5)
    assert alpha["verdict"]["abs_limit"] is None


def test_the_rule_for_pass_rates_by_hand() -> None:
    # 10/10 -> 9/10: drop 0.1 < 2 x 0.1: not drift (the score rule's absolute 0.075 would have called it).
    assert not verdict(sample([1.0] * 10), sample([1.0] * 9 + [0.0]), None, difference=True).drifted
    # 10/10 -> 6/10: SE sqrt(0.24 x 10/9) / sqrt(10) = 0.1633, 2xSE = 0.327 < 0.4: drift.
    assert verdict(sample([1.0] * 10), sample([1.0] * 6 + [0.0] * 4), None, difference=True).drifted


def test_graders_and_judge_criteria_are_named_metrics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "h.db")
    drift(capsys, outcomes(tmp_path, "e1", 1, 10, 10), "--db", db)
    second = outcomes(tmp_path, "e2", 2, 10, 10, **{"judge.clarity": 0.5})
    code, out = drift(capsys, second, "--db", db, "--metric", "judge.clarity", "--format", "json")
    (alpha,) = json.loads(out)["series"]
    assert (alpha["metric"], alpha["status"]) == ("namedScores.judge.clarity", "drift")  # 0.9 -> 0.5
    code, out = drift(capsys, second, "--db", db, "--metric", "tests", "--format", "json")
    (alpha,) = json.loads(out)["series"]
    assert (alpha["metric"], alpha["status"]) == ("namedScores.tests", "ok")
    code, out = drift(capsys, second, "--db", db, "--metric", "score", "--format", "json")
    assert json.loads(out)["series"][0]["metric"] == "score"


def test_the_viewers_running_figures_are_not_stored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "h.db")
    code = main(["drift", outcomes(tmp_path, "e1", 1, 1, 10), "--db", db, "--metric", "Δsuite_pass_hat_10"])
    assert code == 2
    err = capsys.readouterr().err
    assert "no row has namedScores.Δsuite_pass_hat_10; named scores there: judge, judge.clarity, tests;" in err


def test_an_eval_that_measured_nothing_exits_1_saying_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every trial an infra error: the history keeps it as its series' unscored batch (tests/history/test_drift.py),
    and drift exits 1 saying it measured nothing."""
    path = Path(outcomes(tmp_path, "e1", 1, 0, 4))
    data = json.loads(path.read_text())
    for row in data["results"]["results"]:  # every trial an infra error
        row.update(success=False, failureReason=2, error="API Error: 403 forbidden")
    path.write_text(json.dumps(data))
    assert main(["drift", str(path), "--db", str(tmp_path / "h.db")]) == 1
    err = capsys.readouterr().err
    assert "passhat drift: measured nothing: none of the 4 trial(s) passed or failed" in err and "403" in err
