"""Pairwise comparison (grader type `pairwise`): the trial's answer against a reference — the task's
reference (solution.patch + `reference_output`) or another eval's answer to the same task.

Two passes with the positions swapped: the same winner both times → that winner, confidence the mean
of the two; different winners → TIE, confidence 0.5, flagged `position_bias`. With `shuffles: N`
(N >= 3): N passes in seeded random orders, the plurality winner (TIE when none), confidence = the
share of passes that agree with it. Score = the chance the trial's answer is the better one:
win → confidence, tie → 0.5, loss → 1 - confidence.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypedDict

from passhat.common._errors import RubricError
from passhat.judge._client import DEFAULT_MODEL, call_tool, endpoint
from passhat.judge._config import PairwiseConfig
from passhat.judge._direct import same_model
from passhat.judge._inputs import JudgeInputs, from_row
from passhat.judge._prompt import (
    DEFAULT_QUESTION,
    pairwise_answer,
    pairwise_judge_version,
    pairwise_system,
    pairwise_tool,  # fmt: skip
    pairwise_user,
)

Winner = Literal["output", "reference", "tie"]
Order = Literal["output_first", "reference_first"]


@dataclass(frozen=True)
class Vote:
    """One pass: which order the answers were shown in and what the judge said (A, B or tie)."""

    order: Order
    position: Literal["A", "B", "tie"]
    confidence: float
    reasoning: str = ""

    @property
    def winner(self) -> Winner:
        if self.position == "tie":
            return "tie"
        first_is_output = self.order == "output_first"
        return "output" if (self.position == "A") == first_is_output else "reference"


@dataclass(frozen=True)
class Decision:
    winner: Winner
    confidence: float
    position_bias: bool


def combine_swapped(first: Vote, second: Vote) -> Decision:
    """Two passes in opposite orders: consistent → the winner with the mean confidence; else TIE 0.5 + bias."""
    if first.winner == second.winner:
        return Decision(first.winner, statistics.fmean([first.confidence, second.confidence]), False)
    return Decision("tie", 0.5, True)


def majority(votes: list[Vote]) -> Decision:
    """Plurality winner over the passes (TIE when two winners share the top count); confidence = agreement.
    Position bias: both orders were shown and every pass picked the same position (A or B)."""
    counts = Counter(v.winner for v in votes).most_common()
    top, count = counts[0]
    shared = len(counts) > 1 and counts[1][1] == count
    positions = {v.position for v in votes}
    bias = len({v.order for v in votes}) == 2 and len(positions) == 1 and positions != {"tie"}
    if shared:
        return Decision("tie", 0.5, bias)
    return Decision(top, count / len(votes), bias)


def win_score(decision: Decision) -> float:
    if decision.winner == "output":
        return decision.confidence
    if decision.winner == "reference":
        return 1.0 - decision.confidence
    return 0.5


@dataclass(frozen=True)
class PairwiseVerdict:
    against: str
    judge_version: str
    model: str
    pass_on: str
    decision: Decision | None = None  # None: unscored
    votes: tuple[Vote, ...] = ()
    unscored_reason: str | None = None
    attempts: int = 0
    warnings: tuple[str, ...] = ()
    scripted: bool = False  # judged by passhat's scripted model (offline): canned votes, not a model's judgement

    @property
    def unscored(self) -> bool:
        return self.decision is None

    @property
    def score(self) -> float:
        return 0.0 if self.decision is None else win_score(self.decision)

    @property
    def passed(self) -> bool:
        if self.decision is None:
            return False
        return self.decision.winner == "output" or (self.pass_on == "win_or_tie" and self.decision.winner == "tie")


class _VerdictBase(TypedDict):
    """The PairwiseVerdict fields every outcome of one grading shares."""

    against: str
    judge_version: str
    model: str
    pass_on: str
    warnings: tuple[str, ...]


def _rows(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise RubricError(f"pairwise grader config: field 'against_results': {str(path)!r}: cannot read it ({error}); "
                          "pass a promptfoo eval -o results.json") from None  # fmt: skip
    rows = data.get("results", {}).get("results") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise RubricError(f"pairwise grader config: field 'against_results': {str(path)!r} has no results.results list; "
                          "pass a promptfoo eval -o results.json")  # fmt: skip
    return rows


def _meta(row: dict) -> dict:
    return (row.get("response") or {}).get("metadata") or {}


def _label(row: dict) -> str:
    provider = row.get("provider") or {}
    return (provider.get("label") or provider.get("id") or "") if isinstance(provider, dict) else str(provider)


def opponent(inputs: JudgeInputs, config: PairwiseConfig) -> tuple[str, str]:
    """(what the trial is compared with, that answer as shown to the judge)."""
    if config.against_results:
        path = Path(config.against_results)
        if not path.is_absolute() and inputs.task_dir is not None and not path.is_file():
            path = inputs.task_dir.parent.parent / path
        wanted = config.against_provider
        matches = [row for row in _rows(path)
                   if _meta(row).get("task_id") == inputs.task_id and (not wanted or _label(row) == wanted)]  # fmt: skip
        if not matches:
            which = f" and provider {wanted!r}" if wanted else ""
            raise RubricError(f"pairwise grader config: field 'against_results': {str(path)!r} has no row for task "
                              f"{inputs.task_id!r}{which}; run that eval on the same task or drop against_results")  # fmt: skip
        same = [r for r in matches if _meta(r).get("repeat_index") == inputs.trial]
        row = (same or matches)[0]
        other = from_row(row, {"use_reference": False})
        return f"{path.name} [{_label(row)}]", pairwise_answer(other.output, other.diff)
    if not inputs.reference_patch and not inputs.reference_output:
        raise RubricError("pairwise grader config: the task has no reference (solution.patch or reference_output) to "
                          "compare with; add `reference_output:` or set `against_results:`")  # fmt: skip
    return "the task's reference", pairwise_answer(inputs.reference_output, inputs.reference_patch)


def orders(config: PairwiseConfig, inputs: JudgeInputs) -> list[Order]:
    if not config.shuffles:
        return ["output_first", "reference_first"]
    return [random.Random(f"{inputs.task_id}:{inputs.trial}:{i}").choice(["output_first", "reference_first"])
            for i in range(config.shuffles)]  # fmt: skip


def grade_pairwise(inputs: JudgeInputs, config: PairwiseConfig) -> PairwiseVerdict:
    question = config.question or DEFAULT_QUESTION
    model = config.model or DEFAULT_MODEL
    against, theirs = opponent(inputs, config)
    version = pairwise_judge_version(question, model, {"shuffles": config.shuffles})
    warnings: list[str] = []
    if same_model(model, inputs.agent_model):
        warnings.append(f"judge model {model} is the agent's model ({inputs.agent_model}): self-enhancement bias")
        print(f"passhat judge: warning: {warnings[-1]}", file=sys.stderr)
    base: _VerdictBase = {"against": against, "judge_version": version, "model": model, "pass_on": config.pass_on,
                          "warnings": tuple(warnings)}  # fmt: skip
    where = endpoint(inputs.task_id, inputs.trial, config.fake_script)
    if isinstance(where, str):
        return PairwiseVerdict(**base, unscored_reason=where)
    ours = pairwise_answer(inputs.output, inputs.diff)
    votes: list[Vote] = []
    attempts = 0
    for order in orders(config, inputs):
        a, b = (ours, theirs) if order == "output_first" else (theirs, ours)
        reply = call_tool(where, model=model, system=pairwise_system(question), user=pairwise_user(inputs.prompt, a, b),
                          tool=pairwise_tool(), max_attempts=config.max_attempts)  # fmt: skip
        attempts += reply.attempts
        if reply.data is None:
            return PairwiseVerdict(**base, votes=tuple(votes), unscored_reason=reply.problem, attempts=attempts,
                                   scripted=where.offline)  # fmt: skip
        votes.append(Vote(order, reply.data["winner"], float(reply.data["confidence"]), reply.data["reasoning"]))
    decision = majority(votes) if config.shuffles else combine_swapped(*votes)
    return PairwiseVerdict(**base, decision=decision, votes=tuple(votes), attempts=attempts, scripted=where.offline)


def pairwise_reason(verdict: PairwiseVerdict) -> str:
    tag = f"[pairwise vs {verdict.against}, judge_version {verdict.judge_version}, model {verdict.model}]"
    warn = "".join(f" WARNING: {w}." for w in verdict.warnings)
    if verdict.decision is None:
        return f"UNSCORED: {verdict.unscored_reason} {tag}{warn}"
    d = verdict.decision
    said = ", ".join(f"{v.order.replace('_', ' ')}: {v.position}" for v in verdict.votes)
    what = {"output": "the trial's answer wins", "reference": "the reference wins", "tie": "TIE"}[d.winner]
    bias = " (position_bias: the verdict followed the position, not the answer)" if d.position_bias else ""
    head = "PASS" if verdict.passed else "FAIL"
    return f"{head}: {what}, confidence {d.confidence:.2f}{bias} {tag}; passes: {said}{warn}"


def pairwise_grading_result(verdict: PairwiseVerdict, metric: str) -> dict:
    named = {"judge_unscored": 1.0 if verdict.unscored else 0.0}
    if verdict.decision is not None:
        named[f"{metric}.position_bias"] = 1.0 if verdict.decision.position_bias else 0.0
        named[f"{metric}.confidence"] = verdict.decision.confidence
    metadata = {
        "judge_version": verdict.judge_version, "judge_model": verdict.model, "judge_unscored": verdict.unscored,
        "judge_attempts": verdict.attempts, "against": verdict.against, "judge_scripted": verdict.scripted,
        "winner": verdict.decision.winner if verdict.decision else None,
        "confidence": verdict.decision.confidence if verdict.decision else None,
        "position_bias": verdict.decision.position_bias if verdict.decision else None,
        "votes": [{"order": v.order, "position": v.position, "winner": v.winner, "confidence": v.confidence}
                  for v in verdict.votes],
        "warnings": list(verdict.warnings),
    }  # fmt: skip
    return {"pass": verdict.passed, "score": verdict.score, "reason": pairwise_reason(verdict), "namedScores": named,
            "metadata": metadata}  # fmt: skip
