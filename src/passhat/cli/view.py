"""`passhat view [-- PROMPTFOO VIEW ARGS]`: `promptfoo view`, with each trial's transcript and diff a click away.

The viewer's Metadata tab links each trial's `open_transcript`, `open_diff` (and the tests grader's whole output)
to a read-only server on 127.0.0.1 ($PASSHAT_VIEW_PORT, default 15501) that this command runs beside `promptfoo
view` (found as `npx promptfoo` finds it) until it exits; `--links-only` serves the links alone, for a `promptfoo
view` started otherwise (logic in passhat.extension._links).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading

from passhat.common._errors import PasshatError
from passhat.extension._links import HOST, PORT_ENV, port, serve

HELP = "promptfoo view, with each trial's transcript and diff one click away (a read-only server on 127.0.0.1)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--links-only", action="store_true",
                        help="serve the trials' links alone (until Ctrl+C), for a promptfoo view started otherwise")  # fmt: skip
    parser.add_argument("promptfoo_args", nargs=argparse.REMAINDER, metavar="-- PROMPTFOO VIEW ARGS",
                        help="passed to promptfoo view, e.g. -- --port 15500 --yes")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from passhat.rounds._run import _promptfoo

    extra = list(args.promptfoo_args)
    extra = extra[1:] if extra[:1] == ["--"] else extra
    env = dict(os.environ)
    try:
        number = port(env)
    except ValueError as error:
        raise PasshatError(str(error)) from None
    command = None if args.links_only else [_promptfoo(env), "view", *extra]
    try:
        server = serve(number)
    except OSError as error:
        msg = (f"{HOST}:{number} is taken ({error.strerror}): another passhat view? Stop it, or set ${PORT_ENV} to a "
               "free port for the eval and the view alike (the links carry the port)")  # fmt: skip
        raise PasshatError(msg) from None
    print(f"passhat: the trials' transcripts and diffs open from the viewer's Metadata tab (open_transcript, "
          f"open_diff), served read-only on http://{HOST}:{number}", file=sys.stderr, flush=True)  # fmt: skip
    try:
        if command is None:
            threading.Event().wait()
            return 0
        return subprocess.run(command, env=env, check=False).returncode
    except KeyboardInterrupt:
        return 130
    finally:
        server.shutdown()
