"""`passhat report RESULTS`: pass@k / pass^k per task and provider (logic in passhat.report).

An eval in which no trial passed or failed (every one an infra error, or a judge that could not be read) measured
nothing: the report says so on stderr and exits 1, gates or not — `promptfoo eval`'s own exit code is promptfoo's
(passhat's afterAll hook cannot set it), so CI gates on this command.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from passhat.cli import k_list, open_fraction, whole_number
from passhat.report._report import REPORT_FORMATS, measured_nothing, run_report, write_atomic
from passhat.report._words import SAFE_AT
from passhat.stats._bootstrap import MAX_RESAMPLES, MIN_RESAMPLES
from passhat.stats._suite import SEED

HELP = "pass@k / pass^k, intervals, flakiness and gates per task and provider from a promptfoo -o results file"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="promptfoo eval -o results.json (or results.jsonl)")
    parser.add_argument("--k", type=k_list, default=(1, 3, 5, 10), help="comma-separated ks (default 1,3,5,10)")
    parser.add_argument("--format", choices=REPORT_FORMATS, default="table")
    parser.add_argument(
        "-o", "--output", metavar="FILE",
        help="write the report to FILE (replaced whole, never half-written) instead of stdout; "
        "e.g. --format html -o report.html",
    )  # fmt: skip
    parser.add_argument(
        "--db", metavar="HISTORY", help="with --format html or json: add the mean score per eval from this "
        "`passhat drift` history (e.g. .passhat/history.db), a drift plot in html",
    )  # fmt: skip
    parser.add_argument(
        "--unattended-runs", type=whole_number("--unattended-runs", 1, "expected a positive whole number, e.g. 7"), metavar="N",
        help="runs between two looks (7 = daily runs, looked at weekly): adds pass^N and highlights it",
    )  # fmt: skip
    parser.add_argument(
        "--ci-width", type=open_fraction("--ci-width", "0.2"), default=0.2, metavar="W",
        help="target width of the 95%% interval for 'runs needed' on flaky tasks (default 0.2)",
    )  # fmt: skip
    parser.add_argument(
        "--gate", action="append", default=[], metavar="'METRIC OP NUMBER'",
        help="exit 1 unless it holds, e.g. 'pass^7>=0.9', 'mean_pass^3>=0.8', 'flaky<=2', 'errors==0', "
        "'pass_rate>=0.5', 'clean_exit>=0.95' (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--safe-at", type=open_fraction("--safe-at", "0.9"), default=SAFE_AT, metavar="P",
        help="the verdict: safe for k unattended runs when the whole 95%% interval of pass^k is at or above P "
        f"(default {SAFE_AT:g}); k is --unattended-runs, else the largest --k",
    )  # fmt: skip
    parser.add_argument(
        "--sequential", action="store_true",
        help="the verdict's interval stays valid however the trials were stopped (the anytime-valid mixture; the "
        "default for `passhat eval --until-decided` files): use it when you looked at reports and ran more trials",
    )  # fmt: skip
    parser.add_argument(
        "--wide", action="store_true", help="--format table: every column (default: what fits 120 columns)"
    )
    parser.add_argument("--seed", type=int, default=SEED, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--resamples",
        type=whole_number("--resamples", 1, "expected a positive whole number, e.g. 20000"),
        default=None,
        help="Monte Carlo bootstrap resamples, exactly (default: the exact bootstrap when the suite is small, else "
        f"from {MIN_RESAMPLES} doubling up to {MAX_RESAMPLES} until each bound's Monte Carlo error is small)",
    )


def run(args: argparse.Namespace) -> int:
    buffer = io.StringIO()
    out = sys.stdout if args.output is None else buffer
    code = run_report(
        args.results, ks=args.k, form=args.format, out=out, unattended_runs=args.unattended_runs,
        ci_width=args.ci_width, gates=args.gate, seed=args.seed, resamples=args.resamples, history_db=args.db,
        safe_at=args.safe_at, wide=args.wide, sequential=args.sequential,
        page=None if args.output is None else Path(args.output),
    )  # fmt: skip
    if args.output is not None:
        write_atomic(args.output, buffer.getvalue())  # also when a gate failed: the report says which
    if (nothing := measured_nothing(args.results)) is not None:
        print(f"passhat: {nothing}", file=sys.stderr)
        return max(code, 1)
    return code
