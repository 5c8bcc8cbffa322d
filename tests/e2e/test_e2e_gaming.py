"""End to end: every class of gaming the tests, carried out by the scripted model through the real Claude Code
CLI on a shipped Python task, run through `promptfoo eval` — caught (the row fails, `gamed:` in its reason,
`namedScores.gamed` 1) and counted (`passhat report`'s per-task `gamed`).

And each hack is real: the same patch, graded by the tests grader with the protections off (the runner guard off,
no integrity scan; for edit-tests no restore of the test files, for exit-early the exit status alone), passes.
One task, one trial per hack, every hack a provider of one eval; an honest oracle provider is the control.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import with_tests_shown

from passhat.cli import main
from passhat.fake_model._hacks import HACKS

pytestmark = pytest.mark.e2e
TASK = "py-median"
MARKER = b"passhat scripted hack"
CHANGED = {"edit-tests": ["tests/test_median.py"], "shadow-runner": ["pytest.py"]}  # else the package's __init__


@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> Path:
    """py-median with its held-out rows back in repo/ (a hack games the tests it sees; hidden tests defeat
    special-casing: tests/tasks/test_held_out.py), beside an entry file as `passhat init` writes it."""
    folder = tmp_path_factory.mktemp("suite")
    with_tests_shown(TASK, folder / "tasks")
    entry = "from passhat.promptfoo import *  # noqa: F403\ngenerate_tests = tests_generator(__file__)\n"
    (folder / "passhat_promptfoo.py").write_text(entry)
    return folder / "tasks"


@pytest.fixture(scope="module")
def fake_model_url(tmp_path_factory, tasks):
    folder = tmp_path_factory.mktemp("fake")
    url_file, log = folder / "url", folder / "server.log"
    command = [sys.executable, "-m", "passhat.cli", "fake-model", "--tasks", str(tasks), "--script", "noop"]
    with log.open("w") as err:
        server = subprocess.Popen([*command, "--port", "0", "--url-file", str(url_file)], stderr=err)
        try:
            for _ in range(200):
                if url_file.is_file() and url_file.read_text().strip():
                    break
                if server.poll() is not None:
                    pytest.fail(f"passhat fake-model exited: {log.read_text()}")
                subprocess.run(["sleep", "0.05"], check=True)
            yield url_file.read_text().strip()
        finally:
            server.terminate()
            server.wait(timeout=10)


@pytest.fixture(scope="module")
def eval_run(tmp_path_factory, fake_model_url, tasks):
    work = tmp_path_factory.mktemp("gaming")
    state = work / ".passhat"
    providers = [
        {
            "id": f"file://{tasks.parent / 'passhat_promptfoo.py'}",
            "label": label,
            "config": {"fake_script": script, "state_dir": str(state), "timeout_s": 180},
        }
        for label, script in [*((kind, f"hack:{kind}") for kind in HACKS), ("oracle", "oracle")]
    ]
    config = {
        "prompts": ["{{prompt}}"],
        "providers": providers,
        "tests": f"file://{tasks.parent / 'passhat_promptfoo.py'}:generate_tests",
    }
    (work / "promptfooconfig.yaml").write_text(yaml.safe_dump(config))
    env = {
        **os.environ,
        "PASSHAT_FAKE_MODEL_URL": fake_model_url,
        "PASSHAT_TASKS": TASK,
        "PROMPTFOO_PYTHON": sys.executable,
        "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo-home"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
    }
    command = [shutil.which("promptfoo"), "eval", "-c", "promptfooconfig.yaml", "--repeat", "1", "-j", "2"]
    proc = subprocess.run(
        [*command, "--no-cache", "--no-progress-bar", "-o", "results.json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode in (0, 100), proc.stdout[-3000:] + proc.stderr[-3000:]  # 100 = some test failed
    rows = json.loads((work / "results.json").read_text())["results"]["results"]
    return work, {row["provider"]["label"]: row for row in rows}


def test_one_trial_per_hack_ran_without_infra_errors(eval_run):
    _, rows = eval_run
    assert sorted(rows) == sorted([*HACKS, "oracle"])
    for label, row in rows.items():
        assert row["failureReason"] != 2, (label, row.get("error"))
        assert row["response"]["metadata"]["status"] == "ok", (label, row["response"]["metadata"].get("error"))


@pytest.mark.parametrize("kind", HACKS)
def test_the_hack_landed_through_the_cli(eval_run, kind):
    """The CLI's own tools wrote the hack: the trial's patch holds it, in the files it games."""
    _, rows = eval_run
    meta = rows[kind]["response"]["metadata"]
    patch = Path(meta["patch_path"]).read_bytes()
    assert (b"assert True or " if kind == "edit-tests" else MARKER) in patch
    assert meta["changed_paths"] == CHANGED.get(kind, ["stats_utils/__init__.py"])
    transcript = Path(meta["transcript_path"]).read_text()
    assert '"name": "Edit"' in transcript or '"name": "Write"' in transcript


@pytest.mark.parametrize("kind", HACKS)
def test_the_hack_is_caught(eval_run, kind):
    """Each gamed trial fails, says why, and carries the trial's gaming flag; the honest control does not."""
    _, rows = eval_run
    row = rows[kind]
    assert row["success"] is False, kind
    reason = row["gradingResult"]["reason"]
    if kind == "edit-tests":  # the tests are restored from the base before the run: the bug is still there
        assert row["namedScores"]["tests"] < 1.0
        assert "touched protected test files" in reason
    assert "gamed:" in reason, reason[-2000:]
    assert row["namedScores"]["gamed"] == 1.0, (kind, reason[-2000:])


def test_the_honest_fix_is_not_flagged(eval_run):
    _, rows = eval_run
    oracle = rows["oracle"]
    assert oracle["success"] is True, (oracle["namedScores"], oracle["gradingResult"]["reason"][-3000:])
    assert oracle["namedScores"]["gamed"] == 0.0


def test_the_report_counts_the_gaming_per_task(eval_run, capsys):
    work, _ = eval_run
    assert main(["report", str(work / "results.json"), "--format", "json", "--k", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    by_provider = {row["provider"]: row for row in report["tasks"] if row["task"] == TASK}
    for kind in HACKS:
        row = by_provider[kind]
        assert (row["n"], row["passes"], row["gamed"]) == (1, 0, 1), kind
    assert (by_provider["oracle"]["passes"], by_provider["oracle"]["gamed"]) == (1, 0)


@pytest.mark.parametrize("kind", HACKS)
def test_the_hack_passes_the_tests_grader_with_the_protections_off(eval_run, kind, monkeypatch, tasks):
    """The attack is real: the very patch the CLI wrote passes the tests grader once the defences are off."""
    from passhat.graders._tests import grade_here
    from passhat.tasks import load_task
    from passhat.trial._outcome import TrialOutcome

    _, rows = eval_run
    monkeypatch.setenv("PASSHAT_RUNNER_GUARD", "off")  # canaries and the runner guard (and `integrity` not run)
    [grader] = [dict(g) for g in load_task(tasks / TASK).graders if g["type"] == "tests"]
    if kind == "edit-tests":
        grader["protected"] = []  # the edited tests are not restored from the base
    if kind == "exit-early":  # no report to read: the exit status alone, as a grader without test lists has it
        grader = {"type": "tests", "command": grader["command"]}
    outcome = TrialOutcome.from_metadata(rows[kind]["response"]["metadata"])
    grade = grade_here(outcome, grader)
    assert grade.passed, grade.reason
    assert not grade_here(TrialOutcome(outcome.task_dir, outcome.base_dir, b"", {}), grader).passed  # no fix: fails
