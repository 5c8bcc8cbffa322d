"""One model reply read as the API defines it, from a decoded copy of its bytes: events, usage, and how it ended.

  * `text/event-stream` (the Messages API, Vertex): server-sent events, parsed incrementally (lines end in \\n,
    \\r\\n or \\r; a chunk may end anywhere, inside a UTF-8 character or a line; `data:` lines of one event are
    joined with \\n; comments and unknown fields skipped), each event's data JSON;
  * `application/vnd.amazon.eventstream` (Bedrock): binary frames read by their prelude's lengths, both CRCs
    checked; an `event` frame's payload {"bytes": base64 of the event's JSON}; an `exception` frame ends the stream
    as an error event would;
  * anything else: one JSON body (read only when it is billed), its top-level `usage`.

Usage per message (`message_start.message.usage`, each field overridden by the cumulative `message_delta.usage`),
never by matching bytes: a tool's input naming "input_tokens" is text inside an event, not usage. The end: the
last message's `message_stop`, an error event (`error`), or neither (cut). What cannot be read raises UnreadableError.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import re
import struct
import zlib
from typing import Any

from passhat.trial.spend._prices import read_usage
from passhat.trial.spend._wire import UnreadableError

MAX_EVENT = 16 * 1024 * 1024  # bytes of one event, frame or JSON body passhat holds to read it
_EOL = re.compile(r"\r\n|\r|\n")
_SHOWN = re.compile(r"[^\w .,:;()'/@+-]")  # what an outcome shows of an upstream's error message
# an error event's type -> how the witness words it: each a failure of the upstream (FAILED_WORDS, trial/_proxy.py);
# any other type is "stream error", as a 4xx status is not the upstream failing
_WORDS = {
    "overloaded_error": "overloaded", "serviceUnavailableException": "overloaded",
    "api_error": "upstream error", "timeout_error": "upstream error", "internalServerException": "upstream error",
    "modelStreamErrorException": "upstream error", "modelTimeoutException": "upstream error",
    "rate_limit_error": "rate limited", "throttlingException": "rate limited",
}  # fmt: skip
FAILED_WORDS = ("overloaded", "upstream error", "rate limited")


def error_outcome(kind: str, message: str) -> str:
    """How the witness records a stream ended by an error event: "overloaded: overloaded_error: Overloaded"."""
    word = _WORDS.get(kind, "stream error")
    return f"{word}: {_SHOWN.sub('?', kind)[:60]}: {_SHOWN.sub('?', message)[:200]}"


class Messages:
    """The messages of one reply: usage of each ended message (`ended`), the current one's, and the end."""

    def __init__(self) -> None:
        self.ended: list[dict[str, int]] = []
        self.current: dict[str, int] | None = None
        self.stopped = False  # the last message's message_stop was read
        self.error: tuple[str, str] | None = None  # (type, message) of an error event

    def event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "message_start":
            self.close()
            message = data.get("message")
            self.current, self.stopped = read_usage(message.get("usage") if isinstance(message, dict) else None), False
        elif kind == "message_delta":
            self.current = {**(self.current or {}), **read_usage(data.get("usage"))}
        elif kind == "message_stop":
            self.close()
            self.stopped = True
        elif kind == "error":
            error = data.get("error")
            error = error if isinstance(error, dict) else {}
            self.error = (str(error.get("type") or "unknown"), str(error.get("message") or ""))

    def close(self) -> None:
        if self.current is not None:
            self.ended.append(self.current)
        self.current = None


def _json(text: str | bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise UnreadableError(f"{what} is not a JSON object")
    return data


class Sse:
    """Server-sent events, fed bytes as they come; calls `on(kind, data)` per complete event (kind: the data's
    `type`, else the event's name). An event the stream ends inside is dropped, as the spec says."""

    def __init__(self, messages: Messages) -> None:
        self._on = messages.event
        self._text = codecs.getincrementaldecoder("utf-8")()
        self._partial = ""
        self._cr = False  # the last text ended in \r: a \n opening the next is the same line end
        self._name = ""
        self._data: list[str] = []
        self._size = 0

    def feed(self, data: bytes, final: bool = False) -> None:
        try:  # never final: a stream cut inside a character is cut, not unreadable
            text = self._text.decode(data)
        except UnicodeDecodeError as error:
            raise UnreadableError(f"the event stream is not UTF-8: {error}") from None
        if not text:
            return
        pos = 1 if self._cr and text.startswith("\n") else 0
        self._cr = text.endswith("\r")
        for end in _EOL.finditer(text, pos):
            self._line(self._partial + text[pos : end.start()])
            self._partial, pos = "", end.end()
        self._partial += text[pos:]
        if len(self._partial) > MAX_EVENT:
            raise UnreadableError(f"an event-stream line longer than {MAX_EVENT} characters")

    def _line(self, line: str) -> None:
        if not line:
            if self._data:
                data = _json("\n".join(self._data), f"the data of event {self._name[:40]!r}")
                kind = data.get("type")
                self._on(kind if isinstance(kind, str) else self._name or "message", data)
            self._name, self._data, self._size = "", [], 0
            return
        name, colon, value = line.partition(":")
        if not name:  # a comment
            return
        value = value[1:] if colon and value.startswith(" ") else value
        if name == "event":
            self._name = value
        elif name == "data":
            self._data.append(value)
            self._size += len(value)
            if self._size > MAX_EVENT:
                raise UnreadableError(f"an event longer than {MAX_EVENT} characters")


_HEADER_SIZES = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}  # AWS event-stream header value types; 6, 7: sized


def _headers(raw: bytes) -> dict[str, str]:
    found, at = {}, 0
    try:
        while at < len(raw):
            size = raw[at]
            name, kind = raw[at + 1 : at + 1 + size].decode(), raw[at + 1 + size]
            at += 2 + size
            if kind in (6, 7):
                (length,) = struct.unpack_from(">H", raw, at)
                value, at = raw[at + 2 : at + 2 + length], at + 2 + length
                found[name] = value.decode(errors="replace")
            elif kind in _HEADER_SIZES:
                at += _HEADER_SIZES[kind]
            else:
                raise UnreadableError(f"an event-stream header of unknown type {kind}")
    except (IndexError, struct.error, UnicodeDecodeError):
        raise UnreadableError("an event-stream frame's headers do not parse") from None
    return found


class Frames:
    """AWS event-stream frames (Bedrock's invoke-with-response-stream): prelude (total length, headers length,
    CRC32), headers, payload, CRC32 of all before it; big-endian."""

    def __init__(self, messages: Messages) -> None:
        self._messages = messages
        self._buffer = bytearray()

    def feed(self, data: bytes, final: bool = False) -> None:
        self._buffer += data
        while len(self._buffer) >= 12:
            total, size, crc = struct.unpack_from(">III", self._buffer)
            if zlib.crc32(self._buffer[:8]) != crc:
                raise UnreadableError("an event-stream frame's prelude fails its CRC")
            if not 16 + size <= total <= MAX_EVENT:
                raise UnreadableError(f"an event-stream frame of {total} bytes with {size} bytes of headers")
            if len(self._buffer) < total:
                return
            frame = bytes(self._buffer[:total])
            del self._buffer[:total]
            if zlib.crc32(frame[:-4]) != struct.unpack_from(">I", frame, total - 4)[0]:
                raise UnreadableError("an event-stream frame fails its CRC")
            self._frame(_headers(frame[12 : 12 + size]), frame[12 + size : -4])

    def _frame(self, headers: dict[str, str], payload: bytes) -> None:
        kind = headers.get(":message-type")
        if kind == "event" and headers.get(":event-type", "chunk") == "chunk":
            encoded = _json(payload, "an event-stream chunk").get("bytes")
            try:
                event = base64.b64decode(str(encoded), validate=True)
            except (binascii.Error, ValueError):
                raise UnreadableError("an event-stream chunk's bytes are not base64") from None
            data = _json(event, "an event-stream chunk's event")
            self._messages.event(str(data.get("type")), data)
        elif kind in ("exception", "error"):
            name = headers.get(":exception-type") or headers.get(":error-code") or "unknown"
            try:
                message = json.loads(payload).get("message") or headers.get(":error-message", "")
            except (ValueError, AttributeError):
                message = headers.get(":error-message", "")
            self._messages.event("error", {"error": {"type": name, "message": str(message)}})


class Body:
    """A JSON reply, whole: its top-level `usage` is one message's."""

    def __init__(self, messages: Messages) -> None:
        self._messages = messages
        self._buffer = bytearray()

    def feed(self, data: bytes, final: bool = False) -> None:
        self._buffer += data
        if len(self._buffer) > MAX_EVENT:
            raise UnreadableError(f"a JSON reply longer than {MAX_EVENT} bytes")
        if final:
            self._messages.event("message_start", {"message": _json(bytes(self._buffer), "the JSON reply")})
            self._messages.event("message_stop", {})
