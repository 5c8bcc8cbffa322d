"""`passhat eval --until-decided [options] -- PROMPTFOO ARGS`: Promptfoo evals in rounds until each task's verdict is
decided (logic in passhat.rounds); `passhat eval --resume DIR` goes on after Ctrl+C."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from passhat._errors import PasshatError
from passhat.cli import open_fraction, whole_number
from passhat.report._words import SAFE_AT

HELP = "run promptfoo eval in rounds until every task's verdict is decided (or --max-trials, or the budget)"


def _dollars(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"--budget-usd {text!r}: expected a positive number of dollars, e.g. 20")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--until-decided", action="store_true", help="run in rounds, each on the tasks still open")
    parser.add_argument("--round", type=whole_number("--round", 1, "expected a positive whole number, e.g. 5"),
                        default=5, metavar="N", help="trials per open task per round (default 5)")  # fmt: skip
    parser.add_argument(
        "--max-trials", type=whole_number("--max-trials", 1, "expected a positive whole number, e.g. 60"), default=60,
        metavar="N", help="stop a task that is still undecided after N trials (default 60)",
    )  # fmt: skip
    parser.add_argument("--budget-usd", type=_dollars, metavar="USD",
                        help="stop before a round whose forecast cost would cross USD in all")  # fmt: skip
    parser.add_argument("--out", metavar="DIR", help="each round's promptfoo output, the combined results.json")
    parser.add_argument("--resume", metavar="DIR", help="go on with the rounds in DIR (after Ctrl+C)")
    parser.add_argument(
        "--unattended-runs", type=whole_number("--unattended-runs", 1, "expected a positive whole number, e.g. 10"),
        default=10, metavar="K", help="the verdict's k: safe for K unattended runs in a row (default 10)",
    )  # fmt: skip
    parser.add_argument(
        "--safe-at", type=open_fraction("--safe-at", "0.9"), default=SAFE_AT, metavar="P",
        help=f"safe when the whole 95%% interval of pass^K is at or above P (default {SAFE_AT:g})",
    )  # fmt: skip
    parser.add_argument("promptfoo_args", nargs=argparse.REMAINDER, metavar="-- PROMPTFOO ARGS",
                        help="promptfoo eval's own arguments, e.g. -- -c promptfooconfig.yaml -j 4")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from passhat.rounds import Settings, resume, start

    promptfoo_args = list(args.promptfoo_args)
    if promptfoo_args[:1] == ["--"]:
        promptfoo_args = promptfoo_args[1:]
    if args.resume is not None:
        if args.until_decided or args.out or promptfoo_args:
            msg = f"--resume {args.resume}: the rounds' settings are in its rounds.json; give --resume DIR alone"
            raise PasshatError(msg)
        return resume(Path(args.resume), sys.stdout)
    if not args.until_decided:
        msg = "passhat eval runs Promptfoo in rounds: pass --until-decided (with --out DIR), or --resume DIR"
        raise PasshatError(msg)
    if args.out is None:
        msg = "--until-decided: --out DIR is missing; it holds each round's output and the combined results.json"
        raise PasshatError(msg)
    settings = Settings(args.round, args.max_trials, args.budget_usd, args.unattended_runs, args.safe_at)
    return start(Path(args.out), promptfoo_args, settings, sys.stdout)
