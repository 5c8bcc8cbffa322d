"""`passhat fake-model --replay DIR`: recorded API replies served as the real API sends them.

DIR holds manifest.json — `{"recordings": [{"name", "status", "headers", "body", "model", "usage", "tokens",
"usd", "outcome"}, ...]}` — and each reply's body file (tests/data/api_recordings/ and its NOTES.md). `model`,
`usage`, `tokens`, `usd` and `outcome` are what passhat's model proxy must make of the reply (a test's expectations);
the server sends status, headers and body.

    POST /<name>[/<chunking>]/v1/messages[?chunking=MODE]      (or /v1/messages?recording=NAME&chunking=MODE)

so a harness whose base URL is `http://127.0.0.1:PORT/<name>` gets that recording, and a proxy that forwards
`<prefix><path>` can pick one with the query. The body is compressed as the request's accept-encoding asks
(_wire.choose_encoding, as the API does) and cut into pieces by _wire.split (whole, byte, utf8, data) before
compression, each piece flushed on its own: an event stream goes out chunked, a JSON reply with its length.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from passhat.common._errors import PasshatError
from passhat.fake_model._wire import SPLITS, StreamEncoder, choose_encoding, split

if TYPE_CHECKING:
    from http.server import BaseHTTPRequestHandler

MANIFEST = "manifest.json"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_FIELDS = ("name", "status", "headers", "body", "model", "usage", "tokens", "usd", "outcome")
_FRAMING = {"content-length", "transfer-encoding", "content-encoding", "connection"}  # the server's to set


@dataclass(frozen=True)
class Recording:
    """One recorded reply and what passhat must make of it."""

    name: str
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    model: str
    usage: dict[str, int]  # per usage field, as billed (nested fields by their own name: ephemeral_1h_input_tokens)
    tokens: int  # input + output + cache writes + cache reads: what a model_tokens cap counts
    usd: float  # at `model`'s list price (trial.spend.PRICES)
    outcome: str  # what the proxy's witness records: "200", "529", "overloaded", ...

    @property
    def streams(self) -> bool:
        return any(k == "content-type" and v.startswith("text/event-stream") for k, v in self.headers)


def _bad(where: str, value: object, expected: str) -> PasshatError:
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return PasshatError(f"{where}: {shown}: expected {expected}")


def _entry(manifest: Path, index: int, entry: object) -> Recording:
    where = f"{manifest}: recordings[{index}]"
    if not isinstance(entry, dict):
        raise _bad(where, entry, "an object with " + ", ".join(_FIELDS))
    missing = [name for name in _FIELDS if name not in entry]
    if missing:
        raise _bad(f"{where}", sorted(entry), f"the fields {', '.join(_FIELDS)}; add {', '.join(missing)}")
    name, status, headers, body = entry["name"], entry["status"], entry["headers"], entry["body"]
    where = f"{manifest}: recordings[{index}] ({name!r})" if isinstance(name, str) else where
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name == "v1":
        raise _bad(f"{where}.name", name, "a path segment of letters, digits, _ . - (not v1)")
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise _bad(f"{where}.status", status, "an HTTP status, a whole number 100-599")
    if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise _bad(f"{where}.headers", headers, 'an object of header names to strings, e.g. {"retry-after": "12"}')
    if framing := sorted(_FRAMING & {k.lower() for k in headers}):
        raise _bad(f"{where}.headers", framing, "no framing headers: the replay sets them for the wire it sends")
    if not isinstance(body, str) or not (manifest.parent / body).is_file():
        raise _bad(f"{where}.body", body, f"the name of a file in {manifest.parent}")
    usage = entry["usage"]
    if not isinstance(usage, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0 for k, v in usage.items()
    ):
        raise _bad(
            f"{where}.usage", usage, 'an object of usage fields to whole numbers >= 0, e.g. {"input_tokens": 25}'
        )
    tokens, usd, model, outcome = entry["tokens"], entry["usd"], entry["model"], entry["outcome"]
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        raise _bad(f"{where}.tokens", tokens, "a whole number >= 0 (input + output + cache tokens)")
    if not isinstance(usd, int | float) or isinstance(usd, bool) or usd < 0:
        raise _bad(f"{where}.usd", usd, "dollars, a number >= 0")
    if not isinstance(model, str) or not model or not isinstance(outcome, str) or not outcome:
        raise _bad(f"{where}.model/outcome", (model, outcome), 'non-empty strings, e.g. "claude-sonnet-4-5", "200"')
    pairs = tuple((k.lower(), v) for k, v in headers.items())
    data = (manifest.parent / body).read_bytes()
    return Recording(name, status, pairs, data, model, dict(usage), tokens, float(usd), outcome)


def load_recordings(folder: str | Path) -> dict[str, Recording]:
    """The recordings of `folder`/manifest.json by name; PasshatError naming the file, field, value and fix."""
    manifest = Path(folder) / MANIFEST
    if not Path(folder).is_dir():
        raise _bad("--replay", str(folder), f"a folder holding {MANIFEST} and the body files it names")
    try:
        doc: Any = json.loads(manifest.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _bad("--replay", str(folder), f"a folder holding {MANIFEST}; none is there") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise PasshatError(
            f"{manifest}: not JSON ({error}); write it as tests/data/api_recordings/{MANIFEST}"
        ) from None
    entries = doc.get("recordings") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries:
        raise _bad(f"{manifest}: recordings", entries, "a non-empty list of recordings")
    recordings: dict[str, Recording] = {}
    for index, entry in enumerate(entries):
        recording = _entry(manifest, index, entry)
        if recording.name in recordings:
            raise _bad(f"{manifest}: recordings[{index}].name", recording.name, "a name no other recording has")
        recordings[recording.name] = recording
    return recordings


@dataclass
class Replay:
    """The --replay front of a FakeModelServer (`server.front = Replay(...)`): answers every POST."""

    recordings: dict[str, Recording]
    sent: deque[tuple[str, str, str, bytes]] = field(default_factory=lambda: deque(maxlen=64))  # for tests
    lock: threading.Lock = field(default_factory=threading.Lock)

    def pick(self, path: str) -> tuple[str | None, str]:
        """(recording name, chunking) of a request path; name None when the path names none."""
        parts = urlsplit(path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        segments = [unquote(s) for s in parts.path.split("/") if s]
        head = segments[: segments.index("v1")] if "v1" in segments else segments
        name = query.get("recording") or (head[0] if head else None)
        chunking = query.get("chunking") or (head[1] if len(head) > 1 else "whole")
        return name, chunking

    def __call__(self, handler: BaseHTTPRequestHandler) -> bool:
        length = handler.headers.get("content-length") or "0"
        handler.rfile.read(min(int(length), 64 * 2**20) if length.isdigit() else 0)  # the request is not read
        name, chunking = self.pick(handler.path)
        recording = self.recordings.get(name or "")
        if recording is None or chunking not in SPLITS:
            names = ", ".join(sorted(self.recordings))
            message = (
                f"passhat fake-model --replay: {handler.path!r} names no recording and chunking; POST "
                f"/<name>[/<chunking>]/v1/messages, name one of {names}, chunking one of {', '.join(SPLITS)}"
            )
            _send(handler, 404, [("content-type", "application/json")], [_error("not_found_error", message)])
            return True
        if handler.path.split("?", 1)[0].endswith("/count_tokens"):  # the CLI's free request: the input it bills
            counted = json.dumps({"input_tokens": recording.usage.get("input_tokens", 0)}).encode()
            _send(handler, 200, [("content-type", "application/json")], [counted])
            return True
        encoding = choose_encoding(handler.headers.get("accept-encoding"))
        encoder = StreamEncoder(encoding)
        wire = [encoder.piece(piece) for piece in split(recording.body, chunking)] + [encoder.end()]
        wire = [piece for piece in wire if piece]
        headers = list(recording.headers)
        if encoding != "identity":
            headers += [("content-encoding", encoding), ("vary", "accept-encoding")]
        with self.lock:
            self.sent.append((recording.name, chunking, encoding, b"".join(wire)))
        _send(handler, recording.status, headers, wire, chunked=recording.streams)
        return True


def _error(kind: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def _send(
    handler: BaseHTTPRequestHandler,
    status: int,
    headers: list[tuple[str, str]],
    wire: list[bytes],
    chunked: bool = False,
) -> None:
    """Status, headers, then each piece of `wire` written and flushed on its own (an event stream as HTTP chunks,
    else with a content-length); the connection closes after."""
    try:
        handler.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # each piece its own segment
    except OSError:
        pass
    handler.send_response(status)
    for name, value in headers:
        handler.send_header(name, value)
    if chunked:
        handler.send_header("transfer-encoding", "chunked")
    else:
        handler.send_header("content-length", str(sum(len(piece) for piece in wire)))
    handler.send_header("connection", "close")
    handler.end_headers()
    handler.close_connection = True
    try:
        for piece in wire:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            handler.wfile.flush()
        if chunked:
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
    except OSError:  # the client left
        pass
