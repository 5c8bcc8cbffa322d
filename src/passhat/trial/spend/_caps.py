"""What one trial may spend of the team's model API: caps the model proxy enforces (trial/_proxy.py), because code
in the sandbox can send requests of its own to the model through it, on the team's key.

Limits (`limits:` keys, see _limits.py): `model_requests` (every request forwarded), `model_tokens` (input, output,
cache-write and cache-read tokens, as the responses' `usage` reports them) and `model_usd` (those tokens at list
prices, PRICES). Past a cap the proxy refuses every further request and the trial ends `status: limit`.

Requests not shaped like the CLI's are refused whatever the caps: only the CLI's endpoints of the API in use
(Messages `POST /v1/messages` and its count_tokens; Bedrock's `invoke[-with-response-stream]`; Vertex's
`rawPredict` / `streamRawPredict` and count-tokens), and only the trial's model: the provider's `model:` (an alias
such as `sonnet` allows that family), else the model of the trial's first request (the CLI's own: the agent
runs nothing before the model answered it), plus the Haiku family, which the CLI uses for side tasks and
sub-agents (the cheapest: allowing it cannot raise what a trial spends).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import unquote

Api = Literal["anthropic", "bedrock", "vertex"]


@dataclass(frozen=True)
class Price:
    """List prices of a model: USD per million input and output tokens; a cache read costs `cache_read` x input,
    a (5-minute) cache write 1.25 x input for every model."""

    input: float
    output: float
    cache_read: float = 0.1


# The one price list of passhat (the spend caps here, `passhat estimate` in rounds): first key found in a model id
# wins (`claude-opus-5-5`, `us.anthropic.claude-haiku-4-5-20251001-v1:0`, `claude-opus-4-5@20251101`). Anthropic's
# list prices as of 2026-12 (Sonnet 5.5's cache read cut to $0.10 in 2026-10); input and output of every entry are
# checked against the bundled Claude Code CLI's own pricing (tests/e2e/test_e2e_prices.py); models that CLI does
# not price or run (Claude 3 Haiku; Opus 4 and 4.1, which it swaps for its default) are left out. A model not
# listed is charged as the dearest listed: a cap errs early.
PRICES: tuple[tuple[str, Price], ...] = (
    ("fable-5-1", Price(10.0, 50.0, 0.025)),
    ("mythos-5-1", Price(10.0, 50.0, 0.025)),
    ("fable-5", Price(10.0, 50.0)),
    ("mythos-5", Price(10.0, 50.0)),
    ("opus-5-5", Price(4.0, 20.0, 0.05)),
    ("opus-5", Price(5.0, 25.0)),
    ("opus-4", Price(5.0, 25.0)),  # 4.5 and later (the CLI runs its default model for Opus 4 and 4.1 ids)
    ("sonnet-5-5", Price(2.0, 10.0, 0.05)),
    ("sonnet-5", Price(2.0, 10.0)),
    ("sonnet-4", Price(3.0, 15.0)),
    ("3-7-sonnet", Price(3.0, 15.0)),
    ("haiku-5-5", Price(0.10, 0.50)),  # prompts up to 100,000 tokens (longer ones cost more)
    ("haiku-4-5", Price(1.0, 5.0)),
    ("3-5-haiku", Price(0.8, 4.0)),
)
_DEAREST = max((p for _, p in PRICES), key=lambda p: p.output)
_ALIASES = {  # the CLI's model aliases: a family, not one id
    "sonnet": ("sonnet",), "opus": ("opus",), "haiku": ("haiku",), "opusplan": ("opus", "sonnet"),
    "fable": ("fable",), "mythos": ("mythos",),
}  # fmt: skip
_USAGE = re.compile(rb'"(input_tokens|output_tokens|cache_creation_input_tokens|cache_read_input_tokens)":\s*(\d+)')
_BEDROCK_BYTES = re.compile(rb'"bytes":"([A-Za-z0-9+/=]+)"')  # an event-stream frame's payload, base64 JSON
_SAFE = re.compile(r"[^\w.:@/ -]")  # what a refusal message shows of what the agent sent
_CARRY = 16384  # bytes of one chunk kept for the next: a usage field or frame split across chunks is still read
_PATHS: dict[Api, re.Pattern[str]] = {
    "anthropic": re.compile(r"/v1/messages(/count_tokens)?"),
    "bedrock": re.compile(r"/model/(?P<model>[^/]+)/(invoke|invoke-with-response-stream|count-tokens)"),
    "vertex": re.compile(
        r"/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/(?P<model>[^/:]+):(streamRawPredict|rawPredict)"
    ),
}  # fmt: skip


def listed_price(model: str) -> Price | None:
    """The list price of `model` (PRICES), None when no entry names it."""
    return next((p for key, p in PRICES if key in model), None)


def price(model: str) -> Price:
    """The list price of `model`, or the dearest listed (a cap must not err late)."""
    return listed_price(model) or _DEAREST


def cost_usd(model: str, usage: dict[str, int]) -> float:
    """What `usage` (the Messages API's usage fields) costs at list prices."""
    p = price(model)
    weighted = (
        usage.get("input_tokens", 0) * p.input
        + usage.get("cache_creation_input_tokens", 0) * p.input * 1.25
        + usage.get("cache_read_input_tokens", 0) * p.input * p.cache_read
        + usage.get("output_tokens", 0) * p.output
    )
    return weighted / 1_000_000


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
            self.requests += 1
        return None

    def meter(self, path: str, body: bytes) -> Meter:
        """A reader of this request's response usage; call `close()` when the response ended."""
        billed = "count_tokens" not in path and "count-tokens" not in path  # counting tokens is free
        name = _model(_PATHS[self.api].fullmatch(path.split("?", 1)[0]), body)
        return Meter(self if billed else None, name or self.model or "")

    def totals(self) -> dict[str, int | float | str | None]:
        """What the trial spent, for its record: requests forwarded, tokens, dollars at list prices, the cap hit."""
        with self.lock:
            return {"requests": self.requests, "tokens": self.tokens, "usd": round(self.usd, 6), "over": self.breached}

    def charge(self, model: str, usage: dict[str, int]) -> None:
        """Add one response's usage; past a cap, the trial is over its limit."""
        with self.lock:
            self.tokens += sum(usage.values())
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
    """Reads the `usage` of one response as it passes (JSON, SSE events, Bedrock's event-stream frames): each
    field's largest value (a stream's counts are cumulative), charged once when the response ends."""

    def __init__(self, spend: Spend | None, model: str) -> None:
        self.spend, self.model = spend, model
        self.usage: dict[str, int] = {}
        self._carry = b""

    def feed(self, chunk: bytes) -> None:
        if self.spend is None:
            return
        data = self._carry + chunk
        payloads = [data]
        for encoded in _BEDROCK_BYTES.findall(data):
            try:
                payloads.append(base64.b64decode(encoded, validate=True))
            except (binascii.Error, ValueError):
                continue
        for payload in payloads:
            for key, value in _USAGE.findall(payload):
                name = key.decode()
                self.usage[name] = max(self.usage.get(name, 0), int(value))
        self._carry = data[-_CARRY:]

    def close(self) -> None:
        spend, self.spend = self.spend, None
        if spend is not None and self.usage:
            spend.charge(self.model, self.usage)
