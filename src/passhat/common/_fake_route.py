"""Routes of the scripted model (`passhat fake-model`): which trial a request belongs to, and the token that
proves the caller was given that route. Shared by the server (fake_model/) and the harness (trial/, judge/);
pure functions and the stdlib only, plus `finish_trial` (one POST).

    the harness is given     http://passhat:<secret-hex>@127.0.0.1:PORT        (PASSHAT_FAKE_MODEL_URL)
    one trial's CLI is given http://127.0.0.1:PORT/passhat/<task_id>/<trial>/<token>[/<script>]
    token                    HMAC-SHA256(secret, f"{task_id}\\0{trial}\\0{script or ''}"), first 32 hex digits

The secret stays with the harness (provider, judge, `passhat fake-model --url-file`); a trial's CLI gets only
its token, which opens its own (task, trial, script) route and no other: not another trial's (its rate-limit
budget), not the `oracle` script on its own trial (the reference solution). The judge uses the same scheme with
its judge script (`judge`, `judge:0.8`, ...) as the script: a route of its own, which the agent's token does
not open. `POST <route>/finished` ends a route: from then on the server refuses it (410).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import urllib.request
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

SECRET_ENV = "PASSHAT_FAKE_MODEL_SECRET"
USER = "passhat"  # the userinfo's user name: http://passhat:<secret>@host:port
PREFIX = "passhat"  # the first path segment of every route
FINISHED = "finished"  # the last path segment of the request that ends a route
TOKEN_LENGTH = 32  # hex digits
SCRIPTED = "x-passhat-scripted-model"  # on every reply of the scripted model: its dollars are not money
_SECRET = re.compile(r"[0-9a-f]{32,}")
_TOKEN = re.compile(rf"[0-9a-f]{{{TOKEN_LENGTH}}}")
_SCRIPT_SAFE = ":,+"  # kept readable in the path (judge-points:5,4; flaky:0.7+outage:0.1)


def new_secret() -> str:
    """32 random bytes, hex."""
    return secrets.token_hex(32)


def check_secret(secret: str, source: str) -> str:
    """The secret, stripped and lower-cased; ValueError (without the value) when it is not hex of 16+ bytes."""
    cleaned = secret.strip().lower()
    if not _SECRET.fullmatch(cleaned):
        msg = (f"{source}: the secret must be at least 32 hex digits (16 bytes), got {len(cleaned)} characters "
               "that are not all hex; make one with `python -c 'import secrets; print(secrets.token_hex(32))'`")  # fmt: skip
        raise ValueError(msg)
    return cleaned


def token(secret: str, task_id: str, trial: int, script: str | None) -> str:
    message = f"{task_id}\0{trial}\0{script or ''}".encode()
    return hmac.new(bytes.fromhex(secret), message, hashlib.sha256).hexdigest()[:TOKEN_LENGTH]


def token_matches(secret: str, task_id: str, trial: int, script: str | None, given: str) -> bool:
    return hmac.compare_digest(token(secret, task_id, trial, script), given)


def looks_like_token(segment: str) -> bool:
    return bool(_TOKEN.fullmatch(segment))


def with_secret(origin: str, secret: str) -> str:
    """http://127.0.0.1:PORT → http://passhat:<secret>@127.0.0.1:PORT"""
    scheme, _, rest = origin.partition("://")
    return f"{scheme}://{USER}:{secret}@{rest}"


def split_url(url: str) -> tuple[str, str | None]:
    """(the URL without userinfo or trailing slash, the secret it carried or None)."""
    parts = urlsplit(url.strip())
    netloc = parts.netloc.rpartition("@")[2]
    origin = f"{parts.scheme}://{netloc}{parts.path}".rstrip("/")
    return origin, parts.password or None


def redact(url: str) -> str:
    """The URL with its secret replaced by ***, for logs and error messages."""
    origin, secret = split_url(url)
    return with_secret(origin, "***") if secret else origin


def route_path(secret: str, task_id: str, trial: int, script: str | None = None) -> str:
    path = f"/{PREFIX}/{quote(task_id, safe='')}/{trial}/{token(secret, task_id, trial, script)}"
    return f"{path}/{quote(script, safe=_SCRIPT_SAFE)}" if script else path


def route_url(url: str, task_id: str, trial: int, script: str | None = None) -> str:
    """The base URL of one route, without the secret, from the URL that carries it.

    ValueError when `url` carries no secret: the message shows the URL with any secret redacted and the fix.
    """
    origin, secret = split_url(url)
    if secret is None:
        msg = (f"{redact(url)!r} carries no secret; use the URL `passhat fake-model --url-file FILE` writes "
               "(http://passhat:<secret>@127.0.0.1:PORT)")  # fmt: skip
        raise ValueError(msg)
    return origin + route_path(check_secret(secret, redact(url)), task_id, trial, script)


@dataclass(frozen=True)
class Route:
    """A request path, split: /passhat/<task_id>/<trial>[/<token>][/<script>]/<endpoint>."""

    task_id: str
    trial: int
    token: str | None  # None: the path has no token where one belongs
    script: str | None
    endpoint: str  # "v1/messages", "v1/messages/count_tokens", "finished", ...


def parse_route(path: str) -> Route | None:
    """The route of a request path; None when the path is not under /passhat/<task_id>/<trial>/."""
    parts = [unquote(p) for p in urlsplit(path).path.split("/") if p]
    if len(parts) < 3 or parts[0] != PREFIX or not (parts[2].isascii() and parts[2].isdigit()):
        return None
    rest = parts[3:]
    given = rest.pop(0) if rest and looks_like_token(rest[0]) else None
    if "v1" in rest:
        cut = rest.index("v1")
    elif rest and rest[-1] == FINISHED:
        cut = len(rest) - 1
    else:
        cut = len(rest)
    scripts, endpoint = rest[:cut], "/".join(rest[cut:])
    if len(scripts) > 1:
        return None
    return Route(parts[1], int(parts[2]), given, scripts[0] if scripts else None, endpoint)


def finish_trial(url: str) -> None:
    """Tell the server a route is done (POST <route base URL>/finished); 2 s at most, errors ignored."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
    try:
        request = urllib.request.Request(f"{url.rstrip('/')}/{FINISHED}", data=b"{}", method="POST")
        request.add_header("content-type", "application/json")
        with opener.open(request, timeout=2.0) as response:
            response.read()
    except (OSError, ValueError):  # URLError and HTTPError are OSErrors; ValueError: a malformed URL
        pass
