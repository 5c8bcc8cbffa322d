"""Verdicts as Promptfoo GradingResults: per-criterion `namedScores` (columns in the viewer), the
judge_version and the details in `metadata`, and the unscored status spelled out.

Named scores: "<metric>.<criterion>" = the level's value (0..1), "<metric>.length_normalized" when
configured, and "judge_unscored" = 1 for an unscored trial, else 0 (`passhat report` can count it).
"""

from __future__ import annotations

from passhat.judge._client import takes_temperature
from passhat.judge._direct import RubricVerdict

UNSCORED = "UNSCORED"


def _tag(verdict: RubricVerdict) -> str:
    return f"[rubric {verdict.rubric}, judge_version {verdict.judge_version}, model {verdict.model}]"


def rubric_reason(verdict: RubricVerdict) -> str:
    warn = "".join(f" WARNING: {w}." for w in verdict.warnings)
    if verdict.unscored:
        return f"{UNSCORED}: {verdict.unscored_reason} {_tag(verdict)}{warn}"
    which = "length-normalized " if verdict.pass_on_normalized and verdict.length_normalized is not None else ""
    sign = ">=" if verdict.passed else "<"
    parts = [f"{c.name} {c.points}/{verdict.points} {c.label}" for c in verdict.criteria]
    weakest = min(verdict.criteria, key=lambda c: (c.value, -c.weight))
    head = (f"{'PASS' if verdict.passed else 'FAIL'}: {which}overall {verdict.score:.3f} {sign} {verdict.threshold:g} "
            f"{_tag(verdict)}")  # fmt: skip
    return f"{head}: {'; '.join(parts)}. Improve {weakest.name}: {weakest.improvement}{warn}"


def rubric_metadata(verdict: RubricVerdict) -> dict:
    return {
        "judge_version": verdict.judge_version, "judge_model": verdict.model, "rubric": verdict.rubric,
        "judge_temperature": 0 if takes_temperature(verdict.model) else None,
        "judge_unscored": verdict.unscored, "judge_attempts": verdict.attempts, "overall": verdict.overall,
        "judge_scripted": verdict.scripted,
        "length_normalized": verdict.length_normalized, "threshold": verdict.threshold,
        "criteria": {c.name: {"points": c.points, "label": c.label, "value": c.value, "weight": c.weight,
                              "evidence": list(c.evidence), "justification": c.justification,
                              "improvement": c.improvement} for c in verdict.criteria},
        "warnings": list(verdict.warnings), "self_judging": any("self-enhancement" in w for w in verdict.warnings),
    }  # fmt: skip


def rubric_grading_result(verdict: RubricVerdict, metric: str) -> dict:
    named: dict[str, float] = {"judge_unscored": 1.0 if verdict.unscored else 0.0}
    for c in verdict.criteria:
        named[f"{metric}.{c.name}"] = c.value
    if verdict.length_normalized is not None:
        named[f"{metric}.length_normalized"] = verdict.length_normalized
    return {"pass": verdict.passed, "score": verdict.score, "reason": rubric_reason(verdict), "namedScores": named,
            "metadata": rubric_metadata(verdict)}  # fmt: skip
