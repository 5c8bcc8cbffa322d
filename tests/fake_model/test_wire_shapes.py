"""Each of the real API's ways (fake_model/_shape.py), as the scripted model puts it on the wire: raw HTTP read
back byte for byte (chunked coding, content coding), the event stream parsed back with a plain SSE reader,
and the ledger of the usage the server reported."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
from conftest import TASKS

from passhat.common._fake_route import route_url
from passhat.fake_model import parse_script
from passhat.fake_model._shape import FIELDS, MULTIBYTE, THINKING
from passhat.fake_model._wire import ENCODINGS, decode

CLI_ACCEPTS = "gzip, deflate, br, zstd"  # what the bundled Claude Code CLI sends
TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("Read", "Write", "Edit", "Bash")]
SYSTEM = "You are a coding agent.\nPrimary working directory: /tmp/passhat-sandbox/repo\n"


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    chunks: list[bytes]  # the body as it came: chunked coding's chunks, or one piece
    body: bytes  # decoded (transfer and content coding)

    def events(self) -> list[tuple[str, dict]]:
        """A plain SSE reader: blocks split on a blank line, `event:` and `data:` lines."""
        events = []
        for block in self.body.decode().split("\n\n"):
            fields = dict(line.split(": ", 1) for line in block.splitlines() if line)
            if fields:
                events.append((fields["event"], json.loads(fields["data"])))
        return events


@pytest.fixture(scope="module")
def server():
    from passhat.fake_model import start_in_thread

    server = start_in_thread(TASKS, "oracle")
    yield server
    server.stop()


def post(server, script: str | None, body: dict, accept: str | None = CLI_ACCEPTS, trial: int = 0, path="v1/messages"):
    """One request on a fresh connection; the raw reply read to its end and taken apart by hand."""
    url = urlsplit(route_url(server.url, "py-median", trial, script))
    data = json.dumps(body).encode()
    head = f"POST {url.path}/{path} HTTP/1.1\r\nhost: {url.netloc}\r\ncontent-type: application/json\r\n"
    head += f"content-length: {len(data)}\r\nconnection: close\r\n"
    head += f"accept-encoding: {accept}\r\n" if accept is not None else ""
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(head.encode() + b"\r\n" + data)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    top, _, rest = raw.partition(b"\r\n\r\n")
    status_line, *lines = top.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    chunks = []
    if headers.get("transfer-encoding") == "chunked":
        while True:
            size, _, rest = rest.partition(b"\r\n")
            if int(size, 16) == 0:
                break
            chunks.append(rest[: int(size, 16)])
            rest = rest[int(size, 16) + 2 :]
    else:
        chunks = [rest]
    coding = headers.get("content-encoding", "identity")
    return Reply(int(status_line.split()[1]), headers, chunks, decode(b"".join(chunks), coding))


def agent(stream: bool = True, turns: int = 0) -> dict:
    """An agent-loop request (tools, a working directory); `turns` tool results so far."""
    messages: list[dict] = [{"role": "user", "content": "Fix the bug."}]
    for n in range(turns):
        tool_id = f"toolu_passhat_{n:04d}"
        messages += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}]},
        ]
    return {"model": "claude-sonnet-4-5", "system": SYSTEM, "tools": TOOLS, "messages": messages, "stream": stream}


def names(events: list[tuple[str, dict]]) -> list[str]:
    return [name if name != "content_block_delta" else data["delta"]["type"] for name, data in events]


_trials: dict[str | None, int] = {}


@pytest.mark.parametrize(
    ("accept", "coding"),
    [
        pytest.param(CLI_ACCEPTS, "gzip", id="the-clis-header"),
        pytest.param("br", "br", id="br"),
        pytest.param("zstd", "zstd", id="zstd"),
        pytest.param("deflate", "deflate", id="deflate"),
        pytest.param(None, "identity", id="nothing-accepted"),
        pytest.param("gzip;q=0", "identity", id="q0"),
    ],
)
def test_replies_are_compressed_as_the_request_accepts_by_default(server, accept, coding):
    """As the API: JSON, event streams and error bodies alike, with content-encoding naming the coding."""
    case = _trials.setdefault(accept, len(_trials))  # a fresh route for each case: one 529 each
    replies = [
        post(server, None, agent(stream=True), accept, trial=1),
        post(server, None, agent(stream=False), accept, trial=1),
        post(server, "oracle+overloaded:1", agent(), accept, trial=100 + case),  # 529's error body
        post(server, None, {"messages": []}, accept, trial=1, path="v1/messages/count_tokens"),
    ]
    for reply in replies:
        assert reply.headers.get("content-encoding", "identity") == coding, reply.headers
        if coding != "identity":
            assert not b"".join(reply.chunks).startswith((b"event", b"{"))  # really compressed
    assert names(replies[0].events())[-1] == "message_stop"
    assert json.loads(replies[1].body)["type"] == "message"
    assert (replies[2].status, json.loads(replies[2].body)["error"]["type"]) == (529, "overloaded_error")


@pytest.mark.parametrize("coding", ENCODINGS)
def test_encoding_modifier_forces_one_coding_whatever_the_request_accepts(server, coding):
    for accept in (None, CLI_ACCEPTS):
        reply = post(server, f"oracle+encoding:{coding}", agent(), accept, trial=2)
        assert reply.headers.get("content-encoding", "identity") == coding
        assert names(reply.events())[-1] == "message_stop"


def test_a_compressed_stream_decodes_event_by_event(server):
    """Each chunk a sync-flushed piece: a client decoding as bytes arrive holds whole events after each chunk."""
    import zlib

    reply = post(server, "oracle+encoding:gzip+ping", agent(), trial=3)
    reader, seen = zlib.decompressobj(31), b""
    for chunk in reply.chunks[:-1]:  # the last chunk is gzip's trailer
        seen += reader.decompress(chunk)
        assert seen.endswith(b"\n\n")
    assert len(reply.chunks) - 1 == len(reply.events())


def test_default_stream_shape_and_usage_placement(server):
    """No modifier: message_start carries input_tokens and output_tokens 1; message_delta the output tokens."""
    events = post(server, None, agent(), trial=4).events()
    assert names(events) == [
        "message_start", "content_block_start", "input_json_delta", "input_json_delta", "content_block_stop",
        "message_delta", "message_stop",
    ]  # fmt: skip
    start, delta = events[0][1]["message"]["usage"], events[-2][1]["usage"]
    assert start["output_tokens"] == 1 and start["input_tokens"] > 0 and set(start) == {"input_tokens", "output_tokens"}
    assert set(delta) == {"output_tokens"} and delta["output_tokens"] > 1


def test_thinking_then_redacted_thinking_before_the_reply(server):
    events = post(server, "oracle+thinking", agent(), trial=5).events()
    assert names(events)[:9] == [
        "message_start", "content_block_start", "thinking_delta", "thinking_delta", "signature_delta",
        "content_block_stop", "content_block_start", "content_block_stop", "content_block_start",
    ]  # fmt: skip
    assert events[1][1]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert events[2][1]["delta"]["thinking"] + events[3][1]["delta"]["thinking"] == THINKING
    assert events[4][1]["delta"]["signature"]
    redacted = events[6][1]["content_block"]
    assert redacted["type"] == "redacted_thinking" and redacted["data"]
    assert events[8][1]["content_block"]["type"] == "tool_use" and events[8][1]["index"] == 2


def test_pings_come_after_message_start_and_after_every_block(server):
    events = names(post(server, "oracle+ping+thinking", agent(), trial=6).events())
    assert events[1] == "ping"
    stops = [i for i, name in enumerate(events) if name == "content_block_stop"]
    assert len(stops) == 3 and all(events[i + 1] == "ping" for i in stops)


def _usage(reply: Reply) -> tuple[dict, dict]:
    events = reply.events()
    return events[0][1]["message"]["usage"], next(d["usage"] for n, d in events if n == "message_delta")


def test_cache_writes_on_the_first_turn_reads_after_and_reports_only_in_message_delta(server):
    first_start, first = _usage(post(server, "oracle+cache", agent(), trial=7))
    later_start, later = _usage(post(server, "oracle+cache", agent(turns=1), trial=7))
    for start in (first_start, later_start):
        assert (
            start["output_tokens"] == 1
            and start["cache_creation_input_tokens"] == start["cache_read_input_tokens"] == 0
        )
        assert "cache_creation" not in start
    written = first["cache_creation_input_tokens"]
    assert written > 0 and first["cache_read_input_tokens"] == 0
    assert (
        first["cache_creation"]["ephemeral_5m_input_tokens"] > 0
        and first["cache_creation"]["ephemeral_1h_input_tokens"] > 0
    )
    assert sum(first["cache_creation"].values()) == written
    assert later["cache_read_input_tokens"] == written and later["cache_creation_input_tokens"] == 0
    assert later["cache_creation"] == {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
    assert first["input_tokens"] == first_start["input_tokens"]  # cumulative: message_delta repeats the input


def test_web_search_blocks_and_server_tool_usage(server):
    reply = post(server, "oracle+web-search", agent(), trial=8)
    events = reply.events()
    opened = [d["content_block"]["type"] for n, d in events if n == "content_block_start"]
    assert opened == ["server_tool_use", "web_search_tool_result", "tool_use"]
    query = "".join(d["delta"]["partial_json"] for n, d in events if n == "content_block_delta" and d["index"] == 0)
    assert json.loads(query) == {"query": "médiane"}
    result = events[opened.index("web_search_tool_result") + 4][1]["content_block"]
    assert result["tool_use_id"] == events[1][1]["content_block"]["id"]
    assert _usage(reply)[1]["server_tool_use"] == {"web_search_requests": 1}


def test_stream_error_breaks_the_first_n_streams_mid_way_then_answers(server):
    key = ("py-median", 9, "oracle+stream-error:2")
    broken = [post(server, key[2], agent(), trial=9) for _ in range(2)]
    for reply in broken:
        events = reply.events()
        assert reply.status == 200 and names(events) == ["message_start", "content_block_start", "text_delta", "error"]
        assert events[-1][1] == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert server.reported(key) == dict.fromkeys(FIELDS, 0)  # a broken stream is no completed reply
    starts = [r.events()[0][1]["message"]["usage"] for r in broken]  # but it did report message_start's usage
    expected = {f: sum(u.get(f, 0) for u in starts) for f in FIELDS}
    assert server.reported(key, broken=True) == expected and expected["input_tokens"] > 0
    assert json.loads(post(server, key[2], agent(stream=False), trial=9).body)["type"] == "message"  # JSON: not cut
    assert names(post(server, key[2], agent(), trial=9).events())[-1] == "message_stop"


def test_overloaded_answers_529_with_retry_after_then_the_script(server):
    replies = [post(server, "oracle+overloaded:2", agent(), trial=10) for _ in range(3)]
    for reply in replies[:2]:
        assert reply.status == 529 and reply.headers["retry-after"] == "1"
        assert json.loads(reply.body)["error"]["type"] == "overloaded_error"
    assert replies[2].status == 200 and names(replies[2].events())[-1] == "message_stop"


@pytest.mark.parametrize("coding", ["identity", "gzip"])
def test_chunks_byte_sends_one_byte_at_a_time(server, coding):
    reply = post(server, f"oracle+chunks:byte+encoding:{coding}", agent(), trial=11)
    assert {len(c) for c in reply.chunks} == {1} and names(reply.events())[-1] == "message_stop"


def test_chunks_utf8_cuts_inside_every_multibyte_character(server):
    reply = post(server, "oracle+chunks:utf8+encoding:identity", agent(), trial=12)
    multibyte = sum(1 for c in reply.body.decode() if len(c.encode()) > 1)
    assert multibyte >= len([c for c in MULTIBYTE if len(c.encode()) > 1])  # the reply carries multibyte text
    offsets = [sum(len(c) for c in reply.chunks[:n]) for n in range(1, len(reply.chunks))]
    assert sum(1 for at in offsets if 0x80 <= reply.body[at] < 0xC0) == multibyte  # a cut inside each of them
    assert any(d.get("delta", {}).get("text") == MULTIBYTE[len(MULTIBYTE) // 2 :] for _, d in reply.events())


def test_chunks_data_cuts_inside_every_data_line(server):
    reply = post(server, "oracle+chunks:data+encoding:identity", agent(), trial=13)
    events = reply.events()
    assert len(reply.chunks) == 2 * len(events)
    for chunk in reply.chunks[::2]:
        assert chunk.rsplit(b"\n", 1)[-1].startswith(b"data: ")


def test_bedrock_event_stream_is_compressed_as_accepted(server):
    url = "v1/model/claude-sonnet-4-5/invoke-with-response-stream"
    reply = post(server, "oracle+ping", agent(), trial=14, path=url)
    assert reply.headers["content-type"] == "application/vnd.amazon.eventstream"
    assert reply.headers["content-encoding"] == "gzip" and reply.body.count(b":event-type") > 5


def test_the_ledger_sums_every_usage_field_of_the_completed_replies(server):
    script = "oracle+cache+web-search+stream-error:1"
    key = ("py-median", 15, script)
    replies = [post(server, script, agent(turns=n), trial=15) for n in range(3)]
    replies.append(post(server, script, agent(stream=False, turns=3), trial=15))
    replies.append(post(server, script, {"model": "claude-haiku-4-5", "messages": []}, trial=15))  # a side request
    usages = [_usage(r)[1] for r in replies[1:3]] + [json.loads(r.body)["usage"] for r in replies[3:]]
    expected = dict.fromkeys(FIELDS, 0)
    for usage in usages:
        for name, value in usage.items():
            for field, count in value.items() if isinstance(value, dict) else [(name, value)]:
                expected[field] += count
    assert server.reported(key) == expected
    assert server.books.models(key) == ["claude-haiku-4-5", "claude-sonnet-4-5"]
    haiku = json.loads(replies[4].body)["usage"]
    assert server.reported(key, "claude-haiku-4-5") == {f: haiku.get(f, 0) for f in FIELDS}
    assert expected["web_search_requests"] == 3 and expected["cache_read_input_tokens"] > 0  # the side one: none
    assert (
        expected["ephemeral_5m_input_tokens"] + expected["ephemeral_1h_input_tokens"]
        == expected["cache_creation_input_tokens"]
    )


def test_real_turns_every_way_on():
    script = parse_script("noop+real")
    assert (script.thinking, script.ping, script.cache, script.web_search) == (True, True, True, True)
    assert (script.chunks, script.overloads, script.stream_errors, script.encoding) == ("utf8", 1, 1, "")
