"""passhat's one price list (passhat.trial.spend.PRICES: the proxy's dollar caps and `passhat estimate`) against an
independent reference: the bundled Claude Code CLI's own pricing. One scripted trial per entry, with the
provider's `model:` set to a model id the entry names; the CLI prices the scripted model's tokens and reports
`total_cost_usd`, which must be what passhat computes from the same usage.

Before, the list stopped at the 4.x models: the CLI's default model (claude-opus-5-5, $4 / $20) was not in it, so a
dollar cap charged it as the dearest entry (Opus 4.1, $15 / $75) and `passhat estimate` priced Sonnet 4.5 by
default. The scripted model reports no cache tokens, so this checks input and output prices; the cache
multipliers are from the price list (see the PRICES comment)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT

from passhat.trial._provider import call_api
from passhat.trial.spend import PRICES, cost_usd

pytestmark = pytest.mark.e2e
MODEL_IDS = {  # an id of each entry, as the API names the model
    "fable-5-1": "claude-fable-5-1",
    "mythos-5-1": "claude-mythos-5-1",
    "fable-5": "claude-fable-5",
    "mythos-5": "claude-mythos-5",
    "opus-5-5": "claude-opus-5-5",
    "opus-5": "claude-opus-5",
    "opus-4": "claude-opus-4-5-20251101",
    "sonnet-5-5": "claude-sonnet-5-5",
    "sonnet-5": "claude-sonnet-5",
    "sonnet-4": "claude-sonnet-4-5-20250929",
    "3-7-sonnet": "claude-3-7-sonnet-20250219",
    "haiku-5-5": "claude-haiku-5-5",
    "haiku-4-5": "claude-haiku-4-5-20251001",
    "3-5-haiku": "claude-3-5-haiku-20241022",
}


def test_every_entry_of_the_price_list_is_checked() -> None:
    assert list(MODEL_IDS) == [key for key, _ in PRICES]
    for key, model in MODEL_IDS.items():
        assert next(k for k, _ in PRICES if k in model) == key, model  # the id is priced by its own entry


@pytest.mark.parametrize("key", list(MODEL_IDS))
def test_the_cli_prices_each_model_as_passhat_does(key: str, tmp_path: Path, fake_model) -> None:
    model = MODEL_IDS[key]
    options = {"config": {"basePath": str(ROOT), "state_dir": str(tmp_path / "state"),
                          "fake_model_url": fake_model.url, "model": model, "fake_script": "noop"}}  # fmt: skip
    response = call_api("Say done.", options, {"vars": {"task_id": "py-median"}, "repeatIndex": 0})
    assert "error" not in response, response.get("error")
    meta = response["metadata"]
    trial = json.loads((Path(meta["transcript_path"]).parent / "trial.json").read_text())
    usage = {k: int(v) for k, v in trial["usage"].items() if k.endswith("_tokens") and isinstance(v, int)}
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert meta["cost_usd"] == pytest.approx(cost_usd(model, usage), rel=1e-9), (model, usage)


def test_a_model_the_cli_swaps_for_its_default_is_a_config_error_not_the_agents(tmp_path: Path, fake_model) -> None:
    """`model: claude-opus-4-1-20250805`: this CLI runs its default model instead, the proxy refuses that as not
    the trial's model, and the trial was booked `agent_crash` ("the agent's session broke it") — every trial, for
    a line of config. Nothing was answered before, so the agent had run nothing: now an infrastructure error that
    names the model asked for, the one configured and the fix."""
    options = {"config": {"basePath": str(ROOT), "state_dir": str(tmp_path / "state"),
                          "fake_model_url": fake_model.url, "model": "claude-opus-4-1-20250805",
                          "fake_script": "noop"}}  # fmt: skip
    response = call_api("Say done.", options, {"vars": {"task_id": "py-median"}, "repeatIndex": 0})
    meta = response["metadata"]
    assert meta["status"] == "infra_error", meta.get("status")
    assert (
        "the Claude Code CLI asked for model claude-opus-5-5, not the provider's `model: claude-opus-4-1"
        in (response["error"])
    )
    assert "set `model:` to one it runs" in response["error"]
