"""`passhat estimate`: the cost of a trial from its turns, and the CLI on a rehearsal's results file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "report"))
from test_report import passhat_row, write_results

from passhat.cli import main
from passhat.rounds._estimate import Assumptions, Price, price_of, trial_cost


def test_trial_cost_by_hand() -> None:
    # 2 turns at $3 / $15 per million, S = 15,000, G = 1,500, O = 400:
    # written (15,000 + 1,500) x 3e-6 x 1.25 = 0.061875; read (2 x 15,000 + 1,500) x 3e-6 x 0.1 = 0.00945;
    # output 2 x 400 x 15e-6 = 0.012. Total 0.083325.
    sonnet = Price(3.0, 15.0)
    assert trial_cost(2, sonnet, Assumptions()) == pytest.approx(0.083325)
    assert trial_cost(4, sonnet, Assumptions()) > trial_cost(2, sonnet, Assumptions())
    assert price_of("claude-sonnet-4-5-20250929") == sonnet
    # Opus 5.5 reads its cache at 0.05x: read (2 x 15,000 + 1,500) x 4e-6 x 0.05 = 0.0063; written 16,500 x 4e-6 x
    # 1.25 = 0.0825; output 800 x 20e-6 = 0.016. Total 0.1048.
    assert trial_cost(2, price_of("claude-opus-5-5"), Assumptions()) == pytest.approx(0.1048)


def test_estimate_from_a_rehearsal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [passhat_row("a", "pass", turns=3, repeat=0), passhat_row("a", "pass", turns=5, repeat=1),
            passhat_row("a", "fail", turns=1, repeat=2), passhat_row("b", "fail", turns=2, repeat=0)]  # fmt: skip
    path = write_results(tmp_path / "rehearsal.json", rows)
    assert main(["estimate", str(path), "--repeat", "10", "--model", "claude-haiku-4-5"]) == 0
    out = capsys.readouterr().out
    # a: the passing trials' mean, 4 turns, doubled: 8; b: no pass, its 2 turns doubled: 4.
    a, b = trial_cost(8, Price(1.0, 5.0), Assumptions()), trial_cost(4, Price(1.0, 5.0), Assumptions())
    assert f"promptfoo eval --repeat 10: about ${(a + b) * 10:,.2f} (20 trials)." in out
    assert "How it guessed: a real trial takes 2x the scripted agent's turns" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--model", "gpt-5"], "--model 'gpt-5': no list price known", id="unknown-model"),
        pytest.param(["--price-in", "3"], "--price-in and --price-out go together", id="half-a-price"),
    ],
)
def test_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    path = write_results(tmp_path / "r.json", [passhat_row("a", "pass", turns=3)])
    assert main(["estimate", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("passhat: error: ") and message in err and "Traceback" not in err


def test_eval_refuses_the_arguments_it_sets_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--until-decided", "--out", str(tmp_path / "o"), "--", "-c", "x.yaml", "--repeat", "3"])
    assert code == 2
    assert "promptfoo argument '--repeat': passhat eval --until-decided sets" in capsys.readouterr().err
    assert main(["eval", "--resume", str(tmp_path / "nowhere")]) == 2
    assert "no rounds.json there" in capsys.readouterr().err
