"""`passhat fake-model`: arguments and entry."""

from __future__ import annotations

import argparse
import re

from passhat.cli import hidden_alias

HELP = "scripted Anthropic-compatible model server on loopback (no API key, drives the real CLI)"


def script_forms() -> tuple[list[str], list[str]]:
    """Every script the server takes and the modifiers an agent script may end in, as passhat.fake_model's
    modules document them (a `    FORM  what it does` line each; modifiers as `SCRIPT+MODIFIER`)."""
    from passhat.fake_model import _judge, _scripts

    forms = [form for module in (_scripts, _judge) for form in re.findall(r"^ {4}(\S+)", module.__doc__ or "", re.M)]
    named = {re.split(r"[:\[]", form)[0] for form in forms}
    forms += [name for name in _judge.NAMES if name not in named]  # judge-shorter shares judge-longer's line
    return forms, re.findall(r"`SCRIPT(\+[^`]+)`", _scripts.__doc__ or "")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", choices=("127.0.0.1", "localhost"))
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default 0)")
    parser.add_argument(
        "--tasks-dir", default="tasks", help="folder of tasks/<id>/task.yaml, for the oracle (default tasks)"
    )
    hidden_alias(parser, "--tasks", "tasks_dir")  # its name before 0.1; check-task, regrade say --tasks-dir
    forms, modifiers = script_forms()
    parser.add_argument(
        "--script", default="oracle", help=f"the default script (a provider's fake_script overrides it): "
        f"{', '.join(forms)}; an agent script may end in {' or '.join(modifiers)} (default oracle)",
    )  # fmt: skip
    parser.add_argument("--port-file", default=None, help="write the chosen port here once listening")
    parser.add_argument(
        "--url-file",
        default=None,
        help="write the URL with its secret (http://passhat:<secret>@127.0.0.1:PORT, mode 0600) here once listening; "
        "give it to the harness as PASSHAT_FAKE_MODEL_URL",
    )
    parser.add_argument(
        "--replay",
        default=None,
        metavar="DIR",
        help="serve the recorded API replies of DIR/manifest.json instead of scripts: POST /<name>[/<chunking>]/v1/messages "
        "(tests/data/api_recordings)",
    )
    parser.add_argument(
        "--open",
        action="store_true",
        help="also answer the API's own POST /v1/messages (any x-api-key; 401 without), the task found by its prompt: "
        "a real-API-mode rehearsal (PASSHAT_REAL_CLAUDE=1, ANTHROPIC_BASE_URL at this server, a dummy key)",
    )
    parser.add_argument(
        "--secret-file",
        default=None,
        help="the routes' secret (hex, 32+ digits) from this file (or $PASSHAT_FAKE_MODEL_SECRET); default random",
    )


def run(args: argparse.Namespace) -> int:
    from passhat.fake_model import serve

    return serve(
        host=args.host,
        port=args.port,
        tasks_dir=args.tasks_dir,
        script=args.script,
        port_file=args.port_file,
        url_file=args.url_file,
        secret_file=args.secret_file,
        replay=args.replay,
        open_route=args.open,
    )
