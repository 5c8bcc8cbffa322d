"""`passhat eval --until-decided` and the budget guard with the real promptfoo, Agent SDK CLI and git, one task, small
rounds: repeat indices continue across rounds, Ctrl+C inside a round then `--resume` loses and doubles nothing,
and `budget_usd:` stops a plain `promptfoo eval` before it crosses the budget."""

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

pytestmark = pytest.mark.e2e
TASK = "py-median"


def _setup(tmp_path: Path, url: str, budget: float | None = None) -> dict[str, str]:
    config: dict = {"state_dir": str(tmp_path / ".passhat"), "timeout_s": 120}
    if budget is not None:
        config["budget_usd"] = budget
    (tmp_path / "promptfooconfig.yaml").write_text(yaml.safe_dump({
        "prompts": ["{{prompt}}"],
        "providers": [{"id": f"file://{ROOT}/providers/claude_code.py", "label": "cc", "config": config}],
        "tests": f"file://{ROOT}/tasks/promptfoo_tests.py:generate_tests",
    }))  # fmt: skip
    return {
        **os.environ, "PASSHAT_FAKE_MODEL_URL": url, "PROMPTFOO_PYTHON": sys.executable,
        "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo-home"), "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1", "PASSHAT_TASKS": TASK,
    }  # fmt: skip


def _rows(path: Path) -> list[dict]:
    return json.loads(path.read_text())["results"]["results"]


def _resume(out: Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`passhat eval --resume OUT`, as a user runs it after Ctrl+C: it must end well."""
    resumed = subprocess.run([sys.executable, "-m", "passhat", "eval", "--resume", str(out)], cwd=cwd, env=env,
                             capture_output=True, text=True, timeout=600)  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    return resumed


def _report(capsys: pytest.CaptureFixture[str], path: Path) -> dict:
    capsys.readouterr()
    assert main(["report", str(path), "--format", "json", "--k", "1"]) == 0
    return json.loads(capsys.readouterr().out)


def test_rounds_continue_repeats_and_resume_after_ctrl_c_inside_a_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = start_in_thread(TASKS, "slow:0.4")  # oracle, each reply late: a trial is in flight most of the time
    env = _setup(tmp_path, server.url)
    passhat = [sys.executable, "-m", "passhat", "eval"]
    out = tmp_path / "runs"
    try:
        with open(tmp_path / "first.log", "w") as log:
            first = subprocess.Popen(
                # safe for 1 run at 0.3: 2/2 passes leave it open (the mixture's low end 0.137), 4/4 decide it
                [*passhat, "--until-decided", "--round", "2", "--max-trials", "4", "--unattended-runs", "1",
                 "--safe-at", "0.3", "--out", str(out), "--",
                 "-c", "promptfooconfig.yaml", "-j", "1", "--no-progress-bar"],
                cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            # Round 2 runs repeats 2 and 3: interrupt while repeat 3 waits for the model, repeat 2 done.
            deadline = time.monotonic() + 400
            while time.monotonic() < deadline and first.poll() is None:
                done = any((tmp_path / ".passhat").glob(f"artifacts/*/{TASK}/r002-*/trial.json"))
                if done and server.requests_seen((TASK, 3, None)) >= 1:
                    break
                time.sleep(0.05)
            assert first.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
            os.killpg(first.pid, signal.SIGINT)  # what Ctrl+C in a terminal does: passhat and promptfoo get it
            assert first.wait(timeout=120) == 130
        state = json.loads((out / "rounds.json").read_text())
        assert [(r["number"], r["offset"], r["repeat"], r["status"]) for r in state["rounds"]] == [
            (1, 0, 2, "done"), (2, 2, 2, "paused")]  # fmt: skip
        assert state["rounds"][1]["eval_id"], "the paused eval's id, for promptfoo eval --resume"
        assert "passhat eval --resume" in (tmp_path / "first.log").read_text()

        resumed = _resume(out, tmp_path, env)
    finally:
        server.stop()
    assert "stopped after round 2: every task is decided" in resumed.stdout
    rows = _rows(out / "results.json")
    seen = sorted(r["response"]["metadata"]["repeat_index"] for r in rows if r["response"].get("metadata"))
    assert seen == [0, 1, 2, 3]  # every repeat once: nothing lost, nothing doubled
    assert len(rows) == 4
    data = _report(capsys, out / "results.json")
    (task,) = data["tasks"]
    assert (task["n"], task["passes"], task["errors"]) == (4, 4, 0)
    # from rounds: the anytime-valid interval; 4/4 cannot show pass^1 >= 0.9 yet
    assert task["verdict"]["interval"] == "mixture" and task["verdict"]["trials_used"] == 4
    assert data["provenance"]["rounds"][1]["tasks"] == [TASK]
    assert main(["report", str(out / "results.json"), "--k", "1"]) == 0
    assert "2 rounds of passhat eval --until-decided" in " ".join(capsys.readouterr().out.split())


def test_ctrl_c_between_rounds_then_resume_runs_the_next_round_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl+C once round 1 is done and before round 2 has run a trial: passhat is planning, or round 2's Promptfoo
    is starting and has no eval yet. Before, the first left without a word, and the second made `--resume` run
    `promptfoo eval --resume` without an id, which resumes the newest eval: round 1's."""
    server = start_in_thread(TASKS, "oracle")
    env = _setup(tmp_path, server.url)
    out = tmp_path / "runs"
    passhat = [sys.executable, "-m", "passhat", "eval"]
    try:
        with open(tmp_path / "first.log", "w") as log:
            first = subprocess.Popen(
                # as above: 2/2 leave it open (and 2 more are likely to decide it), 4/4 decide it
                [*passhat, "--until-decided", "--round", "2", "--max-trials", "4", "--unattended-runs", "1",
                 "--safe-at", "0.3", "--out", str(out), "--", "-c", "promptfooconfig.yaml", "-j", "1",
                 "--no-progress-bar"],
                cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
            deadline = time.monotonic() + 400
            while time.monotonic() < deadline and first.poll() is None:
                if (out / "round-01.json").exists() and '"done"' in (out / "rounds.json").read_text():
                    break
                time.sleep(0.01)
            assert first.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
            between = server.requests_total((TASK, 2, None)) == 0  # no trial of round 2 has asked the model yet
            os.killpg(first.pid, signal.SIGINT)
            assert first.wait(timeout=120) == 130
        state = json.loads((out / "rounds.json").read_text())
        assert state["rounds"][0]["status"] == "done" and not (out / "round-02.json").exists()
        assert "passhat eval --resume" in (tmp_path / "first.log").read_text()
        if between:  # on a starved host round 2 may already be running: then this is the case above, inside it
            assert "continue with: passhat eval --resume" in (tmp_path / "first.log").read_text()

        resumed = _resume(out, tmp_path, env)
    finally:
        server.stop()
    assert "stopped after round 2: every task is decided" in resumed.stdout, resumed.stdout
    rows = _rows(out / "results.json")
    assert sorted(r["response"]["metadata"]["repeat_index"] for r in rows) == [0, 1, 2, 3]
    (task,) = _report(capsys, out / "results.json")["tasks"]
    assert (task["n"], task["passes"]) == (4, 4)
    # round 2's own file (what its afterAll reports): repeats 2-3, none of 0-1 missing, its header says 2 repeats
    second = _report(capsys, out / "round-02.json")
    assert [(t["n"], t["missing_repeats"]) for t in second["tasks"]] == [(2, [])]
    assert (second["provenance"]["repeats_seen"], second["provenance"]["first_repeat"]) == (2, 2)


def test_budget_usd_refuses_the_trials_that_would_cross_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = start_in_thread(TASKS, "oracle")
    promptfoo = shutil.which("promptfoo")
    assert promptfoo is not None
    try:
        env = _setup(tmp_path, server.url)
        run = [promptfoo, "eval", "-c", "promptfooconfig.yaml", "-j", "1", "--no-cache", "--no-progress-bar"]
        once = subprocess.run([*run, "--repeat", "1", "-o", "once.json"], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600)  # fmt: skip
        assert once.returncode in (0, 100), once.stdout[-2000:]
        cost = _rows(tmp_path / "once.json")[0]["response"]["metadata"]["cost_usd"]
        assert cost > 0  # the CLI prices the scripted model's tokens: a known, repeatable amount per trial
        # Budget 2.5 trials: trial 1 (nothing to forecast from) and 2 ($c + $c <= 2.5c) run; trial 3 would make 3c.
        env = _setup(tmp_path, server.url, budget=2.5 * cost)
        capped = subprocess.run([*run, "--repeat", "5", "-o", "capped.json"], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=600)  # fmt: skip
        assert capped.returncode in (0, 100), capped.stdout[-2000:]
        # The rounds stop before a round whose forecast crosses --budget-usd: round 1 (2 trials) spends 2c, round 2
        # is forecast at 2 x the mean c, and 2c + 2c > 3c.
        env = _setup(tmp_path, server.url)
        rounds = subprocess.run(
            [sys.executable, "-m", "passhat", "eval", "--until-decided", "--round", "2", "--budget-usd", str(3 * cost),
             "--out", "runs", "--", "-c", "promptfooconfig.yaml", "-j", "1", "--no-progress-bar"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert rounds.returncode == 0, rounds.stdout[-3000:] + rounds.stderr[-3000:]
    finally:
        server.stop()
    assert "stopped after round 1: the next round (1 task(s) x 2 trial(s)" in rounds.stdout
    assert f"past --budget-usd {3 * cost:g}" in rounds.stdout
    # scripted dollars carry the mark, and the guard says what it counts
    assert f"--budget-usd {3 * cost:g} counts the dollars each trial records" in rounds.stdout
    assert "simulated dollars (†, not money)" in rounds.stdout
    (after,) = [line for line in rounds.stdout.splitlines() if line.startswith("passhat: after round 1:")]
    assert "† (the scripted model's simulated dollars, not money) spent" in after, after
    assert len(_rows(tmp_path / "runs" / "results.json")) == 2
    rows = _rows(tmp_path / "capped.json")
    ran = [r for r in rows if not r["response"].get("error")]
    refused = [r for r in rows if "budget reached" in (r["response"].get("error") or "")]
    assert (len(ran), len(refused)) == (2, 3)
    spent = sum(r["response"]["metadata"]["cost_usd"] for r in ran)
    assert spent <= 2.5 * cost
    data = _report(capsys, tmp_path / "capped.json")
    (task,) = data["tasks"]
    assert (task["n"], task["errors"]) == (2, 3)  # refused trials are outside n
    reasons = task["infra_error_reasons"]  # the first line of each error: the report says why, and the way on
    assert sum(r["count"] for r in reasons if "budget reached" in r["reason"]) == 3
    assert all("raise budget_usd" in r["reason"] and "--retry-errors --repeat" in r["reason"] for r in reasons)
