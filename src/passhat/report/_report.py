"""`passhat report`: pass@k, pass^k, intervals, flakiness and gates per task and provider.

The arithmetic is in `_stats`, `_suite_stats` and `_summary`; `report_data()` gathers every figure
into one plain dict (what `--format json` prints and what an HTML page would render); the other
formats only lay it out; `run_report()` loads, calls, prints.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, TextIO

from passhat._errors import PasshatError
from passhat.report import _formats as fmt
from passhat.report._formats import FORMATS, Format
from passhat.report._gates import GateResult, describe, evaluate, gate_ks, parse_gate
from passhat.report._parallel import fold_file
from passhat.report._summary import ProviderSuite, TaskSummary, finish, provider_suites
from passhat.results import _progress
from passhat.stats._suite import LEVEL, RESAMPLES, SEED

ReportFormat = Literal[Format, "html"]
REPORT_FORMATS: tuple[ReportFormat, ...] = (*FORMATS, "html")


def _task_data(s: TaskSummary, ks: Sequence[int]) -> dict[str, Any]:
    return {
        "task": s.task,
        "provider": s.provider,
        "n": s.n,
        "passes": s.passes,
        "errors": s.errors,
        "unscored": s.unscored,
        "duplicate_repeats": list(s.duplicate_repeats),
        "missing_repeats": list(s.missing_repeats),
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
    }


def _suite_data(suite: ProviderSuite) -> dict[str, Any]:
    return {
        "provider": suite.provider,
        "tasks": len(suite.tasks),
        "all_pass": [s.task for s in suite.all_pass],
        "flaky": [s.task for s in suite.flaky],
        "never_pass": [s.task for s in suite.never_pass],
        "unscored": [s.task for s in suite.unscored],
        "errors": suite.errors,
        "icc1": suite.icc1,
        "mean_pass_hat_k": {
            k: {"mean": f.mean, "ci_95": list(f.interval) if f.interval else None, "tasks": f.tasks,
                "undefined": list(f.undefined)}
            for k, f in suite.pass_hat_k.items()
        },
        "tiers": [
            {"tier": t.tier, "tasks": t.tasks, "all_pass": t.all_pass, "flaky": t.flaky,
             "mean_pass_hat_k": t.mean_pass_hat_k}
            for t in suite.tiers
        ],
    }  # fmt: skip


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def report_data(
    summaries: Sequence[TaskSummary],
    suites: Sequence[ProviderSuite],
    ks: Sequence[int],
    *,
    unattended_runs: int | None = None,
    ci_width: float = 0.2,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    gates: Sequence[GateResult] = (),
) -> dict[str, Any]:
    """Every figure of the report as plain JSON-ready data."""
    return {
        "ks": list(ks),
        "unattended_runs": unattended_runs,
        "ci_width": ci_width,
        "bootstrap": {"resamples": resamples, "seed": seed, "level": LEVEL,
                      "method": "cluster: tasks, then trials within each task; percentile interval"},
        "tasks": [_task_data(s, ks) for s in summaries],
        "suite": {
            "tasks": len(summaries),
            "flaky": [s.task for s in summaries if s.flaky],
            "errors": sum(s.errors for s in summaries),
            "mean_pass_hat_k": {str(k): _mean([s.pass_hat_k[str(k)] for s in summaries]) for k in ks},
            "undefined_k": {str(k): [s.task for s in summaries if s.n < k] for k in ks},
            "providers": [_suite_data(suite) for suite in suites],
        },
        "summary": summary_lines(summaries, suites, ks, unattended_runs=unattended_runs, ci_width=ci_width),
        "gates": [{"gate": r.gate.text, "passed": r.passed, "failures": list(r.failures)} for r in gates],
    }  # fmt: skip


def _label(summary: TaskSummary, several: bool) -> str:
    return f"{summary.task} [{summary.provider}]" if several else summary.task


def _names(tasks: Sequence[TaskSummary]) -> str:
    return ", ".join(f"{s.task} ({s.passes}/{s.n})" for s in tasks)


def _verb(count: int, singular: str, plural: str) -> str:
    return singular if count == 1 else plural


def _headline(suite: ProviderSuite) -> str:
    total, perfect = len(suite.tasks), suite.all_pass
    sizes = {s.n for s in perfect}
    if perfect and len(sizes) == 1:
        n = sizes.pop()
        line = f"{len(perfect)} of {total} tasks {_verb(len(perfect), 'is', 'are')} {n}/{n}"
    else:
        line = f"{len(perfect)} of {total} tasks {_verb(len(perfect), 'passes', 'pass')} every trial"
    flaky = suite.flaky
    line += f"; {len(flaky)} {_verb(len(flaky), 'is', 'are')} flaky: {_names(flaky)}" if flaky else "; none is flaky"
    if suite.never_pass:
        never = suite.never_pass
        line += f"; {len(never)} never {_verb(len(never), 'passes', 'pass')}: {_names(never)}"
    if suite.unscored:
        line += f"; {len(suite.unscored)} had no scored trial: " + ", ".join(s.task for s in suite.unscored)
    errors = suite.errors
    return line + (f". {fmt.plural(errors, 'infra error')} excluded from n." if errors else ". No infra errors.")


def _icc_line(icc: float | None) -> str | None:
    if icc is None:
        return None
    if icc <= 0:
        return f"ICC(1) = {icc:.2f}: tasks differ no more than trial-to-trial luck alone would make them."
    share = min(icc, 1.0)
    return (
        f"ICC(1) = {icc:.2f}: about {share:.0%} of the pass/fail variance is which task it is, "
        f"{1 - share:.0%} is trial-to-trial luck."
    )


def _suite_lines(suite: ProviderSuite, ks: Sequence[int], unattended_runs: int | None) -> list[str]:
    lines = [_headline(suite)]
    means = []
    for k in ks:
        figure = suite.pass_hat_k[str(k)]
        if figure.mean is not None:
            ci = fmt.interval(figure.interval)
            if figure.tasks < len(suite.tasks):
                ci += f", {figure.tasks} of {len(suite.tasks)} tasks"
            means.append(f"pass^{k} {figure.mean:.3f} ({ci})")
    if means:
        lines.append("Mean over tasks (95% cluster-bootstrap CI): " + ", ".join(means) + ".")
    if (icc := _icc_line(suite.icc1)) is not None:
        lines.append(icc)
    if suite.tiers:
        tiers = [
            f"{t.tier}: {fmt.plural(t.tasks, 'task')}, {t.all_pass} all-pass, {t.flaky} flaky, "
            + ", ".join(f"pass^{k} {fmt.fraction(t.mean_pass_hat_k[str(k)])}" for k in ks)
            for t in suite.tiers
        ]
        lines.append("By tier: " + "; ".join(tiers) + ".")
    if unattended_runs is not None:
        u = unattended_runs
        figure = suite.pass_hat_k[str(u)]
        defined = [s for s in suite.tasks if s.n >= u]
        if figure.mean is None:
            lines.append(f"Unattended, {u} runs between looks: pass^{u} is undefined for every task (n<{u}).")
        else:
            expected = sum(1 - (s.pass_hat_k[str(u)] or 0.0) for s in defined)
            lines.append(
                f"Unattended, {u} runs between looks: mean pass^{u} {figure.mean:.3f} "
                f"({fmt.interval(figure.interval)}); expect {expected:.1f} of {fmt.plural(len(defined), 'task')} "
                f"to fail at least once in {u} runs."
            )
    return lines


def _coverage_lines(summaries: Sequence[TaskSummary], several: bool) -> list[str]:
    """Every (task, provider, repeat) should appear exactly once; say so when not."""
    lines = []
    for s in summaries:
        if s.duplicate_repeats:
            lines.append(
                f"WARNING: {_label(s, several)} has repeat(s) {fmt.some([str(r) for r in s.duplicate_repeats])} "
                "more than once (a merged or doubly resumed eval?); its figures count them twice."
            )
        if s.missing_repeats:
            lines.append(
                f"WARNING: {_label(s, several)} is missing repeat(s) {fmt.some([str(r) for r in s.missing_repeats])}: "
                "if you ran `promptfoo eval --retry-errors` without `--repeat N`, it dropped errored trials; "
                "rerun with --retry-errors --repeat N."
            )
        if s.unscored:
            lines.append(
                f"{_label(s, several)}: {fmt.plural(s.unscored, 'trial')} unscored (the judge's reply could not be "
                "read after its retries): outside n, neither passed nor failed."
            )
    return lines


def summary_lines(
    summaries: Sequence[TaskSummary],
    suites: Sequence[ProviderSuite],
    ks: Sequence[int],
    *,
    unattended_runs: int | None = None,
    ci_width: float = 0.2,
) -> list[str]:
    """The report in words: per provider, then runs needed, then undefined pass^k."""
    several = len(suites) > 1
    lines = []
    for suite in suites:
        block = _suite_lines(suite, ks, unattended_runs)
        lines += [f"{suite.provider}: {line}" for line in block] if several else block
    rerun = [(s, s.runs_needed) for s in summaries if s.runs_needed]
    if rerun:
        items = ", ".join(
            f"{_label(s, several)} {s.passes}/{s.n} needs {more} more (n={s.n + more})" for s, more in rerun
        )
        lines.append(
            f"Rerun before you conclude: for a 95% interval at most {ci_width:g} wide, "
            f"if the observed rate holds: {items}."
        )
    noun = "task" if not several else "task/provider pair"
    lines += _coverage_lines(summaries, several)
    for k in ks:
        short = [s for s in summaries if s.n < k]
        if short:
            names = ", ".join(f"{_label(s, several)} (n={s.n})" for s in short)
            lines.append(
                f"Note: pass^{k} is undefined (n<k) for {fmt.plural(len(short), noun)}: {names}; "
                f"run at least {k} trials per task (promptfoo --repeat {k}) or lower --k."
            )
    return lines


def _columns(
    summaries: Sequence[TaskSummary], ks: Sequence[int], highlight: int | None, mark: str
) -> tuple[list[str], list[list[str]], set[int]]:
    """Head, rows and left-aligned column indexes of the per-task table."""
    tiers = any(s.tier for s in summaries)
    hat_ks = [k for k in ks if k != 1]  # pass^1 == pass@1 == c/n: shown once

    def hat_head(k: int) -> str:
        return mark.format(f"pass^{k}") if k == highlight else f"pass^{k}"

    head = ["task", "provider", *(["tier"] if tiers else []), "n", "pass", "err", "unsc", "pass@1", "95% CI"]
    head += [f"pass@{k}" for k in ks if k != 1] + [hat_head(k) for k in hat_ks]
    head += ["flaky", "clean", "mean s", "p90 s", "turns", "mean $", "$/success", "+runs"]
    rows = [
        [
            s.task, s.provider, *([s.tier or "-"] if tiers else []), str(s.n), str(s.passes), str(s.errors),
            str(s.unscored), fmt.fraction(s.pass_rate), fmt.interval(s.wilson_95),
            *(fmt.fraction(s.pass_at_k[str(k)]) for k in ks if k != 1),
            *(fmt.fraction(s.pass_hat_k[str(k)]) for k in hat_ks),
            "flaky" if s.flaky else "", fmt.fraction(s.clean_exit_rate, "-"),
            fmt.seconds(s.mean_duration_ms), fmt.seconds(s.p90_duration_ms),
            "-" if s.mean_turns is None else f"{s.mean_turns:.1f}",
            fmt.dollars(s.mean_cost_usd), fmt.dollars(s.cost_per_success_usd),
            "" if s.runs_needed is None else str(s.runs_needed),
        ]
        for s in summaries
    ]  # fmt: skip
    left = {0, 1, 2 if tiers else 1, head.index("flaky")}
    return head, rows, left


def _csv(data: dict[str, Any]) -> str:
    ks = data["ks"]
    head = ["task", "provider", "tier", "n", "passes", "errors", "pass_rate", "wilson_low", "wilson_high"]
    head += [f"pass_at_{k}" for k in ks] + [f"pass_hat_{k}" for k in ks]
    head += ["flaky", "clean_exit_rate", "mean_duration_ms", "p90_duration_ms", "mean_turns", "mean_cost_usd",
             "cost_per_success_usd", "runs_needed"]  # fmt: skip
    rows = [
        [
            t["task"], t["provider"], t["tier"], t["n"], t["passes"], t["errors"], t["pass_rate"],
            *(t["wilson_95"] or [None, None]),
            *(t["pass_at_k"][str(k)] for k in ks), *(t["pass_hat_k"][str(k)] for k in ks),
            t["flaky"], t["clean_exit_rate"], t["mean_duration_ms"], t["p90_duration_ms"], t["mean_turns"],
            t["mean_cost_usd"], t["cost_per_success_usd"], t["runs_needed"],
        ]
        for t in data["tasks"]
    ]  # fmt: skip
    return fmt.csv_text(head, rows)


def render(
    form: ReportFormat, data: dict[str, Any], summaries: Sequence[TaskSummary], highlight: int | None = None
) -> str:
    """The report in one of REPORT_FORMATS."""
    if form == "json":
        return fmt.json_text(data)
    if form == "html":
        from passhat.report._html import page

        return page(data, highlight)
    if form == "csv":
        return _csv(data)
    ks = data["ks"]
    footnote = []
    if highlight is not None:
        u = highlight
        footnote = [f"pass^{u} (marked): the chance that all {u} unattended runs between two looks pass."]
    if form == "md":
        head, rows, left = _columns(summaries, ks, highlight, "**{}**")
        return "\n".join([fmt.markdown(head, rows, left), "", *(f"- {line}" for line in data["summary"] + footnote)])
    head, rows, left = _columns(summaries, ks, highlight, "{}*")
    return "\n".join([fmt.aligned(head, rows, left), "", *data["summary"], *(f"* {line}" for line in footnote)])


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
    resamples: int = RESAMPLES,
    err: TextIO | None = None,
    history_db: str | Path | None = None,
) -> int:
    """Load, summarize, print; gate outcomes go to `err` (stderr). 0, or 1 when a gate fails.

    A big file read with `err` on a terminal shows a progress line there (see `_progress`)."""
    parsed = [parse_gate(text) for text in gates]  # bad gate text fails before the file is read
    if history_db is not None:  # before the file is read
        from passhat.report._html import check_history

        if form not in ("html", "json"):
            msg = f"--db {history_db}: the score history is shown by --format html (a plot) or json; pass one of them"
            raise PasshatError(msg)
        check_history(history_db)
    extra = gate_ks(parsed) | ({unattended_runs} if unattended_runs else set())
    ks = tuple(sorted(set(ks) | extra))
    err = sys.stderr if err is None else err
    progress = _progress.for_file(path, err)
    try:
        groups = fold_file(path, progress)
    finally:
        if progress is not None:
            progress.close()
    summaries = finish(groups, ks, ci_width)
    suites = provider_suites(summaries, ks, resamples=resamples, seed=seed)
    results = [evaluate(gate, suites) for gate in parsed]
    data = report_data(
        summaries, suites, ks, unattended_runs=unattended_runs, ci_width=ci_width, resamples=resamples,
        seed=seed, gates=results,
    )  # fmt: skip
    if history_db is not None:
        from passhat.report._html import history_data

        data["history"] = history_data(history_db, [(s.task, s.provider) for s in summaries])
    judged = any(s.judged for s in summaries)  # the judge's table costs a second pass: only when judged
    if judged and form == "json":
        from passhat.report._judge_summary import judge_summary

        data["judge"] = judge_summary(path)
    print(render(form, data, summaries, unattended_runs), file=out)
    if judged and form in ("table", "md"):
        from passhat.report._judge_summary import judge_summary_lines

        print("\n".join(["", *judge_summary_lines(path)]), file=out)
    for result in results:
        print(describe(result), file=err)
    return 1 if any(not r.passed for r in results) else 0
