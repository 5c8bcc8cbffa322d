"""A trial's transcript and diff, one click away in `promptfoo view`.

promptfoo 0.123.1's viewer shows a result's metadata as a Key/Value table and makes a value a link when it parses
as a URL (`new URL(value)`), opened in a new tab. A `file://` link does not open from a page served over http
(Chromium refuses it: "Not allowed to load local resource"), so the links point at a small read-only server on
127.0.0.1 that `passhat view` runs beside `promptfoo view` (PORT_ENV, default DEFAULT_PORT): afterEach adds them
to each row's metadata (LINKS: open_transcript, open_diff, and the tests grader's whole output when it kept one),
and the server answers GET /artifact/<absolute path> with the file as plain text — only a trial's own files
(FILES) inside a folder named `artifacts`, never a link out of it, nothing else.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer

PORT_ENV = "PASSHAT_VIEW_PORT"
DEFAULT_PORT = 15501  # promptfoo view's is 15500
HOST = "127.0.0.1"
PREFIX = "/artifact"
# metadata key -> the trial's file it opens (its metadata field, else a file beside the transcript)
LINKS = {"open_transcript": "transcript_path", "open_diff": "patch_path"}
OUTPUT = re.compile(r"[A-Za-z0-9_.-]+-output\.txt")  # the tests grader's whole output (graders._tests)
FILES = re.compile(rf"transcript\.jsonl|patch\.diff|{OUTPUT.pattern}")
LIMIT = 64 * 1024 * 1024  # bytes served of one file at most


def port(environ: Mapping[str, str]) -> int:
    """The links' port: $PASSHAT_VIEW_PORT, else DEFAULT_PORT. Raises ValueError on a bad value."""
    value = environ.get(PORT_ENV, "").strip() or str(DEFAULT_PORT)
    if not value.isdigit() or not 0 < int(value) < 65536:
        msg = f"${PORT_ENV}={value!r}: expected a port number, e.g. {DEFAULT_PORT}"
        raise ValueError(msg)
    return int(value)


def url(path: str, environ: Mapping[str, str]) -> str:
    return f"http://{HOST}:{port(environ)}{PREFIX}{quote(path)}"


def links(meta: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, str]:
    """The metadata to add to a trial's row: a URL per artifact it has on disk (none when it has none)."""
    found = {}
    for key, field in LINKS.items():
        value = meta.get(field)
        if isinstance(value, str) and os.path.isabs(value) and servable(value):
            found[key] = url(value, environ)
    transcript = meta.get("transcript_path")
    if isinstance(transcript, str) and os.path.isabs(transcript):
        for path in sorted(Path(transcript).parent.glob("*-output.txt")):
            if servable(str(path)):
                found[f"open_{path.name.removesuffix('.txt').replace('-', '_')}"] = url(str(path), environ)
    return found


def servable(path: str) -> Path | None:
    """The file at `path` when the server may show it: absolute, not a link, a trial's file (FILES) in a folder under
    one named `artifacts`; else None."""
    if not os.path.isabs(path) or ".." in Path(path).parts or os.path.islink(path):
        return None
    real = Path(os.path.realpath(path))
    if not FILES.fullmatch(real.name) or "artifacts" not in real.parts[:-2]:
        return None
    return real if real.is_file() else None


def serve(port_number: int) -> ThreadingHTTPServer:
    """Serve the links on 127.0.0.1:`port_number` in a daemon thread; `.shutdown()` stops it. Raises OSError
    when the port is taken. http.server is imported here: afterEach, a fresh interpreter per row, builds links only."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class _Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = unquote(self.path.split("?", 1)[0])
            found = servable(path.removeprefix(PREFIX)) if path.startswith(PREFIX + "/") else None
            if found is None:
                self._send(404, f"passhat view: no trial artifact at {path}\n".encode())
                return
            try:
                with open(found, "rb") as handle:
                    body = handle.read(LIMIT)
            except OSError as error:
                self._send(404, f"passhat view: {found}: {error.strerror}\n".encode())
                return
            self._send(200, body)

        def _send(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")  # shown, never run or downloaded
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((HOST, port_number), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="passhat-view-links", daemon=True).start()
    return server
