"""What the real Messages API puts in a reply that a plain script leaves out, as script modifiers, and the
ledger of the usage the server reported.

    SCRIPT+encoding:CODING  every reply in CODING (gzip, deflate, br, zstd or identity), whatever the request
                            accepts; without it a reply is compressed as the request's accept-encoding allows
                            (gzip first), as the API does: JSON, event streams and error bodies alike
    SCRIPT+chunks:MODE      the reply's bytes cut on the wire: byte (one byte at a time), utf8 (inside every
                            multibyte character), data (inside every `data:` line); replies carry multibyte text
    SCRIPT+thinking         every agent reply opens with a thinking block (thinking_delta, then signature_delta)
                            and a redacted_thinking block
    SCRIPT+ping             `ping` events after message_start and after every content block
    SCRIPT+cache            prompt-cache usage: the trial's first agent reply writes the system prompt and tools
                            to the cache (5-minute and 1-hour writes), later ones read them; the cache counts
                            (and cache_creation's breakdown) only in the final message_delta, as the API sends them
    SCRIPT+web-search       every agent reply runs a server-side web search: server_tool_use and
                            web_search_tool_result blocks, usage.server_tool_use.web_search_requests 1
    SCRIPT+stream-error:N   the first N streamed agent replies of a trial stop with an `event: error`
                            overloaded_error after their first text delta (HTTP 200 already sent), then the
                            script answers (the Messages API's event streams; Bedrock's are not broken: its
                            errors are event-stream exception frames of their own)
    SCRIPT+overloaded:N     the first N agent requests of a trial get HTTP 529 overloaded_error, retry-after 1
    SCRIPT+real             all of the above at once: ping, thinking, cache, web-search, chunks:utf8,
                            overloaded:1, stream-error:1 (the API at its most demanding; compressed as accepted)
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import replace
from urllib.parse import unquote

from passhat.fake_model._plan import Script
from passhat.fake_model._wire import ENCODINGS, SPLITS

THINKING = "Je lis la tâche — d'abord les tests, puis le correctif… ✓ 🙂"
MULTIBYTE = "Étape suivante — ça avance ✓ 🙂"
_FLAGS = {"thinking", "ping", "cache", "web-search"}
REAL = ("ping", "thinking", "cache", "web-search", "chunks:utf8", "overloaded:1", "stream-error:1")
NAMES = (*sorted(_FLAGS), "encoding", "chunks", "stream-error", "overloaded", "real")
FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "ephemeral_5m_input_tokens",
    "ephemeral_1h_input_tokens",
    "web_search_requests",
    "web_fetch_requests",
)


def _count(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and int(text) <= 10**6 else None


def shaped(script: Script, name: str, args: list[str]) -> Script | None:
    """`script` with the modifier `name[:args]` applied (see the module's forms); None when malformed."""
    if name in _FLAGS and not args:
        return replace(
            script,
            thinking=script.thinking or name == "thinking",
            ping=script.ping or name == "ping",
            cache=script.cache or name == "cache",
            web_search=script.web_search or name == "web-search",
        )
    if name == "real" and not args:
        for modifier in REAL:
            flag, _, arg = modifier.partition(":")
            script = shaped(script, flag, [arg] if arg else []) or script
        return script
    if len(args) != 1:
        return None
    if name == "encoding" and args[0] in ENCODINGS:
        return replace(script, encoding=args[0])
    if name == "chunks" and args[0] in SPLITS:
        return replace(script, chunks=args[0])
    count = _count(args[0])
    if name == "stream-error" and count is not None:
        return replace(script, stream_errors=count)
    return replace(script, overloads=count) if name == "overloaded" and count is not None else None


def _signature(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest() * 3).decode()


def extra_blocks(script: Script, step: int) -> list[dict]:
    """The blocks an agent reply opens with under the script's modifiers (thinking, web search, multibyte text)."""
    blocks: list[dict] = []
    if script.thinking:
        blocks.append({"type": "thinking", "thinking": THINKING, "signature": _signature(f"{step}:{THINKING}")})
        blocks.append({"type": "redacted_thinking", "data": _signature(f"redacted:{step}")})
    if script.web_search:
        tool_id = f"srvtoolu_passhat_{step:04d}"
        query = {"type": "server_tool_use", "id": tool_id, "name": "web_search", "input": {"query": "médiane"}}
        found = {"type": "web_search_result", "url": "https://example.org/m", "title": "Médiane — définition"}
        found |= {"encrypted_content": _signature(f"page:{step}"), "page_age": "1 juin 2026"}
        blocks += [query, {"type": "web_search_tool_result", "tool_use_id": tool_id, "content": [found]}]
    if script.chunks != "whole":
        blocks.append({"type": "text", "text": MULTIBYTE})
    return blocks


def model_of(endpoint: str, body: dict) -> str:
    """The model a request names: in its body (Messages API), else in its path (Bedrock, Vertex)."""
    named = re.search(r"model/(.+)/invoke|models/([^/:]+):", endpoint)
    return str(body.get("model") or (unquote(named.group(1) or named.group(2)) if named else "passhat-scripted"))


def _tokens(value: object) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


class Books:
    """Per route: how many agent replies it got, how many streams were broken, what its first reply wrote to the
    cache, and the ledger of the usage of every reply the server sent (each field summed; nested counts by their
    own name), by model, the broken streams' apart."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._replies: dict[object, int] = {}
        self._cached: dict[object, int] = {}
        self._broken: dict[object, int] = {}
        self._ledger: dict[tuple[object, str, bool], dict[str, int]] = {}

    def next_reply(self, key: object) -> int:
        """How many agent replies the route got before this one (each call counts one)."""
        with self._lock:
            seen = self._replies.get(key, 0)
            self._replies[key] = seen + 1
            return seen

    def replies(self, key: object) -> int:
        """How many agent replies the route got."""
        with self._lock:
            return self._replies.get(key, 0)

    def take_break(self, key: object, limit: int) -> bool:
        """True for the route's first `limit` calls (the streams `+stream-error:N` breaks), then False."""
        with self._lock:
            broken = self._broken.get(key, 0)
            self._broken[key] = broken + (broken < limit)
            return broken < limit

    def message(self, key: tuple, script: Script, body: dict, reply: tuple[list[dict], str], model: str) -> dict:
        """The Messages API's message of a reply to `body` on route `key` (task, trial, script): the script's
        blocks after the ones its modifiers add (agent replies), their stop reason and usage."""
        blocks, stop = reply
        agent = bool(body.get("tools"))
        if agent and script.name != "judge":
            blocks = [*extra_blocks(script, self.next_reply(key)), *blocks]
        message = {"id": f"msg_passhat_{key[0]}_{key[1]}", "type": "message", "role": "assistant", "model": model}
        usage = self.usage(key, script, body, blocks, agent)
        return message | {"content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage}

    def usage(self, key: object, script: Script, body: dict, blocks: list[dict], agent: bool) -> dict:
        """The usage of a reply: input from the request's messages, output from the reply's blocks; with
        `+cache`, an agent reply writes the system prompt and tools (1/3 of it for 1 hour) on the route's first
        completed reply, then reads what was written; with `+web-search`, one search per agent reply."""
        usage: dict = {"input_tokens": _tokens(body.get("messages", [])), "output_tokens": _tokens(blocks)}
        if script.cache and agent:
            with self._lock:
                written = self._cached.get(key)
            write = _tokens([body.get("system"), body.get("tools")]) if written is None else 0
            hour = write // 3
            usage |= {"cache_creation_input_tokens": write, "cache_read_input_tokens": written or 0}
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": write - hour, "ephemeral_1h_input_tokens": hour}
        if script.web_search and agent:
            usage["server_tool_use"] = {"web_search_requests": 1}
        return usage

    def completed(self, key: object, usage: dict, model: str, broken: bool = False) -> None:
        """A reply was sent whole (`broken`: a stream ended by an error event, which reported message_start's
        usage only): its usage goes to the ledger under (route, model, broken); a whole one's cache write is
        remembered."""
        with self._lock:
            if usage.get("cache_creation_input_tokens") and not broken:
                self._cached.setdefault(key, usage["cache_creation_input_tokens"])
            ledger = self._ledger.setdefault((key, model, broken), dict.fromkeys(FIELDS, 0))
            for name, value in usage.items():
                for field, count in value.items() if isinstance(value, dict) else [(name, value)]:
                    if field in ledger:
                        ledger[field] += count

    def reported(self, key: object, model: str | None = None, broken: bool = False) -> dict[str, int]:
        """Every usage field summed over the route's completed replies (zeros when none); of one model's only
        when `model` is given; `broken`: with the usage the broken streams reported in their message_start."""
        total = dict.fromkeys(FIELDS, 0)
        with self._lock:
            for (route, named, cut), ledger in self._ledger.items():
                if route == key and model in (None, named) and (broken or not cut):
                    for field, count in ledger.items():
                        total[field] += count
        return total

    def models(self, key: object) -> list[str]:
        """The models the route's replies (whole or broken) named, sorted."""
        with self._lock:
            return sorted({named for (route, named, _), _ in self._ledger.items() if route == key})
