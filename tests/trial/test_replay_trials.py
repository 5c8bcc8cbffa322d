"""Real trials against recorded API replies: the bundled CLI in real-API mode (PASSHAT_REAL_CLAUDE=1, a dummy key,
ANTHROPIC_BASE_URL at `passhat fake-model --replay`'s `/<name>` route), confined, through its trial's own model proxy:
each recording that ends a turn (text, thinking with signature deltas, redacted thinking, web search, prompt-cache
usage) completes the trial, whose output is the recording's text and whose spend is the recording's usage and
dollars once per reply."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, TASKS

from passhat.fake_model import Replay, load_recordings, start_in_thread
from passhat.trial._isolation import confinement
from passhat.trial._provider import call_api

RECORDINGS = load_recordings(ROOT / "tests" / "data" / "api_recordings")


@pytest.fixture(scope="module")
def replay():
    upstream = start_in_thread(TASKS)
    upstream.front = front = Replay(RECORDINGS)
    yield front, upstream.origin
    upstream.stop()


def nonzero(usage: dict) -> dict:
    return {k: v for k, v in usage.items() if v}


needs_bwrap = pytest.mark.skipif(
    confinement("auto").bwrap is None, reason="bwrap cannot build a sandbox here: apt-get install bubblewrap"
)
ENDS_A_TURN = [r.name for r in RECORDINGS.values() if r.streams and r.outcome == "200" and b'"end_turn"' in r.body]


@needs_bwrap
@pytest.mark.parametrize("name", ENDS_A_TURN)
def test_a_real_trial_completes_through_a_recorded_reply(tmp_path, monkeypatch, replay, name):
    """PASSHAT_REAL_CLAUDE=1 with ANTHROPIC_BASE_URL at `<replay>/<name>`: the CLI, confined, gets the recording
    for every message request it makes (through its trial's own proxy), ends its turn, and the trial is charged
    the recording's usage and dollars once per reply, marked as the scripted model's (not money: its replies say so)."""
    front, origin = replay
    recording = RECORDINGS[name]
    monkeypatch.delenv("PASSHAT_FAKE_MODEL_URL", raising=False)
    monkeypatch.setenv("PASSHAT_REAL_CLAUDE", "1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-replay")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"{origin}/{name}")
    before = len([s for s in front.sent if s[0] == name])
    config = {"basePath": str(ROOT), "state_dir": str(tmp_path / "state"), "isolation": "bwrap", "timeout_s": 120,
              "model": recording.model}  # fmt: skip
    response = call_api("Say hello.", {"config": config}, {"vars": {"task_id": "py-median"}, "repeatIndex": 0})
    meta = response["metadata"]
    replies = len([s for s in front.sent if s[0] == name]) - before
    assert meta["status"] == "ok" and meta["scripted_model"] is True and replies >= 1, meta
    last_text = [d for n, d in _events(recording.body) if n == "content_block_delta" and "text" in d["delta"]][-1]
    assert last_text["delta"]["text"] in response["output"]
    spend = meta["model_spend"]
    assert nonzero(spend["usage"]) == {k: v * replies for k, v in nonzero(recording.usage).items()}
    assert spend["usd"] == pytest.approx(recording.usd * replies, abs=1e-6) and spend["over"] is None


def _events(body: bytes) -> list[tuple[str, dict]]:
    blocks = [dict(line.split(": ", 1) for line in b.split("\n")) for b in body.decode().split("\n\n") if b.strip()]
    return [(fields["event"], json.loads(fields["data"])) for fields in blocks]
