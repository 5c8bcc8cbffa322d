"""The Messages API's streaming wire format (server-sent events): one complete message as its events, and the
opening of a stream that is cut before the end (the `cut` script)."""

from __future__ import annotations

import json
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
