"""`passhat fake-model`: arguments and entry."""

from __future__ import annotations

import argparse

HELP = "scripted Anthropic-compatible model server on loopback (no API key, drives the real CLI)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", choices=("127.0.0.1", "localhost"))
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--tasks", default="tasks", help="folder of tasks (for the oracle script)")
    parser.add_argument("--script", default="oracle", help="oracle | noop | flaky:P[:SEED] | error:STATUS")
    parser.add_argument("--port-file", default=None, help="write the chosen port here once listening")


def run(args: argparse.Namespace) -> int:
    from passhat.fake_model import serve

    return serve(host=args.host, port=args.port, tasks_dir=args.tasks, script=args.script, port_file=args.port_file)
