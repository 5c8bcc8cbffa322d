"""The Messages API's streaming wire format (server-sent events): one complete message as its events, and the
opening of a stream that is cut before the end (the `cut` script). Bedrock's `invoke-with-response-stream`
carries the same events in AWS's binary event-stream framing (`event_stream`)."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any


def frame(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def sse_events(message: dict) -> list[tuple[str, dict]]:
    """The Messages streaming protocol for one complete message."""
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        opening: dict[str, Any]
        if block["type"] == "text":
            opening, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def cut_frames() -> bytes:
    """message_start and an empty text block opening: a stream that the server then drops before message_stop."""
    usage = {"input_tokens": 1, "output_tokens": 1}
    start: dict[str, Any] = {"id": "msg_cut", "type": "message", "role": "assistant", "model": "passhat-scripted"}
    start |= {"content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    opening = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    return frame("message_start", {"type": "message_start", "message": start}) + frame("content_block_start", opening)


def event_stream(message: dict) -> bytes:
    """The message as Bedrock streams it: one AWS event-stream `chunk` per Messages event, whose payload is
    {"bytes": base64(the event's JSON)}. A frame: total and header lengths, their CRC32, the headers, the
    payload, the CRC32 of all before it (big-endian)."""
    names = ((":event-type", "chunk"), (":content-type", "application/json"), (":message-type", "event"))
    headers = b"".join(
        struct.pack(">B", len(k)) + k.encode() + struct.pack(">BH", 7, len(v)) + v.encode() for k, v in names
    )
    frames = []
    for _, data in sse_events(message):
        payload = json.dumps({"bytes": base64.b64encode(json.dumps(data).encode()).decode()}).encode()
        prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
        body = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
        frames.append(body + struct.pack(">I", zlib.crc32(body)))
    return b"".join(frames)
