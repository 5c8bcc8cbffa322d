"""The `passhat` command line: parse arguments, call the library, print.

May import: everything (the top of the path). Exports: main, build_parser.

Each subcommand lives in its own module with `configure(parser)` and `run(args) -> int`; only the
chosen one is imported. Every path argument is made absolute before it runs (cli._args.PATH_ARGS).
Every PasshatError leaves through `_fail()`: one line on stderr, exit code 2. A reader that stops
early (`passhat report results.json | head`) ends the command quietly, as a SIGPIPE would (141).
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import cast

from passhat import __version__
from passhat._errors import PasshatError
from passhat.cli._args import absolute_paths

COMMANDS = {  # name: (module, one-line help)
    "init": ("passhat.cli.init", "set up passhat in a repository: promptfooconfig.yaml, the entry file, tasks/"),
    "report": ("passhat.cli.report", "pass@k / pass^k per task and provider from a promptfoo -o results file"),
    "eval": (
        "passhat.cli.eval",
        "promptfoo eval in rounds until every task's verdict is decided (--until-decided), or --resume DIR",
    ),
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
    "task": ("passhat.cli.task", "make a task: from a git commit (from-commit) or a scaffold to fill in (new)"),
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


def _reader_went_away() -> int:
    """stdout's reader closed the pipe: stop quietly, exit as `yes | head` does (128 + SIGPIPE).

    As the Python docs recommend (signal module, "Note on SIGPIPE"): point stdout at devnull, so the
    interpreter's final flush does not raise BrokenPipeError again on the way out.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file descriptor (captured, replaced): nothing to flush
        pass
    return 128 + signal.SIGPIPE


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="passhat", description="pass^k for Claude Code run unattended.")
    parser.add_argument("--version", action="version", version=f"passhat {__version__}")
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
    try:
        args = build_parser(argv).parse_args(argv)
        absolute_paths(args)
        try:
            code = cast(int, args.func(args))
        except PasshatError as error:
            code = _fail(error)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except BrokenPipeError:
        return _reader_went_away()
    except KeyboardInterrupt:
        return 130
