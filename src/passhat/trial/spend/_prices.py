"""passhat's one price list (the proxy's dollar caps, `passhat estimate`) and what one reply's usage costs.

Usage is the Messages API's `usage` object, read flat (`read_usage`): USAGE_FIELDS, the nested
`cache_creation.ephemeral_5m/1h_input_tokens` and `server_tool_use.web_search/web_fetch_requests` by their own names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "ephemeral_5m_input_tokens",  # of cache_creation_input_tokens: written for 5 minutes
    "ephemeral_1h_input_tokens",  # ... and for an hour
    "web_search_requests",  # server_tool_use
    "web_fetch_requests",
)
_NESTED = {"cache_creation": USAGE_FIELDS[4:6], "server_tool_use": USAGE_FIELDS[6:]}


@dataclass(frozen=True)
class Price:
    """List prices of a model: USD per million input and output tokens; cache reads, 5-minute and 1-hour cache
    writes as multiples of the input price; a web search's fee, USD per request (a web fetch costs its tokens
    only). `*_usd`: the same rates in USD per million tokens, as the price page shows them."""

    input: float
    output: float
    cache_read: float = 0.1
    cache_write_5m: float = 1.25
    cache_write_1h: float = 2.0
    web_search: float = 10.0 / 1000

    @property
    def cache_read_usd(self) -> float:
        return self.input * self.cache_read

    @property
    def cache_write_5m_usd(self) -> float:
        return self.input * self.cache_write_5m

    @property
    def cache_write_1h_usd(self) -> float:
        return self.input * self.cache_write_1h


# The one price list of passhat (the spend caps, `passhat estimate` in rounds): first key found in a model id wins
# (`claude-opus-5-5`, `us.anthropic.claude-haiku-4-5-20251001-v1:0`, `claude-opus-4-5@20251101`). Input and output
# of every entry are checked against the bundled Claude Code CLI's own pricing (tests/e2e/test_e2e_prices.py);
# models that CLI does not price or run (Claude 3 Haiku; Opus 4 and 4.1, which it swaps for its default) are left
# out. A model not listed is charged as the dearest listed: a cap errs early.
#
# Read on 2026-12-03 (through the search tool's stored copy) on Anthropic's "Pricing" docs page,
# https://platform.claude.com/docs/en/about-claude/pricing, table "Model pricing", columns Base input / 5m cache
# writes / 1h cache writes / Cache hits and refreshes / Output, per MTok: Fable 5.1 $10 / $12.50 / $20 / $0.25 / $50,
# Fable 5 $10 / $12.50 / $20 / $1 / $50, Opus 5 and 4.5-4.8 $5 / $6.25 / $10 / $0.50 / $25: a 5-minute write is
# 1.25x the input price, a 1-hour write 2x, for every model; a cache hit 0.1x (Fable 5.1 0.025x; Opus 5.5 and Sonnet
# 5.5 0.05x: Sonnet 5.5's cache read was cut to $0.10 in 2026-10). Server tools: web search $10 per 1,000 searches
# on top of its tokens, web fetch no fee beyond its tokens: the stored copy of the page ends before its tool
# section, so these two are as pages quoting it said, read the same day (e.g. claudecodeguides.com, "Web Search
# Costs $10 per 1,000 Searches": "Web fetch has no additional surcharge"); check them on the page itself.
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


def listed_price(model: str) -> Price | None:
    """The list price of `model` (PRICES), None when no entry names it."""
    return next((p for key, p in PRICES if key in model), None)


def price(model: str) -> Price:
    """The list price of `model`, or the dearest listed (a cap must not err late)."""
    return listed_price(model) or _DEAREST


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def read_usage(usage: object) -> dict[str, int]:
    """The counts of a Messages API `usage` object (or of a flat dict of USAGE_FIELDS), by USAGE_FIELDS name: only
    those present as whole numbers (null, missing or anything else is left out)."""
    found: dict[str, int] = {}
    if not isinstance(usage, Mapping):
        return found
    for name in USAGE_FIELDS:
        if (value := _count(usage.get(name))) is not None:
            found[name] = value
    for group, names in _NESTED.items():
        nested = usage.get(group)
        if isinstance(nested, Mapping):
            found |= {name: value for name in names if (value := _count(nested.get(name))) is not None}
    return found


def billed_tokens(usage: Mapping[str, int]) -> int:
    """The tokens the `model_tokens` cap counts: input, output, cache writes and cache reads (the writes' 5-minute
    / 1-hour breakdown is part of cache_creation_input_tokens, never counted twice)."""
    get = usage.get
    written = max(
        get("cache_creation_input_tokens", 0), get("ephemeral_5m_input_tokens", 0) + get("ephemeral_1h_input_tokens", 0)
    )
    return get("input_tokens", 0) + get("output_tokens", 0) + written + get("cache_read_input_tokens", 0)


def cost_usd(model: str, usage: Mapping[str, object]) -> float:
    """What one reply's `usage` (flat or as the API nests it, see read_usage) costs at list prices. Cache writes
    by their breakdown; writes the breakdown does not cover (or all of them, without one) at the 5-minute rate;
    web searches at their fee."""
    p, counts = price(model), read_usage(usage)
    get = counts.get
    hour = get("ephemeral_1h_input_tokens", 0)
    five = get("ephemeral_5m_input_tokens", 0)
    five += max(0, get("cache_creation_input_tokens", 0) - five - hour)
    weighted = (
        get("input_tokens", 0) * p.input
        + five * p.cache_write_5m_usd
        + hour * p.cache_write_1h_usd
        + get("cache_read_input_tokens", 0) * p.cache_read_usd
        + get("output_tokens", 0) * p.output
    )
    return weighted / 1_000_000 + get("web_search_requests", 0) * p.web_search
