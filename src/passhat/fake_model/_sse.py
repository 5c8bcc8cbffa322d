"""The Messages API's streaming wire format (server-sent events): one complete message as its events, the
opening of a stream that is cut before the end (the `cut` script), and one that ends in an `error` event.
Bedrock's `invoke-with-response-stream` carries the same events in AWS's binary event-stream framing
(`event_stream`).

As the API reference shows them: `message_start` carries the message with empty content and usage
{input_tokens, output_tokens: 1} (the cache counts 0); every block opens with `content_block_start`, takes its
deltas (text_delta, input_json_delta, thinking_delta then one signature_delta) and closes with
`content_block_stop` (a redacted_thinking or web_search_tool_result block arrives whole in its start event);
`message_delta` carries the stop reason and the usage (cumulative: it overrides message_start's, and alone holds
the cache and server-tool counts); `message_stop` ends it. `ping` events may come between any two events.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

_FINAL_ONLY = ("cache_creation", "server_tool_use")  # objects message_start does not carry
_WHOLE = ("redacted_thinking", "web_search_tool_result")  # blocks sent whole in content_block_start


def frame(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _halves(text: str) -> list[str]:
    """A text as two deltas (one when short): a reader must join deltas, not take the first."""
    middle = len(text) // 2
    return [text[:middle], text[middle:]] if middle else [text]


def _block_events(index: int, block: dict) -> list[tuple[str, dict]]:
    kind = block["type"]
    deltas: list[dict[str, Any]] = []
    if kind in _WHOLE:
        opening = block
    elif kind == "text":
        opening = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": part} for part in _halves(block["text"])]
    elif kind == "thinking":
        opening = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": part} for part in _halves(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    else:  # tool_use, server_tool_use: the input as JSON text, cut in two
        opening = {**block, "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": part} for part in _halves(json.dumps(block["input"]))]
    start = {"type": "content_block_start", "index": index, "content_block": opening}
    events = [("content_block_start", start)]
    events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
    return [*events, ("content_block_stop", {"type": "content_block_stop", "index": index})]


def start_usage(usage: dict) -> dict:
    """message_start's usage: the input tokens, output 1, the cache counts 0 (when the reply reports them)."""
    start = {"input_tokens": usage["input_tokens"], "output_tokens": 1}
    return start | {key: 0 for key in ("cache_creation_input_tokens", "cache_read_input_tokens") if key in usage}


def sse_events(message: dict, ping: bool = False) -> list[tuple[str, dict]]:
    """The Messages streaming protocol for one complete message; `ping`: a ping after message_start and after
    every block (as the API sends keep-alives)."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": start_usage(usage)}
    pinged = [("ping", {"type": "ping"})] if ping else []
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": start}), *pinged]
    for index, block in enumerate(message["content"]):
        events += _block_events(index, block) + pinged
    final = usage if any(key in usage for key in (*_FINAL_ONLY, "cache_read_input_tokens")) else None
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events += [
        ("message_delta", {"type": "message_delta", "delta": delta, "usage": final or {"output_tokens": usage["output_tokens"]}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return events


def broken_events(message: dict, kind: str = "overloaded_error", text: str = "Overloaded") -> list[tuple[str, dict]]:
    """A stream that fails mid-way as the API's do: message_start, a text block begun, then an `error` event
    (HTTP status 200 was sent long before) and the end of the response, with no message_delta or message_stop."""
    usage = start_usage(message["usage"])
    start = {**message, "content": [], "stop_reason": None, "usage": usage}
    opening = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Je commence… "}}
    error = {"type": "error", "error": {"type": kind, "message": text}}
    return [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", opening),
        ("content_block_delta", delta),
        ("error", error),
    ]


def cut_frames() -> bytes:
    """message_start and an empty text block opening: a stream that the server then drops before message_stop."""
    usage = {"input_tokens": 1, "output_tokens": 1}
    start: dict[str, Any] = {"id": "msg_cut", "type": "message", "role": "assistant", "model": "passhat-scripted"}
    start |= {"content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    opening = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    return frame("message_start", {"type": "message_start", "message": start}) + frame("content_block_start", opening)


def event_frame(data: dict) -> bytes:
    """One Messages event as Bedrock streams it: an AWS event-stream `chunk` whose payload is
    {"bytes": base64(the event's JSON)}. A frame: total and header lengths, their CRC32, the headers, the
    payload, the CRC32 of all before it (big-endian)."""
    names = ((":event-type", "chunk"), (":content-type", "application/json"), (":message-type", "event"))
    headers = b"".join(
        struct.pack(">B", len(k)) + k.encode() + struct.pack(">BH", 7, len(v)) + v.encode() for k, v in names
    )
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(data).encode()).decode()}).encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event_stream(message: dict) -> bytes:
    """The message as Bedrock streams it: one event-stream frame per Messages event (see event_frame)."""
    return b"".join(event_frame(data) for _, data in sse_events(message))
