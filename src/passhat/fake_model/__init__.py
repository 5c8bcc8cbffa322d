"""`passhat fake-model`: a scripted Anthropic-compatible model server for offline suites.

It drives the real Claude Code CLI: rehearse a whole suite for free before spending tokens. Every route is
opened by a token made from the server's secret (passhat/common/_fake_route.py); the harness gets the secret in the
URL's userinfo (`http://passhat:<secret>@127.0.0.1:PORT`, `--url-file`), a trial's CLI only its own token.

May import: passhat.common._errors, passhat.common._fake_route (routes and tokens), passhat.tasks (the oracle reads a task's
solution). Only the CLI and tests start it.
Exports: FakeModelServer, serve, start_in_thread, route, parse_script and the seeded draws; the fronts of
`--replay DIR` (Replay, load_recordings, Recording: recorded replies, _replay.py) and `--open` (OpenRoute: the
API's own /v1/messages path, _open.py).
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from pathlib import Path

from passhat.common._errors import PasshatError
from passhat.common._fake_route import SECRET_ENV, check_secret, redact
from passhat.common._fake_route import parse_route as route
from passhat.fake_model._open import OpenRoute
from passhat.fake_model._replay import Recording, Replay, load_recordings
from passhat.fake_model._scripts import acts_as_oracle, flaky_draw, parse_script
from passhat.fake_model._server import FakeModelServer, start_in_thread

__all__ = [
    "FakeModelServer",
    "OpenRoute",
    "Recording",
    "Replay",
    "acts_as_oracle",
    "flaky_draw",
    "load_recordings",
    "parse_script",
    "route",
    "serve",
    "start_in_thread",
]


def _write_atomically(path: Path, text: str) -> None:
    """Write, then rename into place: a reader sees the whole file or none. mkstemp makes it 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _secret(secret_file: str | None) -> str | None:
    """--secret-file, else $PASSHAT_FAKE_MODEL_SECRET, else None (a random one per start)."""
    if secret_file:
        try:
            text = Path(secret_file).read_text()
        except OSError as error:
            msg = f"--secret-file {secret_file!r}: cannot read it ({error.strerror}); give a file holding hex"
            raise PasshatError(msg) from None
        source = f"--secret-file {secret_file!r}"
    elif os.environ.get(SECRET_ENV):
        text, source = os.environ[SECRET_ENV], f"${SECRET_ENV}"
    else:
        return None
    try:
        return check_secret(text, source)
    except ValueError as error:
        raise PasshatError(str(error)) from None


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def serve(
    host: str,
    port: int,
    tasks_dir: str,
    script: str,
    port_file: str | None,
    url_file: str | None = None,
    secret_file: str | None = None,
    replay: str | None = None,
    open_route: bool = False,
) -> int:
    """Serve until SIGTERM / Ctrl+C. `replay`: a folder of recorded replies (_replay.py) served instead of scripts;
    `open_route`: also answer the API's own `/v1/messages` (_open.py)."""
    tasks = Path(tasks_dir)
    if replay is not None and open_route:
        msg = "--replay and --open: a replay answers every path with its recordings; pick one"
        raise PasshatError(msg)
    if replay is None and not tasks.is_dir():
        msg = f"--tasks {tasks_dir!r}: no such folder; point it at the folder holding tasks/<id>/task.yaml"
        raise PasshatError(msg)
    recordings = load_recordings(replay) if replay is not None else None
    front = OpenRoute.from_tasks(tasks) if open_route else None
    secret = _secret(secret_file)
    try:
        server = FakeModelServer(host, port, tasks.resolve(), parse_script(script), secret)
    except OSError as error:
        msg = f"--port {port}: cannot listen on {host}:{port} ({error.strerror}); pick another port or 0"
        raise PasshatError(msg) from None
    server.front = Replay(recordings) if recordings is not None else front
    signal.signal(signal.SIGTERM, _stop)
    if url_file:  # first: a reader that waits for the port file finds the URL too
        _write_atomically(Path(url_file), f"{server.url}\n")
    if port_file:
        _write_atomically(Path(port_file), f"{server.server_address[1]}\n")
    where = f"in {url_file}" if url_file else "not written: pass --url-file FILE and give it to the harness"
    lines = [  # short lines: a long tasks path gets a line of its own
        f"passhat fake-model: {redact(server.url)}, script {script}",
        f"  the URL with its secret: {where}",
        f"  tasks: {tasks}",
    ]
    if recordings is not None:
        lines[1:] = [f"  replaying {len(recordings)} recordings of {replay}: POST {server.origin}/<name>/v1/messages"]
    if front is not None:
        lines.append(
            f"  open: POST {server.origin}/v1/messages with any x-api-key (ANTHROPIC_BASE_URL={server.origin})"
        )
        lines += [f"  tasks {', '.join(ids)} share a prompt: its requests play {ids[0]}" for ids in front.shared]
    print("\n".join(lines), file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
