"""`passhat report`: pass@k and pass^k per (task, provider) from a Promptfoo results file.

`summarize()` is the arithmetic (pure); `format_json()` and `format_table()` only format;
`run_report()` loads, calls, prints. n counts the trials that ended without an infra error,
c the passes among them; infra errors are counted apart and shown, never turned into failures.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any, Literal, TextIO

from passhat._results import Trial, load_trials
from passhat._stats import pass_at_k, pass_hat_k


@dataclass(frozen=True)
class TaskSummary:
    """The figures for one task run by one provider. Keys of the k dicts are str(k)."""

    task: str
    provider: str
    n: int
    passes: int
    errors: int
    pass_at_k: dict[str, float | None]
    pass_hat_k: dict[str, float | None]
    mean_cost_usd: float | None
    cost_per_success_usd: float | None
    mean_turns: float | None

    @property
    def flaky(self) -> bool:
        """Passed some trials and failed others: 0 < c < n."""
        return 0 < self.passes < self.n

    @property
    def pass_at_1(self) -> float | None:
        """c / n, None when n == 0."""
        return pass_at_k(self.n, self.passes, 1)


def _mean(values: Iterable[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return fmean(known) if known else None


def summarize_task(trials: Sequence[Trial], ks: Sequence[int]) -> TaskSummary:
    """One TaskSummary from the trials of a single (task, provider)."""
    scored = [trial for trial in trials if not trial.infra_error]
    n = len(scored)
    c = sum(trial.passed for trial in scored)
    scored_costs = [trial.cost_usd for trial in scored if trial.cost_usd is not None]
    return TaskSummary(
        task=trials[0].task,
        provider=trials[0].provider,
        n=n,
        passes=c,
        errors=len(trials) - n,
        pass_at_k={str(k): pass_at_k(n, c, k) for k in ks},
        pass_hat_k={str(k): pass_hat_k(n, c, k) for k in ks},
        # Over every trial that reports a cost, infra errors included: they were paid for too.
        mean_cost_usd=_mean(trial.cost_usd for trial in trials),
        cost_per_success_usd=sum(scored_costs) / c if c and scored_costs else None,
        # Over the scored trials only: an infra error's turns are not the agent's behaviour.
        mean_turns=_mean(trial.turns for trial in scored),
    )


def summarize(trials: Iterable[Trial], ks: Sequence[int]) -> list[TaskSummary]:
    """One TaskSummary per (task, provider), sorted by task then provider."""
    groups: dict[tuple[str, str], list[Trial]] = {}
    for trial in trials:
        groups.setdefault((trial.task, trial.provider), []).append(trial)
    return [summarize_task(groups[key], ks) for key in sorted(groups)]


def _label(summary: TaskSummary, summaries: Sequence[TaskSummary]) -> str:
    if len({s.provider for s in summaries}) > 1:
        return f"{summary.task} [{summary.provider}]"
    return summary.task


def suite_summary(summaries: Sequence[TaskSummary], ks: Sequence[int]) -> dict[str, Any]:
    """Suite-wide figures: flaky tasks, infra errors, mean pass^k over the tasks where it is defined."""
    return {
        "tasks": len(summaries),
        "flaky": [s.task for s in summaries if s.flaky],
        "errors": sum(s.errors for s in summaries),
        "mean_pass_hat_k": {str(k): _mean(s.pass_hat_k[str(k)] for s in summaries) for k in ks},
        "undefined_k": {str(k): [s.task for s in summaries if s.n < k] for k in ks},
    }


def format_json(summaries: Sequence[TaskSummary], ks: Sequence[int]) -> str:
    tasks = [
        {
            "task": s.task,
            "provider": s.provider,
            "n": s.n,
            "passes": s.passes,
            "errors": s.errors,
            "pass_at_k": s.pass_at_k,
            "pass_hat_k": s.pass_hat_k,
            "flaky": s.flaky,
            "mean_cost_usd": s.mean_cost_usd,
            "cost_per_success_usd": s.cost_per_success_usd,
            "mean_turns": s.mean_turns,
        }
        for s in summaries
    ]
    return json.dumps({"tasks": tasks, "ks": list(ks), "suite": suite_summary(summaries, ks)}, indent=2)


def _fraction(value: float | None) -> str:
    return "n<k" if value is None else f"{value:.3f}"


def _dollars(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _words(summaries: Sequence[TaskSummary], ks: Sequence[int]) -> list[str]:
    noun = "task" if len({s.provider for s in summaries}) == 1 else "task/provider pair"
    flaky = [f"{_label(s, summaries)} ({s.passes}/{s.n})" for s in summaries if s.flaky]
    line = f"{_plural(len(summaries), noun)}; "
    line += f"{len(flaky)} flaky: {', '.join(flaky)}." if flaky else "none flaky."
    errors = sum(s.errors for s in summaries)
    if errors:
        line += f" {_plural(errors, 'infra error')} excluded from n."
    else:
        line += " No infra errors."
    lines = [line]
    short = [(k, [s for s in summaries if s.n < k]) for k in ks]
    for k, tasks in short:
        if tasks:
            names = ", ".join(f"{_label(s, summaries)} (n={s.n})" for s in tasks)
            lines.append(
                f"Note: pass^{k} is undefined (n<k) for {_plural(len(tasks), noun)}: {names}; "
                f"run at least {k} trials per task (promptfoo --repeat {k}) or lower --k."
            )
    return lines


def format_table(summaries: Sequence[TaskSummary], ks: Sequence[int]) -> str:
    hat_ks = [k for k in ks if k != 1]  # pass^1 == pass@1 == c/n: shown once
    head = ["task", "provider", "n", "pass", "err", *(f"pass@{k}" for k in ks), *(f"pass^{k}" for k in hat_ks)]
    head += ["flaky", "mean $", "$/success", "turns"]
    rows = [
        [
            s.task,
            s.provider,
            str(s.n),
            str(s.passes),
            str(s.errors),
            *(_fraction(s.pass_at_k[str(k)]) for k in ks),
            *(_fraction(s.pass_hat_k[str(k)]) for k in hat_ks),
            "flaky" if s.flaky else "",
            _dollars(s.mean_cost_usd),
            _dollars(s.cost_per_success_usd),
            "-" if s.mean_turns is None else f"{s.mean_turns:.1f}",
        ]
        for s in summaries
    ]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    numeric = set(range(2, len(head))) - {len(head) - 4}  # right-align all but task, provider, flaky

    def line(cells: list[str]) -> str:
        padded = (
            cell.rjust(width) if i in numeric else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        )
        return "  ".join(padded).rstrip()

    table = [line(head), line(["-" * width for width in widths]), *(line(row) for row in rows)]
    return "\n".join([*table, "", *_words(summaries, ks)])


HELP = "pass@k / pass^k per task and provider from a promptfoo -o results file"


def _parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        msg = f"--k {text!r}: expected comma-separated positive integers, e.g. --k 1,3,5,10"
        raise argparse.ArgumentTypeError(msg) from None
    if not ks or any(k < 1 for k in ks):
        msg = f"--k {text!r}: every k must be a positive integer, e.g. --k 1,3,5,10"
        raise argparse.ArgumentTypeError(msg)
    return ks


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="promptfoo eval -o results.json")
    parser.add_argument("--k", type=_parse_ks, default=(1, 3, 5, 10), help="comma-separated ks (default 1,3,5,10)")
    parser.add_argument("--format", choices=("table", "json"), default="table")


def run(args: argparse.Namespace) -> int:
    return run_report(args.results, ks=args.k, fmt=args.format, out=sys.stdout)


def run_report(
    path: str | Path, ks: tuple[int, ...], fmt: Literal["table", "json"], out: TextIO
) -> int:
    """Load a results file, summarize it for each k, print it as a table or JSON. Returns 0."""
    ks = tuple(sorted(set(ks)))
    summaries = summarize(load_trials(path), ks)
    text = format_json(summaries, ks) if fmt == "json" else format_table(summaries, ks)
    print(text, file=out)
    return 0
