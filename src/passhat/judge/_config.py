"""The settings of a `rubric` or `pairwise` grader (an item of task.yaml `graders:`), checked and typed.

task.schema.json checks them when the task loads; this checks them again at the assertion boundary,
where a hand-written promptfooconfig.yaml may pass anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from passhat.common._errors import RubricError

MAX_ATTEMPTS_LIMIT = 5


@dataclass(frozen=True)
class RubricConfig:
    rubric: str
    name: str = "rubric"  # the metric name: criteria show as namedScores "<name>.<criterion>"
    model: str | None = None
    threshold: float | None = None  # None: the rubric's
    conciseness: bool = False
    conciseness_weight: float = 0.1
    length_normalize: bool = False
    length_budget: int | None = None
    max_attempts: int = 3
    fake_script: str | None = None
    reference_output: str | None = None
    use_reference: bool = True


@dataclass(frozen=True)
class PairwiseConfig:
    name: str = "pairwise"
    model: str | None = None
    question: str | None = None
    against_results: str | None = None  # compare with this results file's row of the same task (else the reference)
    against_provider: str | None = None
    shuffles: int = 0  # 0: the two passes, positions swapped; N >= 3: N seeded orders, majority vote
    pass_on: Literal["win", "win_or_tie"] = "win_or_tie"
    max_attempts: int = 3
    fake_script: str | None = None
    reference_output: str | None = None
    use_reference: bool = True


_COMMON = {"type": str, "name": str, "model": str, "max_attempts": int, "fake_script": str,
           "reference_output": str, "use_reference": bool}  # fmt: skip
_RUBRIC = {**_COMMON, "rubric": str, "threshold": (int, float), "conciseness": bool,
           "conciseness_weight": (int, float), "length_normalize": bool, "length_budget": int}  # fmt: skip
_PAIRWISE = {**_COMMON, "question": str, "against_results": str, "against_provider": str, "shuffles": int,
             "pass_on": str}  # fmt: skip


def _bad(kind: str, key: str, value: Any, fix: str) -> RubricError:
    return RubricError(f"{kind} grader config: field '{key}': {value!r}: {fix}")


def _check_types(kind: str, raw: dict, fields: dict) -> dict:
    out = {}
    for key, value in raw.items():
        if key not in fields:
            raise _bad(kind, key, value, f"unknown field; known fields: {', '.join(sorted(fields))}")
        expected = fields[key]
        if not isinstance(value, expected) or (isinstance(value, bool) and expected is not bool):
            name = expected.__name__ if isinstance(expected, type) else "number"
            raise _bad(kind, key, value, f"expected a {name}")
        if key != "type":
            out[key] = value
    attempts = out.get("max_attempts", 3)
    if not 1 <= attempts <= MAX_ATTEMPTS_LIMIT:
        raise _bad(kind, "max_attempts", attempts, f"use 1..{MAX_ATTEMPTS_LIMIT} (retries are bounded)")
    return out


def parse_rubric_config(raw: dict) -> RubricConfig:
    values = _check_types("rubric", raw, _RUBRIC)
    if "rubric" not in values:
        raise _bad("rubric", "rubric", None, "name a rubric, e.g. `rubric: agent-output` (rubrics/agent-output.yaml)")
    threshold = values.get("threshold")
    if threshold is not None and not 0 <= threshold <= 1:
        raise _bad("rubric", "threshold", threshold, "the overall score is in 0..1; use a threshold in 0..1, e.g. 0.7")
    weight = values.get("conciseness_weight", 0.1)
    if not 0 < weight <= 0.5:
        raise _bad("rubric", "conciseness_weight", weight, "use a weight in (0, 0.5], e.g. 0.1")
    if values.get("length_budget") is not None and values["length_budget"] < 1:
        raise _bad("rubric", "length_budget", values["length_budget"], "use a positive number of characters")
    return RubricConfig(**values)


def parse_pairwise_config(raw: dict) -> PairwiseConfig:
    values = _check_types("pairwise", raw, _PAIRWISE)
    shuffles = values.get("shuffles", 0)
    if shuffles != 0 and shuffles < 3:
        raise _bad("pairwise", "shuffles", shuffles, "use 0 (two passes, positions swapped) or 3 or more for a vote")
    if values.get("pass_on", "win_or_tie") not in ("win", "win_or_tie"):
        raise _bad("pairwise", "pass_on", values["pass_on"], "use win or win_or_tie")
    return PairwiseConfig(**values)
