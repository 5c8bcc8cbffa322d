"""How the model proxy reads a reply (trial/spend: Decoder, Reading), chunk by chunk as it forwards them: every
content coding the CLI accepts, every line ending, every chunk boundary (one byte at a time, inside a multibyte
character, inside a `data:` line, between \\r and \\n), Bedrock's binary frames, and what ends a stream. The same
replies through ModelProxy over its socket: test_proxy_wire.py."""

from __future__ import annotations

import base64
import gzip
import json
import struct
import zlib

import brotli
import pytest
import zstandard
from test_proxy_wire import MODEL, STREAM_TOKENS, TOOL_INPUT, compress, message_events, one_byte_at_a_time, sse

from passhat.trial.spend import Decoder, Reading, Spend, UnreadableError, accepted


def chunkings(data: bytes) -> dict[str, list[bytes]]:
    """The same bytes cut where a reader can trip: nowhere, every byte, inside a multibyte UTF-8 character, inside
    a `data:` line, between a \\r and its \\n."""
    cuts = {"whole": [data], "bytes": one_byte_at_a_time(data)}
    if (at := data.find("✓".encode())) >= 0:
        cuts["in-a-character"] = [data[: at + 1], data[at + 1 : at + 2], data[at + 2 :]]
    if (at := data.find(b"data: {")) >= 0:
        cuts["in-a-data-line"] = [data[: at + 9], data[at + 9 :]]
    if (at := data.find(b"\r\n")) >= 0:
        cuts["between-cr-and-lf"] = [data[: at + 1], data[at + 1 :]]
    return cuts


def read(chunks: list[bytes], content_type: str = "text/event-stream", coding: str | None = None,
         status: int = 200) -> tuple[str, Spend]:  # fmt: skip
    spend = Spend(100, 10**9, 100.0, MODEL)
    body = json.dumps({"model": MODEL}).encode()
    reading = Reading(status, content_type, coding, spend.meter("/v1/messages", body))
    for chunk in chunks:
        reading.feed(chunk)
    return reading.finish(), spend


EXPECTED = {"input_tokens": 25, "output_tokens": 150, "cache_creation_input_tokens": 3000,
            "cache_read_input_tokens": 40_000, "ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000,
            "web_search_requests": 0, "web_fetch_requests": 0}  # fmt: skip


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_an_event_stream_is_read_whatever_its_line_ends_and_chunks(newline):
    data = sse(*message_events(), newline=newline)
    for name, chunks in chunkings(data).items():
        outcome, spend = read(chunks)
        assert outcome == "200", name
        assert spend.totals()["usage"] == EXPECTED, name
        assert spend.tokens == STREAM_TOKENS, name


def test_comments_pings_unknown_fields_and_data_over_several_lines_are_read_as_the_spec_says():
    start = json.dumps({"type": "message_start", "message": {"usage": {"input_tokens": 7, "output_tokens": 1}}})
    cut = start.index(", ") + 1  # two data lines, joined with \n: whitespace between JSON tokens
    data = (
        b": a comment line\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n"
        b"id: 4\nretry: 10\nevent: message_start\ndata: " + start[:cut].encode() + b"\ndata:" + start[cut:].encode()
        + b"\n\nevent: message_delta\ndata: {\"type\": \"message_delta\",\ndata: \"usage\": {\"output_tokens\": 9}}\n\n"
        b"event: message_stop\ndata: {\"type\": \"message_stop\"}\n\n"
    )  # fmt: skip
    for name, chunks in chunkings(data).items():
        outcome, spend = read(chunks)
        assert (outcome, spend.tokens) == ("200", 7 + 9), name


def test_usage_in_the_final_message_delta_overrides_the_start_field_by_field():
    """Prompt caching as the API reports it: message_start's counts are provisional, message_delta's are the
    cumulative ones (cache tokens, server tool use included)."""
    final = {"output_tokens": 300, "cache_read_input_tokens": 50_000,
             "server_tool_use": {"web_search_requests": 2, "web_fetch_requests": 1}}  # fmt: skip
    outcome, spend = read([sse(*message_events(final))])
    usage = spend.totals()["usage"]
    assert outcome == "200"
    assert usage == {**EXPECTED, "output_tokens": 300, "cache_read_input_tokens": 50_000, "web_search_requests": 2,
                     "web_fetch_requests": 1}  # fmt: skip
    # $3/M: 25·3 + 1000·3.75 + 2000·6 + 50000·0.3 + 300·15 = 75 + 3750 + 12000 + 15000 + 4500 = 35325, + 2 searches
    assert spend.usd == pytest.approx(35325 / 1e6 + 0.02)


def test_a_tools_input_naming_input_tokens_is_not_usage():
    """Before, a regex over the bytes took the largest `"input_tokens": N` it saw, a tool's input included."""
    message = {"type": "message", "content": [{"type": "tool_use", "id": "t", "name": "Read",
                                               "input": json.loads(TOOL_INPUT)}],
               "usage": {"input_tokens": 12, "output_tokens": 3}}  # fmt: skip
    outcome, spend = read([json.dumps(message).encode()], "application/json")
    assert (outcome, spend.tokens) == ("200", 15)
    outcome, spend = read(one_byte_at_a_time(sse(*message_events())))  # the same input streamed as partial_json
    assert outcome == "200" and spend.totals()["usage"]["input_tokens"] == 25


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        pytest.param("overloaded_error", "overloaded: overloaded_error: Overloaded", id="overloaded"),
        pytest.param("api_error", "upstream error: api_error: Overloaded", id="api-error"),
        pytest.param("invalid_request_error", "stream error: invalid_request_error: Overloaded", id="other"),
    ],
)
def test_a_stream_ended_by_an_error_event_is_recorded_with_its_type(error, outcome):
    events = message_events()[:4]
    events.append(("error", {"type": "error", "error": {"type": error, "message": "Overloaded"}}))
    found, spend = read(one_byte_at_a_time(sse(*events)))
    assert found == outcome
    assert spend.tokens == 25 + 1 + 3000 + 40_000  # message_start's counts: what the stream said before it broke


def test_a_stream_ending_with_neither_message_stop_nor_an_error_is_cut():
    assert read([sse(*message_events()[:-1])])[0] == "cut: the event stream ended before message_stop"
    half = sse(*message_events())
    assert read([half[: len(half) // 2]])[0].startswith("cut:")  # inside an event, even inside a character
    assert read([sse(*message_events())], status=529)[0] == "529"  # an error status is its own outcome


# --- codings ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("client", "upstream"),
    [
        pytest.param("gzip, deflate, br, zstd", "gzip, deflate, br, zstd", id="the-clis"),
        pytest.param("br;q=1.0, gzip;q=0.5, *;q=0.1", "br;q=1.0, gzip;q=0.5", id="q-values-kept"),
        pytest.param("gzip;q=0, deflate", "deflate", id="q0-refused"),
        pytest.param("compress, x-custom, identity", "identity", id="none-decodable"),
        pytest.param(None, "identity", id="none-asked"),
        pytest.param("GZIP , Zstd", "gzip, zstd", id="case"),
    ],
)
def test_the_upstream_is_offered_only_codings_passhat_decodes_and_the_client_accepts(client, upstream):
    assert accepted(client) == upstream


def _frames_gzip_multi(data: bytes) -> bytes:
    half = len(data) // 2
    return gzip.compress(data[:half]) + gzip.compress(data[half:])


def _zstd_multi(data: bytes) -> bytes:
    half = len(data) // 2
    return zstandard.ZstdCompressor().compress(data[:half]) + zstandard.ZstdCompressor().compress(data[half:])


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("coding", "pack"),
    [
        pytest.param("gzip", gzip.compress, id="gzip"),
        pytest.param("gzip", _frames_gzip_multi, id="gzip-two-members"),
        pytest.param("deflate", zlib.compress, id="deflate-zlib"),
        pytest.param("deflate", _raw_deflate, id="deflate-raw"),
        pytest.param("br", brotli.compress, id="br"),
        pytest.param("zstd", zstandard.ZstdCompressor().compress, id="zstd"),
        pytest.param("zstd", _zstd_multi, id="zstd-two-frames"),
        pytest.param("gzip, br", lambda d: brotli.compress(gzip.compress(d)), id="gzip-then-br"),
        pytest.param("identity", lambda d: d, id="identity"),
    ],
)
def test_every_coding_is_decoded_in_every_chunking(coding, pack):
    wire = pack(sse(*message_events()))
    for name, chunks in {"whole": [wire], "bytes": one_byte_at_a_time(wire)}.items():
        outcome, spend = read(chunks, coding=coding)
        assert (outcome, spend.tokens) == ("200", STREAM_TOKENS), (coding, name)


@pytest.mark.parametrize(
    ("coding", "wire", "why"),
    [
        pytest.param("compress", compress(b"x", "gzip"), "content-encoding 'compress'", id="a-coding-not-offered"),
        pytest.param("gzip", b"\x1f\x8b\x08\x00garbage" * 10, "does not decode", id="corrupt-gzip"),
        pytest.param("br", b"\xff" * 50, "does not decode", id="corrupt-br"),
        pytest.param("zstd", b"not zstd at all", "does not decode", id="corrupt-zstd"),
        pytest.param("identity", gzip.compress(sse(*message_events())), "not UTF-8", id="gzip-not-labelled"),
        pytest.param(None, b"event: message_start\ndata: {not json\n\n", "not a JSON object", id="not-json"),
    ],
)
def test_a_reply_that_cannot_be_read_fails_closed(coding, wire, why):
    outcome, spend = read(one_byte_at_a_time(wire), coding=coding)
    assert outcome.startswith("unreadable: ") and why in outcome, outcome
    assert spend.unmetered is not None and why in spend.unmetered
    assert "cannot be metered" in (spend.admit("POST", "/v1/messages", b"{}") or "")  # no request after it


def test_a_decoder_raises_for_a_coding_it_does_not_know():
    with pytest.raises(UnreadableError, match="content-encoding 'lzma'"):
        Decoder("gzip, lzma")


# --- Bedrock's event stream ------------------------------------------------------------------------


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    raw = b"".join(struct.pack(">B", len(k)) + k.encode() + struct.pack(">BH", 7, len(v)) + v.encode()
                   for k, v in headers.items())  # fmt: skip
    prelude = struct.pack(">II", 16 + len(raw) + len(payload), len(raw))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + raw + payload
    return body + struct.pack(">I", zlib.crc32(body))


def chunk_frame(data: dict) -> bytes:
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(data).encode()).decode()}).encode()
    return frame({":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}, payload)


BEDROCK = "application/vnd.amazon.eventstream"


def test_bedrock_frames_are_read_by_their_lengths_in_every_chunking():
    wire = b"".join(chunk_frame(data) for _, data in message_events())
    for name, chunks in chunkings(wire).items():
        outcome, spend = read(chunks, BEDROCK)
        assert (outcome, spend.totals()["usage"]) == ("200", EXPECTED), name


def test_a_bedrock_exception_frame_ends_the_stream_as_an_error_and_a_bad_crc_is_unreadable():
    wire = b"".join(chunk_frame(data) for _, data in message_events()[:3])
    exception = frame({":exception-type": "throttlingException", ":message-type": "exception"},
                      b'{"message": "Too many requests"}')  # fmt: skip
    assert read([wire + exception], BEDROCK)[0] == "rate limited: throttlingException: Too many requests"
    overloaded = frame({":exception-type": "serviceUnavailableException", ":message-type": "exception"}, b"{}")
    assert read([wire + overloaded], BEDROCK)[0].startswith("overloaded: serviceUnavailableException")
    assert read([wire], BEDROCK)[0] == "cut: the event stream ended before message_stop"
    broken = bytearray(wire)
    broken[20] ^= 0xFF
    assert "fails its CRC" in read([bytes(broken)], BEDROCK)[0]


def test_a_readers_own_failure_makes_the_reply_unreadable_never_breaks_it(monkeypatch):
    from passhat.trial.spend import _events

    def broken(self, kind, data):
        raise RuntimeError("a reader bug")

    monkeypatch.setattr(_events.Messages, "event", broken)
    outcome, spend = read([sse(*message_events())])
    assert outcome == "unreadable: RuntimeError: a reader bug" and spend.unmetered == "RuntimeError: a reader bug"
