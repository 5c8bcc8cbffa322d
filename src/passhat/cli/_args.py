"""What the subcommands share: argparse value types (one message shape for every bad number), the
`--format` option, hidden aliases of renamed options, and absolute paths at the boundary."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence

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
