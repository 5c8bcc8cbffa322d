"""An Anthropic Messages API on loopback, answering from scripts (see _scripts.py).

Which trial a request belongs to travels in the URL path: the provider points the
CLI at `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/passhat/<task_id>/<trial>[/<script>]`
and the CLI appends `/v1/messages`. The optional script segment overrides the
server's default script for that trial (e.g. `noop` for one provider).
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from passhat._errors import PasshatError
from passhat.fake_model._judge import judge_reply
from passhat.fake_model._plan import Script, ToolCall, plan_solution
from passhat.fake_model._scripts import (
    acts_as_oracle,
    agent_reply,
    in_outage,
    parse_script,
    prompt_commands,
)

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def route(path: str) -> tuple[str | None, int | None, str | None, str]:
    """Split a request path into (task_id, trial, script, endpoint)."""
    parts = [unquote(p) for p in urlsplit(path).path.split("/") if p]
    try:
        v1 = parts.index("v1")
    except ValueError:
        return None, None, None, "/".join(parts)
    prefix, endpoint = parts[:v1], "/".join(parts[v1:])
    if len(prefix) >= 3 and prefix[0] == "passhat" and prefix[2].isdigit():
        script = prefix[3] if len(prefix) > 3 else None
        return prefix[1], int(prefix[2]), script, endpoint
    return None, None, None, endpoint


class _Plans:
    """solution plans per task, computed once (the task folder is frozen while serving)."""

    def __init__(self, tasks_dir: Path) -> None:
        self.tasks_dir = tasks_dir
        self._plans: dict[str, list[ToolCall] | None] = {}
        self._lock = threading.Lock()

    def get(self, task_id: str) -> list[ToolCall] | None:
        with self._lock:
            if task_id not in self._plans:
                self._plans[task_id] = self._load(task_id)
            return self._plans[task_id]

    def _load(self, task_id: str) -> list[ToolCall] | None:
        from passhat.tasks._load import load_task

        folder = self.tasks_dir / task_id
        if not (folder / "task.yaml").is_file():
            print(f"passhat fake-model: no task {task_id!r} under {self.tasks_dir}", file=sys.stderr)
            return None
        task = load_task(folder)
        return plan_solution(task.repo, task.solution)


def _usage(body: dict, reply_blocks: list[dict]) -> dict:
    return {
        "input_tokens": max(1, len(json.dumps(body.get("messages", []))) // 4),
        "output_tokens": max(1, len(json.dumps(reply_blocks)) // 4),
    }


class _Handler(BaseHTTPRequestHandler):
    server: FakeModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send_json(
                400, {"type": "error", "error": {"type": "invalid_request_error", "message": "body is not JSON"}}
            )
            return
        task_id, trial, script_spec, endpoint = route(self.path)
        if endpoint.endswith("count_tokens"):
            self._send_json(200, {"input_tokens": _usage(body, [])["input_tokens"]})
            return
        if not endpoint.endswith("messages"):
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
            return
        try:
            script = self.server.script_for(script_spec)
        except PasshatError as error:
            self._send_json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": str(error)}})
            return
        if body.get("tools") and self._fault(script, task_id, trial, script_spec):
            return
        blocks, stop = self.server.answer(body, task_id, trial, script)
        message = {
            "id": f"msg_passhat_{task_id or 'none'}_{trial}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "passhat-scripted"),
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": _usage(body, blocks),
        }
        if body.get("stream"):
            self._stream(message)
        else:
            self._send_json(200, message)

    def _fault(self, script: Script, task_id: str | None, trial: int | None, spec: str | None) -> bool:
        """Play the script's fault for this agent request, if any; True when the request was answered."""
        nth = self.server.count_request((task_id, trial, spec))
        error = {"type": "error", "error": {"type": "api_error", "message": "passhat scripted fault"}}
        if in_outage(script, task_id, trial):  # the whole trial is down: no point retrying
            self._send_json(500, error, {"x-should-retry": "false"})
        elif script.name == "error":  # retried by the client up to its max_retries
            self._send_json(script.status, error)
        elif script.name == "rate-limit" and nth < script.count:
            limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "passhat scripted 429"}}
            self._send_json(429, limited, {"retry-after": "1"})
        elif script.name == "cut" and nth < script.count:
            self._cut()
        elif script.name == "hang":
            self.server.stopping.wait()  # until the server shuts down; the client gives up first
            self.close_connection = True
        else:
            if script.name == "slow":
                self.server.stopping.wait(script.seconds)
            return False
        return True

    def _cut(self) -> None:
        """A stream that starts, then the connection drops before message_stop."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        start = {
            "type": "message_start",
            "message": {
                "id": "msg_cut",
                "type": "message",
                "role": "assistant",
                "model": "passhat-scripted",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        }
        self.wfile.write(f"event: message_start\ndata: {json.dumps(start)}\n\n".encode())
        self.wfile.write(
            b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
            b'"content_block": {"type": "text", "text": ""}}\n\n'
        )
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _stream(self, message: dict) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for event, data in sse_events(message):
            self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


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


class FakeModelServer(ThreadingHTTPServer):
    daemon_threads = False  # tracked, so stop() can join them
    block_on_close = True

    def __init__(self, host: str, port: int, tasks_dir: Path, script: Script) -> None:
        if host not in _LOOPBACK:
            msg = f"fake-model host {host!r}: passhat serves on loopback only; use 127.0.0.1"
            raise ValueError(msg)
        super().__init__((host, port), _Handler)
        self.script = script
        self.plans = _Plans(tasks_dir)
        self.requests: deque[dict] = deque(maxlen=200)  # recent agent-loop requests, for tests and debugging
        self.stopping = threading.Event()  # set on shutdown: wakes `hang` and `slow`
        self._counts: dict[tuple, int] = {}
        self._counts_lock = threading.Lock()
        self._open: set = set()  # client connections being served (keep-alive ones included)

    def count_request(self, key: tuple) -> int:
        """How many agent requests this (task, trial, script) has made before this one."""
        with self._counts_lock:
            seen = self._counts.get(key, 0)
            self._counts[key] = seen + 1
            return seen

    def requests_seen(self, key: tuple) -> int:
        with self._counts_lock:
            return self._counts.get(key, 0)

    def shutdown(self) -> None:
        self.stopping.set()
        super().shutdown()

    def process_request(self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any) -> None:
        with self._counts_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        with self._counts_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def stop(self) -> None:
        """Stop serving, drop kept-alive client connections, wait for their threads: nothing left running."""
        self.shutdown()
        with self._counts_lock:
            open_now = list(self._open)
        for request in open_now:
            try:
                request.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.server_close()  # block_on_close: joins the handler threads

    @property
    def url(self) -> str:
        # getsockname() of an AF_INET/AF_INET6 socket: the host is a str (typeshed also allows bytes)
        host, port = cast("tuple[str, int]", self.server_address[:2])
        return f"http://{host}:{port}"

    def script_for(self, script_spec: str | None) -> Script:
        return parse_script(script_spec) if script_spec else self.script

    def answer(self, body: dict, task_id: str | None, trial: int | None, script: Script) -> tuple[list[dict], str]:
        if not body.get("tools"):  # a side request (title, summary): not the agent loop
            return [{"type": "text", "text": "passhat scripted reply"}], "end_turn"
        self.requests.append({"task_id": task_id, "trial": trial, "script": script.name, "body": body})
        if script.name == "judge":  # a request of passhat's LLM judge (see _judge.py)
            reply = judge_reply(body, script.spec)
            return reply.blocks, reply.stop_reason
        plan: list[ToolCall] | None
        if script.name == "commands":
            plan, oracle = prompt_commands(body, task_id, trial), True
        else:
            oracle = task_id is not None and trial is not None and acts_as_oracle(script, task_id, trial)
            plan = self.plans.get(task_id) if oracle and task_id else None
        reply = agent_reply(body, plan, oracle)
        return reply.blocks, reply.stop_reason


def start_in_thread(tasks_dir: str | Path, script: str = "oracle", port: int = 0) -> FakeModelServer:
    """Start a server on 127.0.0.1 in a daemon thread (for tests and benchmarks); call .shutdown() to stop."""
    server = FakeModelServer("127.0.0.1", port, Path(tasks_dir).resolve(), parse_script(script))
    threading.Thread(target=server.serve_forever, name="passhat-fake-model", daemon=True).start()
    return server
