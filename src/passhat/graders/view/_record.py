"""What a grader may know of how the trial went: its record (turns, cost, how it ended) and the transcript's
tool calls — typed copies, none of the trial's paths (the record the provider saves names its folders).

The transcript is passhat's own file (the Agent SDK's messages as JSONL, written outside the sandbox);
what the agent said in it is the agent's, so it is read as data: a cut or odd line is skipped, never trusted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from passhat.trial._paths import READ_LIMIT


@dataclass(frozen=True)
class Record:
    """The trial's record. status: ok, timeout, limit, max_turns, max_budget, agent_crash, infra_error (None when no
    trial is behind the outcome: check-task); subtype and is_error: the CLI's result; turns, cost_usd,
    permission_denials, duration_s: as the CLI and passhat counted them; final_text: the agent's last message."""

    task_id: str | None
    status: str | None
    subtype: str | None
    is_error: bool
    turns: int | None
    cost_usd: float | None
    permission_denials: int
    duration_s: float | None
    model: str | None
    final_text: str | None
    scripted_model: bool


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def record_of(run: Mapping[str, Any]) -> Record:
    turns = run.get("num_turns")
    return Record(
        task_id=run.get("task_id") if isinstance(run.get("task_id"), str) else None,
        status=run.get("status") if isinstance(run.get("status"), str) else None,
        subtype=run.get("subtype") if isinstance(run.get("subtype"), str) else None,
        is_error=bool(run.get("is_error")),
        turns=turns if isinstance(turns, int) and not isinstance(turns, bool) else None,
        cost_usd=_number(run.get("cost_usd")),
        permission_denials=int(_number(run.get("permission_denials")) or 0),
        duration_s=_number(run.get("wall_s")),
        model=run.get("model") if isinstance(run.get("model"), str) else None,
        final_text=run.get("output") if isinstance(run.get("output"), str) else None,
        scripted_model=bool(run.get("scripted_model")),
    )


@dataclass(frozen=True)
class ToolCall:
    """One tool use of the agent: its name (Bash, Edit, Read, ...), its input as the model sent it (paths in it
    are the sandbox's, long gone), and the tool's reply (None: no reply recorded)."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None
    result: str | None = None
    is_error: bool = False


def _reply_text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return None


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({str(k): _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def read_tool_calls(transcript: str | None) -> tuple[ToolCall, ...]:
    """The tool calls of a transcript.jsonl in call order, each with its reply; () without a transcript."""
    if not transcript:
        return ()
    try:
        with Path(transcript).open("rb") as file:
            lines = file.read(READ_LIMIT).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return ()
    calls: list[dict[str, Any]] = []
    replies: dict[str, tuple[str | None, bool]] = {}
    for line in lines:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue  # a cut last line of a killed run
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in (b for b in content if isinstance(b, dict)):
            if message.get("type") == "AssistantMessage" and isinstance(block.get("name"), str) and "input" in block:
                calls.append(block)
            elif message.get("type") == "UserMessage" and isinstance(block.get("tool_use_id"), str):
                replies[block["tool_use_id"]] = (_reply_text(block.get("content")), bool(block.get("is_error")))
    out = []
    for call in calls:
        ident = call.get("id") if isinstance(call.get("id"), str) else None
        result, failed = replies.get(ident or "", (None, False))
        given = call["input"] if isinstance(call["input"], dict) else {"input": call["input"]}
        out.append(ToolCall(call["name"], _frozen(given), ident, result, failed))
    return tuple(out)
