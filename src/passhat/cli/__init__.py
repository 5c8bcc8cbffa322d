"""The `passhat` command line: parse arguments, call the library, print.

May import: everything (the top of the path). Exports: main, build_parser.

Each subcommand lives in its own module with `configure(parser)` and `run(args) -> int`; only the
chosen one is imported. Every path argument is made absolute before it runs (PATH_ARGS). What the
subcommands share is here too: argparse value types (one message shape for every bad number), the `--format`
option, hidden aliases of renamed options.
Every PasshatError leaves through `_fail()`: one line on stderr, exit code 2. A reader that stops
early (`passhat report results.json | head`) ends the command quietly, as a SIGPIPE would (141).
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import cast

from passhat import __version__
from passhat.common._errors import PasshatError

# Every `--format` offers a subset of these, in this order, and defaults to the first.
FORMAT_ORDER = ("table", "md", "csv", "json", "html")

# Namespace attributes that hold file or folder paths, in any subcommand. main() makes them absolute
# before a subcommand runs: a relative path means the cwd of the `passhat` command, and would mean
# something else (or nothing: bwrap --chdir) in a sandbox, a grader's scratch copy or another process.
PATH_ARGS = frozenset(
    {
        "results", "base", "new", "labels", "config",  # input files
        "output", "db", "port_file", "url_file", "secret_file",  # files written (and a secret read)
        "tasks", "tasks_dir", "state_dir", "out", "resume",  # folders
    }
)  # fmt: skip


def absolute_paths(args: argparse.Namespace) -> None:
    """Replace each relative path in PATH_ARGS (a str or a list of them) by its absolute form, in place."""
    for name in PATH_ARGS:
        value = getattr(args, name, None)
        if isinstance(value, str):
            setattr(args, name, os.path.abspath(value))
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            setattr(args, name, [os.path.abspath(item) for item in value])


def whole_number(flag: str, minimum: int, hint: str) -> Callable[[str], int]:
    """An int >= minimum; else `FLAG 'text': HINT`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{flag} {text!r}: {hint}")
        return value

    return parse


def open_fraction(flag: str, example: str) -> Callable[[str], float]:
    """A float strictly between 0 and 1; else `FLAG 'text': expected ... between 0 and 1, e.g. EXAMPLE`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = 0.0
        if not 0 < value < 1:
            raise argparse.ArgumentTypeError(f"{flag} {text!r}: expected a number between 0 and 1, e.g. {example}")
        return value

    return parse


def k_list(text: str) -> tuple[int, ...]:
    """`--k 1,3,5,10` (or one k): positive integers, comma-separated."""
    try:
        ks = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        msg = f"--k {text!r}: expected comma-separated positive integers, e.g. --k 1,3,5,10"
        raise argparse.ArgumentTypeError(msg) from None
    if not ks or any(k < 1 for k in ks):
        msg = f"--k {text!r}: every k must be a positive integer, e.g. --k 1,3,5,10"
        raise argparse.ArgumentTypeError(msg)
    return ks


def format_option(parser: argparse.ArgumentParser, choices: Sequence[str]) -> None:
    """`--format` as every subcommand spells it: choices in FORMAT_ORDER, default table."""
    if list(choices) != [f for f in FORMAT_ORDER if f in choices] or choices[0] != "table":
        msg = f"--format choices {tuple(choices)}: list them in the order {FORMAT_ORDER}, table first"
        raise ValueError(msg)
    parser.add_argument("--format", choices=tuple(choices), default="table", help="output format (default table)")


def hidden_alias(parser: argparse.ArgumentParser, old: str, dest: str) -> None:
    """Keep accepting a renamed option's old spelling, without showing it in --help."""
    parser.add_argument(old, dest=dest, default=argparse.SUPPRESS, help=argparse.SUPPRESS)


COMMANDS = {  # name: (module, one-line help)
    "init": ("passhat.cli.init", "set up passhat in a repository: promptfooconfig.yaml, the entry file, tasks/"),
    "report": ("passhat.cli.report", "pass@k / pass^k per task and provider from a promptfoo -o results file"),
    "eval": (
        "passhat.cli.eval",
        "promptfoo eval in rounds until every task's verdict is decided (--until-decided), or --resume DIR",
    ),
    "estimate": (
        "passhat.cli.eval",
        "forecast what an eval will cost from a scripted rehearsal's turn counts and the model's list prices",
    ),
    "compare": (
        "passhat.cli.compare",
        "per-task change in pass rate between two results files (or two providers in one)",
    ),
    "drift": ("passhat.cli.drift", "append an eval to the score history (SQLite) and flag quality drift"),
    "view": ("passhat.cli.report", "promptfoo view, with each trial's transcript and diff one click away"),
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
