"""The model proxy against an upstream that speaks like the real API: it compresses what the client accepts (the
bundled CLI sends `accept-encoding: gzip, deflate, br, zstd`), streams events in any chunking, ends a stream with
an `event: error`, and reports cache and server-tool usage. A tiny http.server on 127.0.0.1 plays that upstream;
requests go through ModelProxy's unix socket as the in-sandbox forwarder sends them. Each test checks what the
client got (the upstream's bytes, unchanged), what the trial was charged, and what the witness recorded."""

from __future__ import annotations

import gzip
import http.server
import json
import socket
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import brotli
import pytest
import zstandard

from passhat.trial._proxy import ModelProxy
from passhat.trial.spend import Spend

MODEL = "claude-sonnet-4-5"  # $3 / $15 per million tokens
CLI_ACCEPTS = "gzip, deflate, br, zstd"  # the bundled CLI's accept-encoding


def sse(*events: tuple[str, dict], newline: str = "\n") -> bytes:
    return "".join(
        f"event: {name}{newline}data: {json.dumps(data)}{newline}{newline}" for name, data in events
    ).encode()


START_USAGE = {"input_tokens": 25, "output_tokens": 1, "cache_creation_input_tokens": 3000,
               "cache_read_input_tokens": 40_000,
               "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000}}  # fmt: skip
TOOL_INPUT = '{"input_tokens": 999999, "path": "a.py"}'  # a tool's input: never usage


def message_events(final_usage: dict | None = None) -> list[tuple[str, dict]]:
    """One message as the API streams it: usage in message_start, then the cumulative counts in message_delta;
    a text block with multibyte characters, a tool_use block whose input names `input_tokens`, pings."""
    start = {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": MODEL,
             "stop_reason": None, "stop_sequence": None, "usage": START_USAGE}  # fmt: skip
    text = "héllo wörld ✓ 日本語 🙂"
    return [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1,
                                 "content_block": {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "input_json_delta", "partial_json": TOOL_INPUT}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                           "usage": final_usage or {"output_tokens": 150}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip


# 25 input, 150 output, 3000 cache writes (1000 for 5 minutes, 2000 for an hour), 40,000 cache reads
STREAM_TOKENS = 25 + 150 + 3000 + 40_000


def compress(data: bytes, coding: str) -> bytes:
    if coding == "gzip":
        return gzip.compress(data)
    if coding == "deflate":
        return zlib.compress(data)
    if coding == "br":
        return brotli.compress(data)
    if coding == "zstd":
        return zstandard.ZstdCompressor().compress(data)
    assert coding == "identity", coding
    return data


@dataclass
class Upstream:
    """What the upstream answers: `reply(request headers) -> (status, headers, body chunks)`; it records the
    headers of each request it got."""

    reply: Callable[[dict[str, str]], tuple[int, dict[str, str], list[bytes]]]
    seen: list[dict[str, str]] = field(default_factory=list)


@contextmanager
def proxied(tmp_path: Path, upstream: Upstream, spend: Spend | None = None, paths: tuple[str, ...] = ("/v1/",)
            ) -> Iterator[ModelProxy]:  # fmt: skip
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            upstream.seen.append(headers)
            status, extra, chunks = upstream.reply(headers)
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.send_response(status)
            for key, value in extra.items():
                self.send_header(key, value)
            self.send_header("connection", "close")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(chunk)
                self.wfile.flush()
            self.close_connection = True

        def log_message(self, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    folder = tmp_path / "proxy"
    folder.mkdir(parents=True)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    proxy = ModelProxy(folder / "m.sock", url, {"x-api-key": "REAL"}, paths=paths)
    proxy.spend = spend
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
        server.shutdown()
        server.server_close()


def ask(proxy: ModelProxy, accept: str | None = CLI_ACCEPTS, path: str = "/v1/messages") -> tuple[bytes, bytes]:
    """One request as the CLI sends it; the reply's head and body, as the client got them."""
    body = json.dumps({"model": MODEL, "max_tokens": 5, "stream": True, "messages": []}).encode()
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\ncontent-length: {len(body)}\r\n"
    head += f"accept-encoding: {accept}\r\n" if accept is not None else ""
    client = socket.socket(socket.AF_UNIX)
    client.connect(str(proxy.socket_path))
    client.sendall(head.encode() + b"\r\n" + body)
    reply = b""
    while chunk := client.recv(65536):
        reply += chunk
    client.close()
    head_bytes, _, rest = reply.partition(b"\r\n\r\n")
    return head_bytes, rest


def outcome(proxy: ModelProxy) -> str | None:
    return proxy.witness.requests[-1][2]


def one_byte_at_a_time(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


# --- 1. compression (this test failed on the proxy before: 0 tokens, $0, "cut") --------------------


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
def test_a_compressed_event_stream_is_charged_and_recorded_as_answered(tmp_path, coding):
    plain = sse(*message_events())
    wire = compress(plain, coding)

    def reply(headers: dict[str, str]) -> tuple[int, dict[str, str], list[bytes]]:
        assert coding in headers.get("accept-encoding", "")  # the upstream compresses what it is told it may
        return 200, {"content-type": "text/event-stream", "content-encoding": coding}, one_byte_at_a_time(wire)

    spend = Spend(100, 10**9, 100.0, MODEL)
    with proxied(tmp_path, Upstream(reply)) as proxy:
        proxy.spend = spend
        head, body = ask(proxy)
    assert head.startswith(b"HTTP/1.1 200") and f"content-encoding: {coding}".encode() in head.lower()
    assert body == wire  # the client gets the upstream's bytes, as they came
    assert outcome(proxy) == "200"  # message_stop was read: not "cut"
    assert spend.tokens == STREAM_TOKENS
    # $3/M input: 25·3 + 1000·3·1.25 (5-minute writes) + 2000·3·2 (1-hour writes) + 40000·3·0.1 (reads) + 150·15
    # = 75 + 3750 + 12000 + 12000 + 2250 = 30075 (per million)
    assert spend.usd == pytest.approx(30075 / 1e6)


def serve(body: bytes, coding: str = "identity", content_type: str = "text/event-stream",
          chunks: Callable[[bytes], list[bytes]] = one_byte_at_a_time) -> Upstream:  # fmt: skip
    """An upstream that answers every request with `body`, coded as `coding`, written in `chunks`."""
    wire = compress(body, coding)
    headers = {"content-type": content_type} | ({"content-encoding": coding} if coding != "identity" else {})
    return Upstream(lambda seen: (200, headers, chunks(wire)))


def test_an_event_stream_cut_inside_a_character_and_a_data_line_is_charged_field_by_field(tmp_path):
    plain = sse(*message_events({"output_tokens": 150, "server_tool_use": {"web_search_requests": 4}}), newline="\r\n")
    at, line = plain.find("✓".encode()), plain.find(b"data: {")
    cuts = sorted({1, at + 1, at + 2, line + 3, plain.find(b"\r\n") + 1})
    pieces = [plain[a:b] for a, b in zip([0, *cuts], [*cuts, len(plain)], strict=True)]
    spend = Spend(100, 10**9, 100.0, MODEL)
    with proxied(tmp_path, serve(plain, chunks=lambda _: pieces), spend) as proxy:
        _, body = ask(proxy)
    assert body == plain and outcome(proxy) == "200"
    assert spend.totals()["usage"] == {"input_tokens": 25, "output_tokens": 150, "cache_creation_input_tokens": 3000,
                                       "cache_read_input_tokens": 40_000, "ephemeral_5m_input_tokens": 1000,
                                       "ephemeral_1h_input_tokens": 2000, "web_search_requests": 4,
                                       "web_fetch_requests": 0}  # fmt: skip
    assert spend.usd == pytest.approx(30075 / 1e6 + 4 * 0.01)  # the tokens as above, and 4 searches at $10 / 1,000


@pytest.mark.parametrize(
    ("client", "offered"),
    [
        pytest.param(CLI_ACCEPTS, CLI_ACCEPTS, id="the-clis"),
        pytest.param("gzip;q=0, br, compress", "br", id="q0-and-unknown-dropped"),
        pytest.param(None, "identity", id="none"),
    ],
)
def test_the_upstream_is_offered_what_the_client_accepts_and_passhat_decodes(tmp_path, client, offered):
    upstream = serve(sse(*message_events()))
    with proxied(tmp_path, upstream) as proxy:
        ask(proxy, accept=client)
    assert upstream.seen[0]["accept-encoding"] == offered


@pytest.mark.parametrize("coding", ["gzip", "br"])
def test_a_json_reply_is_charged_its_usage_and_not_a_tools_input(tmp_path, coding):
    message = {"type": "message", "role": "assistant", "model": MODEL, "stop_reason": "tool_use",
               "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": json.loads(TOOL_INPUT)}],
               "usage": {"input_tokens": 12, "output_tokens": 3}}  # fmt: skip
    spend = Spend(100, 10**9, 100.0, MODEL)
    with proxied(tmp_path, serve(json.dumps(message).encode(), coding, "application/json"), spend) as proxy:
        _, body = ask(proxy)
    assert gzip.decompress(body) if coding == "gzip" else brotli.decompress(body)  # the client decodes it itself
    assert outcome(proxy) == "200" and spend.tokens == 12 + 3  # not the tool input's 999999


def test_bedrock_frames_are_read_through_the_proxy(tmp_path):
    from test_proxy_events import chunk_frame

    wire = b"".join(chunk_frame(data) for _, data in message_events())
    spend = Spend(100, 10**9, 100.0, MODEL, "bedrock")
    upstream = serve(wire, "gzip", "application/vnd.amazon.eventstream")
    path = f"/model/us.anthropic.{MODEL}-v1%3A0/invoke-with-response-stream"
    with proxied(tmp_path, upstream, spend, paths=("/model/",)) as proxy:
        ask(proxy, path=path)
    assert outcome(proxy) == "200" and spend.tokens == STREAM_TOKENS


@pytest.mark.parametrize("metered", [True, False], ids=["spend", "no-spend"])
def test_an_overloaded_error_mid_stream_is_recorded_as_overloaded_and_is_infra_evidence(tmp_path, metered):
    events = [*message_events()[:4], ("error", {"type": "error", "error": {"type": "overloaded_error",
                                                                          "message": "Overloaded"}})]  # fmt: skip
    spend = Spend(100, 10**9, 100.0, MODEL) if metered else None
    with proxied(tmp_path, serve(sse(*events), "gzip"), spend) as proxy:
        ask(proxy)
    assert outcome(proxy) == "overloaded: overloaded_error: Overloaded"  # before: "cut: ..."
    assert proxy.witness.answered == 0 and "failed 1 time(s); last: overloaded" in str(proxy.witness.infra_evidence())
    if spend is not None:
        assert spend.tokens == 25 + 1 + 3000 + 40_000  # what message_start reported: the stream said no more


def test_without_a_spend_the_witness_still_reads_how_a_compressed_stream_ended(tmp_path):
    with proxied(tmp_path, serve(sse(*message_events()), "zstd")) as proxy:
        ask(proxy)
    with proxied(tmp_path / "cut", serve(sse(*message_events()[:-1]), "zstd")) as cut:
        ask(cut)
    assert outcome(proxy) == "200" and proxy.witness.answered == 1
    assert outcome(cut) == "cut: the event stream ended before message_stop" and cut.witness.answered == 0


@pytest.mark.parametrize(
    ("coding", "wire"),
    [
        pytest.param("compress", b"\x1f\x9d\x90not-decodable", id="a-coding-passhat-did-not-offer"),
        pytest.param("gzip", b"\x1f\x8b\x08\x00" + b"\x00corrupt" * 20, id="corrupt-gzip"),
    ],
)
def test_a_reply_passhat_cannot_read_fails_closed(tmp_path, coding, wire):
    upstream = Upstream(lambda seen: (200, {"content-type": "text/event-stream", "content-encoding": coding}, [wire]))
    spend = Spend(100, 10**9, 100.0, MODEL)
    with proxied(tmp_path, upstream, spend) as proxy:
        _, body = ask(proxy)
        refused, _ = ask(proxy)
    assert body == wire  # the client still gets what the upstream sent
    assert str(outcome(proxy)).startswith("unreadable: ") and proxy.witness.ended.is_set()
    assert "could neither meter the trial's spend" in str(proxy.witness.gave_up)  # the trial ends as infra
    assert spend.unmetered is not None and spend.totals()["unmetered"] == spend.unmetered
    assert refused.startswith(b"HTTP/1.1 502") and len(upstream.seen) == 1  # nothing more reaches the upstream


def test_the_token_and_dollar_caps_fire_on_compressed_replies(tmp_path):
    tokens = Spend(100, STREAM_TOKENS, 100.0, MODEL)  # at the cap after one reply; past it after two
    with proxied(tmp_path, serve(sse(*message_events()), "br"), tokens) as proxy:
        ask(proxy)
        assert tokens.breached is None
        ask(proxy)
        refused, _ = ask(proxy)
    assert tokens.breached == f"model token limit (model_tokens): {2 * STREAM_TOKENS} tokens, over {STREAM_TOKENS}"
    assert refused.startswith(b"HTTP/1.1 403")
    dollars = Spend(100, 10**9, 0.03, MODEL)  # one reply costs $0.030075 (see above)
    with proxied(tmp_path / "usd", serve(sse(*message_events()), "deflate"), dollars) as proxy:
        ask(proxy)
    assert dollars.breached == "model spend limit (model_usd): $0.0301 at list prices, over $0.03"


@pytest.mark.parametrize(("headers", "scripted"), [({"x-passhat-scripted-model": "1"}, True), ({}, False)])
def test_the_witness_knows_a_reply_of_passhats_scripted_model(tmp_path, headers, scripted):
    """A rehearsal in real mode (ANTHROPIC_BASE_URL at `passhat fake-model --open`) is answered by the scripted
    model, whose replies say so: its dollars are then marked not real (scripted_model) like the scripted routes'."""
    body = sse(*message_events())
    upstream = Upstream(lambda seen: (200, {"content-type": "text/event-stream", **headers}, [body]))
    with proxied(tmp_path, upstream) as proxy:
        ask(proxy)
    assert outcome(proxy) == "200" and proxy.witness.scripted is scripted
