"""The `passhat` command line: parse arguments, call the library, print.

Each subcommand lives in its own module with `HELP`, `configure(parser)` and `run(args) -> int`
(keep their top-level imports light: every module is imported to build the parser).
Every PasshatError leaves through `_fail()`: one line on stderr, exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from passhat._errors import PasshatError

COMMANDS = {
    "report": "passhat._report",
    "compare": "passhat._compare",
    "drift": "passhat._drift",
    "check-task": "passhat._check_task",
    "regrade": "passhat._regrade",
    "fake-model": "passhat.fake_model._cli",
}


def _fail(error: PasshatError) -> int:
    print(f"passhat: error: {error}", file=sys.stderr)
    return error.exit_code


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="passhat", description="pass^k for Claude Code run unattended.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module_name in COMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue  # a command still being built
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.configure(command)
        command.set_defaults(func=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except PasshatError as error:
        return _fail(error)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
