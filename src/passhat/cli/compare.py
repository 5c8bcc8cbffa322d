"""`passhat compare BASE [NEW]`: per-task change in pass rate, Fisher + Holm (logic in passhat.report)."""

from __future__ import annotations

import argparse
import sys

from passhat.cli import open_fraction, whole_number
from passhat.report._compare import run_compare
from passhat.report._formats import FORMATS
from passhat.stats._suite import PAIRED_RESAMPLES, SEED

HELP = "per-task change in pass rate between two results files (or two providers in one): Fisher + Holm"


def _providers(text: str) -> tuple[str, str]:
    parts = [part.strip() for part in text.split(",")]
    if len(parts) != 2 or not all(parts):
        msg = f"--providers {text!r}: expected two provider labels, BASE,NEW, e.g. --providers terse,verbose"
        raise argparse.ArgumentTypeError(msg)
    return parts[0], parts[1]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", help="promptfoo -o results file of the base run (.json or .jsonl)")
    parser.add_argument("new", nargs="?", help="results file of the new run; omit it with --providers A,B")
    parser.add_argument(
        "--providers", type=_providers, metavar="A,B",
        help="compare provider A (base) with provider B (new); with one file, both come from it",
    )  # fmt: skip
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.add_argument(
        "--alpha",
        type=open_fraction("--alpha", "0.05"),
        default=0.05,
        help="family-wise error rate for Holm (default 0.05)",
    )
    parser.add_argument("--fail-on-worse", action="store_true", help="exit 1 if any task is worse")
    parser.add_argument("--seed", type=int, default=SEED, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--resamples",
        type=whole_number("--resamples", 1, "expected a positive whole number, e.g. 2000"),
        default=PAIRED_RESAMPLES,
        help="bootstrap resamples (default 2000)",
    )


def run(args: argparse.Namespace) -> int:
    return run_compare(
        args.base, args.new, providers=args.providers, form=args.format, alpha=args.alpha,
        fail_on_worse=args.fail_on_worse, seed=args.seed, resamples=args.resamples, out=sys.stdout,
    )  # fmt: skip
