"""`passhat drift`: append an eval to the score history, then say whether quality fell below its baseline.

The rule is `_rule`'s (its docstring says it whole): by default each trial's pass/fail, a drop of the pass rate by
more than 2 standard errors of the difference; for a score, a drop by more than 2 SE of the batch mean or by more
than the absolute threshold. Series with different judge_version are never compared: a new judge_version starts a
new series, with its own baseline. What ran differently since the baseline (the models that answered, the Claude Code
and Agent SDK versions) is said in a note (`_explain.ran_changes`): a drift often has one of them as its cause.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from passhat.common._errors import PasshatError, ResultsError
from passhat.history._explain import explain, explain_lines, ran_changes
from passhat.history._rule import DEFAULT_ABS_POINTS, Sample, Verdict, Z, abs_threshold, overall, sample, verdict
from passhat.history._store import (
    AGGREGATE,
    DEFAULT_DB,
    NAMED_PREFIX,
    PASS,
    ScoreRow,
    append_batch,
    appended_at,
    batch_from_results,
    eval_order,
    load_rows,
    open_history,
)

Status = Literal["ok", "drift", "baseline", "no-baseline", "unscored"]
SeriesKey = tuple[str, str, str, str]  # task, provider, metric, judge_version
Batches = dict[SeriesKey, dict[str, list[ScoreRow]]]  # series -> eval id -> its rows, oldest eval first


# --- series -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeriesResult:
    task: str  # "(overall)" for the mean over tasks
    provider: str
    metric: str
    judge_version: str
    status: Status
    baseline_eval: str | None
    baseline: Sample | None
    batch: Sample
    unscored: int
    verdict: Verdict | None
    notes: tuple[str, ...]
    best: ScoreRow | None = None  # best baseline trial, when drifted
    worst: ScoreRow | None = None  # worst new trial, when drifted

    @property
    def name(self) -> str:
        return f"{self.task} [{self.provider}]"


def _full(rows: Sequence[ScoreRow]) -> bool:
    return len(rows) >= 2 and all(row.score is not None for row in rows)


def _scores(rows: Sequence[ScoreRow]) -> list[float]:
    return [row.score for row in rows if row.score is not None]


def analyze(
    rows: Sequence[ScoreRow], eval_id: str, abs_limit: float | None, baseline_eval: str | None = None
) -> list[SeriesResult]:
    """One SeriesResult per series in `eval_id`, then one "(overall)" per (provider, metric, judge_version).

    `rows` are every stored row of those series (and of their other judge versions), oldest eval first. A "pass"
    series is compared by the SE of the difference of the two pass rates (see the module docstring).
    """
    batches: Batches = {}
    for row in _infra_errors_in_their_series(rows):
        key = (row.task, row.provider, row.metric, row.judge_version)
        batches.setdefault(key, {}).setdefault(row.eval_id, []).append(row)
    pos: dict[str, int] = {}
    for row in rows:
        pos.setdefault(row.eval_id, len(pos))
    results = [
        _series(key, batches, pos, eval_id, abs_limit, baseline_eval)
        for key in sorted(k for k, evals in batches.items() if eval_id in evals)
    ]
    groups: dict[tuple[str, str, str], list[SeriesResult]] = {}
    for result in results:
        if result.verdict is not None:
            groups.setdefault((result.provider, result.metric, result.judge_version), []).append(result)
    for (provider, metric, judge), group in sorted(groups.items()):
        if len(group) < 2:
            continue  # one task: its own row already says it
        base = overall([r.baseline for r in group if r.baseline is not None])
        new = overall([r.batch for r in group])
        check = verdict(base, new, abs_limit, difference=metric == PASS)
        status: Status = "drift" if check.drifted else "ok"
        key = ("(overall)", provider, metric, judge)
        results.append(SeriesResult(*key, status, None, base, new, 0, check, (f"mean of {len(group)} task means",)))
    return results


def _infra_errors_in_their_series(rows: Sequence[ScoreRow]) -> list[ScoreRow]:
    """An infra error carries no judge_version (no judge saw it; stored "none"): it belongs, unscored, to the latest
    judge_version of its (task, provider, metric) up to its eval, when there is one — never to a series of its own.
    (An eval appends its own infra errors to its scored trials' series; this places those of an eval where every
    trial of a task failed, and of histories written before that.)"""
    latest: dict[tuple[str, str, str], str] = {}
    placed = []
    for row in rows:  # oldest eval first
        key = (row.task, row.provider, row.metric)
        if row.judge_version == "none" and row.passed is None and key in latest:
            row = replace(row, judge_version=latest[key])
        elif row.passed is not None:  # a trial that ran: its series is the current one
            latest[key] = row.judge_version
        placed.append(row)
    return placed


def _judge_note(key: SeriesKey, batches: Batches, pos: dict[str, int], now: int) -> str | None:
    """Say so when this series' judge_version first appears after batches under another judge_version."""
    if any(pos[e] < now for e in batches[key]):
        return None
    others = (k for k, evals in batches.items() if k[:3] == key[:3] and k != key and any(pos[e] < now for e in evals))
    olds = sorted({k[3] for k in others})
    if not olds:
        return None
    old = ", ".join(olds)
    return f"judge_version {key[3]} is new (was {old}): a new series with its own baseline, never compared with {old}"


def _series(
    key: SeriesKey,
    batches: Batches,
    pos: dict[str, int],
    eval_id: str,
    abs_limit: float | None,
    baseline_eval: str | None,
) -> SeriesResult:
    evals = batches[key]
    new_rows = evals[eval_id]
    batch = sample(_scores(new_rows))
    judge_note = _judge_note(key, batches, pos, pos[eval_id])
    notes = [judge_note] if judge_note else []
    if baseline_eval is not None:
        base_id = baseline_eval if baseline_eval in evals else None
        missing = f"not in --baseline eval {baseline_eval}; not compared"
    else:
        base_id = next((e for e, rs in evals.items() if _full(rs)), None)
        missing = "no full batch yet (every trial scored, n >= 2) to be its baseline; not compared"
    unscored = len(new_rows) - batch.n
    if unscored:
        notes.append(f"{unscored} of {len(new_rows)} trials unscored (infra error or no {key[2]}), left out")
    if batch.n == 0:
        return SeriesResult(*key, "unscored", base_id, None, batch, unscored, None, (*notes, "no scored trial"))
    if base_id is None:
        return SeriesResult(*key, "no-baseline", None, None, batch, unscored, None, (*notes, missing))
    if base_id == eval_id:
        notes.append("this eval is the baseline, nothing to compare yet")
        return SeriesResult(*key, "baseline", eval_id, batch, batch, unscored, None, tuple(notes))
    base_rows = evals[base_id]
    base = sample(_scores(base_rows))
    if base.n == 0:
        notes.append(f"baseline eval {base_id} has no scored trial; not compared")
        return SeriesResult(*key, "no-baseline", base_id, base, batch, unscored, None, tuple(notes))
    if (changed := ran_changes(base_rows, new_rows)) is not None:
        notes.append(f"what ran changed since baseline {base_id}: {changed}")
    check = verdict(base, batch, abs_limit, difference=key[2] == PASS)
    if not check.drifted:
        return SeriesResult(*key, "ok", base_id, base, batch, unscored, check, tuple(notes))
    # Ties: the first in row order (max/min keep the first of equal keys).
    best = max((r for r in base_rows if r.score is not None), key=lambda r: r.score or 0.0)
    worst = min((r for r in new_rows if r.score is not None), key=lambda r: r.score or 0.0)
    return SeriesResult(*key, "drift", base_id, base, batch, unscored, check, tuple(notes), best, worst)


# --- output -----------------------------------------------------------------------------------------------------


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _reasons(v: Verdict) -> str:
    parts = [f"> 2xSE {v.se_limit:.3f}"] if v.by_se and v.se_limit is not None else []
    parts += [f"> abs {v.abs_limit:.3f}"] if v.by_abs and v.abs_limit is not None else []
    return ", ".join(parts)


def format_table(results: Sequence[SeriesResult], head: Sequence[str], explains: Sequence[dict[str, Any]]) -> str:
    header = ["task", "provider", "judge", "baseline", "n0", "mean0", "n", "mean", "drop", "2xSE", "status"]
    body = [
        [
            r.task,
            r.provider,
            r.judge_version,
            r.baseline_eval or "-",
            str(r.baseline.n) if r.baseline else "-",
            _f(r.baseline.mean if r.baseline else None),
            str(r.batch.n),
            _f(r.batch.mean),
            _f(r.verdict.drop if r.verdict else None),
            _f(r.verdict.se_limit if r.verdict else None),
            r.status.upper() if r.status == "drift" else r.status,
        ]
        for r in results
    ]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    right = set(range(4, 10))
    table = [
        "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=False))
        ).rstrip()
        for row in [header, ["-" * w for w in widths], *body]
    ]
    lines = [*head, "", *table, ""]
    for r in results:
        if r.status == "drift" and r.verdict:
            lines.append(
                f"DRIFT {r.name}: mean {_f(r.baseline.mean if r.baseline else None)} -> "
                f"{_f(r.batch.mean)}, drop {r.verdict.drop:.3f} ({_reasons(r.verdict)})."
            )
    notes: dict[str, list[str]] = {}  # the same note for several series is said once
    for r in results:
        for note in r.notes if r.task != "(overall)" else ():
            notes.setdefault(note, []).append(r.name)
    lines += [f"Note: {note}: {', '.join(names)}." for note, names in notes.items()]
    drifted = [r.name for r in results if r.status == "drift"]
    lines.append(f"Drift in {len(drifted)}: {', '.join(drifted)}." if drifted else "No drift.")
    for e in explains:
        lines += ["", *explain_lines(e)]
    return "\n".join(lines)


def _series_json(r: SeriesResult) -> dict[str, Any]:
    return {
        "task": r.task,
        "provider": r.provider,
        "metric": r.metric,
        "judge_version": r.judge_version,
        "status": r.status,
        "drift": r.status == "drift",
        "baseline_eval": r.baseline_eval,
        "baseline": asdict(r.baseline) if r.baseline else None,
        "batch": asdict(r.batch),
        "unscored": r.unscored,
        "verdict": {**asdict(r.verdict), "drifted": r.verdict.drifted} if r.verdict else None,
        "notes": list(r.notes),
    }


# --- the command ------------------------------------------------------------------------------------------------


def metric_key(metric: str | None) -> str:
    """The stored metric `--metric` names: pass (default), score, or a named score (with or without its prefix)."""
    if metric in (None, PASS):
        return PASS
    if metric == AGGREGATE or metric.startswith(NAMED_PREFIX):
        return metric
    return NAMED_PREFIX + metric


def run_drift(
    results: str | Path,
    *,
    db: str | Path = DEFAULT_DB,
    metric: str | None = None,
    baseline: str | None = None,
    abs_points: float | None = None,
    fail_on_drift: bool = False,
    fmt: Literal["table", "json"] = "table",
) -> int:
    """Validate, append (once per evalId), analyze, print. 1 on drift with fail_on_drift, else 0.

    `metric`: None or "pass" (the default: the outcome), "score" (the row's aggregate), else a named score
    (`tests`, `judge.clarity`; `namedScores.NAME` too). `abs_points` None: 0.3 for a score, none for "pass"."""
    batch = batch_from_results(results)  # every results-file problem surfaces before the db is touched
    key = metric_key(metric)
    if not any(row.metric == key for row in batch.rows):
        names = sorted({row.metric[len(NAMED_PREFIX) :] for row in batch.rows if row.metric.startswith(NAMED_PREFIX)})
        msg = (
            f"{results}: no row has {key}; named scores there: {', '.join(names) or 'none'}; pass one of them to "
            "--metric, or `--metric pass` (the default: each trial's pass/fail) or `--metric score` (the row's score)"
        )
        raise ResultsError(msg)
    if abs_points is None:
        abs_points = None if key == PASS else DEFAULT_ABS_POINTS
    conn = open_history(db)
    try:  # one transaction appends; the reads after it see the eval whether it was just appended or not
        if baseline is not None and baseline != batch.eval_id and appended_at(conn, baseline) is None:
            known = eval_order(conn)
            shown = ", ".join(known[-5:]) or "none"
            raise PasshatError(f"--baseline {baseline}: no such eval in {db} (latest: {shown}); pass one of them")
        appended = append_batch(conn, db, batch)
        pairs = sorted({(row.task, row.provider) for row in batch.rows})
        rows = load_rows(conn, key, pairs)
        when = appended_at(conn, batch.eval_id)
    except sqlite3.Error as error:
        raise PasshatError(f"{db}: reading the history failed ({error}); move it aside or pass another --db") from None
    finally:
        conn.close()
    abs_limit = None if abs_points is None else abs_threshold(abs_points)
    series = analyze(rows, batch.eval_id, abs_limit, baseline)
    explains = [explain(r.best, r.worst) for r in series if r.best is not None and r.worst is not None]
    trials = len({row.row_index for row in batch.rows})
    said = (
        f"appended eval {batch.eval_id} ({trials} trials) to {db}"
        if appended
        else f"eval {batch.eval_id} is already in {db} (appended {when}); not appended again"
    )
    if key == PASS:
        rule = (
            f"metric pass (each trial passed 1 / failed 0: the mean is the pass rate); drift = pass rate below the "
            f"baseline's by more than {Z:g}xSE of the difference"
        )
    else:
        rule = f"metric {key}; drift = batch mean below the baseline mean by more than {Z:g}xSE of the batch mean"
    if abs_limit is not None and abs_points is not None:
        rule += f", or by more than {abs_limit:.4f} ({abs_points:g} points on a 1-5 scale / 4)"
    drifted = [r.name for r in series if r.status == "drift"]
    if fmt == "json":
        print(
            json.dumps(
                {
                    "eval_id": batch.eval_id,
                    "db": str(db),
                    "appended": appended,
                    "metric": key,
                    "z": Z,
                    "abs_points": abs_points,
                    "abs_threshold": abs_limit,
                    "baseline": baseline,
                    "series": [_series_json(r) for r in series],
                    "drifted": drifted,
                    "explain": explains,
                },
                indent=2,
            )
        )
    else:
        print(format_table(series, [said[0].upper() + said[1:] + ".", rule + "."], explains))
    if drifted and fail_on_drift:
        print(f"passhat: drift in {', '.join(drifted)}; exit 1 (--fail-on-drift)", file=sys.stderr)
        return 1
    return 0
