"""Recorded API replies (tests/data/api_recordings, served by `passhat fake-model --replay`) through passhat's model
proxy, in every chunking (whole, byte, utf8, data) and every encoding the CLI accepts (identity, gzip, deflate, br,
zstd): the client gets the exact bytes the upstream sent; the trial is charged each usage field, the tokens and
the dollars the manifest says; the witness records the outcome it says (errors as infra evidence); and a
model_tokens or model_usd cap set just below a reply's figures fires. One server and one proxy for the module (a few seconds; real
trials against recordings: test_replay_trials.py)."""

from __future__ import annotations

import json
import socket

import pytest
from conftest import ROOT, TASKS

from passhat.fake_model import Replay, load_recordings, start_in_thread
from passhat.fake_model._wire import ENCODINGS, SPLITS, decode
from passhat.trial._proxy import ModelProxy
from passhat.trial.spend import Spend

RECORDINGS = load_recordings(ROOT / "tests" / "data" / "api_recordings")
ACCEPT = {"identity": None, **{coding: f"{coding}, identity;q=0.1" for coding in ENCODINGS if coding != "identity"}}


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    upstream = start_in_thread(TASKS)
    upstream.front = replay = Replay(RECORDINGS)
    folder = tmp_path_factory.mktemp("proxy") / "run"
    folder.mkdir()
    proxy = ModelProxy(folder / "m.sock", upstream.origin, {"x-api-key": "REAL"}).start()
    yield proxy, replay, upstream.origin
    proxy.stop()
    upstream.stop()


def send(proxy: ModelProxy, name: str, chunking: str, encoding: str) -> tuple[int, dict[str, str], bytes]:
    """One CLI-shaped request through the proxy's unix socket: status, headers, body as the client got them."""
    recording = RECORDINGS[name]
    body = json.dumps({"model": recording.model, "max_tokens": 1024, "stream": recording.streams,
                       "messages": [{"role": "user", "content": "hello"}]}).encode()  # fmt: skip
    head = f"POST /v1/messages?beta=true&recording={name}&chunking={chunking} HTTP/1.1\r\nHost: x\r\n"
    head += "x-api-key: placeholder\r\ncontent-type: application/json\r\n"
    head += f"accept-encoding: {ACCEPT[encoding]}\r\n" if ACCEPT[encoding] else ""
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(30)
        client.connect(str(proxy.socket_path))
        client.sendall(f"{head}content-length: {len(body)}\r\n\r\n".encode() + body)
        data = b""
        while chunk := client.recv(65536):
            data += chunk
    raw_head, _, rest = data.partition(b"\r\n\r\n")
    lines = raw_head.decode().split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, rest


def nonzero(usage: object) -> dict:
    assert isinstance(usage, dict)
    return {k: v for k, v in usage.items() if v}


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("chunking", SPLITS)
@pytest.mark.parametrize("name", sorted(RECORDINGS))
def test_a_recorded_reply_through_the_proxy(proxied, name, chunking, encoding):
    proxy, replay, _ = proxied
    recording = RECORDINGS[name]
    # a token cap one below the reply's tokens (or none for a reply without usage)
    spend = proxy.spend = Spend(10, max(recording.tokens - 1, 1), 100.0, recording.model)
    status, headers, body = send(proxy, name, chunking, encoding)

    sent_name, sent_chunking, sent_encoding, sent = replay.sent[-1]
    assert (sent_name, sent_chunking, sent_encoding) == (name, chunking, encoding)
    assert status == recording.status and body == sent  # the client gets the upstream's bytes, as they were
    assert headers.get("content-encoding", "identity") == encoding and decode(body, encoding) == recording.body
    assert headers.get("retry-after") == dict(recording.headers).get("retry-after")

    assert proxy.witness.requests[-1][1:] == ("/v1/messages?beta=true&recording=" + name + f"&chunking={chunking}",
                                              recording.outcome)  # fmt: skip
    assert (proxy.witness.infra_evidence() is None) is (recording.outcome == "200")  # errors are the API's failing
    totals = spend.totals()
    assert nonzero(totals["usage"]) == nonzero(recording.usage)  # field by field
    assert totals["tokens"] == recording.tokens and totals["requests"] == 1
    assert totals["usd"] == pytest.approx(recording.usd, abs=1e-9)
    assert totals["unmetered"] is None
    if recording.tokens:
        assert "model_tokens" in str(totals["over"]), totals  # the token cap just below fired
        dollars = proxy.spend = Spend(10, 10**9, recording.usd * 0.99, recording.model)
        assert send(proxy, name, chunking, encoding)[2] == replay.sent[-1][3]
        assert "model_usd" in str(dollars.totals()["over"]) and dollars.tokens == recording.tokens
    else:
        assert totals["over"] is None and totals["usd"] == 0
