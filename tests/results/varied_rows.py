"""Deterministic promptfoo-0.123-shaped results files with every row shape the reader handles.

For the equivalence test (`test_scan_equivalence.py`): the same seed gives the same bytes, so the
report figures captured from these files once (tests/results/data/README.md says when and how) stay
the reference. Shapes mixed in, each with its own odds: passhat's provider (response.metadata with
task_id, repeat_index, num_turns, cost_usd, status, model, scripted_model), promptfoo's native Agent
SDK provider (numTurns, durationMs, no task_id), a provider given as a string or by id only, the task
from testCase.description or from vars, infra errors (failureReason 2, multi-line errors, promptfoo's
$0 placeholder), a grader process that crashed, rows cut off by Ctrl+C, LLM-judged rows (unscored or
not), null metadata / response / latency, tiers in testCase.metadata, and non-ASCII task names.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TIERS = ("simple", "medium", "complex", "very-complex")
NODE_STACK = "\n    at PythonWorker.shutdown (file:///x/providers.js:18202:48)\n    at Array.map (<anonymous>)"


def _judge(rng: random.Random, unscored: bool) -> dict[str, Any]:
    """A judged row's gradingResult and named scores: one tests grader and one rubric judge."""
    tests_pass = rng.random() < 0.8
    judge = {
        "pass": not unscored and rng.random() < 0.7,
        "score": 0.0 if unscored else round(rng.random(), 3),
        "reason": "UNSCORED: the judge's reply had no verdict" if unscored else "clear and correct",
        "assertion": {"type": "python", "metric": "quality", "config": {"type": "rubric", "rubric": "agent-output"}},
        "metadata": {"judge_version": f"j{rng.randint(1, 2)}", "judge_unscored": unscored, "rubric": "agent-output",
                     "criteria": {} if unscored else {"clarity": {"value": round(rng.random(), 2)}}},
    }  # fmt: skip
    components = [{"pass": tests_pass, "score": float(tests_pass), "reason": "tests"}, judge]
    return {
        "gradingResult": {"pass": tests_pass and judge["pass"], "score": 0.5, "componentResults": components},
        "namedScores": {"tests": float(tests_pass), "judge_unscored": 1.0 if unscored else 0.0},
    }


def row(index: int, rng: random.Random, tasks: int) -> dict[str, Any]:
    """Row `index` (its testIdx) of a varied eval."""
    t = index % tasks
    task = f"task-{t:03d}" if t % 7 else f"tâche-{t:03d}-ü"
    repeat = index // tasks
    roll = rng.random()
    outcome = "error" if roll < 0.03 else "crash" if roll < 0.04 else "cut" if roll < 0.05 else "run"
    passed = outcome == "run" and rng.random() < (1.0 if t % 3 else 0.6)
    kind = ("passhat", "sdk", "passhat", "bare", "passhat")[t % 5]
    cost = round(rng.uniform(0.001, 0.9), 6)
    error = None
    if outcome == "error":
        error = rng.choice(("infrastructure error: API error 529 (overloaded)\nafter 3 retries", "", "  \n sandbox"))
    elif outcome == "crash":
        error = "Error running Python script: Traceback (most recent call last):\n  KeyboardInterrupt"
    elif outcome == "cut":
        error = "Error: Worker shutting down" + NODE_STACK
    elif not passed:
        error = "Expected the test suite to pass: 2 failed"
    meta: dict[str, Any] | None
    if kind == "passhat":
        meta = {
            "task_id": task, "repeat_index": repeat if rng.random() < 0.99 else repeat + 1,
            "num_turns": rng.randint(1, 40) if rng.random() < 0.9 else None,
            "duration_ms": rng.randint(1000, 400_000), "cost_usd": cost if rng.random() < 0.9 else None,
            "is_error": outcome == "error", "status": "ok" if rng.random() < 0.95 else "timeout",
            "model": rng.choice(("claude-sonnet-4-5", "claude-opus-4-1")), "scripted_model": rng.random() < 0.5,
        }  # fmt: skip
    elif kind == "sdk":
        meta = {"numTurns": rng.randint(1, 40), "durationMs": rng.randint(1000, 90_000), "toolCalls": []}
    else:
        meta = None if rng.random() < 0.5 else {"tier": TIERS[t % 4]}
    if outcome == "cut":
        meta = None
    provider: Any = {"id": "file://providers/claude_code.py", "label": f"p{t % 2}"}
    if kind == "sdk":
        provider = {"id": "anthropic:claude-agent-sdk"} if t % 2 else "anthropic:claude-agent-sdk:sonnet"
    test_case: dict[str, Any] = {"vars": {"task_id": task}, "metadata": {"tier": TIERS[t % 4]} if t % 5 else None}
    if kind != "bare" or t % 2:
        test_case["description"] = f"{task}: fix the failing tests"
    judged = kind == "passhat" and outcome == "run" and t % 4 == 0
    out: dict[str, Any] = {
        "cost": 0 if outcome in ("error", "cut") and rng.random() < 0.5 else cost,
        "error": error,
        "failureReason": 2 if outcome in ("error", "cut") else 0 if passed else 1,
        "gradingResult": None if outcome in ("error", "cut") else {"pass": passed, "score": float(passed)},
        "id": f"{rng.getrandbits(64):016x}",
        "latencyMs": None if outcome == "cut" or rng.random() < 0.05 else rng.randint(900, 500_000),
        "metadata": meta if rng.random() < 0.5 else ({**meta, "extra": [1, {"a": None}]} if meta else None),
        "namedScores": {"tests": float(passed)},
        "prompt": {"raw": f"Fix the failing tests in {task}.", "label": "prompt"},
        "provider": provider,
        "response": None if outcome == "cut" else {"output": "Done.", "cost": cost, "metadata": meta},
        "score": float(passed),
        "success": passed,
        "testCase": test_case,
        "testIdx": index,
        "vars": {"task_id": task},
    }
    if judged:
        unscored = rng.random() < 0.2
        out.update(_judge(rng, unscored))
        out["success"] = passed and not unscored
    return out


def rows(count: int, seed: int = 13, tasks: int = 40) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    for index in range(count):
        yield row(index, rng, tasks)


def write_json(path: Path, count: int, *, seed: int = 13, tasks: int = 40, indent: int | None = 2) -> Path:
    """The rows inside promptfoo's wrapper, pretty-printed as `promptfoo eval -o results.json` does (indent 2),
    or compact (indent None)."""
    head = {"evalId": "eval-Var-2026-12-01T10:00:00", "results": {"version": 3, "timestamp": "2026-12-01T10:00:00Z"}}
    data = {
        **head,
        "results": {**head["results"], "prompts": [{"raw": "x", "label": "prompt"}], "results": list(
            rows(count, seed, tasks)), "stats": {"successes": 1}},
        "config": {"description": "varied rows", "providers": [{"id": "file://providers/claude_code.py",
                   "label": "p0", "config": {"model": "claude-sonnet-4-5"}}, "anthropic:claude-agent-sdk"]},
        "shareableUrl": None,
        "metadata": {"promptfooVersion": "0.123.1", "evaluationCreatedAt": "2026-12-01T10:00:00.000Z"},
        "runtimeOptions": {"repeat": count // tasks},
    }  # fmt: skip
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=False), encoding="utf-8")
    return path


def write_jsonl(path: Path, count: int, *, seed: int = 13, tasks: int = 40) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for one in rows(count, seed, tasks):
            out.write(json.dumps(one, ensure_ascii=False) + "\n")
    return path
