"""Errors that read once, met through a real `promptfoo eval` of a project as `passhat init` lays it out (one entry
file, its tests generator): a task.yaml with a typo is one line per trial (no Python or Node trace), the other
tasks' tests still generated; and an eval in which every trial was an infra error ends its afterAll block saying it
measured nothing, and `passhat report` of it says so and exits 1 (promptfoo's own exit code is not passhat's to set)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TASKS

pytestmark = pytest.mark.e2e
ENTRY = """from passhat.promptfoo import *  # noqa: F403
from passhat.promptfoo import tests_generator

generate_tests = tests_generator(__file__, tasks_dir="tasks")
"""
CONFIG = """prompts: ["{{prompt}}"]
providers:
  - id: file://passhat_promptfoo.py
    label: cc
tests: file://passhat_promptfoo.py:generate_tests
extensions: [file://passhat_promptfoo.py:afterAll]
"""
REPEAT = 2


def test_a_task_yaml_typo_is_one_line_per_trial_and_the_report_says_nothing_was_measured(tmp_path: Path):
    shutil.copytree(TASKS / "py-median", tmp_path / "tasks" / "py-median")
    spec = tmp_path / "tasks" / "py-median" / "task.yaml"
    spec.write_text(spec.read_text().replace("tier:", "teir:", 1))
    (tmp_path / "passhat_promptfoo.py").write_text(ENTRY)
    (tmp_path / "promptfooconfig.yaml").write_text(CONFIG)
    env = {**os.environ, "PROMPTFOO_PYTHON": sys.executable, "PROMPTFOO_CONFIG_DIR": str(tmp_path / "home"),
           "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}  # fmt: skip
    run = subprocess.run(
        ["promptfoo", "eval", "--repeat", str(REPEAT), "--no-cache", "--no-progress-bar", "-o", "results.json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    shown = run.stdout + run.stderr
    assert (tmp_path / "results.json").is_file(), shown[-3000:]
    assert "Traceback" not in shown and "Stack Trace" not in shown, shown[-3000:]
    said = f"passhat: error: {spec}: field 'tier' is missing"
    assert sum(said in line for line in shown.splitlines()) == REPEAT, shown[-3000:]  # one line per trial

    # promptfoo's own block ends with what afterAll printed: it measured nothing (promptfoo's exit code is its own)
    (nothing,) = [line for line in shown.splitlines() if line.startswith("passhat: measured nothing")]
    assert f"none of the {REPEAT} trial(s) passed or failed" in nothing and "field 'tier' is missing" in nothing
    after = shown.splitlines()[shown.splitlines().index(nothing) + 1]
    assert "exit code is not passhat's to set" in after and "`passhat report`" in after, after

    report = subprocess.run([sys.executable, "-m", "passhat", "report", "results.json"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert report.returncode == 1, report.stdout + report.stderr
    (line,) = [line for line in report.stderr.splitlines() if "measured nothing" in line]
    assert f"none of the {REPEAT} trial(s) passed or failed" in line and "field 'tier' is missing" in line, line
