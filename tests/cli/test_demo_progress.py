"""The demo's progress loop on a fresh clone: before the first trial writes `.passhat/artifacts`, counting the
finished trials found no folder, and under `set -o pipefail` that ended `make demo` with exit 1 and no message
(CI's clean checkouts, progress every second). It now counts 0 and waits.

Only the loop is under test here, so `passhat` and `promptfoo` are small stand-ins on PATH that take the time a
first trial takes; the real demo runs in test_fresh_shell.py."""

from __future__ import annotations

import os
import shutil
import subprocess

from conftest import ROOT

STANDINS = {
    "passhat": """#!/usr/bin/env bash
case "$1" in
  fake-model) while [[ $# -gt 0 ]]; do [[ $1 == --url-file ]] && echo http://passhat:s@127.0.0.1:9 > "$2"; shift; done
              exec sleep 30 ;;
  report) echo "report of $2" ;;
esac
""",
    "promptfoo": """#!/usr/bin/env bash
sleep 3  # the first trial: nothing in .passhat/artifacts for the first progress checks
mkdir -p .passhat/artifacts/e/t/0 && echo '{}' > .passhat/artifacts/e/t/0/trial.json
sleep 1.5
""",
}


def test_the_demo_waits_for_the_first_trial_in_a_fresh_clone(tmp_path):
    repo = tmp_path / "clone"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "demo.sh", repo / "scripts" / "demo.sh")
    (repo / "tasks" / "t").mkdir(parents=True)
    (repo / "tasks" / "t" / "task.yaml").write_text("id: t\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in STANDINS.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "REPEAT": "1", "JOBS": "1", "PROGRESS": "1"}
    done = subprocess.run([str(repo / "scripts" / "demo.sh")], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("demo: 0/1 trials in ") for line in lines), done.stdout
    assert any(line.startswith("demo: promptfoo eval --repeat 1 done in ") for line in lines), done.stdout
    assert "report of .passhat/demo-results.json" in lines


def test_make_demo_says_up_front_what_it_installs_and_how_long(tmp_path):
    """In a fresh clone (nothing installed), `make demo`'s first line says it installs first and about how long."""
    shutil.copy2(ROOT / "Makefile", tmp_path / "Makefile")
    run = subprocess.run(["make", "-s", "demo-intro"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("make demo: first it installs Python packages, promptfoo and Node 22 (about "), (
        run.stdout
    )
    assert "progress every 20 s" in run.stdout and "scripts/demo.sh says how many trials" in run.stdout


def test_a_quiet_install_shows_progress_while_it_runs(tmp_path):
    """scripts/progress.sh (the Makefile's pip install and npm ci): a line every PROGRESS seconds, then the time."""
    run = subprocess.run([str(ROOT / "scripts" / "progress.sh"), "make: npm ci", "sleep", "3.5"], cwd=tmp_path,
                         env={**os.environ, "PROGRESS": "1"}, capture_output=True, text=True, timeout=60)  # fmt: skip
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and len(lines) >= 3, run.stdout
    assert all(line.startswith("make: npm ci: still at it (") for line in lines[:-1]), lines
    assert lines[-1].startswith("make: npm ci: done in ")
    failed = subprocess.run([str(ROOT / "scripts" / "progress.sh"), "x", "false"], capture_output=True, timeout=60)
    assert failed.returncode == 1  # the command's status, for make
