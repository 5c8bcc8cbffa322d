"""`passhat drift RESULTS`: append an eval to the score history and flag drift (logic in passhat.history)."""

from __future__ import annotations

import argparse
import math

from passhat.history._drift import run_drift
from passhat.history._rule import DEFAULT_ABS_POINTS
from passhat.history._store import DEFAULT_DB

HELP = "append an eval to the score history (SQLite) and report quality drift against its baseline"


def _points(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        msg = f"--abs {text!r}: expected a non-negative number of points on a 1-5 scale, e.g. --abs 0.3"
        raise argparse.ArgumentTypeError(msg)
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", help="promptfoo eval -o results.json")
    parser.add_argument("--db", default=DEFAULT_DB, help=f"the history database (default {DEFAULT_DB})")
    parser.add_argument(
        "--metric", metavar="NAME",
        help="what to compare: pass (default: each trial's pass/fail, the pass rate), score (the row's 0..1 score), "
        "or a named score: a grader's (tests) or a judge criterion's (judge.clarity)",
    )  # fmt: skip
    parser.add_argument(
        "--baseline", metavar="EVAL_ID", help="compare with this eval, not with each series' first full batch"
    )
    parser.add_argument(
        "--abs",
        type=_points,
        default=None,
        help=f"absolute drop that is drift, in points on a 1-5 scale (default {DEFAULT_ABS_POINTS:g} = 0.075 in 0..1 "
        "for a score; none for pass, which uses the 2xSE test alone)",
    )
    parser.add_argument("--fail-on-drift", action="store_true", help="exit 1 when drift fires")
    parser.add_argument("--format", choices=("table", "json"), default="table")


def run(args: argparse.Namespace) -> int:
    """Drift; an eval that measured nothing (every trial an infra error or unscored) also exits 1 saying so: kept in
    the history as its series' unscored batch where its rows carry the metric, else not appended at all."""
    import sys

    from passhat.common._errors import ResultsError
    from passhat.report._report import measured_nothing

    try:
        code = run_drift(
            args.results,
            db=args.db,
            metric=args.metric,
            baseline=args.baseline,
            abs_points=args.abs,
            fail_on_drift=args.fail_on_drift,
            fmt=args.format,
        )
    except ResultsError:
        if (nothing := measured_nothing(args.results)) is None:
            raise
        code = 1
    else:
        nothing = measured_nothing(args.results)
    if nothing is not None:
        print(f"passhat drift: {nothing}", file=sys.stderr)
        return max(code, 1)
    return code
