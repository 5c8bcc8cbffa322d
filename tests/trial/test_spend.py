"""Spend the agent cannot take: code in the sandbox can send its own requests to the model through passhat's proxy,
on the team's key. The proxy caps a trial's requests, tokens and dollars (`limits: model_*`) and refuses requests
not shaped like the CLI's. The trial tests run a scripted agent (`commands`) whose Bash call loops requests
against ANTHROPIC_BASE_URL inside the sandbox; each cap is also run with a cap the loop stays under, where every
request of the loop reaches the model (so each test fails without its cap)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from conftest import ROOT

from passhat.common._errors import PasshatError, TaskError
from passhat.tasks._load import load_task
from passhat.trial._config import parse_config
from passhat.trial._isolation import confinement
from passhat.trial._limits import Limits
from passhat.trial._provider import call_api
from passhat.trial.spend import PRICES, USAGE_FIELDS, Price, Reading, Spend, billed_tokens, cost_usd, price, read_usage

needs_bwrap = pytest.mark.skipif(
    confinement("auto").bwrap is None, reason="bwrap cannot build a sandbox here: apt-get install bubblewrap"
)
MODEL = "claude-sonnet-4-5"

# --- the arithmetic --------------------------------------------------------------------------------


def test_list_prices_and_cost():
    assert price("claude-sonnet-4-5-20250929") == Price(3.0, 15.0)
    assert price("us.anthropic.claude-haiku-4-5-20251001-v1:0") == Price(1.0, 5.0)
    assert price("claude-opus-4-5@20251101") == Price(5.0, 25.0)
    # the bundled CLI's default: before, it was not listed and a $ cap charged it as Opus 4.1, 3.75x its price
    assert price("claude-opus-5-5") == Price(4.0, 20.0, 0.05)
    assert price("claude-sonnet-5-5") == Price(2.0, 10.0, 0.05) and price("claude-sonnet-5") == Price(2.0, 10.0)
    assert price("claude-unknown-9") == Price(10.0, 50.0, 0.025)  # not listed: the dearest, so the cap errs early
    usage = {"input_tokens": 1000, "output_tokens": 2000, "cache_creation_input_tokens": 4000}
    usage["cache_read_input_tokens"] = 10_000
    # sonnet: (1000·3 + 4000·3·1.25 + 10000·3·0.1 + 2000·15) / 1e6 = (3000 + 15000 + 3000 + 30000) / 1e6 = 0.051
    assert cost_usd(MODEL, usage) == pytest.approx(0.051)
    # opus 5.5, cache reads at 0.05x: (1000·4 + 4000·4·1.25 + 10000·4·0.05 + 2000·20) / 1e6 = 0.066
    assert cost_usd("claude-opus-5-5", usage) == pytest.approx(0.066)


def test_the_price_list_has_the_price_pages_cache_and_tool_rates():
    """The rates Anthropic's "Pricing" page shows per model (see the PRICES comment for what was read, and when)."""
    fable = price("claude-fable-5-1")  # $10 input: 5m writes $12.50, 1h writes $20, hits $0.25 per MTok
    assert (fable.cache_write_5m_usd, fable.cache_write_1h_usd, fable.cache_read_usd) == (12.5, 20.0, 0.25)
    opus = price("claude-opus-5")  # $5 input: $6.25, $10, $0.50
    assert (opus.cache_write_5m_usd, opus.cache_write_1h_usd, opus.cache_read_usd) == (6.25, 10.0, 0.5)
    assert all(p.web_search == 0.01 for _, p in PRICES)  # $10 per 1,000 searches


def test_a_one_hour_cache_write_costs_twice_the_input_and_a_five_minute_one_1_25x():
    # sonnet 4.5, $3/M: 1000 written for 5 minutes, 2000 for an hour (the API nests the breakdown)
    nested = {"cache_creation_input_tokens": 3000,
              "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000}}  # fmt: skip
    assert cost_usd(MODEL, nested) == pytest.approx((1000 * 3 * 1.25 + 2000 * 3 * 2) / 1e6)  # 3750 + 12000
    # before, all 3000 at 1.25x: 11250 / 1e6, the hour's writes under-charged by 37.5%
    assert cost_usd(MODEL, {"cache_creation_input_tokens": 3000}) == pytest.approx(3000 * 3 * 1.25 / 1e6)
    # a breakdown that covers part of the writes: the rest at the 5-minute rate (1000 + 500 at 1.25x, 1500 at 2x)
    part = {"cache_creation_input_tokens": 3000, "ephemeral_1h_input_tokens": 1500, "ephemeral_5m_input_tokens": 1000}
    assert cost_usd(MODEL, part) == pytest.approx((1500 * 3 * 1.25 + 1500 * 3 * 2) / 1e6)


def test_web_searches_are_charged_their_fee_and_web_fetches_their_tokens_only():
    usage = {"input_tokens": 1000, "server_tool_use": {"web_search_requests": 3, "web_fetch_requests": 5}}
    assert cost_usd(MODEL, usage) == pytest.approx(1000 * 3 / 1e6 + 3 * 0.01)  # $0.003 + 3 searches at $0.01


def test_the_token_cap_counts_cache_writes_once_and_the_totals_keep_every_field():
    spend = Spend(100, 10**9, 100.0, MODEL)
    spend.charge(MODEL, read_usage({"input_tokens": 10, "output_tokens": 20, "cache_creation_input_tokens": 300,
                                    "cache_read_input_tokens": 4000, "server_tool_use": {"web_search_requests": 1},
                                    "cache_creation": {"ephemeral_5m_input_tokens": 100,
                                                       "ephemeral_1h_input_tokens": 200}}))  # fmt: skip
    assert spend.tokens == 10 + 20 + 300 + 4000  # the 100 + 200 of the breakdown are the 300, not more
    assert billed_tokens({"ephemeral_1h_input_tokens": 50}) == 50  # a breakdown without its total still counts
    totals = spend.totals()
    assert set(totals) == {"requests", "tokens", "usd", "over", "unmetered", "usage"}
    assert totals["usage"] == {"input_tokens": 10, "output_tokens": 20, "cache_creation_input_tokens": 300,
                               "cache_read_input_tokens": 4000, "ephemeral_5m_input_tokens": 100,
                               "ephemeral_1h_input_tokens": 200, "web_search_requests": 1,
                               "web_fetch_requests": 0}  # fmt: skip
    # 10·3 + 100·3.75 + 200·6 + 4000·0.3 + 20·15 = 30 + 375 + 1200 + 1200 + 300 = 3105 per million, + $0.01
    assert totals["usd"] == pytest.approx(3105 / 1e6 + 0.01)


def test_limits_take_the_spend_caps_with_documented_defaults():
    limits = Limits()
    assert (limits.model_requests, limits.model_tokens, limits.model_usd) == (1000, 20_000_000, 20.0)
    assert Limits().merged({"model_usd": 0.5, "model_requests": 3}, "x").model_usd == 0.5
    with pytest.raises(PasshatError, match=r"'limits.model_usd': 0: expected a positive number \(dollars\)"):
        Limits().merged({"model_usd": 0}, "x")
    with pytest.raises(PasshatError, match=r"'limits.model_tokens': 1.5: expected a positive whole number"):
        Limits().merged({"model_tokens": 1.5}, "x")
    assert parse_config({"limits": {"model_tokens": 5000}}).limits.model_tokens == 5000


def test_a_task_sets_its_own_spend_caps(task_copy):
    folder = task_copy("py-median")
    text = (folder / "task.yaml").read_text()
    (folder / "task.yaml").write_text(text + "limits: {model_usd: 0.5, model_requests: 40}\n")
    limits = Limits().merged(load_task(folder).limits, "task.yaml")
    assert (limits.model_usd, limits.model_requests, limits.model_tokens) == (0.5, 40, Limits().model_tokens)
    (folder / "task.yaml").write_text(text + "limits: {model_usd: 0}\n")
    with pytest.raises(TaskError, match="model_usd"):
        load_task(folder)


# --- what the proxy admits -------------------------------------------------------------------------


def _body(model: str = MODEL) -> bytes:
    return json.dumps({"model": model, "max_tokens": 5, "messages": []}).encode()


@pytest.mark.parametrize(
    ("method", "path", "body", "why"),
    [
        pytest.param("GET", "/v1/models", b"", "is not a request the CLI makes", id="list-models"),
        pytest.param("POST", "/v1/messages/batches", _body(), "is not a request the CLI makes", id="batches"),
        pytest.param("POST", "/v1/files", _body(), "is not a request the CLI makes", id="files"),
        pytest.param("POST", "/v1/messages", _body("claude-opus-4-1"), "is not this trial's model", id="model"),
    ],
)
def test_requests_not_shaped_like_the_clis_are_refused(method, path, body, why):
    spend = Spend(10, 10**9, 100.0, MODEL)
    assert why in (spend.admit(method, path, body) or "")
    assert spend.requests == 0 and spend.breached is None  # refused, not counted, the trial goes on


def test_the_clis_own_requests_pass():
    spend = Spend(10, 10**9, 100.0, MODEL)
    assert spend.admit("POST", "/v1/messages?beta=true", _body("claude-sonnet-4-5-20250929")) is None
    assert spend.admit("POST", "/v1/messages/count_tokens?beta=true", _body()) is None
    assert spend.admit("POST", "/v1/messages", _body("claude-haiku-4-5")) is None  # side tasks, sub-agents
    alias = Spend(10, 10**9, 100.0, "sonnet")
    assert alias.admit("POST", "/v1/messages", _body("claude-sonnet-4-6")) is None
    assert alias.admit("POST", "/v1/messages", _body("claude-opus-4-6")) is not None
    pinned = Spend(10, 10**9, 100.0, None)  # no model configured: the first request (the CLI's) pins it
    assert pinned.admit("POST", "/v1/messages", _body("claude-opus-5-5")) is None
    assert pinned.admit("POST", "/v1/messages", _body("claude-opus-4-1")) is not None
    bedrock = Spend(10, 10**9, 100.0, MODEL, "bedrock")
    assert bedrock.admit("POST", "/model/us.anthropic.claude-sonnet-4-5-v1%3A0/invoke", b"{}") is None
    assert bedrock.admit("POST", "/model/us.anthropic.claude-opus-4-1-v1%3A0/invoke", b"{}") is not None
    vertex = Spend(10, 10**9, 100.0, MODEL, "vertex")
    path = "/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
    assert vertex.admit("POST", path, b"{}") is None
    count = "/projects/p/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict"
    assert vertex.admit("POST", count, _body()) is None and vertex.admit("POST", count, _body("claude-opus-4-1"))


def test_the_request_cap_refuses_the_one_past_it():
    spend = Spend(3, 10**9, 100.0, MODEL)
    assert [spend.admit("POST", "/v1/messages", _body()) for _ in range(3)] == [None] * 3
    assert "more than 3 requests" in (spend.admit("POST", "/v1/messages", _body()) or "")
    assert spend.breached == "model request limit (model_requests): more than 3 requests"


def test_usage_is_read_from_json_sse_and_bedrock_event_streams():
    """Through Reading (trial/spend), as the proxy feeds it; every shape in every chunking: tests/trial/
    test_proxy_events.py."""
    spend = Spend(100, 10**9, 100.0, MODEL)
    json_reply = Reading(200, "application/json", None, spend.meter("/v1/messages", _body()))
    json_reply.feed(b'{"usage": {"input_tokens": 120, "output_tokens": 30}}')
    assert json_reply.finish() == "200"
    stream = Reading(200, "text/event-stream", None, spend.meter("/v1/messages", _body()))
    for chunk in (b'event: message_start\ndata: {"type": "message_start", "message": {"usage": {"input_tok',
                  b'ens": 200, "output_tokens": 1}}}\n\n',
                  b'event: message_delta\ndata: {"type": "message_delta", "usage": {"output_tokens": 50}}\n\n',
                  b'event: message_stop\ndata: {"type": "message_stop"}\n\n'):  # fmt: skip
        stream.feed(chunk)
    assert stream.finish() == "200"
    free = Reading(200, "application/json", None, spend.meter("/v1/messages/count_tokens", _body()))
    free.feed(b'{"input_tokens": 999}')  # count_tokens is not billed
    free.finish()
    assert spend.tokens == (120 + 30) + (200 + 50)  # the message_delta's 50 output tokens override the start's 1
    assert spend.totals()["usage"] == {**dict.fromkeys(USAGE_FIELDS, 0), "input_tokens": 320, "output_tokens": 80}


def test_tokens_and_dollars_past_their_caps_end_the_trial():
    tokens = Spend(100, 1000, 100.0, MODEL)
    tokens.charge(MODEL, {"input_tokens": 900, "output_tokens": 100})
    assert tokens.breached is None  # 1000 is at the cap, not past it
    tokens.charge(MODEL, {"output_tokens": 1})
    assert tokens.breached == "model token limit (model_tokens): 1001 tokens, over 1000"
    assert "over its limit" in (tokens.admit("POST", "/v1/messages", _body()) or "")
    dollars = Spend(100, 10**9, 0.01, MODEL)
    dollars.charge(MODEL, {"output_tokens": 1000})  # 1000 · $15 / 1e6 = $0.015 > $0.01
    assert dollars.breached == "model spend limit (model_usd): $0.0150 at list prices, over $0.01"


# --- a scripted agent that loops requests in the sandbox --------------------------------------------

_LOOP = """
import json, os, sys, urllib.error, urllib.request
count, model, path, size = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
codes = []
for _ in range(count):
    body = {"model": model, "max_tokens": 5, "messages": [{"role": "user", "content": "x" * size}]}
    request = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + path, data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-loop": "1"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            codes.append(response.status)
    except urllib.error.HTTPError as error:
        codes.append(error.code)
print("LOOP-CODES", ",".join(map(str, codes)))
"""


def loop_trial(tmp_path, fake_model, count: int, limits: dict, model: str = MODEL, path: str = "/v1/messages",
               size: int = 10) -> tuple[dict, list[int], int]:  # fmt: skip
    """One confined trial of py-median whose agent loops `count` requests of its own: the trial's metadata, the
    statuses the loop printed (none when passhat ended the trial before the loop did), and how many of the
    loop's requests reached the model (the scripted model sees their `x-loop` header)."""
    script = base64.b64encode(_LOOP.encode()).decode()
    prompt = (
        f"RUN: echo {script} | base64 -d > $TMPDIR/loop.py && python3 $TMPDIR/loop.py {count} {model} {path} {size}\n"
    )
    config = {"basePath": str(ROOT), "state_dir": str(tmp_path / "state"), "fake_model_url": fake_model.url,
              "fake_script": "commands", "isolation": "bwrap", "timeout_s": 120, "model": MODEL, "limits": limits}  # fmt: skip
    response = call_api(prompt, {"config": config}, {"vars": {"task_id": "py-median"}, "repeatIndex": 0})
    transcript = Path(response["metadata"]["transcript_path"]).read_text()
    found = re.search(r"LOOP-CODES ([\d,]*)", transcript)
    codes = [int(c) for c in found.group(1).split(",") if c] if found else []
    reached = sum(1 for call in fake_model.calls if call["headers"].get("x-loop") == "1")
    return response["metadata"], codes, reached


@needs_bwrap
@pytest.mark.parametrize(("cap", "limited"), [pytest.param(8, True, id="capped"), pytest.param(1000, False, id="off")])
def test_an_agent_looping_requests_is_stopped_at_the_request_cap(tmp_path, fake_model, cap, limited):
    meta, codes, reached = loop_trial(tmp_path, fake_model, 20, {"model_requests": cap})
    if limited:  # the CLI's requests and the loop's share the cap; past it, refused, and the trial is over
        assert meta["status"] == "limit", meta
        assert "model request limit (model_requests): more than 8 requests" in meta["error"]
        assert meta["model_spend"]["requests"] == cap and meta["model_spend"]["over"] in meta["error"]
        assert reached < cap
        if codes:  # the loop finished before passhat ended the trial: it saw its refusals
            assert codes == [200] * reached + [403] * (20 - reached)
    else:  # the same loop, every request forwarded on the team's key
        assert meta["status"] == "ok", meta
        assert codes == [200] * 20 and reached == 20
        assert meta["model_spend"]["requests"] > 20 and meta["model_spend"]["over"] is None  # the CLI's + 20


@needs_bwrap
@pytest.mark.parametrize(("limits", "limited"), [
    pytest.param({"model_tokens": 30_000}, "model token limit (model_tokens)", id="tokens"),
    pytest.param({"model_usd": 0.1}, "model spend limit (model_usd)", id="dollars"),
    pytest.param({}, None, id="off"),
])  # fmt: skip
def test_an_agent_spending_tokens_is_stopped_at_the_token_and_dollar_caps(tmp_path, fake_model, limits, limited):
    # each request of the loop: 40,000 characters of messages, which the scripted model counts as ~10,000 input
    # tokens; 10 requests ≈ 100,000 tokens ≈ $0.30 at Sonnet's $3/M: over 30,000 tokens and over $0.10
    meta, codes, reached = loop_trial(tmp_path, fake_model, 10, limits, size=40_000)
    if limited:
        assert meta["status"] == "limit" and limited in meta["error"], meta
        assert reached < 10 and meta["model_spend"]["over"] in meta["error"]
        assert not codes or codes == [200] * reached + [403] * (10 - reached)
    else:
        assert meta["status"] == "ok" and codes == [200] * 10 and reached == 10, meta
        # the scripted model's usage, read from its replies: at least the ~10,000 input tokens of each request
        assert meta["model_spend"]["tokens"] >= 100_000 and meta["model_spend"]["usd"] >= 0.3  # 100,000 · $3/M


@needs_bwrap
@pytest.mark.parametrize(("model", "path"), [
    pytest.param("claude-opus-4-1", "/v1/messages", id="another-model"),
    pytest.param(MODEL, "/v1/messages/batches", id="another-path"),
])  # fmt: skip
def test_requests_unlike_the_clis_are_refused_in_a_trial(tmp_path, fake_model, model, path):
    meta, codes, reached = loop_trial(tmp_path, fake_model, 3, {}, model=model, path=path)
    assert codes == [403] * 3 and reached == 0
    assert meta["status"] == "ok"  # refused, not a cap: the trial goes on


@needs_bwrap
def test_the_same_loop_reaches_the_model_when_shaped_like_the_clis(tmp_path, fake_model):
    """The control of the test above: with the trial's model and path, the loop's requests get through."""
    meta, codes, reached = loop_trial(tmp_path, fake_model, 3, {})
    assert codes == [200] * 3 and reached == 3 and meta["status"] == "ok"
