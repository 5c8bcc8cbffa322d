"""Run the Node scripts in tests/browser/ (headless Chromium through playwright-core) from pytest.

Each script prints one JSON document on stdout: its result, or {"error", "screenshot", "pageText"} with exit 1.
The browser is the system Chromium (`make system-deps`; `PASSHAT_CHROMIUM` overrides the path); Node 22 and
playwright-core come from the repo's node_modules (`npm ci`), which never downloads a browser.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "browser"
NODE_BIN = ROOT / "node_modules" / ".bin"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class BrowserScriptError(AssertionError):
    """A browser script failed; `result` is its JSON ({"error", "screenshot", "pageText"}) when it printed one."""

    def __init__(self, message: str, result: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.result = result or {}


def chromium_path() -> str:
    path = os.environ.get("PASSHAT_CHROMIUM", "/usr/bin/chromium")
    if not os.access(path, os.X_OK):
        msg = (
            f"Chromium not found at {path}: install the Debian package `chromium` (`make system-deps`, as root) "
            "or point PASSHAT_CHROMIUM at a Chromium binary."
        )
        raise BrowserScriptError(msg)
    return path


def node_env(**extra: str) -> dict[str, str]:
    """The environment the scripts run in: the repo's Node 22 first in PATH, the system Chromium."""
    for needed in (NODE_BIN / "node", ROOT / "node_modules" / "playwright-core" / "package.json"):
        if not needed.exists():
            msg = f"{needed} is missing: run `make install` (npm ci) to install the pinned Node and playwright-core."
            raise BrowserScriptError(msg)
    return {
        **os.environ,
        "PATH": os.pathsep.join([str(NODE_BIN), os.environ.get("PATH", "")]),
        "PASSHAT_CHROMIUM": chromium_path(),
        **extra,
    }


def run_browser_script(script: str, *args: object, timeout: float = 180) -> Any:
    """Run `node tests/browser/<script>.mjs ARGS...` and return its JSON stdout.

    Raises BrowserScriptError with the script's error, its screenshot path (if it saved one) and the tail of
    its stderr when it fails, times out or prints no JSON.
    """
    path = SCRIPTS / f"{script}.mjs"
    if not path.is_file():
        msg = f"no browser script {path}; the scripts are: {sorted(p.stem for p in SCRIPTS.glob('[!_]*.mjs'))}"
        raise BrowserScriptError(msg)
    command = [str(NODE_BIN / "node"), str(path), *map(str, args)]
    # Its own process group, so a timeout ends node and its helpers; Chromium (detached by Playwright) quits
    # when its pipe to node closes.
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        env=node_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        msg = f"{script}.mjs did not finish in {timeout:.0f} s; stderr tail:\n{stderr[-3000:]}"
        raise BrowserScriptError(_ANSI.sub("", msg)) from None
    lines = stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        result = None
    if proc.returncode != 0 or result is None:
        error = result.get("error") if isinstance(result, dict) else f"no JSON on stdout: {stdout[-500:]!r}"
        shown = result if isinstance(result, dict) else {}
        msg = (
            f"{script}.mjs {' '.join(map(str, args))} failed (exit {proc.returncode}): {error}\n"
            f"screenshot: {shown.get('screenshot') or 'none'}\npage text: {shown.get('pageText')!r}\n"
            f"stderr tail:\n{stderr[-3000:]}"
        )
        raise BrowserScriptError(_ANSI.sub("", msg), result if isinstance(result, dict) else None)
    return result


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=2) as response:
            return json.loads(response.read()).get("status") == "OK"
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def promptfoo_view(config_dir: Path, log_path: Path, *, startup_timeout: float = 90) -> Iterator[str]:
    """Serve `promptfoo view` on 127.0.0.1 for the evals under PROMPTFOO_CONFIG_DIR=config_dir; yield its base URL.

    promptfoo 0.123.1 has no host option and listens on every interface, so tests/browser/_loopback.mjs is
    preloaded to bind it to 127.0.0.1. `--no` keeps it from opening a browser (`--yes` would open one).
    """
    preload = f"--import={(SCRIPTS / '_loopback.mjs').as_uri()}"
    node_options = " ".join(filter(None, [os.environ.get("NODE_OPTIONS"), preload]))
    env = node_env(
        PROMPTFOO_CONFIG_DIR=str(config_dir),
        PROMPTFOO_DISABLE_TELEMETRY="1",
        PROMPTFOO_DISABLE_UPDATE="1",
        NODE_OPTIONS=node_options,
    )
    for _attempt in range(3):  # a free port can be taken between free_port() and listen()
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        with log_path.open("a") as log:
            server = subprocess.Popen(
                [str(NODE_BIN / "promptfoo"), "view", "--port", str(port), "--no"],
                cwd=config_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        try:
            deadline = time.monotonic() + startup_timeout
            while server.poll() is None and not _healthy(base):
                if time.monotonic() > deadline:
                    msg = (
                        f"promptfoo view did not answer {base}/health in {startup_timeout:.0f} s; "
                        f"log:\n{log_path.read_text()[-3000:]}"
                    )
                    raise BrowserScriptError(msg)
                time.sleep(0.2)
            if server.poll() is None:
                yield base
                return
            if "already in use" not in log_path.read_text():  # "Port N is already in use."
                break
        finally:
            if server.poll() is None:
                server.terminate()
                try:
                    server.wait(timeout=20)  # it closes socket.io and the DB watcher first (a few seconds)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait(timeout=10)
    msg = f"promptfoo view exited (code {server.returncode}); log:\n{log_path.read_text()[-3000:]}"
    raise BrowserScriptError(msg)
