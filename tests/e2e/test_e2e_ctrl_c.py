"""Ctrl+C while trials are running, then the whole recovery path, with the real promptfoo 0.123.1.

promptfoo saves each provider call it cuts off as an error row ("Worker shutting down", no repeat_index) and
`promptfoo eval --resume` counts that row as done: after resume the report must name the task and repeat
of each and give the fix that works, `promptfoo eval --retry-errors --repeat N`, after which the eval is complete.
Both resume and retry-errors write to the first run's `-o` path, whatever `-o` they are given.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, TASKS

from passhat.cli import main
from passhat.fake_model import start_in_thread

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
RUN = ("node-slugify", "py-median")
REPEAT = 10
JOBS = 2
SLOW = 0.5  # seconds the scripted model holds every reply
WAITING = 0.3  # a request younger than this still has SLOW - WAITING s to wait for its reply


def _finished(state: Path, task: str, repeat: int) -> bool:
    return any(state.glob(f"artifacts/*/{task}/r{repeat:03d}-*/trial.json"))  # written as the provider returns


def _report(capsys: pytest.CaptureFixture[str], path: Path) -> dict:
    assert main(["report", str(path), "--format", "json", "--k", "1"]) == 0
    return json.loads(capsys.readouterr().out)


def test_ctrl_c_mid_trial_then_resume_then_retry_errors_completes_the_eval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = start_in_thread(TASKS, f"slow:{SLOW}")  # oracle, each reply late: a trial is in flight most of the time
    state = tmp_path / ".passhat"
    config = {
        "prompts": ["{{prompt}}"],
        "providers": [
            {
                "id": f"file://{ROOT}/providers/claude_code.py",
                "label": "slow",
                "config": {"state_dir": str(state), "timeout_s": 120},
            }
        ],
        "tests": f"file://{ROOT}/tasks/promptfoo_tests.py:generate_tests",
    }
    (tmp_path / "promptfooconfig.yaml").write_text(yaml.safe_dump(config))
    env = {
        **os.environ,
        "PASSHAT_FAKE_MODEL_URL": server.url,
        "PROMPTFOO_PYTHON": sys.executable,
        "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo-home"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PASSHAT_TASKS": ",".join(RUN),
    }
    promptfoo = shutil.which("promptfoo")
    assert promptfoo is not None

    def promptfoo_eval(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [promptfoo, "eval", *args, "--no-progress-bar"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode in (0, 100), done.stdout[-3000:] + done.stderr[-3000:]
        return done

    try:
        with open(tmp_path / "first.log", "w") as log:
            first = subprocess.Popen(
                [promptfoo, "eval", "--repeat", str(REPEAT), "-j", str(JOBS), "--no-cache", "--no-progress-bar",
                 "-o", "results.json"],
                cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            # Interrupt when some trials have ended and both of promptfoo's steps are inside a provider call, each
            # waiting for a model reply that came in less than WAITING s ago (slow:SLOW holds it SLOW s): no trial
            # can end, and no grader run, before the signal lands.
            steps = [(task, r) for task in RUN for r in range(REPEAT)]
            seen = dict.fromkeys(steps, (0, 0.0))  # requests so far, when that count was first seen
            deadline, in_flight = time.monotonic() + 300, []
            while time.monotonic() < deadline and first.poll() is None:
                now = time.monotonic()
                for step in steps:
                    if (count := server.requests_seen((*step, None))) != seen[step][0]:
                        seen[step] = (count, now)
                finished = [step for step in steps if _finished(state, *step)]
                in_flight = [s for s in steps if seen[s][0] and s not in finished]
                waiting = [s for s in in_flight if now - seen[s][1] < WAITING]
                if len(finished) >= 2 and len(in_flight) == len(waiting) == JOBS:
                    break
                time.sleep(0.02)
            assert len(in_flight) == JOBS, f"no moment with {JOBS} trials in flight; see {tmp_path / 'first.log'}"
            os.killpg(first.pid, signal.SIGINT)  # what Ctrl+C in a terminal does
            first.wait(timeout=120)
        paused = (tmp_path / "first.log").read_text()
        assert "Evaluation paused" in paused and "Worker shutting down" in paused, paused[-3000:]
        assert not (tmp_path / "results.json").exists()  # a paused eval writes no -o file

        promptfoo_eval("--resume", "-o", "resumed.json")
        assert not (tmp_path / "resumed.json").exists()  # the first run's -o path, not this one
        resumed = _report(capsys, tmp_path / "results.json")

        retried_run = promptfoo_eval("--retry-errors", "--repeat", str(REPEAT), "-o", "retried.json")
        assert not (tmp_path / "retried.json").exists()
        final = _report(capsys, tmp_path / "results.json")
    finally:
        server.stop()

    # After --resume: every cut-off call is an infra error, named by task and repeat, with the fix that works.
    cut_off = {task: sorted(r for t, r in in_flight if t == task) for task in RUN}
    summary = resumed["summary"]
    for task, cut in cut_off.items():
        said = [line for line in summary if line.startswith(f"WARNING: {task} ")]
        if not cut:
            assert not said, summary
            continue
        repeats = ("repeat " if len(cut) == 1 else "repeats ") + ", ".join(map(str, cut))
        assert len(said) == 1, summary
        assert said[0].startswith(f"WARNING: {task} {repeats} {'was' if len(cut) == 1 else 'were'} cut off by Ctrl+C")
        assert f"Run `promptfoo eval --retry-errors --repeat {REPEAT}`" in said[0]
    assert not [line for line in summary if "without `--repeat N`" in line], summary  # not the wrong cause
    for task in resumed["tasks"]:
        cut = cut_off[task["task"]]
        assert task["interrupted_repeats"] == cut, task
        assert (task["n"], task["passes"], task["errors"]) == (REPEAT - len(cut), REPEAT - len(cut), len(cut))
        assert (task["missing_repeats"], task["duplicate_repeats"]) == ([], [])

    # After --retry-errors --repeat N: complete, every (task, repeat) once, 20/20.
    assert f"Found {len(in_flight)} ERROR results to retry" in retried_run.stdout + retried_run.stderr
    rows = json.loads((tmp_path / "results.json").read_text())["results"]["results"]
    seen = sorted((row["response"]["metadata"]["task_id"], row["response"]["metadata"]["repeat_index"]) for row in rows)
    assert seen == sorted((task, r) for task in RUN for r in range(REPEAT))
    got = {t["task"]: (t["n"], t["passes"], t["errors"], t["interrupted_repeats"]) for t in final["tasks"]}
    assert got == {task: (REPEAT, REPEAT, 0, []) for task in RUN}
    assert not [line for line in final["summary"] if line.startswith("WARNING")], final["summary"]
