"""Judge scripts of the scripted model: replies to passhat's judge requests (a forced tool), so judged
suites run offline and deterministically. The reply is built from the request's own tool schema.

    judge               well-behaved. Rubric: every criterion at the level nearest the share of the
                        reference patch's added lines that the agent's diff also adds (0.8 without a
                        reference). Pairwise: the answer whose diff adds more lines wins, tie when equal
                        (consistent when the positions are swapped).
    judge:X             rubric: every criterion at the level nearest X (0..1); pairwise: as `judge`
    judge-points:P,...  rubric: the criteria in the tool's order get points P, ... (for arithmetic tests)
    judge-first         pairwise: always answer A (position bias); rubric: as `judge`
    judge-longer        pairwise: the longer answer wins; `judge-shorter`: the shorter (both consistent)
    judge-malformed[:N] unusable replies — no tool call, then a score off the scale, then missing fields —
                        on every attempt, or on the first N attempts only and then as `judge`
    judge-noisy         rubric: the level nearest 0.8, moved one level up or down per criterion by a draw
                        seeded by the request and how often this server has seen it (regrades disagree)

The attempt is the number of assistant turns already in the request (the judge's retries resend them).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from typing import Any

from passhat.common._errors import PasshatError
from passhat.fake_model._plan import Reply, Script

NAMES = ("judge", "judge-first", "judge-longer", "judge-shorter", "judge-malformed", "judge-noisy", "judge-points")
_LEVEL = re.compile(r"(\d+) = [\w-]+ \(([\d.]+)\)")
_seen: Counter[str] = Counter()
_seen_lock = threading.Lock()


def parse_judge_script(spec: str) -> Script:
    name, _, arg = spec.partition(":")
    ok = name in NAMES and (
        not arg
        or (name == "judge" and _is_fraction(arg))
        or (name == "judge-malformed" and arg.isdigit())
        or (name == "judge-points" and all(p.isdigit() for p in arg.split(",")))
    )
    if not ok:
        msg = (f"script {spec!r}: expected a judge script: judge, judge:X with 0 <= X <= 1, judge-first, "
               "judge-longer, judge-shorter, judge-malformed[:N], judge-noisy or judge-points:P,P,...")  # fmt: skip
        raise PasshatError(msg)
    return Script("judge", spec=spec)


def _is_fraction(text: str) -> bool:
    try:
        return 0.0 <= float(text) <= 1.0
    except ValueError:
        return False


def _user_text(body: dict) -> str:
    first: dict[str, Any] = next((m for m in body.get("messages", []) if m.get("role") == "user"), {})
    content = first.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def _tag(text: str, name: str) -> str:
    match = re.search(rf"<{name}>\n(.*?)\n</{name}>", text, re.S)
    return match.group(1) if match else ""


def _added(diff: str) -> set[str]:
    return {line[1:].strip() for line in diff.splitlines()
            if line.startswith("+") and not line.startswith("+++") and line[1:].strip()}  # fmt: skip


def _coverage(text: str) -> float:
    reference = _added(_tag(text, "reference_patch"))
    if not reference:
        return 0.8
    return len(reference & _added(_tag(text, "agent_diff"))) / len(reference)


def _levels(score_schema: dict) -> list[tuple[int, float]]:
    """(points, value) from the score's description "5 = excellent (1); 4 = good (0.8); ...", lowest first."""
    return sorted((int(p), float(v)) for p, v in _LEVEL.findall(score_schema.get("description", "")))


def _nearest(levels: list[tuple[int, float]], target: float) -> int:
    return min(range(len(levels)), key=lambda i: (abs(levels[i][1] - target), -levels[i][0]))


def _draw(key: str, criterion: str) -> int:
    return int(hashlib.sha256(f"{key}:{criterion}".encode()).hexdigest()[:8], 16) % 3 - 1


def _rubric_input(tool: dict, text: str, script: str, arg: str) -> dict:
    criteria = tool["input_schema"]["properties"]["criteria"]
    names = criteria["required"]
    levels = _levels(criteria["properties"][names[0]]["properties"]["score"])
    target = float(arg) if script == "judge" and arg else (0.8 if script == "judge-noisy" else _coverage(text))
    index = _nearest(levels, target)
    key = ""
    if script == "judge-noisy":
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        with _seen_lock:
            key = f"{digest}:{_seen[digest]}"
            _seen[digest] += 1
    out = {}
    given = [int(p) for p in arg.split(",")] if script == "judge-points" else []
    for position, name in enumerate(names):
        if given:
            wanted = given[position % len(given)]
            index = next((i for i, (points, _) in enumerate(levels) if points == wanted), 0)
        i = min(len(levels) - 1, max(0, index + _draw(key, name))) if key else index
        out[name] = {"evidence": [f"passhat scripted judge ({script}): target {target:.2f}"],
                     "justification": f"scripted: the level nearest {target:.2f}",
                     "score": levels[i][0], "improvement": "scripted: none"}  # fmt: skip
    return {"criteria": out, "summary": f"passhat scripted judge {script}"}


def _pairwise_input(text: str, script: str) -> dict:
    a, b = _tag(text, "answer_a"), _tag(text, "answer_b")
    if script == "judge-first":
        measure = (1, 0)
    elif script in ("judge-longer", "judge-shorter"):
        sign = 1 if script == "judge-longer" else -1
        measure = (sign * len(a), sign * len(b))
    else:
        measure = (len(_added(_tag(a, "diff"))), len(_added(_tag(b, "diff"))))
    winner = "A" if measure[0] > measure[1] else "B" if measure[1] > measure[0] else "tie"
    return {"reasoning": f"passhat scripted judge ({script}): {measure[0]} vs {measure[1]}", "winner": winner,
            "confidence": 0.9 if winner != "tie" else 0.5}  # fmt: skip


def _malformed(tool: dict, attempt: int, call_id: str) -> Reply:
    form = attempt % 3
    if form == 0:
        return Reply([{"type": "text", "text": "I would give this a 4 out of 5 overall."}], "end_turn")
    bad: dict[str, Any]
    if form == 1 and tool["name"] == "record_grades":
        names = tool["input_schema"]["properties"]["criteria"]["required"]
        bad = {
            "criteria": {n: {"evidence": ["x"], "justification": "x", "score": 99, "improvement": "x"} for n in names}
        }
    elif form == 1:
        bad = {"reasoning": "x", "winner": "C", "confidence": 0.7}
    else:
        bad = {}
    return Reply([{"type": "tool_use", "id": call_id, "name": tool["name"], "input": bad}], "tool_use")


def judge_reply(body: dict, spec: str) -> Reply:
    """The scripted judge's answer to one request of passhat's judge."""
    script, _, arg = spec.partition(":")
    tools = body.get("tools") or []
    wanted = (body.get("tool_choice") or {}).get("name")
    tool = next((t for t in tools if t.get("name") == wanted), tools[0] if tools else None)
    attempt = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    call_id = f"toolu_passhat_judge_{attempt:02d}"
    if tool is None or tool.get("name") not in ("record_grades", "record_preference"):
        text = f"passhat scripted judge: this request has no passhat judge tool ({json.dumps(wanted)})"
        return Reply([{"type": "text", "text": text}], "end_turn")
    if script == "judge-malformed" and (not arg or attempt < int(arg)):
        return _malformed(tool, attempt, call_id)
    if script == "judge-malformed":
        script, arg = "judge", ""
    text = _user_text(body)
    if tool["name"] == "record_grades":
        data = _rubric_input(tool, text, script, arg)
    else:
        data = _pairwise_input(text, script)
    return Reply([{"type": "tool_use", "id": call_id, "name": tool["name"], "input": data}], "tool_use")
