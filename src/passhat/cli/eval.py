"""`passhat eval --until-decided [options] -- PROMPTFOO ARGS`: Promptfoo evals in rounds until each task's verdict is
decided (logic in passhat.rounds); `passhat eval --resume DIR` goes on after Ctrl+C. Its forecast, `passhat
estimate REHEARSAL`, shares the module (rounds._estimate): what an eval will cost, from a scripted rehearsal."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from passhat.cli import open_fraction, whole_number
from passhat.common._errors import PasshatError
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


def _configure_estimate(parser: argparse.ArgumentParser) -> None:
    from passhat.rounds._estimate import DEFAULT_MODEL, Assumptions, known_models

    a = Assumptions()
    parser.add_argument("results", help="promptfoo -o results.json of a rehearsal against the scripted model")
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"the model to price (default {DEFAULT_MODEL}; "
                        f"known: {', '.join(known_models())})")  # fmt: skip
    parser.add_argument(
        "--price-in", type=_dollars, metavar="USD", help="$ per million input tokens (with --price-out)"
    )
    parser.add_argument("--price-out", type=_dollars, metavar="USD", help="$ per million output tokens")
    parser.add_argument("--repeat", type=whole_number("--repeat", 1, "expected a positive whole number, e.g. 10"),
                        default=10, metavar="N", help="the eval's --repeat (default 10)")  # fmt: skip
    parser.add_argument("--round", type=whole_number("--round", 1, "expected a positive whole number, e.g. 5"),
                        default=5, metavar="N", help="--until-decided: trials per task in round 1 (default 5)")  # fmt: skip
    parser.add_argument("--max-trials", type=whole_number("--max-trials", 1, "expected a positive whole number"),
                        default=60, metavar="N", help="--until-decided: the most trials per task (default 60)")  # fmt: skip
    parser.add_argument("--turns-factor", type=float, default=a.turns_factor,
                        help=f"real turns per scripted turn (default {a.turns_factor:g})")  # fmt: skip
    parser.add_argument("--context-tokens", type=int, default=a.context_tokens, help="context read every turn")
    parser.add_argument("--growth-tokens", type=int, default=a.growth_tokens, help="context added per turn")
    parser.add_argument("--output-tokens", type=int, default=a.output_tokens, help="tokens written per turn")


def configure(parser: argparse.ArgumentParser) -> None:
    if parser.prog.split()[-1] == "estimate":
        _configure_estimate(parser)
        return
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


def _estimate(args: argparse.Namespace) -> int:
    from passhat.rounds._estimate import Assumptions, Price, estimate, price_of

    if (args.price_in is None) != (args.price_out is None):
        raise PasshatError("--price-in and --price-out go together: give both ($ per million tokens), or --model")
    price = Price(args.price_in, args.price_out) if args.price_in is not None else price_of(args.model)
    a = Assumptions(args.context_tokens, args.growth_tokens, args.output_tokens, args.turns_factor)
    found = estimate(Path(args.results), price, a)
    per_round = sum(t.usd_per_trial for t in found)
    model = args.model if args.price_in is None else "the given prices"
    print(f"passhat estimate from the rehearsal {args.results}: {model} at ${price.input:g} / ${price.output:g} per million "
          "tokens in / out.")  # fmt: skip
    print(f"How it guessed: a real trial takes {a.turns_factor:g}x the scripted agent's turns (it took the reference "
          f"solution's path); each turn reads ~{a.context_tokens:,} tokens of context (cached after the first, at "
          f"{price.cache_read:g}x; written at 1.25x), adds ~{a.growth_tokens:,} and writes ~{a.output_tokens:,}. Real runs vary: "
          "rehearse, run a few real trials, and compare their cost with this.")  # fmt: skip
    print(
        f"\n{'task':<28} {'trials':>6} {'turns':>6} {'real turns':>10} {'$/trial':>8} {'$ x ' + str(args.repeat):>10}"
    )
    for t in found:
        print(f"{t.task:<28} {t.rehearsal_trials:>6} {t.rehearsal_turns:>6.1f} {t.turns:>10.1f} "
              f"{t.usd_per_trial:>8.3f} {t.usd_per_trial * args.repeat:>10.2f}")  # fmt: skip
    print(f"\npromptfoo eval --repeat {args.repeat}: about ${per_round * args.repeat:,.2f} "
          f"({len(found) * args.repeat} trials).")  # fmt: skip
    print(
        f"passhat eval --until-decided --round {args.round} --max-trials {args.max_trials}: about "
        f"${per_round * args.round:,.2f} for round 1, at most ${per_round * args.max_trials:,.2f}; set --budget-usd."
    )
    return 0


def run(args: argparse.Namespace) -> int:
    if args.command == "estimate":
        return _estimate(args)
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
