"""`passhat judge-noise RESULTS.json --times 2`: regrade the same saved outputs with the LLM judge
several times and report how much the judge disagrees with itself — the noise floor under any judged
score. No agent runs; each regrade is one judge call per trial (offline: the scripted judge).

Per judge grader (name, rubric, judge_version) and criterion: the pooled SD of the points a trial got
across the regrades (sqrt of the mean within-trial variance, n - 1 each), the widest range, and how many
trials got different points; the same for the overall score (0..1); and the agreement of the pass
verdicts: the share of trials whose regrades all agree. Pairwise graders: agreement of the winner.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from passhat.common._errors import ResultsError
from passhat.judge._agreement import pooled_sd
from passhat.judge._direct import RubricVerdict
from passhat.judge._status import grader_components

if TYPE_CHECKING:
    from passhat.judge._pairwise import PairwiseVerdict

JUDGE_TYPES = ("rubric", "pairwise")
OVERALL = "(overall, 0..1)"


@dataclass
class Series:
    """The regrades of one judge grader: per trial, per round."""

    grader: str
    kind: str
    label: str = ""  # rubric name or what pairwise compares with
    versions: set[str] = field(default_factory=set)
    points: dict[str, list[list[float]]] = field(default_factory=dict)  # criterion → per trial → rounds
    verdicts: list[list[str]] = field(default_factory=list)  # per trial → rounds (pass/fail or winner)
    unscored: int = 0
    regrades: int = 0


def _load_rows(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file; pass the file written by promptfoo eval -o") from None
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path}: not JSON (line {error.lineno}: {error.msg}); pass promptfoo's -o JSON") from None
    rows = data.get("results", {}).get("results") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ResultsError(f"{path}: field 'results.results' is missing or not a list; pass promptfoo's -o JSON")
    return rows


def judge_graders(row: dict, tasks_dir: Path | None) -> list[dict]:
    """The judge graders that graded this row: from its saved assertions, else from its task.yaml."""
    found = []
    for component in grader_components(row):
        config = (component.get("assertion") or {}).get("config") or {}
        if config.get("type") in JUDGE_TYPES and config not in found:
            found.append(config)
    if found:
        return found
    meta = (row.get("response") or {}).get("metadata") or {}
    task_dir = tasks_dir / str(meta.get("task_id")) if tasks_dir else meta.get("task_dir")
    if not task_dir or not meta.get("task_id"):
        return []
    from passhat.tasks._load import load_task

    return [dict(g) for g in load_task(task_dir).graders if g["type"] in JUDGE_TYPES]


def _regrade(row: dict, config: dict) -> tuple[str, RubricVerdict | PairwiseVerdict]:
    from passhat.judge import (
        from_row,
        grade_pairwise,
        grade_rubric,
        parse_pairwise_config,
        parse_rubric_config,  # fmt: skip
    )

    if config["type"] == "rubric":
        return "rubric", grade_rubric(from_row(row, config), parse_rubric_config(config))
    return "pairwise", grade_pairwise(from_row(row, config), parse_pairwise_config(config))


def collect(rows: list[dict], times: int, tasks_dir: Path | None, jobs: int = 4) -> list[Series]:
    """Regrade every judged row `times` times; one Series per judge grader (name, kind, rubric)."""
    work = [(index, row, config) for index, row in enumerate(rows) if row.get("failureReason") != 2
            for config in judge_graders(row, tasks_dir)]  # fmt: skip
    calls = [(index, row, config, r) for index, row, config in work for r in range(times)]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        verdicts = list(pool.map(lambda call: _regrade(call[1], call[2]), calls))
    series: dict[tuple, Series] = {}
    per_trial: dict[tuple, list] = {}
    for (index, _, config, _), (kind, verdict) in zip(calls, verdicts, strict=True):
        label = verdict.rubric if isinstance(verdict, RubricVerdict) else verdict.against  # kind == "rubric"
        key = (config.get("name", config["type"]), kind, label)
        s = series.setdefault(key, Series(*key))
        s.regrades += 1
        s.versions.add(verdict.judge_version)
        per_trial.setdefault((key, index), []).append(verdict)
    for (key, _), rounds in per_trial.items():
        s = series[key]
        scored = [v for v in rounds if not v.unscored]
        s.unscored += len(rounds) - len(scored)
        if s.kind == "rubric":
            for name in [c.name for c in scored[0].criteria] if scored else []:
                s.points.setdefault(name, []).append([c.points for v in scored for c in v.criteria if c.name == name])
            if scored:
                s.points.setdefault(OVERALL, []).append([v.overall for v in scored])
            s.verdicts.append(["pass" if v.passed else "fail" for v in scored])
        else:
            s.verdicts.append([v.decision.winner for v in scored])
    return list(series.values())


def summary(s: Series) -> dict:
    criteria = []
    for name, trials in s.points.items():
        spread = [max(t) - min(t) for t in trials if len(t) >= 2]
        criteria.append({"criterion": name, "pooled_sd": pooled_sd(trials), "max_range": max(spread) if spread else None,
                         "trials_disagreeing": sum(r > 0 for r in spread), "trials": len(spread)})  # fmt: skip
    compared = [v for v in s.verdicts if len(v) >= 2]
    agree = sum(len(set(v)) == 1 for v in compared)
    return {"grader": s.grader, "kind": s.kind, "label": s.label, "judge_versions": sorted(s.versions),
            "regrades": s.regrades, "unscored": s.unscored, "criteria": criteria,
            "verdict_agreement": agree / len(compared) if compared else None, "trials": len(s.verdicts),
            "trials_compared": len(compared),
            "trials_agreeing": agree}  # fmt: skip
