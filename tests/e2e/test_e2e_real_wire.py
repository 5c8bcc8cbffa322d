"""The scripted model as demanding as the real API (issue 34, point 3), through the real bundled Claude Code CLI,
confined (bwrap: passhat's model proxy in the path): replies compressed as the CLI accepts (gzip, by default)
or in a forced coding, thinking and redacted thinking, pings, prompt-cache usage only in the final message_delta,
server tool use, an overloaded_error mid-stream, 529 with retry-after, bytes cut one at a time, inside multibyte
characters and inside `data:` lines, Bedrock's event stream. In each trial the CLI must fix the task (the task's
graders pass), and the trial's spend must be the usage the scripted model reported, field by field, priced by
passhat's one price list.
"""

from __future__ import annotations

import pytest
from conftest import ROOT, TASKS

from passhat.common._fake_route import route_url
from passhat.fake_model._wire import choose_encoding
from passhat.graders import load_graded_task
from passhat.graders._live import grade_all_promptfoo
from passhat.graders._suite import deterministic
from passhat.trial._isolation import confinement
from passhat.trial._provider import call_api
from passhat.trial.spend import cost_usd

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(confinement("auto").bwrap is None, reason="bwrap cannot build a sandbox here"),
]
TASK = "py-median"
MODEL = "claude-sonnet-4-5"


@pytest.fixture(scope="module")
def server():
    from passhat.fake_model import start_in_thread

    server = start_in_thread(TASKS, "oracle")
    yield server
    server.stop()


def run(tmp_path, server, script: str, repeat: int, **config) -> dict:
    settings = {"basePath": str(ROOT), "state_dir": str(tmp_path / "state"), "isolation": "bwrap", "timeout_s": 120}
    settings |= {"model": MODEL, **config}
    if "auth" not in config:
        settings |= {"fake_model_url": server.url, "fake_script": script}
    context = {"vars": {"task_id": TASK}, "repeatIndex": repeat, "evaluationId": "wire"}
    return call_api("Fix the bug.", {"config": settings}, context)


def check(server, response: dict, script: str, repeat: int) -> dict:
    """The trial fixed the task and the graders pass; its spend is the server's ledger, field by field, at list
    prices. The ledger counts the usage a broken stream reported in its message_start (input tokens, output 1):
    the proxy charges what the wire reported."""
    meta = response["metadata"]
    assert meta["status"] == "ok", meta.get("error") or response.get("error")
    assert meta["changed_paths"] == ["stats_utils/median.py"]
    graders = deterministic(load_graded_task(TASKS / TASK).graders)
    graded = grade_all_promptfoo({"config": {"graders": graders}, "providerResponse": response})
    assert graded["pass"], graded["reason"]
    key = (TASK, repeat, script)
    reported = server.reported(key, broken=True)
    assert meta["model_spend"]["usage"] == reported
    priced = sum(cost_usd(model, server.reported(key, model, broken=True)) for model in server.books.models(key))
    assert meta["model_spend"]["usd"] == pytest.approx(priced, abs=1e-6) and priced > 0
    return reported


@pytest.mark.parametrize(
    ("repeat", "script"),
    [
        pytest.param(0, "oracle", id="gzip-by-default"),
        pytest.param(1, "oracle+encoding:br", id="br"),
        pytest.param(2, "oracle+encoding:zstd", id="zstd"),
        pytest.param(3, "oracle+encoding:deflate", id="deflate"),
        pytest.param(4, "oracle+encoding:identity", id="identity"),
        pytest.param(5, "oracle+chunks:byte", id="one-byte-at-a-time"),
        pytest.param(6, "oracle+chunks:utf8+encoding:identity", id="inside-multibyte-characters"),
        pytest.param(7, "oracle+chunks:data+encoding:identity", id="inside-data-lines"),
    ],
)
def test_every_coding_and_cut_reaches_the_cli_and_is_metered(tmp_path, server, repeat, script):
    check(server, run(tmp_path, server, script, repeat), script, repeat)
    if script == "oracle":  # what reached the scripted model (through the proxy) asks for a compressed reply
        assert {choose_encoding(c["headers"].get("accept-encoding")) for c in trial_calls(server, repeat)} == {"gzip"}


def trial_calls(server, repeat: int) -> list[dict]:
    return [c for c in server.calls if c["route"][:2] == (TASK, repeat)]


def test_thinking_redacted_thinking_and_pings(tmp_path, server):
    script = "oracle+thinking+ping"
    check(server, run(tmp_path, server, script, 10), script, 10)
    assert {"thinking", "redacted_thinking"} <= sent_back(server, 10)  # the CLI sends them back: accepted


def sent_back(server, repeat: int) -> set[str]:
    """The types of the blocks the CLI's requests of the trial carried (the conversation so far)."""
    bodies = [r["body"] for r in server.requests if (r["task_id"], r["trial"]) == (TASK, repeat)]
    return {b.get("type") for body in bodies for m in body["messages"] for b in m["content"] if isinstance(b, dict)}


def test_prompt_cache_and_web_search_usage_are_charged_as_reported(tmp_path, server):
    script = "oracle+cache+web-search"
    reported = check(server, run(tmp_path, server, script, 11), script, 11)
    assert reported["cache_read_input_tokens"] > 0 and reported["ephemeral_1h_input_tokens"] > 0
    assert reported["web_search_requests"] == server.books.replies((TASK, 11, script))  # one per agent reply
    assert {"server_tool_use", "web_search_tool_result"} <= sent_back(server, 11)  # the CLI takes the blocks


def test_an_overloaded_error_mid_stream_is_retried_by_the_cli(tmp_path, server):
    """The CLI retries a stream broken by an overloaded_error event without streaming (stream: false)."""
    script = "oracle+stream-error:1"
    check(server, run(tmp_path, server, script, 12), script, 12)
    key = (TASK, 12, script)
    assert server.reported(key, broken=True) != server.reported(key)  # a stream did break
    streamed = [r["body"].get("stream", False) for r in server.requests if r["trial"] == 12]
    assert streamed[:2] == [True, False]


def test_529_overloaded_with_retry_after_is_retried(tmp_path, server):
    script = "oracle+overloaded:2"
    check(server, run(tmp_path, server, script, 13), script, 13)
    assert server.requests_total((TASK, 13, script)) >= 2 + 3  # two 529s, then the oracle's three turns


def test_the_real_shorthand_all_at_once(tmp_path, server):
    check(server, run(tmp_path, server, "oracle+real", 14), "oracle+real", 14)


def test_bedrock_event_stream_compressed_as_accepted(tmp_path, server, monkeypatch):
    script = "oracle+ping+cache"
    monkeypatch.setenv("GATEWAY_TOKEN", "passhat-wire-token")
    base = route_url(server.url, TASK, 15, script) + "/v1"
    auth = {"bedrock": {"region": "us-east-1", "token_env": "GATEWAY_TOKEN", "base_url": base}}
    response = run(tmp_path, server, script, 15, auth=auth)
    check(server, response, script, 15)
    streams = [c for c in trial_calls(server, 15) if c["endpoint"].endswith("/invoke-with-response-stream")]
    assert streams and {choose_encoding(c["headers"].get("accept-encoding")) for c in streams} == {"gzip"}
