"""A run with outages, end to end: promptfoo eval through the provider and the real CLI against a
scripted model that is flaky AND has seeded outages. The report counts the outages as infra errors,
apart from failures, and its pass^k is exactly the pass^k of the fault-free trials."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT, TASKS

from passhat.cli import main
from passhat.fake_model import start_in_thread

pytestmark = pytest.mark.e2e
REPEAT, TASK_IDS = 6, ("py-median", "bump-version")
SCRIPT = "flaky:0.5:11+outage:0.3:4"


def draw(key: str) -> float:  # independent of passhat: first 16 hex digits of sha256 / 16**16
    return int(hashlib.sha256(key.encode()).hexdigest()[:16], 16) / 16**16


def test_outages_are_counted_apart_and_pass_hat_k_is_that_of_the_fault_free_trials(tmp_path, capsys):
    server = start_in_thread(TASKS, SCRIPT)
    try:
        config = {
            "prompts": ["{{prompt}}"],
            "providers": [
                {
                    "id": f"file://{ROOT}/providers/claude_code.py",
                    "label": "faulty",
                    "config": {"state_dir": str(tmp_path / ".passhat"), "timeout_s": 120},
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
            "PASSHAT_TASKS": ",".join(TASK_IDS),
        }
        proc = subprocess.run(
            [
                shutil.which("promptfoo"),
                "eval",
                "--repeat",
                str(REPEAT),
                "-j",
                "2",
                "--no-cache",
                "--no-progress-bar",
                "-o",
                "results.json",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        server.stop()
    assert proc.returncode in (0, 100), proc.stdout[-2000:]
    assert main(["report", str(tmp_path / "results.json"), "--format", "json", "--k", "1,2,3"]) == 0
    tasks = {row["task"]: row for row in json.loads(capsys.readouterr().out)["tasks"]}
    for task_id in TASK_IDS:
        outage = [t for t in range(REPEAT) if draw(f"outage:4:{task_id}:{t}") < 0.3]
        solved = [t for t in range(REPEAT) if t not in outage and draw(f"11:{task_id}:{t}") < 0.5]
        n, c = REPEAT - len(outage), len(solved)
        row = tasks[task_id]
        assert (row["n"], row["passes"], row["errors"]) == (n, c, len(outage)), task_id
        for k in (1, 2, 3):
            expected = (c / n) ** k if n >= k else None  # pass^k = (c/n)^k, undefined when n < k
            assert row["pass_hat_k"][str(k)] == (pytest.approx(expected) if expected is not None else None)
    assert any(tasks[t]["errors"] for t in TASK_IDS)  # the seeds do produce outages: the test can fail
    assert main(["report", str(tmp_path / "results.json"), "--k", "1"]) == 0
    assert "infra error" in capsys.readouterr().out  # said in words, apart from failures
