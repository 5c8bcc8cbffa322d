"""The `passhat` command line: parse arguments, call the library, print.

May import: everything (the top of the path). Exports: main, build_parser.

Each subcommand lives in its own module with `configure(parser)` and `run(args) -> int`; only the
chosen one is imported. Every PasshatError leaves through `_fail()`: one line on stderr, exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import cast

from passhat._errors import PasshatError

COMMANDS = {  # name: (module, one-line help)
    "report": ("passhat.cli.report", "pass@k / pass^k per task and provider from a promptfoo -o results file"),
    "compare": (
        "passhat.cli.compare",
        "per-task change in pass rate between two results files (or two providers in one)",
    ),
    "drift": ("passhat.cli.drift", "append an eval to the score history (SQLite) and flag quality drift"),
    "validate": (
        "passhat.cli.validate",
        "check promptfooconfig.yaml, its providers' config and tasks before any trial",
    ),
    "check-task": ("passhat.cli.check_task", "validate tasks with no model: reference passes, empty patch fails"),
    "regrade": ("passhat.cli.regrade", "rerun graders on an eval's saved patches (no agent, no cost)"),
    "fake-model": ("passhat.cli.fake_model", "scripted Anthropic-compatible model on loopback (no API key)"),
    "judge-noise": (
        "passhat.cli.judge_noise",
        "regrade saved outputs with the LLM judge N times; report its own disagreement",
    ),
    "calibrate": (
        "passhat.cli.calibrate",
        "agreement of the LLM judge with human labels: kappa, Spearman, precision/recall",
    ),
}


def _fail(error: PasshatError) -> int:
    print(f"passhat: error: {error}", file=sys.stderr)
    return error.exit_code


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="passhat", description="pass^k for Claude Code run unattended.")
    sub = parser.add_subparsers(dest="command", required=True)
    chosen = next((arg for arg in argv if not arg.startswith("-")), None)
    for name, (module_name, help_text) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=help_text)
        if chosen in (name, None) or chosen not in COMMANDS:
            module = importlib.import_module(module_name)
            module.configure(command)
            command.set_defaults(func=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv).parse_args(argv)
    try:
        return cast(int, args.func(args))
    except PasshatError as error:
        return _fail(error)
    except KeyboardInterrupt:
        return 130
