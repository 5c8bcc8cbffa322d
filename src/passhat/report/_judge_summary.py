"""The judge's scores in a saved eval, per task, provider and judge: for `passhat report` (and the demo).

Read from each row's component results (the judge assertions' own GradingResults): the score, the
verdict, `metadata.judge_version`, `metadata.judge_unscored` and the per-criterion points. Scores are
grouped by judge_version too: scores of different judges are never averaged together.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passhat.judge._status import grader_components
from passhat.report._formats import aligned

JUDGE_TYPES = ("rubric", "pairwise")


@dataclass
class JudgeGroup:
    task: str
    provider: str
    judge: str  # the assertion's metric (the grader's name)
    kind: str
    label: str  # the rubric, or what pairwise compares with
    judge_version: str
    scores: list[float] = field(default_factory=list)
    passes: int = 0
    unscored: int = 0
    criteria: dict[str, list[float]] = field(default_factory=dict)  # criterion → values (0..1)
    winners: dict[str, int] = field(default_factory=dict)
    position_bias: int = 0
    scripted: bool = False  # some of its scores came from passhat's scripted model (metadata judge_scripted)


def _rows(path: Path) -> Iterator[dict]:
    from passhat.results._rows import (
        iter_rows,  # streamed: results files can be hundreds of MB
    )

    yield from (row for row in iter_rows(path) if isinstance(row, dict))


def _provider(row: dict) -> str:
    provider = row.get("provider")
    if isinstance(provider, dict):
        return provider.get("label") or provider.get("id") or "?"
    return str(provider or "?")


def judge_groups(rows: Iterable[dict]) -> list[JudgeGroup]:
    groups: dict[tuple, JudgeGroup] = {}
    for row in rows:
        meta = (row.get("response") or {}).get("metadata") or {}
        task = meta.get("task_id") or (row.get("testCase") or {}).get("description") or "?"
        for component in grader_components(row):
            assertion = component.get("assertion") or {}
            config = assertion.get("config") or {}
            if config.get("type") not in JUDGE_TYPES:
                continue
            details: dict[str, Any] = component.get("metadata") or {}
            kind = config["type"]
            label = details.get("rubric") or details.get("against") or config.get("rubric") or "?"
            key = (
                task,
                _provider(row),
                assertion.get("metric") or kind,
                kind,
                label,
                details.get("judge_version") or "none",
            )
            group = groups.setdefault(key, JudgeGroup(*key))
            group.scripted |= bool(details.get("judge_scripted"))
            if details.get("judge_unscored") or str(component.get("reason", "")).startswith("UNSCORED"):
                group.unscored += 1
                continue
            group.scores.append(float(component.get("score") or 0.0))
            group.passes += bool(component.get("pass"))
            for name, criterion in (details.get("criteria") or {}).items():
                group.criteria.setdefault(name, []).append(float(criterion["value"]))
            if details.get("winner"):
                group.winners[details["winner"]] = group.winners.get(details["winner"], 0) + 1
                group.position_bias += bool(details.get("position_bias"))
    return sorted(groups.values(), key=lambda g: (g.task, g.provider, g.judge, g.judge_version))


def judge_summary(path: str | Path) -> list[dict]:
    """Plain data per (task, provider, judge, judge_version) — for `--format json`."""
    out = []
    for g in judge_groups(_rows(Path(path))):
        out.append({
            "task": g.task, "provider": g.provider, "judge": g.judge, "kind": g.kind, "label": g.label,
            "judge_version": g.judge_version, "scored": len(g.scores), "unscored": g.unscored, "passes": g.passes,
            "mean_score": statistics.fmean(g.scores) if g.scores else None,
            "criteria": {name: statistics.fmean(values) for name, values in g.criteria.items()},
            "winners": g.winners, "position_bias": g.position_bias, "scripted": g.scripted,
        })  # fmt: skip
    return out


def judge_summary_lines(path: str | Path) -> list[str]:
    """The judge's table, or [] when no row was judged."""
    data = judge_summary(path)
    if not data:
        return []
    head = ["task", "provider", "judge", "rubric / vs", "judge_version", "n", "unscored", "mean", "pass", "detail"]
    rows = []
    for d in data:
        if d["kind"] == "rubric":
            detail = ", ".join(f"{name} {mean:.2f}" for name, mean in d["criteria"].items())
        else:
            detail = ", ".join(f"{w} {n}" for w, n in sorted(d["winners"].items()))
            detail += f"; position_bias {d['position_bias']}" if d["position_bias"] else ""
        mean = "-" if d["mean_score"] is None else f"{d['mean_score']:.3f}"
        rows.append([d["task"], d["provider"], d["judge"], d["label"], d["judge_version"], str(d["scored"]),
                     str(d["unscored"]), mean, f"{d['passes']}/{d['scored']}", detail])  # fmt: skip
    return ["", "LLM judge (scores 0..1; compare only within one judge_version; unscored = judge reply unusable, "
            "left out of n):", aligned(head, rows, left=(0, 1, 2, 3, 4, 9))]  # fmt: skip
