"""`passhat eval --until-decided` with `executor: ray`: the rounds' repeat offset is applied on the driver before a
trial is shipped, so round 2's trials run on the cluster as repeats 2 and 3 (one task, rounds of 2, lean)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TASKS
from test_ray_promptfoo import _eval_env, _validate, _write_config, ray_cluster

from passhat.fake_model import start_in_thread

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray: pip install -e '.[ray]'"),
]


def test_rounds_on_a_ray_cluster_continue_the_repeats(tmp_path: Path) -> None:
    server = start_in_thread(TASKS, "oracle")
    work, out = tmp_path / "eval", tmp_path / "eval" / "runs"
    try:
        with ray_cluster(tmp_path) as cluster:
            _write_config(work, "ray", {"executor": "ray", "ray_address": cluster.address})
            env = {**_eval_env(work, server.url), "PASSHAT_TASKS": "py-median"}
            assert _validate(work, env).returncode == 0
            # safe for 1 run at 0.3: 2/2 passes leave it open, 4/4 decide it — two rounds
            done = subprocess.run(
                [sys.executable, "-m", "passhat", "eval", "--until-decided", "--round", "2", "--max-trials", "4",
                 "--unattended-runs", "1", "--safe-at", "0.3", "--out", str(out), "--", "-c", "promptfooconfig.yaml",
                 "-j", "2", "--no-progress-bar"],
                cwd=work, env=env, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "stopped after round 2: every task is decided" in done.stdout
    rows = json.loads((out / "results.json").read_text())["results"]["results"]
    meta = [r["response"]["metadata"] for r in rows]
    assert sorted(m["repeat_index"] for m in meta) == [0, 1, 2, 3]
    assert {m["executor"] for m in meta} == {"ray"} and all(r["success"] for r in rows)
