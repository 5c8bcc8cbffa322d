"""100 trials at -j 8 through the real promptfoo, provider and CLI: every trial's patch holds only
its own edits, artifacts never collide, no row is lost."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, TASKS

from passhat.fake_model import start_in_thread

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
TRIALS = 100


def test_100_trials_at_j8_keep_to_themselves(tmp_path):
    server = start_in_thread(TASKS, "commands")
    try:
        config = {
            "prompts": ["{{prompt}}"],
            "providers": [
                {
                    "id": f"file://{ROOT}/providers/claude_code.py",
                    "label": "commands",
                    "config": {"state_dir": str(tmp_path / ".passhat"), "tasks_dir": str(TASKS), "timeout_s": 240},
                }
            ],
            "tests": [
                {
                    "vars": {
                        "task_id": "py-median",
                        "prompt": "RUN: echo {trial} > trial-{trial}.txt\nRUN: echo {trial} >> stats_utils/median.py",
                    }
                }
            ],
        }
        (tmp_path / "promptfooconfig.yaml").write_text(yaml.safe_dump(config))
        env = {
            **os.environ,
            "PASSHAT_FAKE_MODEL_URL": server.url,
            "PROMPTFOO_PYTHON": sys.executable,
            "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo-home"),
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
        }
        proc = subprocess.run(
            [
                shutil.which("promptfoo"),
                "eval",
                "-c",
                "promptfooconfig.yaml",
                "--repeat",
                str(TRIALS),
                "-j",
                "8",
                "--no-cache",
                "--no-progress-bar",
                "-o",
                "results.json",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=1500,
        )
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads((tmp_path / "results.json").read_text())["results"]["results"]
    assert len(rows) == TRIALS
    repeats = sorted(row["response"]["metadata"]["repeat_index"] for row in rows)
    assert repeats == list(range(TRIALS))  # none lost, none doubled
    trial_dirs = {row["response"]["metadata"]["trial_dir"] for row in rows}
    assert len(trial_dirs) == TRIALS  # artifacts never collide
    for row in rows:
        meta = row["response"]["metadata"]
        trial = meta["repeat_index"]
        assert meta["status"] == "ok"
        assert meta["changed_paths"] == ["stats_utils/median.py", f"trial-{trial}.txt"]
        patch = Path(meta["patch_path"]).read_text()
        added = [line for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")]
        assert added == [f"+{trial}", f"+{trial}"], (trial, added)  # its own edits, nobody else's
    assert not any((tmp_path / ".passhat" / "sandboxes").iterdir())
