"""The model proxy: a confined trial's only way out, and passhat's witness of what the model API did.

One per trial, outside the sandbox, listening on a unix socket that the in-sandbox forwarder (_inside.py)
relays 127.0.0.1:PORT to. It
  * forwards `/v1/...` requests to the real upstream (the scripted model's tokened route, or the Anthropic
    API), dropping whatever credential the request carries and adding the real one: the API key never
    enters the sandbox (the CLI there holds a placeholder);
  * answers CONNECT only for hosts the task lists under `network:` (host:port), refuses everything else;
  * records every model request's outcome (HTTP status, or why the upstream could not be reached), which is
    the evidence that decides whether a failed trial was the infrastructure's fault (see `Witness`).

Replies reach the client as the upstream sent them; passhat reads a decoded copy (trial/spend `Reading`) to meter
the spend and tell how a stream ended, so the upstream is offered only the codings passhat decodes. A reply it
cannot read fails closed: "unreadable: ...", the spend `unmetered`, the trial ended at once as infra.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from passhat.common._endpoint import REFUSED_IN_A_ROW, Endpoint, Probe, is_auth, is_refusal, label, probe
from passhat.common._fake_route import SCRIPTED
from passhat.trial._inside import _pipe  # one relay loop, shared with the in-sandbox forwarder
from passhat.trial.spend import FAILED_WORDS, Reading, Spend, accepted

PLACEHOLDER_KEY = "passhat-proxy-holds-the-key"
DEFAULT_API = "https://api.anthropic.com"
_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}
_CREDENTIALS = {"x-api-key", "authorization", "proxy-authorization"}
_CONNECT_TIMEOUT_S = 30.0
_READ_TIMEOUT_S = 900.0

_FAILED = ("5", "429", "unreachable", "cut", "unreadable", *FAILED_WORDS)
NO_ANSWER_S = 5.0  # a model request pending this long when the session ended: the API was not answering


def _failed(outcome: str | None) -> bool:
    """The upstream did not answer this request: a 5xx, a 429, no connection, a stream cut or ended by an error
    event of an upstream failure (overloaded, api_error, rate limit), a reply passhat could not read, or the
    credential refused (401/403, as the upstream said it: the proxy's own refusals are not requests)."""
    return bool(outcome) and (str(outcome).startswith(_FAILED) or is_auth(outcome))


@dataclass
class Witness:
    """What the proxy saw of the model API during one trial: each request's path and outcome ("200", "529",
    "unreachable: ...", and for a 2xx reply how it ended: "overloaded: ...", "upstream error: ...", "cut: ...",
    "unreadable: ...", see trial/spend/_reading.py), None while it waits for the upstream; and whether it gave up
    on the upstream (`gave_up`, `ended`): REFUSED_IN_A_ROW refusals in a row (see passhat/common/_endpoint.py), or a
    reply it could not read (`unreadable`)."""

    requests: list[tuple[float, str, str | None]] = field(default_factory=list)  # (start, path, outcome)
    refused: list[str] = field(default_factory=list)  # CONNECT / paths outside the API, as asked
    lock: threading.Lock = field(default_factory=threading.Lock)
    upstream: str = "the model API"  # scheme://host:port, for reasons
    fix: str = ""  # what to do when the upstream refuses the credential (the variable, or --secret-file)
    check: Callable[[], Probe] | None = None  # passhat's own probe of the endpoint, with the real credential
    gave_up: str | None = None  # why the proxy ended the trial (infra), once it has
    config_problem: str | None = None  # a refusal before any answer that points at configuration (note_config)
    scripted: bool = False  # a reply carried SCRIPTED: passhat's scripted model answered, not money spent
    ended: threading.Event = field(default_factory=threading.Event)
    _streak: int = 0

    def start(self, path: str) -> int:
        with self.lock:
            self.requests.append((time.monotonic(), path, None))
            return len(self.requests) - 1

    def finish(self, index: int, outcome: str) -> None:
        with self.lock:
            started, path, _ = self.requests[index]
            self.requests[index] = (started, path, outcome)
            self._streak = self._streak + 1 if is_refusal(outcome) else 0
            streak = self._streak
        if streak >= REFUSED_IN_A_ROW and self.gave_up is None:
            self._give_up(outcome, streak)

    def _give_up(self, outcome: str, streak: int) -> None:
        """End the trial as infra after `streak` refusals in a row. Before any answer the agent has run nothing;
        after one, passhat's own probe must be refused too (the agent may have crafted the refused requests)."""
        refusal = self.auth_refusal(outcome) if is_auth(outcome) else None
        if self.answered:
            found = self.check() if self.check is not None else None
            if found is None or found.problem is None:
                with self.lock:
                    self._streak = 0  # the endpoint answers passhat: not the infrastructure's doing
                return
            refusal = f"{refusal}; passhat's own probe too: {found.problem}" if refusal else found.problem
        self.gave_up = refusal or (
            f"the model API at {self.upstream} could not be reached {streak} times in a row (last: {outcome}); passhat "
            "ended the trial instead of waiting out the CLI's retries. Bring the endpoint back, then "
            "`promptfoo eval --retry-errors --repeat N` runs these trials again"
        )
        self.ended.set()

    def unreadable(self, index: int, outcome: str) -> None:
        """Request `index`'s reply could not be read: its spend cannot be metered nor its end told, so the trial
        ends now as an infrastructure error (fail closed), whatever the caps."""
        self.finish(index, outcome)
        self.gave_up = self.gave_up or (
            f"passhat could not read the model API's reply from {self.upstream} ({outcome}), so it could neither meter "
            "the trial's spend nor tell how the reply ended, and ended the trial; passhat asks the upstream only for "
            "gzip, deflate, br, zstd or identity: fix the endpoint (or the gateway before it), then "
            "`promptfoo eval --retry-errors --repeat N` runs these trials again"
        )
        self.ended.set()

    def note_config(self, reason: str) -> None:
        """A refusal before any answer that points at configuration (the first one is kept): a session that then
        never gets an answer ends as an infrastructure error with it, not as the agent's crash."""
        with self.lock:
            self.config_problem = self.config_problem or reason

    def auth_refusal(self, outcome: str) -> str:
        """The reason of a trial whose credential the upstream refused: endpoint, status, fix."""
        status = str(outcome).split(" ", 1)[0]
        return f"the model API at {self.upstream} refused the credential (HTTP {status}); {self.fix}".rstrip("; ")

    def unreachable(self, pending_counts: bool = False, now: float | None = None) -> str | None:
        """Why no model request of the trial got an answer (None when one did, or none was made). A request
        still waiting counts as unanswered when the session ended on it (`pending_counts`: passhat's deadline
        or the CLI giving up) or after NO_ANSWER_S; one cut short by a kill from outside is no evidence."""
        now = time.monotonic() if now is None else now
        with self.lock:
            requests = list(self.requests)
        if not requests or any(o and not _failed(o) for _, _, o in requests):
            return None
        if any(o is None and not pending_counts and now - t < NO_ANSWER_S for t, _, o in requests):
            return None
        first = next((o for _, _, o in requests if o), "no answer")
        refused = next((o for _, _, o in requests if is_auth(o)), None)
        why = f"{len(requests)} model request(s), none answered (first: {first})"
        return f"{why}: {self.auth_refusal(refused)}" if refused else why

    def confirmed_auth(self) -> str | None:
        """After answers, the last request's credential refused (401/403) and passhat's own probe refused too:
        a credential that expired or was revoked mid-session (the agent cannot make passhat's probe fail)."""
        with self.lock:
            last = self.requests[-1][2] if self.requests else None
        if not is_auth(last) or self.check is None:
            return None
        found = self.check()
        return f"{self.auth_refusal(str(last))}; passhat's own probe too: {found.problem}" if found.auth else None

    @property
    def answered(self) -> int:
        """Model requests the upstream answered with a success."""
        with self.lock:
            return sum(1 for _, _, outcome in self.requests if outcome and outcome.startswith("2"))

    def infra_evidence(self, pending_counts: bool = False, now: float | None = None) -> str | None:
        """Why a failed session is the infrastructure's fault, or None: the last model request failed upstream
        (a 401/403 only when confirmed, see `confirmed_auth`), or was still unanswered when the session ended —
        when the CLI itself gave up on it (`pending_counts`), or after NO_ANSWER_S (a CLI that died while its
        request hung)."""
        now = time.monotonic() if now is None else now
        with self.lock:
            if not self.requests:
                return None
            started, _, last = self.requests[-1]
            failures = [o for _, _, o in self.requests if o and o.startswith(_FAILED)]
        if last is None and (pending_counts or now - started >= NO_ANSWER_S):
            return f"the model API did not answer its last request in {now - started:.0f} s" + (
                f" (and failed {len(failures)} time(s) before; last: {failures[-1]})" if failures else ""
            )
        if last is not None and last.startswith(_FAILED):  # an error status, an error event, a cut, unreadable
            return f"the model API failed {len(failures)} time(s); last: {last}"
        return self.confirmed_auth()


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, path: str, proxy: ModelProxy) -> None:
        self.proxy = proxy
        super().__init__(path, _Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that went away mid-request (the CLI killed or timed out) is no error of ours: stay quiet."""

    def close(self) -> None:  # after its serving loop's last poll (ModelProxy.stop runs it in a thread)
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        return

    def _refuse(self, status: int, message: str) -> None:
        self.server.proxy.witness.refused.append(f"{self.command} {self.path}")
        body = ('{"type":"error","error":{"type":"permission_error","message":"' + message + '"}}').encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def do_CONNECT(self) -> None:
        proxy = self.server.proxy
        host, _, port = self.path.rpartition(":")
        if self.path not in proxy.allowed_hosts:
            self._refuse(403, f"passhat: {self.path} is not in the task's network list")
            return
        try:
            upstream = socket.create_connection((host, int(port)), timeout=_CONNECT_TIMEOUT_S)
        except OSError as error:
            self._refuse(502, f"passhat: cannot reach {self.path}: {error}")
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.close_connection = True
        upstream.settimeout(None)
        back = threading.Thread(target=_pipe, args=(upstream, self.connection), daemon=True)
        back.start()
        _pipe(self.connection, upstream)
        back.join(timeout=5)
        upstream.close()

    def _forward(self) -> None:
        proxy = self.server.proxy
        if not self.path.startswith(proxy.paths):
            self._refuse(403, "passhat: only the model API is reachable from a trial")
            return
        length = self.headers.get("content-length")
        if self.headers.get("transfer-encoding") or (self.command == "POST" and length is None):
            self._refuse(411, "passhat: send a content-length")
            return
        body = self.rfile.read(int(length)) if length else b""
        if proxy.witness.gave_up is not None:  # the trial is ending: no more requests to a refusing upstream
            self._refuse(502, f"passhat: the model API at {proxy.upstream_label} refused; the trial is over")
            return
        spend = proxy.spend  # the trial's caps and the CLI's request shape (trial/spend)
        if spend is not None and (refusal := spend.admit(self.command, self.path, body)) is not None:
            if spend.refused_model is not None and not proxy.witness.answered:
                # nothing answered yet, so the agent has run nothing: the CLI itself asks for another model (a side
                # request may, beside its main one: the session goes on, and only one that never got an answer
                # ends as this config error, see trial._agent)
                proxy.witness.note_config(spend.other_model())
            self._refuse(403, refusal)
            return
        meter = spend.meter(self.path, body) if spend is not None else None
        headers = {
            k: v for k, v in self.headers.items() if k.lower() not in _HOP | _CREDENTIALS | {"host", "accept-encoding"}
        }
        headers["accept-encoding"] = accepted(self.headers.get("accept-encoding"))  # only what passhat decodes
        headers.update(proxy.credential_headers)
        path = proxy.prefix + self.path
        connection = proxy.connection()
        seen = proxy.witness.start(self.path)
        try:
            connection.request(self.command, path, body=body, headers=headers)
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            proxy.witness.finish(seen, f"unreachable: {type(error).__name__}: {error}")
            self._refuse(502, f"passhat: the model API at {proxy.upstream_label} is unreachable")
            return
        proxy.witness.finish(seen, str(response.status))
        proxy.witness.scripted |= response.getheader(SCRIPTED) == "1"
        self.send_response(response.status, response.reason)
        for key, value in response.getheaders():
            if key.lower() not in _HOP | {"content-length"}:
                self.send_header(key, value)
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        coding = response.getheader("content-encoding")
        try:
            self._relay(response, Reading(response.status, response.getheader("content-type"), coding, meter), seen)
        finally:
            connection.close()

    def _relay(self, response: http.client.HTTPResponse, reading: Reading, seen: int) -> None:
        """The reply's bytes to the client as they come, a copy read on the way; the witness records how it ended.
        A reply that cannot be read fails closed at once (Witness.unreadable); the client still gets all of it."""
        witness, broke, left, told = self.server.proxy.witness, None, None, False
        while left is None:
            try:
                chunk = response.read1(65536)
            except (OSError, http.client.HTTPException) as error:  # the upstream broke off
                broke = f"{type(error).__name__}: {error}"
            if broke is not None or not chunk:
                break
            reading.feed(chunk)
            if reading.problem is not None and not told:  # the spend is marked unmetered (Reading)
                witness.unreadable(seen, f"unreadable: {reading.problem}")
                told = True
            try:
                self.wfile.write(chunk)
                self.wfile.flush()
            except OSError:  # the CLI went away (its own timeout, or it was killed): not the API's fault
                left = f"{response.status} (the client left mid-reply)"
        ended = reading.finish(broke)
        if reading.problem is not None and not told:
            witness.unreadable(seen, ended)
        witness.finish(seen, left if left is not None and reading.problem is None else ended)

    do_GET = do_POST = do_PUT = do_DELETE = _forward  # noqa: N815


class ModelProxy:
    """Start with `start()`, stop with `stop()` (which removes the socket's folder, the proxy's own);
    `witness` holds what it saw; `spend`, when set, caps what the trial may spend (trial/spend)."""

    spend: Spend | None = None

    def __init__(
        self,
        socket_path: Path,
        upstream: str,
        credential: dict[str, str],
        network: tuple[str, ...] = (),
        paths: tuple[str, ...] = ("/v1/",),
        check: Endpoint | None = None,
    ):
        """`check`: how passhat probes this upstream itself (and the fix when it refuses the credential)."""
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            msg = f"model URL {upstream!r}: expected http(s)://HOST[:PORT][/PATH]"
            raise ValueError(msg)
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.upstream_label = label(upstream)
        self.credential_headers = credential
        self.allowed_hosts = frozenset(network)
        self.paths = paths  # the model API's request paths (api_paths): every other path is refused
        self.socket_path = socket_path
        self.witness = Witness(upstream=self.upstream_label, fix=check.fix if check else "")
        if check is not None:
            self.witness.check = lambda: probe(check)
        self._server: _Server | None = None

    def connection(self) -> http.client.HTTPConnection:
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=_READ_TIMEOUT_S)
        return http.client.HTTPConnection(self.host, self.port, timeout=_READ_TIMEOUT_S)

    def start(self) -> ModelProxy:
        self.socket_path.unlink(missing_ok=True)
        self._server = _Server(str(self.socket_path), self)
        os.chmod(self.socket_path, 0o666)  # the trial's own uid connects; the folder's permissions guard it
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
        return self

    def stop(self) -> None:
        """Remove the socket's folder now (no new connection); the server closes in a thread: no wait for it."""
        shutil.rmtree(self.socket_path.parent, ignore_errors=True)  # the proxy's own folder
        server, self._server = self._server, None
        if server is not None:
            threading.Thread(target=server.close, daemon=True).start()


# The model variables of the real job (see _config.model_endpoint): credentials stay with the proxy, outside.
_BEARER_VARS = ("ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "AWS_BEARER_TOKEN_BEDROCK")
CREDENTIAL_VARS = (*_BEARER_VARS, "ANTHROPIC_API_KEY")
URL_VARS = ("ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_BASE_URL")


def credential_headers(env: dict[str, str]) -> dict[str, str]:
    """The upstream's credential from the endpoint variables (never passed into the sandbox): a bearer token
    (a gateway token, an OAuth token of `claude setup-token`, a Bedrock API key) or an Anthropic API key."""
    for name in _BEARER_VARS:
        if token := env.get(name):
            return {"authorization": f"Bearer {token}"}
    if key := env.get("ANTHROPIC_API_KEY"):
        return {"x-api-key": key}
    return {}


def upstream_url(env: dict[str, str]) -> str:
    """Where the model requests go: Bedrock's or Vertex's base URL in those modes, else ANTHROPIC_BASE_URL."""
    return next((env[name] for name in URL_VARS if env.get(name)), DEFAULT_API)


def api_paths(env: dict[str, str]) -> tuple[str, ...]:
    """The request paths of the API the CLI speaks in this mode (relative to its base URL); the proxy refuses
    every other path, e.g. Bedrock's control-plane `/inference-profiles` or another Vertex project."""
    if env.get("CLAUDE_CODE_USE_BEDROCK") == "1":
        return ("/model/",)
    if env.get("CLAUDE_CODE_USE_VERTEX") == "1":
        project, region = env.get("ANTHROPIC_VERTEX_PROJECT_ID", ""), env.get("CLOUD_ML_REGION", "")
        return (f"/projects/{project}/locations/{region}/publishers/anthropic/models/",)
    return ("/v1/",)


def model_proxy(
    socket_path: Path, env: dict[str, str], network: tuple[str, ...] = (), check: Endpoint | None = None
) -> ModelProxy:
    """The proxy of one trial for the endpoint variables `env` (started: `stop()` it); `check` as ModelProxy's."""
    return ModelProxy(socket_path, upstream_url(env), credential_headers(env), network, api_paths(env), check).start()


def inside_variables(env: dict[str, str], local: str) -> dict[str, str]:
    """The model variables the CLI gets inside the sandbox: every base URL is the trial's own port (the proxy),
    every credential a placeholder of the same kind, so the CLI still sends the requests of the real job (an
    OAuth token: `authorization: Bearer` and the `oauth-2025-04-20` beta flag); the rest (Bedrock / Vertex
    switches, region, project) as is."""
    inside = {"ANTHROPIC_BASE_URL": local}
    for name, value in env.items():
        inside[name] = PLACEHOLDER_KEY if name in CREDENTIAL_VARS else local if name in URL_VARS else value
    return inside
