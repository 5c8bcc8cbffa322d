"""The `passhat` command line: parse arguments, call the library, print.

Every PasshatError leaves through `_fail()`: one line on stderr, exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from passhat._errors import PasshatError


def _fail(error: PasshatError) -> int:
    print(f"passhat: error: {error}", file=sys.stderr)
    return error.exit_code


def _cmd_report(args: argparse.Namespace) -> int:
    from passhat._report import run_report

    return run_report(args.results, ks=args.k, fmt=args.format, out=sys.stdout)


def _cmd_fake_model(args: argparse.Namespace) -> int:
    from passhat.fake_model import serve

    return serve(
        host=args.host,
        port=args.port,
        tasks_dir=args.tasks,
        script=args.script,
        port_file=args.port_file,
    )


def _parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        msg = f"--k {text!r}: expected comma-separated positive integers, e.g. --k 1,3,5,10"
        raise argparse.ArgumentTypeError(msg) from None
    if not ks or any(k < 1 for k in ks):
        msg = f"--k {text!r}: every k must be a positive integer, e.g. --k 1,3,5,10"
        raise argparse.ArgumentTypeError(msg)
    return ks


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="passhat", description="pass^k for Claude Code run unattended."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    report = sub.add_parser("report", help="pass@k / pass^k per task from a promptfoo -o results file")
    report.add_argument("results", help="promptfoo eval -o results.json")
    report.add_argument("--k", type=_parse_ks, default=(1, 3, 5, 10), help="comma-separated ks (default 1,3,5,10)")
    report.add_argument("--format", choices=("table", "json"), default="table")
    report.set_defaults(func=_cmd_report)

    fake = sub.add_parser("fake-model", help="scripted Anthropic-compatible model server on loopback")
    fake.add_argument("--host", default="127.0.0.1", choices=("127.0.0.1", "localhost"))
    fake.add_argument("--port", type=int, default=0, help="0 picks a free port")
    fake.add_argument("--tasks", default="tasks", help="folder of tasks (for the oracle script)")
    fake.add_argument("--script", default="oracle", help="oracle | noop | flaky:P[:SEED] (default oracle)")
    fake.add_argument("--port-file", default=None, help="write the chosen port here once listening")
    fake.set_defaults(func=_cmd_fake_model)
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
