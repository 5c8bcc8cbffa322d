"""What one trial may spend of the team's model API: caps the model proxy enforces (trial/_proxy.py), because code
in the sandbox can send requests of its own to the model through it, on the team's key.

Limits (`limits:` keys, see _limits.py): `model_requests` (every request forwarded), `model_tokens` (input, output,
cache-write and cache-read tokens, as the replies' `usage` reports them, read from their events: _events.py) and
`model_usd` (those tokens and the web-search fees at list prices, PRICES). Past a cap the proxy refuses every
further request and the trial ends `status: limit`. A reply passhat cannot read cannot be metered: the spend is
then `unmetered` (every further request refused) and the proxy ends the trial as an infrastructure error.

Requests not shaped like the CLI's are refused whatever the caps: only the CLI's endpoints of the API in use
(Messages `POST /v1/messages` and its count_tokens; Bedrock's `invoke[-with-response-stream]`; Vertex's
`rawPredict` / `streamRawPredict` and count-tokens), and only the trial's model: the provider's `model:` (an alias
such as `sonnet` allows that family), else the model of the trial's first request (the CLI's own: the agent
runs nothing before the model answered it), plus the Haiku family, which the CLI uses for side tasks and
sub-agents (the cheapest: allowing it cannot raise what a trial spends).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import unquote

from passhat.trial.spend._prices import USAGE_FIELDS, billed_tokens, cost_usd

Api = Literal["anthropic", "bedrock", "vertex"]


_ALIASES = {  # the CLI's model aliases: a family, not one id
    "sonnet": ("sonnet",), "opus": ("opus",), "haiku": ("haiku",), "opusplan": ("opus", "sonnet"),
    "fable": ("fable",), "mythos": ("mythos",),
}  # fmt: skip
_SAFE = re.compile(r"[^\w.:@/ -]")  # what a refusal message shows of what the agent sent
_PATHS: dict[Api, re.Pattern[str]] = {
    "anthropic": re.compile(r"/v1/messages(/count_tokens)?"),
    "bedrock": re.compile(r"/model/(?P<model>[^/]+)/(invoke|invoke-with-response-stream|count-tokens)"),
    "vertex": re.compile(
        r"/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/(?P<model>[^/:]+):(streamRawPredict|rawPredict)"
    ),
}  # fmt: skip


def api_of(env: dict[str, str]) -> Api:
    """Which API the CLI speaks for the endpoint variables `env` (as _proxy.api_paths reads them)."""
    if env.get("CLAUDE_CODE_USE_BEDROCK") == "1":
        return "bedrock"
    return "vertex" if env.get("CLAUDE_CODE_USE_VERTEX") == "1" else "anthropic"


@dataclass
class Spend:
    """One trial's model spend and its caps; shared by the proxy's request threads."""

    max_requests: int
    max_tokens: int
    max_usd: float
    model: str | None = None  # the provider's `model:`; None: pinned by the trial's first request
    api: Api = "anthropic"
    requests: int = 0
    tokens: int = 0
    usd: float = 0.0
    breached: str | None = None  # which cap the trial went past (the trial then ends `status: limit`)
    unmetered: str | None = None  # why a reply could not be metered (the proxy ends the trial: see unreadable)
    usage: dict[str, int] = field(default_factory=lambda: dict.fromkeys(USAGE_FIELDS, 0))  # summed over replies
    refused_model: str | None = None  # the model the last admit() refused as not the trial's (None: it did not)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _model_ok(self, model: str) -> bool:
        if "haiku" in model:  # the CLI's side tasks and sub-agents: allowed, and never what pins the model
            return True
        if self.model is None:
            self.model = model  # the first request is the CLI's own
        wanted = self.model.split("[")[0]  # `sonnet[1m]`: the alias with a context option
        families = _ALIASES.get(wanted)
        return any(f"-{family}-" in model for family in families) if families else wanted in model

    def admit(self, method: str, path: str, body: bytes) -> str | None:
        """Why this request may not go to the model (the proxy answers 403 with it), or None: it is counted."""
        route = path.split("?", 1)[0]
        match = _PATHS[self.api].fullmatch(route)
        with self.lock:
            self.refused_model = None
            if method != "POST" or match is None:
                shown = _SAFE.sub("?", f"{method} {route}")[:200]  # the proxy's refusal is hand-made JSON
                return f"passhat: {shown} is not a request the CLI makes; only its model API calls pass"
            model = _model(match, body)
            if model is not None and not self._model_ok(model):
                shown = _SAFE.sub("?", model)[:100]
                self.refused_model = shown
                return f"passhat: model {shown} is not this trial's model ({self.model}); the request was refused"
            if self.breached is None and self.requests >= self.max_requests:
                self.breached = f"model request limit (model_requests): more than {self.max_requests} requests"
            if self.breached is not None:
                return f"passhat: the trial's model spend is over its limit: {self.breached}"
            if self.unmetered is not None:
                return f"passhat: the trial's model spend cannot be metered: {self.unmetered}"
            self.requests += 1
        return None

    def meter(self, path: str, body: bytes) -> Meter:
        """What this request's reply is charged: Reading (trial/spend/_reading.py) adds its messages' usage and
        closes it when the reply ended; count_tokens is not billed."""
        billed = "count_tokens" not in path and "count-tokens" not in path  # counting tokens is free
        name = _model(_PATHS[self.api].fullmatch(path.split("?", 1)[0]), body)
        return Meter(self if billed else None, name or self.model or "")

    def totals(self) -> dict[str, int | float | str | dict[str, int] | None]:
        """What the trial spent, for its record: requests forwarded, tokens (as `model_tokens` counts them),
        dollars at list prices, the cap hit (`over`), why a reply could not be metered (`unmetered`), and `usage`:
        every field of USAGE_FIELDS (zeros included) summed over the trial's replies."""
        with self.lock:
            return {"requests": self.requests, "tokens": self.tokens, "usd": round(self.usd, 6), "over": self.breached,
                    "unmetered": self.unmetered, "usage": dict(self.usage)}  # fmt: skip

    def other_model(self) -> str:
        """The reason of a trial whose CLI only asked for a model admit() refused (the last one refused)."""
        return (
            f"the Claude Code CLI asked for model {self.refused_model}, not the provider's `model: {self.model}` (the "
            "CLI runs its default model in place of an id it does not run: retired, or unknown to it); set `model:` "
            "to one it runs, e.g. claude-opus-5-5 or sonnet, then `promptfoo eval --retry-errors --repeat N` runs "
            "these trials again"
        )

    def unreadable(self, why: str) -> None:
        """A reply could not be read (the first reason is kept): no further request is admitted."""
        with self.lock:
            self.unmetered = self.unmetered or why

    def charge(self, model: str, usage: dict[str, int]) -> None:
        """Add one message's usage (USAGE_FIELDS, as read_usage reads them); past a cap, the trial is over its
        limit."""
        with self.lock:
            for name in USAGE_FIELDS:
                self.usage[name] += usage.get(name, 0)
            self.tokens += billed_tokens(usage)
            self.usd += cost_usd(model, usage)
            if self.breached is None and self.tokens > self.max_tokens:
                self.breached = f"model token limit (model_tokens): {self.tokens} tokens, over {self.max_tokens}"
            if self.breached is None and self.usd > self.max_usd:
                self.breached = f"model spend limit (model_usd): ${self.usd:.4f} at list prices, over ${self.max_usd:g}"


def _model(match: re.Match[str] | None, body: bytes) -> str | None:
    """The model a request asks for: in its path (Bedrock, Vertex; not Vertex's count-tokens), else its body."""
    named = unquote((match.groupdict().get("model") if match else None) or "")
    return named if named and named != "count-tokens" else _body_model(body)


def _body_model(body: bytes) -> str | None:
    try:
        data = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return None
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) else None


class Meter:
    """What one reply is charged: the usage of each of its messages (`add`, as Reading finds them), charged to the
    trial's Spend once, message by message, when the reply ended (`close`); nothing for a reply not billed."""

    def __init__(self, spend: Spend | None, model: str) -> None:
        self.spend, self.model = spend, model
        self.messages: list[dict[str, int]] = []

    @property
    def billed(self) -> bool:
        return self.spend is not None

    def add(self, usage: dict[str, int]) -> None:
        self.messages.append(usage)

    def close(self) -> None:
        spend, self.spend = self.spend, None
        for usage in self.messages:
            if spend is not None:
                spend.charge(self.model, usage)
