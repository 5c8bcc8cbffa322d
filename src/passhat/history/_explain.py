"""Why a series drifted: the best baseline trial against the worst new trial, from the artifacts on disk.

Each trial's metadata names a `patch_path` (the agent's diff against the base) and a `transcript_path` (the
Agent SDK messages as JSONL: `{"type": "AssistantMessage", "content": [{"id", "name", "input"}, ...]}` for tool
calls, a final `{"type": "ResultMessage", "num_turns", "total_cost_usd", "subtype", ...}`). Missing or unreadable
files are said, never fatal: artifacts are often cleaned up long before the history is.

What ran each side (`ran_changes`): the model ids that answered (else the configured model), the Claude Code and the
Agent SDK versions the trials recorded (history schema v4), so a drift says "Claude Code 2.1.300 → 2.1.327".
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from passhat.history._store import ScoreRow

PATCH_DIFF_LINES = 40  # of the unified diff between the two patches
LINE_CHARS = 160


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _values(rows: Sequence[ScoreRow], kind: str) -> list[str]:
    """The distinct values of one kind of what ran (`model`, `claude_code`, `agent_sdk`) in rows, sorted."""
    found: set[str] = set()
    for row in rows:
        value = {"model": row.models_answered, "claude_code": row.claude_code_version,
                 "agent_sdk": row.agent_sdk_version}[kind]  # fmt: skip
        found.update(part.strip() for part in (value or "").split(",") if part.strip())
    return sorted(found, key=lambda v: tuple((int(p), "") if p.isdigit() else (-1, p) for p in v.split(".")))


def ran_changes(base: Sequence[ScoreRow], new: Sequence[ScoreRow]) -> str | None:
    """What ran differently in `new` than in `base`, e.g. "model claude-a → claude-b; Claude Code 2.1.300 →
    2.1.327"; None when nothing differs. The models are those that answered when both sides recorded them, else
    the configured ones ("unknown" where a row names none); a version recorded on one side only is not a change
    (rows stored before schema v4 recorded none)."""
    parts = []
    for kind, name in (("model", "model"), ("claude_code", "Claude Code"), ("agent_sdk", "Agent SDK")):
        old, now = _values(base, kind), _values(new, kind)
        if kind == "model" and not (old and now):
            old = sorted({row.model or "unknown" for row in base})
            now = sorted({row.model or "unknown" for row in new})
        if old and now and old != now:
            parts.append(f"{name} {', '.join(old)} → {', '.join(now)}")
    return "; ".join(parts) or None


def ran_by(row: ScoreRow) -> str:
    """What ran one trial, in a few words ("-" where nothing was recorded)."""
    parts = [row.models_answered or row.model or "",
             f"Claude Code {row.claude_code_version}" if row.claude_code_version else "",
             f"Agent SDK {row.agent_sdk_version}" if row.agent_sdk_version else ""]  # fmt: skip
    return ", ".join(part for part in parts if part) or "-"


def transcript_summary(path: str | None) -> dict[str, Any]:
    """Tool names in call order, turns, cost and result subtype from a transcript.jsonl (None where unknown)."""
    summary: dict[str, Any] = {"tools": [], "turns": None, "cost_usd": None, "result": None, "problem": None}
    if not path:
        summary["problem"] = "no transcript_path in the row's metadata"
        return summary
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as error:
        summary["problem"] = f"transcript not readable: {path} ({error.strerror})"
        return summary
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a cut last line of a killed run; the rest still counts
        if not isinstance(record, dict):
            continue
        if record.get("type") == "AssistantMessage" and isinstance(record.get("content"), list):
            names = (block.get("name") for block in record["content"] if isinstance(block, dict))
            summary["tools"].extend(name for name in names if isinstance(name, str))
        elif record.get("type") == "ResultMessage":
            summary["turns"], summary["cost_usd"] = record.get("num_turns"), record.get("total_cost_usd")
            summary["result"] = record.get("subtype")
    return summary


def _read_patch(path: str | None) -> tuple[list[str], str | None]:
    if not path:
        return [], "no patch_path in the row's metadata"
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").splitlines(), None
    except OSError as error:
        return [], f"patch not readable: {path} ({error.strerror})"


def _patch_files(lines: Sequence[str]) -> list[str]:
    return [line.split(" b/", 1)[-1] for line in lines if line.startswith("diff --git ")]


def _first_divergence(a: Sequence[str], b: Sequence[str]) -> str | None:
    for step, (x, y) in enumerate(zip([*a, "(end)"], [*b, "(end)"], strict=False), start=1):
        if x != y:
            return f"tool calls differ from call {step}: {x} (baseline) vs {y} (new)"
    return None


def explain(best: ScoreRow, worst: ScoreRow, max_lines: int = PATCH_DIFF_LINES) -> dict[str, Any]:
    """What differs between the best baseline trial and the worst new trial of one series."""
    sides: dict[str, Any] = {}
    patches: dict[str, list[str]] = {}
    for side, row in (("baseline", best), ("new", worst)):
        patch, problem = _read_patch(row.patch_path)
        patches[side] = patch
        info = transcript_summary(row.transcript_path)
        info["turns"] = row.turns if info["turns"] is None else info["turns"]
        info["cost_usd"] = row.cost_usd if info["cost_usd"] is None else info["cost_usd"]
        sides[side] = {
            "eval_id": row.eval_id,
            "trial": row.label,
            "score": row.score,
            "passed": row.passed,
            "model": row.model,
            "ran": ran_by(row),
            **info,
            "patch_files": _patch_files(patch),
            "patch_problem": problem,
            "transcript_path": row.transcript_path,
            "patch_path": row.patch_path,
        }
    diff = list(
        difflib.unified_diff(
            patches["baseline"],
            patches["new"],
            fromfile=f"baseline {best.eval_id} {best.label} patch",
            tofile=f"new {worst.eval_id} {worst.label} patch",
            lineterm="",
        )
    )
    return {
        "task": best.task,
        "provider": best.provider,
        **sides,
        "ran_changed": ran_changes([best], [worst]),
        "tool_divergence": _first_divergence(sides["baseline"]["tools"], sides["new"]["tools"]),
        "patch_diff": [line[:LINE_CHARS] for line in diff[:max_lines]],
        "patch_diff_omitted": max(0, len(diff) - max_lines),
    }


def _side_lines(label: str, s: dict[str, Any]) -> list[str]:
    word = {True: "pass", False: "fail", None: "error"}[s["passed"]]
    turns = "-" if s["turns"] is None else s["turns"]
    cost = "-" if s["cost_usd"] is None else f"${s['cost_usd']:.4f}"
    return [
        f"  {label:<8} {s['eval_id']} {s['trial']}: score {_f(s['score'])} {word}, turns {turns}, cost {cost}, "
        f"result {s['result'] or '-'}",
        f"           ran: {s['ran']}",
        f"           tools: {' '.join(s['tools']) or '(none)'}",
        f"           files changed: {', '.join(s['patch_files']) or '(none)'}",
    ]


def explain_lines(e: dict[str, Any]) -> list[str]:
    """The explanation as indented text lines."""
    lines = [
        f"Why {e['task']} [{e['provider']}] drifted: best baseline trial vs worst new trial",
        *_side_lines("baseline", e["baseline"]),
        *_side_lines("new", e["new"]),
    ]
    if e["ran_changed"]:
        lines.append(f"  what ran changed: {e['ran_changed']}")
    lines.append(f"  {e['tool_divergence'] or 'same tool calls in the same order'}")
    problems = (e[side][key] for side in ("baseline", "new") for key in ("problem", "patch_problem"))
    lines += [f"  {problem}" for problem in problems if problem]
    if e["patch_diff"]:
        lines.append("  patch diff (baseline -> new):")
        lines += [f"    {line}" for line in e["patch_diff"]]
        if e["patch_diff_omitted"]:
            lines.append(f"    ... {e['patch_diff_omitted']} more lines")
    else:
        lines.append("  the two patches are identical")
    return lines
