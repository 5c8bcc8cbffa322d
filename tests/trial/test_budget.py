"""The budget guard's ledger: forecast, refusal, settling, and a trial whose worker died; `budget_usd` checked."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from passhat.common._budget import REACHED, Ledger, budget_of
from passhat.common._errors import PasshatError
from passhat.trial._config import parse_config


def test_admit_forecasts_from_the_finished_trials(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path, "eval-1")
    first = ledger.admit(1.0, None)  # nothing finished, no max_budget_usd: nothing to forecast from, it runs
    assert first.token is not None
    ledger.settle(first.token, 0.4)
    second = ledger.admit(1.0, None)  # 0.4 spent + 1 x 0.4 = 0.8 <= 1.0
    assert second.token is not None
    third = ledger.admit(1.0, None)  # 0.4 spent + 2 in flight x 0.4 = 1.2 > 1.0: refused
    assert third.token is None and third.refusal is not None and third.refusal.startswith(REACHED)
    assert "raise budget_usd, then `promptfoo eval --retry-errors --repeat N`" in third.refusal
    ledger.settle(second.token, 0.4)
    assert ledger.spent() == pytest.approx(0.8)
    assert ledger.admit(1.0, None).token is None  # 0.8 + 0.4 = 1.2 > 1.0


def test_max_budget_usd_forecasts_the_first_trials(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path, "eval-2")
    assert ledger.admit(1.0, 0.6).token is not None  # 0 + 1 x 0.6 <= 1.0
    assert ledger.admit(1.0, 0.6).token is None  # 0 + 2 x 0.6 > 1.0


def test_an_unknown_cost_is_not_in_the_mean(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path, "eval-3")
    token = ledger.admit(1.0, None).token
    assert token is not None
    ledger.settle(token, None)
    data = json.loads(ledger.path.read_text())
    assert (data["spent_usd"], data["finished"], data["in_flight"]) == (0.0, 0, {})


def _hold(state: str) -> None:  # a worker that starts a trial and dies before it ends (Ctrl+C)
    Ledger(Path(state), "eval-4").admit(1.0, 0.6)


def test_a_trial_whose_worker_died_leaves_the_in_flight_list(tmp_path: Path) -> None:
    process = multiprocessing.get_context("fork").Process(target=_hold, args=(str(tmp_path),))
    process.start()
    process.join()
    ledger = Ledger(tmp_path, "eval-4")
    assert len(json.loads(ledger.path.read_text())["in_flight"]) == 1
    assert ledger.admit(1.0, 0.6).token is not None  # the dead one is not counted: 1 x 0.6 <= 1.0


@pytest.mark.parametrize(
    ("raw", "env", "message"),
    [
        pytest.param({"budget_usd": -1}, {}, "provider config `budget_usd`: -1 is not a budget", id="negative"),
        pytest.param({"budget_usd": "20"}, {}, "provider config `budget_usd`: '20' is not a budget", id="text"),
        pytest.param({}, {"PASSHAT_BUDGET_USD": "lots"}, "$PASSHAT_BUDGET_USD: 'lots' is not a budget", id="env"),
    ],
)
def test_a_bad_budget_is_one_clear_error(raw: dict, env: dict[str, str], message: str) -> None:
    with pytest.raises(PasshatError, match="give a positive number of dollars") as caught:
        budget_of(raw, env)
    assert message in str(caught.value)


def test_budget_usd_is_a_known_provider_field(tmp_path: Path) -> None:
    parse_config({"budget_usd": 20, "basePath": str(tmp_path)})
    with pytest.raises(PasshatError, match="is not a budget"):
        parse_config({"budget_usd": 0, "basePath": str(tmp_path)})
    assert budget_of({}, {"PASSHAT_BUDGET_USD": "2.5"}) == 2.5


def test_a_bad_repeat_offset_is_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from passhat.trial._provider import call_api, repeat_offset

    monkeypatch.setenv("PASSHAT_REPEAT_OFFSET", "5")
    assert repeat_offset() == 5
    monkeypatch.setenv("PASSHAT_REPEAT_OFFSET", "-1")
    response = call_api("p", {"config": {}}, {"vars": {"task_id": "t"}, "repeatIndex": 0})
    assert response == {"error": "passhat: $PASSHAT_REPEAT_OFFSET='-1': expected a whole number >= 0 (the first "
                                 "repeat index of this round)",
                        "metadata": {"rateLimitKind": "quota"}}  # never rerun by promptfoo's scheduler  # fmt: skip
