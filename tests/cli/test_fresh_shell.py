"""After `make demo`, the commands the demo prints last work in a new shell: `bash --noprofile --norc`, a
minimal PATH (/usr/bin:/bin, where neither passhat nor promptfoo is), another folder. Before, the demo's last
line said `promptfoo view`, which a new shell answers with `command not found` (and the system Node is too old).

The demo runs as `make demo` runs it (PATH and PROMPTFOO_* from the Makefile), on one task, --repeat 1, with
HOME in tmp_path so promptfoo's database (~/.promptfoo) is the test's own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from browser_helpers import SCRIPTS, _healthy, free_port
from conftest import ROOT

pytestmark = pytest.mark.e2e
MINIMAL_PATH = "/usr/bin:/bin"
HEADER = "demo: in a new shell, put passhat and promptfoo on PATH first"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, Path, list[str]]:
    """Run the demo; (HOME, results file, the command lines it printed after HEADER)."""
    root = tmp_path_factory.mktemp("fresh")
    home, results = root / "home", root / "demo-results.json"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PASSHAT_", "ANTHROPIC_", "PROMPTFOO_"))}
    env.update(
        HOME=str(home), PATH=f"{ROOT / 'node_modules' / '.bin'}:{Path(sys.executable).parent}:{MINIMAL_PATH}",
        PROMPTFOO_PYTHON=sys.executable, PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1",
        REPEAT="1", JOBS="1", PASSHAT_TASKS="py-median", OUT=str(results), PROGRESS="1",
    )  # fmt: skip
    done = subprocess.run([str(ROOT / "scripts" / "demo.sh")], env=env, capture_output=True, text=True, timeout=600,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    # It was silent for the whole eval (six minutes at the default size): now how long first, then progress.
    assert "demo: 1 trials (1 tasks x --repeat 1, 1 at a time), each the real CLI in a sandbox, then its graders: " \
           "about 1 min on 2 idle CPUs; progress every 1s" in lines  # fmt: skip
    assert any(line.startswith("demo: 0/1 trials in ") for line in lines), done.stdout[-2000:]
    assert any(line.startswith("demo: promptfoo eval --repeat 1 done in ") for line in lines)
    assert HEADER in "\n".join(lines), done.stdout[-2000:]
    start = next(i for i, line in enumerate(lines) if line.startswith(HEADER)) + 1
    commands = [line.strip() for line in lines[start:] if line.startswith("  ")]
    assert lines[start:] == [f"  {c}" for c in commands], "the demo's last lines are the commands, nothing after"
    return home, results, commands


def fresh_shell(home: Path, **extra: str) -> dict[str, str]:
    """What `env -i` leaves, plus HOME: no venv, no node_modules/.bin, no PROMPTFOO_*."""
    return {"HOME": str(home), "PATH": MINIMAL_PATH, "LANG": "C.UTF-8", **extra}


def test_a_new_shell_does_not_have_them(demo, tmp_path):
    home, _, _ = demo
    done = subprocess.run(["bash", "--noprofile", "--norc", "-c", "command -v passhat || command -v promptfoo"],
                          cwd=tmp_path, env=fresh_shell(home), capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""  # why the demo says how to get them


def test_the_printed_activation_and_report_work_in_a_new_shell(demo, tmp_path):
    home, results, commands = demo
    activate, report, view = commands
    assert activate == f". {ROOT / 'activate'}"
    assert report == f"passhat report {results} --k 1,3,5,10" and view == "passhat view"
    script = f"set -e\n{activate}\n{report}\npromptfoo --version\nnode --version\n"
    done = subprocess.run(["bash", "--noprofile", "--norc", "-c", script], cwd=tmp_path, env=fresh_shell(home),
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "py-median" in done.stdout, done.stdout
    node = done.stdout.strip().splitlines()[-1]
    assert node.startswith("v22."), node  # the pinned Node that promptfoo 0.123 needs, not the system's


def test_the_printed_view_serves_the_demo_eval_in_a_new_shell(demo, tmp_path):
    """`passhat view` (promptfoo view, with the trials' links served beside it) as the demo prints it."""
    home, results, commands = demo
    activate, _, view = commands
    port = free_port()
    # promptfoo 0.123.1 listens on every interface: the tests' preload binds it to 127.0.0.1 (browser_helpers)
    env = fresh_shell(home, NODE_OPTIONS=f"--import={(SCRIPTS / '_loopback.mjs').as_uri()}",
                      PASSHAT_VIEW_PORT=str(free_port()))  # fmt: skip
    log = tmp_path / "view.log"
    with log.open("w") as out:
        server = subprocess.Popen(["bash", "--noprofile", "--norc", "-c", f"{activate}\nexec {view} -- --port {port} --no"],
                                  cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                  start_new_session=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while server.poll() is None and not _healthy(base) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _healthy(base), log.read_text()[-3000:]
        with urllib.request.urlopen(f"{base}/api/results", timeout=10) as response:
            listed = response.read().decode()
        assert json.loads(results.read_text())["evalId"] in listed, listed[:2000]
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)  # the session bash exec'd into: promptfoo and its children
        server.wait(timeout=30)
