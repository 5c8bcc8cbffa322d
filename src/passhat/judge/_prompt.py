"""What the judge is sent: the prompt templates, the forced tool whose input schema is the verdict's
shape, and judge_version — a hash of everything that shapes a score, so scores of different judges
are never compared.

The templates are part of judge_version: edit them and every score starts a new series.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from passhat.judge._rubric import Rubric

RUBRIC_TOOL = "record_grades"
PAIRWISE_TOOL = "record_preference"
MAX_TEXT_CHARS = 40_000  # per piece of evidence (final message, diff, reference); the rest is cut and marked

_STRICTNESS = {
    "lenient": "When the evidence fits two levels, choose the higher one: give the benefit of the doubt.",
    "balanced": "When the evidence fits two levels, choose the one whose description fits better; if both fit "
                "equally, choose the lower.",
    "strict": "Every level above the lowest needs evidence you can point to; when in doubt, choose the lower "
              "level. A claim the diff does not show earns nothing.",
}  # fmt: skip

RUBRIC_SYSTEM = """\
You grade the work of an autonomous coding agent (Claude Code) on one task, against a rubric.

How to grade:
- Grade what the agent produced: its diff and its final message. A claim in the message that the diff \
does not bear out counts against it.
- Length is not quality. Do not reward a longer message, a bigger diff, more files, more explanation or a \
restated task. A short answer that does the task fully deserves the top level.
- The reference solution, when given, is one correct answer, not the only one: use it to see what the task \
needs, not to demand the same code.
- For every criterion, in this order: quote or cite the evidence (diff hunks, file paths, sentences of the \
message); then justify the level from the level descriptions; then give the score; then name one concrete \
improvement.
- {strictness}
- Grade each criterion on its own; do not let one weakness lower every criterion.

Rubric: {rubric_name} — {rubric_description}
Scale: {scale}

Criteria:
{criteria}
{edge_cases}
Record your grades by calling the tool {tool} exactly once."""

RUBRIC_USER = """\
<task>
{prompt}
</task>

{ground_truth}<agent_final_message>
{output}
</agent_final_message>

<agent_diff>
{diff}
</agent_diff>

Grade the agent's work on every criterion of the rubric, then call {tool}."""

PAIRWISE_SYSTEM = """\
You compare two answers to the same task given to an autonomous coding agent (Claude Code) and say which \
is better.

How to compare:
- Better means: {question}
- Judge what each answer did (its diff) and said (its final message); a claim its diff does not bear out \
counts against it.
- Length is not quality: do not prefer an answer for being longer, more detailed or more confident.
- The order of the answers means nothing; answer A is not more likely to be better than answer B.
- Reason first, then give the winner: A, B, or tie when neither is better; then your confidence, from 0.5 \
(a coin toss) to 1.0 (certain).

Record your verdict by calling the tool {tool} exactly once."""

PAIRWISE_USER = """\
<task>
{prompt}
</task>

<answer_a>
{answer_a}
</answer_a>

<answer_b>
{answer_b}
</answer_b>

Which answer does the task better? Call {tool}."""

DEFAULT_QUESTION = "it does what the task asks, correctly and completely, with no harmful or needless changes."


def clip(text: str | None, limit: int = MAX_TEXT_CHARS) -> str:
    if not text:
        return "(none)"
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... truncated: {len(text) - limit} more characters not shown]"


def _scale_text(rubric: Rubric) -> str:
    return ", ".join(f"{lv.score} = {lv.label} ({lv.value:g})" for lv in rubric.levels)


def _criteria_text(rubric: Rubric) -> str:
    blocks = []
    for c in rubric.criteria:
        lines = [f"- {c.name} (weight {c.weight:g}): {c.description}"]
        lines += [f"    {rubric.levels[i].score} {label}: {text}" for i, (label, text) in enumerate(c.levels)]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def rubric_system(rubric: Rubric) -> str:
    edge = ""
    if rubric.edge_cases:
        edge = "\nEdge cases:\n" + "\n".join(f"- {e.case} → {e.guidance}" for e in rubric.edge_cases) + "\n"
    return RUBRIC_SYSTEM.format(
        strictness=_STRICTNESS[rubric.strictness], rubric_name=rubric.name, rubric_description=rubric.description,
        scale=_scale_text(rubric), criteria=_criteria_text(rubric), edge_cases=edge, tool=RUBRIC_TOOL,
    )  # fmt: skip


def rubric_user(prompt: str, output: str | None, diff: str | None, reference_patch: str | None,
                reference_output: str | None) -> str:  # fmt: skip
    truth = ""
    if reference_patch:
        truth += f"<reference_patch>\n{clip(reference_patch)}\n</reference_patch>\n\n"
    if reference_output:
        truth += f"<reference_output>\n{clip(reference_output)}\n</reference_output>\n\n"
    return RUBRIC_USER.format(prompt=clip(prompt), ground_truth=truth, output=clip(output), diff=clip(diff),
                              tool=RUBRIC_TOOL)  # fmt: skip


def rubric_tool(rubric: Rubric) -> dict:
    """The forced tool: per criterion evidence, justification, score, improvement — in that order."""
    score = {
        "type": "integer",
        "enum": [lv.score for lv in reversed(rubric.levels)],
        "description": "The level: " + "; ".join(f"{lv.score} = {lv.label} ({lv.value:g})" for lv in rubric.levels),
    }
    one = {
        "type": "object",
        "required": ["evidence", "justification", "score", "improvement"],
        "additionalProperties": False,
        "properties": {
            "evidence": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                         "description": "Quotes or citations from the diff or message, before anything else."},
            "justification": {"type": "string", "minLength": 1,
                              "description": "Why the evidence meets this level and not the next one up."},
            "score": score,
            "improvement": {"type": "string", "minLength": 1, "description": "One concrete improvement."},
        },
    }  # fmt: skip
    names = [c.name for c in rubric.criteria]
    return {
        "name": RUBRIC_TOOL,
        "description": f"Record the grades for rubric {rubric.name}: one entry per criterion.",
        "input_schema": {
            "type": "object",
            "required": ["criteria"],
            "additionalProperties": False,
            "properties": {
                "criteria": {"type": "object", "required": names, "additionalProperties": False,
                             "properties": dict.fromkeys(names, one)},
                "summary": {"type": "string", "description": "One sentence on the work as a whole."},
            },
        },
    }  # fmt: skip


def pairwise_tool() -> dict:
    return {
        "name": PAIRWISE_TOOL,
        "description": "Record which answer is better.",
        "input_schema": {
            "type": "object",
            "required": ["reasoning", "winner", "confidence"],
            "additionalProperties": False,
            "properties": {
                "reasoning": {"type": "string", "minLength": 1, "description": "The comparison, before the verdict."},
                "winner": {"type": "string", "enum": ["A", "B", "tie"]},
                "confidence": {"type": "number", "minimum": 0.5, "maximum": 1.0},
            },
        },
    }  # fmt: skip


def pairwise_system(question: str) -> str:
    return PAIRWISE_SYSTEM.format(question=question, tool=PAIRWISE_TOOL)


def pairwise_answer(output: str | None, diff: str | None) -> str:
    return f"<final_message>\n{clip(output)}\n</final_message>\n<diff>\n{clip(diff)}\n</diff>"


def pairwise_user(prompt: str, answer_a: str, answer_b: str) -> str:
    return PAIRWISE_USER.format(prompt=clip(prompt), answer_a=answer_a, answer_b=answer_b, tool=PAIRWISE_TOOL)


@dataclass(frozen=True)
class Version:
    """judge_version: the first 12 hex digits of sha256 over the canonical JSON of `parts`."""

    parts: dict

    @property
    def digest(self) -> str:
        text = json.dumps(self.parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def rubric_judge_version(rubric: Rubric, model: str, scoring: dict | None = None) -> str:
    """Hash of rubric (criteria, levels, strictness, edge cases) + prompt templates + tool + model + scale
    (+ scoring options that change the reported score, e.g. length normalization)."""
    return Version({
        "kind": "rubric", "rubric": rubric.canonical(), "scale": rubric.points, "model": model,
        "templates": [RUBRIC_SYSTEM, RUBRIC_USER, _STRICTNESS[rubric.strictness]], "tool": rubric_tool(rubric),
        "scoring": scoring or {},
    }).digest  # fmt: skip


def pairwise_judge_version(question: str, model: str, scoring: dict | None = None) -> str:
    return Version({
        "kind": "pairwise", "question": question, "model": model,
        "templates": [PAIRWISE_SYSTEM, PAIRWISE_USER], "tool": pairwise_tool(), "scoring": scoring or {},
    }).digest  # fmt: skip
