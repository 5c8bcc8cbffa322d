"""`passhat judge-noise RESULTS.json --times 2`: regrade the same saved outputs with the LLM judge
several times and report how much the judge disagrees with itself — the noise floor under any judged
score. No agent runs; each regrade is one judge call per trial (offline: the scripted judge).

Per judge grader (name, rubric, judge_version) and criterion: the pooled SD of the points a trial got
across the regrades (sqrt of the mean within-trial variance, n - 1 each), the widest range, and how many
trials got different points; the same for the overall score (0..1); and the agreement of the pass
verdicts: the share of trials whose regrades all agree. Pairwise graders: agreement of the winner.
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from passhat._args import whole_number
from passhat._errors import PasshatError, ResultsError
from passhat._formats import aligned
from passhat.judge._agreement import pooled_sd

HELP = "regrade saved outputs with the LLM judge N times and report its own disagreement"
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
    for component in (row.get("gradingResult") or {}).get("componentResults") or []:
        config = ((component or {}).get("assertion") or {}).get("config") or {}
        if config.get("type") in JUDGE_TYPES and config not in found:
            found.append(config)
    if found:
        return found
    meta = (row.get("response") or {}).get("metadata") or {}
    task_dir = tasks_dir / str(meta.get("task_id")) if tasks_dir else meta.get("task_dir")
    if not task_dir or not meta.get("task_id"):
        return []
    from passhat._tasks import load_task

    return [dict(g) for g in load_task(task_dir).graders if g["type"] in JUDGE_TYPES]


def _regrade(row: dict, config: dict) -> tuple[str, object]:
    from passhat.judge import (from_row, grade_pairwise, grade_rubric, parse_pairwise_config,
                               parse_rubric_config)  # fmt: skip

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
        label = verdict.rubric if kind == "rubric" else verdict.against
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


def render(summaries: list[dict], times: int) -> str:
    if not summaries:
        return "judge-noise: no row was graded by a rubric or pairwise grader; nothing to regrade"
    lines = []
    for d in summaries:
        what = f"rubric {d['label']}" if d["kind"] == "rubric" else f"pairwise vs {d['label']}"
        lines.append(f"judge {d['grader']} ({what}, judge_version {', '.join(d['judge_versions'])}): "
                     f"{d['trials']} trial(s) x {times} regrades")  # fmt: skip
        if d["criteria"]:
            rows = [[c["criterion"], "-" if c["pooled_sd"] is None else f"{c['pooled_sd']:.3f}",
                     "-" if c["max_range"] is None else f"{c['max_range']:g}", f"{c['trials_disagreeing']}/{c['trials']}"]
                    for c in d["criteria"]]  # fmt: skip
            lines.append(aligned(["criterion", "pooled SD", "max range", "trials disagreeing"], rows))
        what = "pass verdicts" if d["kind"] == "rubric" else "winners"
        if d["verdict_agreement"] is None:
            lines.append(f"{what}: fewer than two scored regrades per trial; nothing to compare")
        else:
            lines.append(f"{what} agree on {d['trials_agreeing']}/{d['trials_compared']} trials "
                         f"({d['verdict_agreement']:.2f}); unscored regrades: {d['unscored']} of {d['regrades']}")  # fmt: skip
        lines.append("")
    lines.append("SD in the rubric's points (overall in 0..1), n - 1 per trial, pooled as sqrt(mean variance).")
    return "\n".join(lines)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="promptfoo eval -o results.json of an eval with rubric/pairwise graders")
    parser.add_argument("--times", type=whole_number("--times", 2, "regrade at least twice to see disagreement, e.g. --times 2"), default=2, help="regrades per trial (default 2)")
    parser.add_argument("--tasks-dir", default=None, help="take judge graders from task.yaml here when the file lacks them")
    parser.add_argument("-j", "--jobs", type=int, default=4, help="judge calls at once (default 4)")
    parser.add_argument("--format", choices=("table", "json"), default="table")


def run(args: argparse.Namespace) -> int:
    from passhat.judge._client import endpoint

    where = endpoint("judge-noise", 0, None)
    if isinstance(where, str):
        raise PasshatError(f"judge-noise: {where}")
    rows = _load_rows(Path(args.results))
    tasks_dir = Path(args.tasks_dir).resolve() if args.tasks_dir else None
    summaries = [summary(s) for s in collect(rows, args.times, tasks_dir, args.jobs)]
    if args.format == "json":
        print(json.dumps({"times": args.times, "graders": summaries}, indent=2))
    else:
        print(render(summaries, args.times))
    return 0
