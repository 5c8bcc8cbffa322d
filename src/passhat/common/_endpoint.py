"""The model endpoint seen from outside every sandbox: does it answer, and does it take passhat's credential.

A dead or refusing endpoint must cost seconds, not the CLI's retry budget (about 3 minutes a trial), and must
never be booked as the agent's failure (issue 23). Three places ask, with one rule each:

  * a trial's model proxy (trial/_proxy.py) counts the upstream's refusals: a refused or failed connection, or a
    401/403 (the credential refused). After REFUSED_IN_A_ROW of them in a row the trial ends at once as an infra
    error. Before the model answered anything the agent has run nothing, so nothing it did can explain them;
    after that, a 401/403 could be a request the agent crafted, so passhat first checks the credential with a
    request of its own (`probe`) and gives up only when that is refused too;
  * the provider, across trials (`EndpointHealth`): once `unreachable_after` trials in a row could not get an
    answer, each later trial probes first and, while the endpoint still refuses, ends before the CLI starts;
  * `passhat validate`: one probe before the first trial, saying what it found.

A probe is one TCP connection and, where the API has one, its cheapest request with the real credential:
`POST /v1/messages/count_tokens` (free) on the Anthropic API, a gateway, or the scripted model's own route.
Bedrock and Vertex have no free request: there the probe checks the connection only.
Stdlib only: the trial stage and the CLI both use it.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

REFUSED_IN_A_ROW = 3  # upstream refusals in a row (connection or credential) before a trial's proxy gives up
UNREACHABLE_AFTER = 3  # trials in a row without an answer before later ones probe first (`unreachable_after`)
AUTH_STATUSES = ("401", "403")
CHECK_PATH = "/v1/messages/count_tokens"  # the Messages API's free request
_CHECK_BODY = json.dumps({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "ping"}]}).encode()
PROBE_TIMEOUT_S = 5.0


def label(url: str) -> str:
    """scheme://host:port of a URL (no path: a scripted model's route holds a token; no userinfo: a secret)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


def is_auth(outcome: str | None) -> bool:
    """The upstream refused the credential: 401 or 403 (as the proxy records a status, maybe with a note)."""
    return bool(outcome) and str(outcome).split(" ", 1)[0] in AUTH_STATUSES


def is_refusal(outcome: str | None) -> bool:
    """The upstream refused: no connection, or the credential refused. Not a 5xx, a 429 or a cut stream: those
    are the CLI's to retry (`max_retries`)."""
    return bool(outcome) and (str(outcome).startswith("unreachable") or is_auth(outcome))


@dataclass(frozen=True)
class Endpoint:
    """Where one trial's model requests go and how to check it."""

    url: str  # the upstream base URL: the API's, a gateway's, or the scripted model's tokened route
    headers: dict[str, str] = field(default_factory=dict)  # the credential, and what the API needs beside it
    check_path: str | None = CHECK_PATH  # the cheapest request, relative to url; None: the connection only
    fix: str = "check the credential passhat is given"  # what to do when the endpoint refuses the credential

    @property
    def label(self) -> str:
        return label(self.url)


@dataclass(frozen=True)
class Probe:
    """What one probe found: `problem` is None when the endpoint answered (and took the credential, if checked)."""

    problem: str | None
    auth: bool = False  # the endpoint refused the credential (401/403)
    found: str = ""  # one line for `passhat validate`


def probe(endpoint: Endpoint, timeout_s: float = PROBE_TIMEOUT_S) -> Probe:
    """One connection, and the endpoint's cheapest request with the real credential where it has one."""
    parts = urlsplit(endpoint.url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    where = endpoint.label
    try:
        socket.create_connection((parts.hostname or "", port), timeout=timeout_s).close()
    except OSError as error:
        return Probe(f"{where} is unreachable ({type(error).__name__}: {error})", found="unreachable")
    if endpoint.check_path is None:
        return Probe(None, found=f"{where} accepts connections (the credential is not checked: no free request)")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname or "", port, timeout=timeout_s)
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01", **endpoint.headers}
    try:
        connection.request("POST", parts.path.rstrip("/") + endpoint.check_path, body=_CHECK_BODY, headers=headers)
        response = connection.getresponse()
        detail = _message(response.read(4096))
    except (OSError, http.client.HTTPException) as error:
        return Probe(f"{where} did not answer a request ({type(error).__name__}: {error})", found="no answer")
    finally:
        connection.close()
    status = str(response.status)
    if status in AUTH_STATUSES:
        return Probe(
            f"{where} refused the credential (HTTP {status}{': ' + detail if detail else ''}); {endpoint.fix}",
            auth=True,
            found=f"credential refused (HTTP {status})",
        )
    accepted = "the credential is accepted" if status.startswith("2") else f"HTTP {status} to {endpoint.check_path}"
    return Probe(None, found=f"{where} answers; {accepted}")


def _message(body: bytes) -> str:
    """The API's error message, short, from an Anthropic-style error body; '' when there is none."""
    try:
        error = json.loads(body).get("error") or {}
        text = str(error.get("message") or "") if isinstance(error, dict) else ""
    except (ValueError, AttributeError):
        return ""
    return text[:200]


class EndpointHealth:
    """How many trials in a row could not get an answer from the model, kept in a file of the state dir (every
    Promptfoo worker process of one eval shares it). Once `limit` trials in a row got none, each later trial
    first probes the endpoint and, while it still refuses, ends at once as an infra error naming the endpoint,
    the first error and the fix; a trial that gets answers again, or a probe that passes, resets the count."""

    def __init__(self, state_dir: Path, limit: int = UNREACHABLE_AFTER) -> None:
        self.path = state_dir / "endpoint-health.json"
        self.limit = limit

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, object]) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        try:
            tmp.write_text(json.dumps(data))
            os.replace(tmp, self.path)
        except OSError:
            tmp.unlink(missing_ok=True)

    def refuse(self, endpoint: Endpoint) -> str | None:
        """Why this trial should not start (the endpoint is known dead or refusing, and still is), or None."""
        data = self._read()
        count = data.get("count")
        if not isinstance(count, int) or count < self.limit:
            return None
        found = probe(endpoint)
        if found.problem is None:
            self._write({})
            return None
        fix = (
            ""
            if found.auth
            # a refused credential's fix is in the problem already
            else (". Bring the endpoint back, then `promptfoo eval --retry-errors --repeat N` runs these trials again")
        )
        return (
            f"the model endpoint {endpoint.label} gave no answer to the last {count} trials (first error: "
            f"{data.get('first')}), so this trial was not started; it still does not: {found.problem}{fix}"
        )

    def record(self, unreachable: str | None) -> None:
        """After a trial: `unreachable` is why it got no answer from the model, or None when it got one."""
        if unreachable is None:
            if self._read():
                self._write({})
            return
        data = self._read()
        count = data.get("count")
        first = data.get("first") or unreachable
        self._write({"count": (count if isinstance(count, int) else 0) + 1, "first": first})
