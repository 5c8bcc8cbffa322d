"""An eval interrupted mid-run (Ctrl+C to promptfoo's process group) and continued with
`promptfoo eval --resume` loses no trial and doubles none; a grader killed by the interrupt
is counted as an infrastructure error, not as the agent's failure."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml
from conftest import ROOT, TASKS

from passhat.cli import main
from passhat.fake_model import start_in_thread

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
REPEAT = 6


def test_interrupt_then_resume_gives_every_trial_exactly_once(tmp_path, capsys):
    server = start_in_thread(TASKS, "slow:1.5")  # oracle, but slow enough to interrupt mid-eval
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
        "PASSHAT_TASKS": "py-median",
    }
    promptfoo = shutil.which("promptfoo")
    try:
        with open(tmp_path / "first.log", "w") as log:
            first = subprocess.Popen(
                [
                    promptfoo,
                    "eval",
                    "--repeat",
                    str(REPEAT),
                    "-j",
                    "1",
                    "--no-cache",
                    "--no-progress-bar",
                    "-o",
                    "results.json",
                ],
                cwd=tmp_path,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            deadline = time.monotonic() + 300
            while len(list(state.glob("artifacts/*/py-median/*/trial.json"))) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            os.killpg(first.pid, signal.SIGINT)  # what Ctrl+C in a terminal does
            first.wait(timeout=120)
        assert (
            not (tmp_path / "results.json").exists()
            or len(json.loads((tmp_path / "results.json").read_text())["results"]["results"]) < REPEAT
        )
        resumed = subprocess.run(
            [promptfoo, "eval", "--resume", "--no-progress-bar", "-o", "results.json"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        server.stop()
    assert resumed.returncode in (0, 100), resumed.stdout[-2000:]
    rows = json.loads((tmp_path / "results.json").read_text())["results"]["results"]
    repeats = sorted(row["response"]["metadata"]["repeat_index"] for row in rows)
    assert repeats == list(range(REPEAT))  # 0 lost, 0 doubled

    assert main(["report", str(tmp_path / "results.json"), "--format", "json", "--k", "1"]) == 0
    report = json.loads(capsys.readouterr().out)["tasks"][0]
    crashed_graders = sum(1 for row in rows if "Error running Python script" in (row.get("error") or ""))
    # every trial ran the oracle: the only non-passes are graders killed by the interrupt, counted apart
    assert (report["n"], report["passes"], report["errors"]) == (
        REPEAT - crashed_graders,
        REPEAT - crashed_graders,
        crashed_graders,
    )
