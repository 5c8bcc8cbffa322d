"""`passhat report RESULTS`: pass@k / pass^k per task and provider (logic in passhat.report).

An eval in which no trial passed or failed (every one an infra error, or a judge that could not be read) measured
nothing: the report says so on stderr and exits 1, gates or not — `promptfoo eval`'s own exit code is promptfoo's
(passhat's afterAll hook cannot set it), so CI gates on this command.

`passhat view [-- PROMPTFOO VIEW ARGS]` (this module too): `promptfoo view` (found as `npx promptfoo` finds it) with
each trial's transcript and diff a click away: the viewer's Metadata tab links `open_transcript`, `open_diff` (and
the tests grader's whole output) to a read-only server on 127.0.0.1 ($PASSHAT_VIEW_PORT, default 15501) run here
until promptfoo view exits; `--links-only` serves the links alone (logic in passhat.extension._links).
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
    if parser.prog.split()[-1] == "view":
        parser.add_argument("--links-only", action="store_true",
                            help="serve the trials' links alone (until Ctrl+C), beside a promptfoo view started otherwise")  # fmt: skip
        parser.add_argument("promptfoo_args", nargs=argparse.REMAINDER, metavar="-- PROMPTFOO VIEW ARGS",
                            help="passed to promptfoo view, e.g. -- --port 15500 --yes")  # fmt: skip
        return
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
    if args.command == "view":
        return _view(args.links_only, list(args.promptfoo_args))
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


def _view(links_only: bool, extra: list[str]) -> int:
    import os
    import subprocess
    import threading

    from passhat.common._errors import PasshatError
    from passhat.extension._links import HOST, PORT_ENV, port, serve
    from passhat.rounds._run import _promptfoo

    env = dict(os.environ)
    try:
        number = port(env)
    except ValueError as error:
        raise PasshatError(str(error)) from None
    command = None if links_only else [_promptfoo(env), "view", *(extra[1:] if extra[:1] == ["--"] else extra)]
    try:
        server = serve(number)
    except OSError as error:
        msg = (f"{HOST}:{number} is taken ({error.strerror}): another passhat view? Stop it, or set ${PORT_ENV} to a "
               "free port for the eval and the view alike (the links carry the port)")  # fmt: skip
        raise PasshatError(msg) from None
    print(f"passhat: the trials' transcripts and diffs open from the viewer's Metadata tab (open_transcript, "
          f"open_diff), served read-only on http://{HOST}:{number}", file=sys.stderr, flush=True)  # fmt: skip
    try:
        if command is None:
            threading.Event().wait()
            return 0
        return subprocess.run(command, env=env, check=False).returncode
    except KeyboardInterrupt:
        return 130
    finally:
        server.shutdown()
