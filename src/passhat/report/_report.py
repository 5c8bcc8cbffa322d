"""`passhat report`: the verdict per task, pass@k, pass^k, intervals, flakiness and gates per task and provider.

The arithmetic is in `stats` and `_summary`, the words in `_words`; `report_data()` gathers every figure into
one plain dict (what `--format json` prints and what the other formats lay out: `_tables` for table, md and
csv, `_html` for html); `run_report()` loads, calls, prints.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal, TextIO

from passhat.common._errors import PasshatError
from passhat.report import _formats as fmt
from passhat.report import _tables
from passhat.report._formats import FORMATS, Format
from passhat.report._gates import GateResult, describe, evaluate, gate_ks, parse_gate
from passhat.report._summary import ProviderSuite, TaskSummary, finish, provider_suites
from passhat.report._words import (
    SAFE_AT,
    gaming_attempts,
    interval_note,
    reach_line,
    summary_lines,
    verdict_of,
    verdict_rule,
)
from passhat.report.cheats import cheat_data, split_impossible
from passhat.report.totals import fold_file
from passhat.results import _progress
from passhat.results._causes import with_repeat
from passhat.results._provenance import provenance
from passhat.stats._bootstrap import MAX_RESAMPLES, MIN_RESAMPLES, TARGET_MC_ERROR
from passhat.stats._figures import TaskCounts, reach, suite_figures
from passhat.stats._intervals import Method
from passhat.stats._suite import LEVEL, SEED, mean_pass_hat_k

ReportFormat = Literal[Format, "html"]
REPORT_FORMATS: tuple[ReportFormat, ...] = (*FORMATS, "html")


def _task_data(
    s: TaskSummary, ks: Sequence[int], verdict_k: int, safe_at: float, method: Method, repeat: int | None = None
) -> dict[str, Any]:
    return {
        "task": s.task,
        "provider": s.provider,
        "n": s.n,
        "passes": s.passes,
        "errors": s.errors,
        "unscored": s.unscored,
        "duplicate_repeats": list(s.duplicate_repeats),
        "missing_repeats": list(s.missing_repeats),
        "interrupted_repeats": list(s.interrupted_repeats),
        "pass_at_k": s.pass_at_k,
        "pass_hat_k": s.pass_hat_k,
        "flaky": s.flaky,
        "mean_cost_usd": s.mean_cost_usd,
        "cost_per_success_usd": s.cost_per_success_usd,
        "mean_turns": s.mean_turns,
        "tier": s.tier,
        "pass_rate": s.pass_rate,
        "wilson_95": list(s.wilson_95) if s.wilson_95 else None,
        "clean_exit_rate": s.clean_exit_rate,
        "health_reported": s.health_reported,
        "mean_duration_ms": s.mean_duration_ms,
        "p90_duration_ms": s.p90_duration_ms,
        "runs_needed": s.runs_needed,
        "undefined_k": [k for k in ks if s.n < k],
        "cost_known": s.cost_known,
        "scripted_model": bool(s.scripted),
        "models": list(s.models),
        "infra_error_reasons": [
            {"reason": with_repeat(reason, repeat), "count": count} for reason, count in s.infra_error_reasons
        ],
        "named_scores": dict(s.named_scores),  # mean per grader (and judge criterion) over the scored trials
        "gamed": s.gamed,  # trials caught gaming the tests, passed or not (a gamed task is never safe)
        "scanned": s.scanned,  # trials whose graders looked for gaming
        "verdict": verdict_of(s, verdict_k, safe_at, method),
    }


def _suite_data(
    suite: ProviderSuite, twins: Sequence[TaskSummary], k: int, safe_at: float, method: Method
) -> dict[str, Any]:
    attempts, looked = gaming_attempts(suite, twins)
    mine = [s for s in twins if s.provider == suite.provider]
    counts = [TaskCounts(s.n, s.passes, s.gamed, s.impossible) for s in (*suite.tasks, *mine)]
    return {
        "provider": suite.provider,
        "tasks": len(suite.tasks),
        "all_pass": [s.task for s in suite.all_pass],
        "flaky": [s.task for s in suite.flaky],
        "never_pass": [s.task for s in suite.never_pass],
        "unscored": [s.task for s in suite.unscored],
        "errors": suite.errors,
        "gamed": attempts,  # every gaming attempt: caught on a task, or a cheat (pass or caught) on a twin
        "scanned": looked,
        # the figures every surface prints of this suite (the viewer's derived metrics too): stats._figures
        "figures": asdict(suite_figures(counts, k, safe_at, method)),
        "icc1": suite.icc1,
        "mean_pass_hat_k": {
            k: {"mean": f.mean, "ci_95": list(f.interval) if f.interval else None,
                "ci_note": interval_note(f.no_interval, f.tasks), "tasks": f.tasks,
                "undefined": list(f.undefined), "ci_method": f.method, "resamples": f.resamples,
                "mc_error": f.mc_error}
            for k, f in suite.pass_hat_k.items()
        },
        "tiers": [
            {"tier": t.tier, "tasks": t.tasks, "all_pass": t.all_pass, "flaky": t.flaky,
             "mean_pass_hat_k": t.mean_pass_hat_k}
            for t in suite.tiers
        ],
    }  # fmt: skip


def _first_repeat(summaries: Sequence[TaskSummary]) -> dict[str, int]:
    """`first_repeat` for the provenance when the rows start past repeat 0 (a round's offset), else nothing."""
    first = min((s.first_repeat for s in summaries), default=0)
    return {"first_repeat": first} if first else {}


def report_data(
    summaries: Sequence[TaskSummary],
    suites: Sequence[ProviderSuite],
    ks: Sequence[int],
    *,
    unattended_runs: int | None = None,
    ci_width: float = 0.2,
    resamples: int | None = None,
    seed: int = SEED,
    gates: Sequence[GateResult] = (),
    verdict_k: int | None = None,
    safe_at: float = SAFE_AT,
    origin: dict[str, Any] | None = None,
    impossible: Sequence[TaskSummary] = (),
    interval: Method = "clopper-pearson",
) -> dict[str, Any]:
    """Every figure of the report as plain JSON-ready data. `verdict_k` defaults to --unattended-runs, else the
    largest k; `origin` is the provenance (`results._provenance.provenance`); `interval` the verdict's interval
    (`verdict_interval`). `summaries` and `suites` are the tasks that can be passed; `impossible` the impossible
    twins (report.cheats), shown as "cheats" only."""
    verdict_k = verdict_k or unattended_runs or max(ks)
    counts = [(s.n, s.passes) for s in summaries]
    can_decide = reach([s.n for s in summaries], verdict_k, safe_at, interval)
    if origin is None:
        seen = [s.repeats_seen for s in summaries if s.repeats_seen is not None]
        models = sorted({m for s in summaries for m in s.models})
        ran = {pair for s in summaries for pair in s.ran}
        origin = provenance({}, "-", models, max(seen) if seen else None, any(s.scripted for s in summaries), ran)
        origin |= _first_repeat(summaries)
    return {
        "provenance": origin,
        "ks": list(ks),
        "unattended_runs": unattended_runs,
        "ci_width": ci_width,
        "verdict": {"k": verdict_k, "threshold": safe_at, "interval": interval,
                    "rule": verdict_rule(verdict_k, safe_at, interval), "reach": can_decide,
                    "reach_line": reach_line(can_decide, verdict_k, safe_at)},
        "bootstrap": {"resamples": resamples, "seed": seed, "level": LEVEL,
                      "method": "cluster: tasks, then trials within each task; percentile interval; the exact "
                                "bootstrap law when small, else Monte Carlo",
                      "adaptive": {"from": MIN_RESAMPLES, "up_to": MAX_RESAMPLES, "target_mc_error": TARGET_MC_ERROR}
                      if resamples is None else None},
        "tasks": [_task_data(s, ks, verdict_k, safe_at, interval, origin.get("repeat") or origin.get("repeats_seen"))
                  for s in summaries],
        "suite": {
            "tasks": len(summaries),
            "flaky": [s.task for s in summaries if s.flaky],
            "errors": sum(s.errors for s in summaries),
            "gamed": sum(s.gamed for s in summaries) + sum(s.cheats for s in impossible),  # twins' attempts too
            "scanned": sum(s.scanned for s in summaries) + sum(s.n for s in impossible),
            "mean_pass_hat_k": {str(k): mean_pass_hat_k(counts, k) for k in ks},
            "undefined_k": {str(k): [s.task for s in summaries if s.n < k] for k in ks},
            "providers": [_suite_data(suite, impossible, verdict_k, safe_at, interval) for suite in suites],
        },
        "summary": summary_lines(summaries, suites, ks, unattended_runs=unattended_runs, ci_width=ci_width,
                                 repeat=origin.get("repeat") or origin.get("repeats_seen"), impossible=impossible),
        "gates": [{"gate": r.gate.text, "passed": r.passed, "failures": list(r.failures)} for r in gates],
        "cheats": cheat_data(impossible),
    }  # fmt: skip


def verdict_interval(sequential: bool, origin: dict[str, Any]) -> Method:
    """The one choice of the verdict's interval: anytime-valid when the trials were stopped by looking (rows from
    `passhat eval --until-decided`, or `--sequential`), else exact at a fixed n."""
    return "mixture" if sequential or origin.get("rounds") else "clopper-pearson"


def render(form: ReportFormat, data: dict[str, Any], highlight: int | None = None, wide: bool = False) -> str:
    """The report in one of REPORT_FORMATS."""
    if form == "json":
        return fmt.json_text(data)
    if form == "html":
        from passhat.report._html import page

        return page(data, highlight)
    if form == "csv":
        return _tables.csv(data)
    if form == "md":
        return _tables.markdown(data, highlight)
    return _tables.text(data, highlight, wide)


def write_atomic(path: str | Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`: readers see all or nothing."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for a new file
        with open(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        msg = f"-o {path}: cannot write the report ({error.strerror}); check that its folder exists and is writable"
        raise PasshatError(msg) from None


def run_report(
    path: str | Path,
    ks: Sequence[int],
    form: ReportFormat,
    out: TextIO,
    *,
    unattended_runs: int | None = None,
    ci_width: float = 0.2,
    gates: Sequence[str] = (),
    seed: int = SEED,
    resamples: int | None = None,
    err: TextIO | None = None,
    history_db: str | Path | None = None,
    safe_at: float = SAFE_AT,
    wide: bool = False,
    source: str | None = None,
    sequential: bool = False,
    page: Path | None = None,
) -> int:
    """Load, summarize, print; gate outcomes go to `err` (stderr) too. 0, or 1 when a gate fails.

    A big file read with `err` on a terminal shows a progress line there (see `_progress`). `source` names where
    the rows came from when that is not `path` (promptfoo's own rows, handed to passhat's extension); `page`, where
    an html report goes (its trials' links are relative to it; None: absolute file:// links)."""
    parsed = [parse_gate(text) for text in gates]  # bad gate text fails before the file is read
    if history_db is not None:  # before the file is read
        from passhat.report._html import check_history

        if form not in ("html", "json"):
            msg = f"--db {history_db}: the score history is shown by --format html (a plot) or json; pass one of them"
            raise PasshatError(msg)
        check_history(history_db)
    verdict_k = unattended_runs or max(ks)  # before the gates add theirs
    extra = gate_ks(parsed) | ({unattended_runs} if unattended_runs else set())
    ks = tuple(sorted(set(ks) | extra))
    err = sys.stderr if err is None else err
    progress = _progress.for_file(path, err)
    wrapper: dict[str, Any] = {}
    try:
        groups = fold_file(path, progress, wrapper)
    finally:
        if progress is not None:
            progress.close()
    summaries, impossible = split_impossible(finish(groups, ks, ci_width))  # cheats: never in pass^k
    suites = provider_suites(summaries, ks, resamples=resamples, seed=seed)
    results = [evaluate(gate, suites) for gate in parsed]
    seen = [s.repeats_seen for s in summaries if s.repeats_seen is not None]
    models = (m for s in summaries for m in s.models)
    scripted = any(s.scripted for s in summaries)
    ran = {pair for s in summaries for pair in s.ran}
    origin = provenance(wrapper, source or str(path), models, max(seen) if seen else None, scripted, ran)
    origin |= _first_repeat([*summaries, *impossible])
    data = report_data(
        summaries, suites, ks, unattended_runs=unattended_runs, ci_width=ci_width, resamples=resamples,
        seed=seed, gates=results, verdict_k=verdict_k, safe_at=safe_at, origin=origin, impossible=impossible,
        interval=verdict_interval(sequential, origin),
    )  # fmt: skip
    if history_db is not None:
        from passhat.report._html import history_data

        data["history"] = history_data(history_db, [(s.task, s.provider) for s in summaries])
    if form == "html":  # the trials' rows and links: a second pass, for the page only
        from passhat.report._html import trial_links

        data["trials"] = trial_links(path, page)
    judged = any(s.judged for s in summaries)  # the judge's table costs a second pass: only when judged
    if judged and form in ("json", "table", "md", "html"):
        from passhat.report._judge_summary import judge_summary

        data["judge"] = judge_summary(path)
    print(render(form, data, unattended_runs, wide), file=out)
    for result in results:
        print(describe(result), file=err)
    return 1 if any(not r.passed for r in results) else 0


def measured_nothing(results: str | Path) -> str | None:
    """Why the eval in `results` measured nothing (no trial passed or failed), or None when some trial did."""
    from collections import Counter

    from passhat.results import iter_trials

    reasons: Counter[str] = Counter()
    total = 0
    for trial in iter_trials(results):
        total += 1
        if not (trial.infra_error or trial.unscored):
            return None
        reasons[(trial.error or "a judge that could not be read").splitlines()[0][:200]] += 1
    if not total:
        return None
    (reason, count), *_ = reasons.most_common(1)
    return (f"measured nothing: none of the {total} trial(s) passed or failed, every one an infra error or unscored "
            f"({count} of them: {reason}); no figure here is a measurement; fix that, then run the eval again (exit 1)")  # fmt: skip
