"""`passhat fake-model`: a scripted Anthropic-compatible model server for offline suites.

It drives the real Claude Code CLI: rehearse a whole suite for free before spending tokens.

May import: passhat._errors, passhat.tasks (the oracle reads a task's solution). Only the CLI and tests start it.
Exports: FakeModelServer, serve, start_in_thread, route, parse_script and the seeded draws.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from pathlib import Path

from passhat._errors import PasshatError
from passhat.fake_model._scripts import acts_as_oracle, flaky_draw, parse_script
from passhat.fake_model._server import FakeModelServer, route, start_in_thread

__all__ = ["FakeModelServer", "acts_as_oracle", "flaky_draw", "parse_script", "route", "serve", "start_in_thread"]


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(tmp, path)


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def serve(host: str, port: int, tasks_dir: str, script: str, port_file: str | None) -> int:
    tasks = Path(tasks_dir)
    if not tasks.is_dir():
        msg = f"--tasks {tasks_dir!r}: no such folder; point it at the folder holding tasks/<id>/task.yaml"
        raise PasshatError(msg)
    try:
        server = FakeModelServer(host, port, tasks.resolve(), parse_script(script))
    except OSError as error:
        msg = f"--port {port}: cannot listen on {host}:{port} ({error.strerror}); pick another port or 0"
        raise PasshatError(msg) from None
    signal.signal(signal.SIGTERM, _stop)
    if port_file:
        _write_atomically(Path(port_file), f"{server.server_address[1]}\n")
    print(f"passhat fake-model: {server.url} (script {script}, tasks {tasks})", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
