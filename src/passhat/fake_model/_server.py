"""An Anthropic Messages API on loopback, answering from scripts (see _scripts.py).

Which trial a request belongs to travels in the URL path, with a token that proves the caller was given that
route (passhat/common/_fake_route.py): the provider points the CLI at
`ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/passhat/<task_id>/<trial>/<token>[/<script>]` and the CLI appends
`/v1/messages`. With the provider's `auth: {bedrock: ...}` / `{vertex: ...}` the base is `<route>/v1` and the
CLI speaks those APIs instead: `model/<id>/invoke[-with-response-stream]` (Bedrock: JSON, or the same events
in AWS event-stream framing) and `projects/.../models/<id>:streamRawPredict` (Vertex: the Messages API
itself). The optional script segment overrides the server's default script for that route (e.g. `noop`
for one provider). Refused before the body is read: no route or no token (403), a token made for another
(task, trial, script) (403), a route ended by `POST <route>/finished` (410).

As the API sends them (_wire.py, _shape.py): every body compressed as the request accepts, streams chunked, one
sync-flushed piece per event; `reported` is the ledger of the usage the replies reported.

The agent under test can reach this server (loopback), so nothing it sends may pin the server: `hang` and
`slow` give up when the server stops, the client goes away or the route is finished; handler threads are
daemons, and stop() returns within a few seconds whatever they do.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeAlias, cast

from passhat.common import _fake_route as routes
from passhat.common._errors import PasshatError
from passhat.common._fake_route import FINISHED, Route, parse_route, token_matches
from passhat.fake_model._hacks import Plans
from passhat.fake_model._judge import judge_reply
from passhat.fake_model._plan import Script, ToolCall
from passhat.fake_model._scripts import acts_as_oracle, agent_reply, in_outage, parse_script, prompt_commands
from passhat.fake_model._shape import Books, model_of
from passhat.fake_model._sse import broken_events, cut_frames, event_frame, frame, sse_events, start_usage
from passhat.fake_model._wire import StreamEncoder, choose_encoding, chunked, encode

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


_PIECE_S = 0.0005  # the pause after each piece of a reply cut on the wire (+chunks), so each arrives alone
_POLL_S = 0.1  # how often a waiting `hang` / `slow` request checks for a reason to give up
_MAX_BODY = 64 * 2**20  # bytes; a Claude Code request with a long transcript is a few MB
_STOP_S = 3.0  # stop() waits this long for handler threads (they are daemons: none outlives the process)
_ROUTE_HELP = "/passhat/<task_id>/<trial>/<token>[/<script>]/v1/messages, from the URL passhat gave you"
RouteKey: TypeAlias = "tuple[str, int, str | None]"  # (task_id, trial, script)


class _Handler(BaseHTTPRequestHandler):
    server: FakeModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def send_response(self, code: int, message: str | None = None) -> None:
        super().send_response(code, message)
        self.send_header(routes.SCRIPTED, "1")  # every reply says it is scripted: its dollars are not money

    def _coding(self, script: Script | None = None) -> str:
        """The reply's content coding: the script's `+encoding:`, else what the request accepts (the API's way)."""
        return (script.encoding if script else "") or choose_encoding(self.headers.get("accept-encoding"))

    def _send_json(
        self, status: int, payload: dict, headers: dict[str, str] | None = None, script: Script | None = None
    ) -> None:
        coding = self._coding(script)
        data = encode(json.dumps(payload, ensure_ascii=False).encode(), coding)
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("content-type", "application/json")
        if coding != "identity":
            self.send_header("content-encoding", coding)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def _error(self, status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> None:
        self._send_json(status, {"type": "error", "error": {"type": kind, "message": message}}, headers)

    def _refuse(self, status: int, kind: str, message: str) -> None:
        """Answer without reading the body, then drop the connection (the unread body must not be parsed)."""
        self.close_connection = True
        self._error(status, kind, message, {"x-should-retry": "false", "connection": "close"})

    def _body(self) -> dict | None:
        """The JSON body, or None after answering 400/413."""
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= _MAX_BODY:
            self._refuse(413 if length > 0 else 400, "invalid_request_error", f"content-length must be 0..{_MAX_BODY}")
            return None
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        if not isinstance(body, dict):
            self._error(400, "invalid_request_error", "body is not a JSON object")
            return None
        return body

    def do_POST(self) -> None:
        if self.server.front is not None and self.server.front(self):  # --replay / --open (_replay.py, _open.py)
            return
        where = parse_route(self.path)
        refusal = self.server.refusal(where)
        if refusal is not None or where is None:
            self._refuse(*(refusal or (403, "permission_error", "no route")))
            return
        body = self._body()
        if body is None:
            return
        key: RouteKey = (where.task_id, where.trial, where.script)
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.calls.append({"endpoint": where.endpoint, "headers": headers, "route": key})
        if where.endpoint == FINISHED:
            self.server.finish(key)
            self._send_json(200, {"finished": True})
            return
        if where.endpoint.endswith("count_tokens"):
            self._send_json(200, {"input_tokens": max(1, len(json.dumps(body.get("messages", []))) // 4)})
            return
        bedrock = where.endpoint.endswith(("/invoke", "/invoke-with-response-stream"))
        if not (where.endpoint.endswith(("messages", ":rawPredict", ":streamRawPredict")) or bedrock):
            self._error(404, "not_found_error", f"no endpoint {where.endpoint!r}; the CLI asks for v1/messages")
            return
        try:
            script = self.server.script_for(where.script)
        except PasshatError as error:
            self._error(400, "invalid_request_error", str(error))
            return
        agent = bool(body.get("tools"))
        if agent and self._fault(script, key):
            return
        blocks, stop = self.server.answer(body, where.task_id, where.trial, script)
        books = self.server.books
        message = books.message(key, script, body, (blocks, stop), model_of(where.endpoint, body))
        if bedrock and where.endpoint.endswith("/invoke-with-response-stream"):
            frames = [event_frame(data) for _, data in sse_events(message, script.ping)]
            done = self._stream(frames, script, "application/vnd.amazon.eventstream")
        elif body.get("stream") and agent and books.take_break(key, script.stream_errors):  # nothing completed
            if self._stream([frame(event, data) for event, data in broken_events(message)], script):
                books.completed(key, start_usage(message["usage"]), message["model"], broken=True)
            return
        elif body.get("stream"):
            done = self._stream([frame(event, data) for event, data in sse_events(message, script.ping)], script)
        else:
            self._send_json(200, message, script=script)
            done = True
        if done:
            books.completed(key, message["usage"], message["model"])

    def _fault(self, script: Script, key: RouteKey) -> bool:
        """Play the script's fault for this agent request, if any; True when the request was answered."""
        task_id, trial, _ = key
        nth = self.server.count_request(key)
        error = {"type": "error", "error": {"type": "api_error", "message": "passhat scripted fault"}}
        if in_outage(script, task_id, trial):  # the whole trial is down: no point retrying
            self._send_json(500, error, {"x-should-retry": "false"}, script)
        elif script.name == "error":  # retried by the client up to its max_retries
            self._send_json(script.status, error, script=script)
        elif nth < script.overloads:  # `+overloaded:N`: the API is overloaded, come back in a second
            overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
            self._send_json(529, overloaded, {"retry-after": "1"}, script)
        elif script.name == "rate-limit" and nth < script.count:
            limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "passhat scripted 429"}}
            self._send_json(429, limited, {"retry-after": "1"}, script)
        elif script.name == "cut" and nth < script.count:
            self._cut(script)
        elif script.name == "hang":
            self._wait(None, key)  # never answers; the client's timeout, the route's end or stop() ends it
            self.close_connection = True
        elif script.name == "slow" and not self._wait(script.seconds, key):
            self.close_connection = True  # gave up: nobody is waiting for the reply any more
        else:
            return False
        return True

    def _wait(self, seconds: float | None, key: RouteKey) -> bool:
        """Wait `seconds` (None: for ever); False as soon as the server stops, the route is finished or the
        client hangs up, so a waiting request never pins its thread."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while True:
            left = _POLL_S if deadline is None else min(_POLL_S, deadline - time.monotonic())
            if left <= 0:
                return True
            if self.server.stopping.wait(left) or self.server.is_finished(key) or self._client_gone():
                return False

    def _client_gone(self) -> bool:
        """The client closed its end (EOF waiting on the socket)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _open_stream(self, coding: str, content_type: str = "text/event-stream", in_chunks: bool = False) -> None:
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        if coding != "identity":
            self.send_header("content-encoding", coding)
        if in_chunks:
            self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def _cut(self, script: Script) -> None:
        """A stream that starts, then the connection drops before message_stop (compressed as accepted)."""
        coding = self._coding(script)
        self._open_stream(coding)
        self.wfile.write(StreamEncoder(coding).piece(cut_frames()))
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _stream(self, frames: list[bytes], script: Script, content_type: str = "text/event-stream") -> bool:
        """Send the events in chunked transfer coding, compressed as _coding says with a sync flush per piece,
        each event cut as the script's `+chunks:` says; False when the client went away before the end."""
        coding = self._coding(script)
        self._open_stream(coding, content_type, in_chunks=True)
        cut = script.chunks != "whole"
        if cut:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            for piece in chunked(frames, coding, script.chunks):
                self.wfile.write(piece)
                self.wfile.flush()
                if cut:
                    time.sleep(_PIECE_S)
        except OSError:
            return False
        return True


class FakeModelServer(ThreadingHTTPServer):
    daemon_threads = True  # tracked in _open all the same, so stop() can wait for them (a bounded while)
    block_on_close = False
    request_queue_size = 128  # listen backlog: many trials connect at once (socketserver's default is 5)
    front: Callable[[_Handler], bool] | None = None  # answers a POST before the routes when it returns True

    def __init__(self, host: str, port: int, tasks_dir: Path, script: Script, secret: str | None = None) -> None:
        if host not in _LOOPBACK:
            msg = f"fake-model host {host!r}: passhat serves on loopback only; use 127.0.0.1"
            raise ValueError(msg)
        self.secret = routes.check_secret(secret, "fake-model secret") if secret is not None else routes.new_secret()
        super().__init__((host, port), _Handler)
        self.script = script
        self.plans = Plans(tasks_dir)
        self.requests: deque[dict] = deque(maxlen=200)  # recent agent-loop requests, for tests and debugging
        self.calls: deque[dict] = deque(maxlen=200)  # every routed request's endpoint and headers (auth tests)
        self.stopping = threading.Event()  # set on shutdown: wakes `hang` and `slow`
        self._serving = threading.Event()
        self._counts: dict[RouteKey, int] = {}  # per live route: what fault scripts count (freed when finished)
        self._seen: dict[RouteKey, int] = {}  # every agent request ever, per route (for tests)
        self.books = Books()  # per route: agent replies, the cache it wrote, the usage reported (see _shape.py)
        self._finished: set[RouteKey] = set()
        self._lock = threading.Lock()
        self._open: dict[Any, threading.Thread] = {}  # client connection → the thread serving it

    def refusal(self, where: Route | None) -> tuple[int, str, str] | None:
        """Why this route may not be served (status, error type, message), or None. Never reveals a token."""
        if where is None:
            return 403, "permission_error", f"not a passhat route; expected {_ROUTE_HELP}"
        route = f"task {where.task_id!r} trial {where.trial} script {where.script or '(default)'!r}"
        if where.token is None:
            return 403, "permission_error", f"no token in the path for {route}; expected {_ROUTE_HELP}"
        if not token_matches(self.secret, where.task_id, where.trial, where.script, where.token):
            return 403, "permission_error", f"the token was not made for {route}: a token opens only its own route"
        if self.is_finished((where.task_id, where.trial, where.script)):
            return 410, "invalid_request_error", f"{route} is finished: its trial is over"
        return None

    def finish(self, key: RouteKey) -> None:
        """End a route: later requests on it are refused, its fault counters are freed."""
        with self._lock:
            self._finished.add(key)
            self._counts.pop(key, None)

    def is_finished(self, key: RouteKey) -> bool:
        with self._lock:
            return key in self._finished

    def count_request(self, key: RouteKey) -> int:
        """How many agent requests this (task, trial, script) has made before this one."""
        with self._lock:
            seen = self._counts.get(key, 0)
            self._counts[key] = seen + 1
            self._seen[key] = self._seen.get(key, 0) + 1
            return seen

    def requests_seen(self, key: RouteKey) -> int:
        """What the fault scripts count on a live route (freed when the route is finished)."""
        with self._lock:
            return self._counts.get(key, 0)

    def requests_total(self, key: RouteKey) -> int:
        """Every agent request the route ever got."""
        with self._lock:
            return self._seen.get(key, 0)

    def reported(self, key: RouteKey, model: str | None = None, broken: bool = False) -> dict[str, int]:
        """The ledger: every usage field summed over the replies the route completed (see _shape.Books)."""
        return self.books.reported(key, model, broken)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        self._serving.set()
        super().serve_forever(poll_interval)

    def shutdown(self) -> None:
        self.stopping.set()
        if self._serving.is_set():  # socketserver's shutdown() waits for serve_forever: only if it ever ran
            super().shutdown()

    def process_request(self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name="passhat-fake-model-request",
            daemon=True,
        )
        with self._lock:
            self._open[request] = thread
        thread.start()

    def shutdown_request(self, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        with self._lock:
            self._open.pop(request, None)
        super().shutdown_request(request)

    def handler_threads(self) -> list[threading.Thread]:
        """The threads serving a client connection right now."""
        with self._lock:
            return [t for t in self._open.values() if t.is_alive()]

    def stop(self) -> None:
        """Stop serving, wake waiting requests, drop client connections and wait (at most a few seconds) for
        their threads: returns promptly whatever the clients do."""
        self.shutdown()
        with self._lock:
            open_now = dict(self._open)
        for request in open_now:
            try:
                request.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        deadline = time.monotonic() + _STOP_S
        for thread in open_now.values():
            thread.join(max(0.0, deadline - time.monotonic()))
        self.server_close()

    @property
    def origin(self) -> str:
        # getsockname() of an AF_INET/AF_INET6 socket: the host is a str (typeshed also allows bytes)
        host, port = cast("tuple[str, int]", self.server_address[:2])
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        """The URL the harness is given: http://passhat:<secret>@127.0.0.1:PORT (see _fake_route.py)."""
        return routes.with_secret(self.origin, self.secret)

    def script_for(self, script_spec: str | None) -> Script:
        return parse_script(script_spec) if script_spec else self.script

    def answer(self, body: dict, task_id: str, trial: int, script: Script) -> tuple[list[dict], str]:
        if not body.get("tools"):  # a side request (title, summary): not the agent loop
            return [{"type": "text", "text": "passhat scripted reply"}], "end_turn"
        self.requests.append({"task_id": task_id, "trial": trial, "script": script.name, "body": body})
        if script.name == "judge":  # a request of passhat's LLM judge (see _judge.py)
            reply = judge_reply(body, script.spec)
            return reply.blocks, reply.stop_reason
        plan: list[ToolCall] | None
        if script.name == "commands":
            plan, oracle = prompt_commands(body, task_id, trial), True
        elif isinstance(hacked := self.plans.hack(script, task_id, trial), str):  # a hack that does not apply
            return [{"type": "text", "text": hacked}], "end_turn"
        elif hacked is not None:  # `hack:KIND`, or a trial `+hack:Q` drew: the tests gamed through the CLI
            plan, oracle = hacked, True
        else:
            oracle = acts_as_oracle(script, task_id, trial)
            plan = self.plans.get(task_id) if oracle else None
        reply = agent_reply(body, plan, oracle)
        return reply.blocks, reply.stop_reason


def start_in_thread(
    tasks_dir: str | Path, script: str = "oracle", port: int = 0, secret: str | None = None
) -> FakeModelServer:
    """Start a server on 127.0.0.1 in a daemon thread (for tests and benchmarks); call .stop() to stop.
    Its `.url` carries the secret: give it to the harness as PASSHAT_FAKE_MODEL_URL / fake_model_url."""
    server = FakeModelServer("127.0.0.1", port, Path(tasks_dir).resolve(), parse_script(script), secret)
    serving = threading.Thread(target=server.serve_forever, args=(0.1,), name="passhat-fake-model", daemon=True)
    serving.start()
    server._serving.wait(5.0)
    return server
