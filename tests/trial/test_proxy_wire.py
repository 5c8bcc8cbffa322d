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
    return "".join(f"event: {name}{newline}data: {json.dumps(data)}{newline}{newline}" for name, data in events).encode()


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
def proxied(tmp_path: Path, upstream: Upstream, spend: Spend | None = None) -> Iterator[ModelProxy]:
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
    threading.Thread(target=server.serve_forever, daemon=True).start()
    folder = tmp_path / "proxy"
    folder.mkdir()
    proxy = ModelProxy(folder / "m.sock", f"http://127.0.0.1:{server.server_address[1]}", {"x-api-key": "REAL"})
    proxy.spend = spend
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
        server.shutdown()
        server.server_close()


def ask(proxy: ModelProxy, accept: str | None = CLI_ACCEPTS, model: str = MODEL) -> tuple[bytes, bytes]:
    """One request as the CLI sends it; the reply's head and body, as the client got them."""
    body = json.dumps({"model": model, "max_tokens": 5, "stream": True, "messages": []}).encode()
    head = f"POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-length: {len(body)}\r\n"
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
