"""The fault matrix, end to end with the real CLI: every fault ends within its deadline as an
infrastructure error or an agent failure, never a silent failed output; nothing is left behind.

Infra errors (model API failure after the CLI's retries, CLI crash) come back as Promptfoo's `error`.
A trial past passhat's wall-clock deadline is an agent failure (`timeout`), as DESIGN.md defines.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, TASKS

from passhat.trial._provider import call_api

GRACE_S = 20  # CLI start-up and teardown on a busy 2-core machine


def trial(tmp_path, fake_model, script, repeat=0, **config):
    options = {
        "config": {
            "basePath": str(ROOT),
            "state_dir": str(tmp_path / "state"),
            "fake_model_url": fake_model.url,
            "fake_script": script,
            "timeout_s": 60,
            **config,
        }
    }
    started = time.monotonic()
    response = call_api(
        "Fix the bug.", options, {"vars": {"task_id": "py-median"}, "repeatIndex": repeat, "evaluationId": "f"}
    )
    return response, time.monotonic() - started


def assert_nothing_left(tmp_path, response):
    sandboxes = tmp_path / "state" / "sandboxes"
    assert not sandboxes.exists() or list(sandboxes.iterdir()) == []
    pid_file = Path(response["metadata"]["trial_dir"]) / "cli.pid" if "trial_dir" in response["metadata"] else None
    for pid in map(int, pid_file.read_text().split()) if pid_file and pid_file.exists() else []:
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)


@pytest.mark.parametrize(
    ("script", "config", "status", "infra"),
    [
        pytest.param("error:500", {"max_retries": 1}, "infra_error", True, id="http-500-after-retries"),
        pytest.param("oracle+outage:1", {}, "infra_error", True, id="outage-no-retry"),
        pytest.param("rate-limit:2", {}, "ok", False, id="429-retry-after-then-ok"),
        pytest.param("cut:1", {"max_retries": 2}, "ok", False, id="stream-cut-once-then-ok"),
        pytest.param("cut:99", {"max_retries": 1}, "infra_error", True, id="stream-cut-always"),
        pytest.param(
            "hang", {"api_timeout_s": 2, "max_retries": 0}, "infra_error", True, id="server-hangs-api-timeout"
        ),
        pytest.param("hang", {"timeout_s": 4}, "infra_error", True, id="server-hangs-past-deadline"),
        pytest.param(
            "hang", {"api_timeout_s": 5, "timeout_s": 20}, "infra_error", True, id="server-hangs-retries-past-deadline"
        ),
        pytest.param("oracle", {"max_turns": 1}, "max_turns", False, id="max-turns"),
    ],
)
def test_fault_matrix(tmp_path, fake_model, script, config, status, infra):
    response, wall = trial(tmp_path, fake_model, script, **config)
    assert wall < config.get("timeout_s", 60) + GRACE_S
    assert response["metadata"]["status"] == status
    if infra:
        assert "output" not in response and response["error"].startswith("infrastructure error in task py-median")
    else:
        assert "error" not in response and isinstance(response["output"], str)
    if status == "ok":
        assert response["metadata"]["changed_paths"] == ["stats_utils/median.py"]  # the retry really recovered
    assert_nothing_left(tmp_path, response)


def test_http_500_is_retried_by_the_cli_before_it_gives_up(tmp_path, fake_model):
    trial(tmp_path, fake_model, "error:500", repeat=7, max_retries=2)
    assert fake_model.requests_total(("py-median", 7, "error:500")) == 3  # 1 try + 2 retries


def test_cli_killed_mid_trial_is_an_infra_error(tmp_path, fake_model):
    killed = []

    def kill_when_running():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pid_files = list((tmp_path / "state" / "artifacts").glob("f/py-median/*/cli.pid"))
            if pid_files and pid_files[0].read_text().strip():
                time.sleep(1.0)  # the CLI is waiting on the slow model
                pid = int(pid_files[0].read_text().split()[-1])
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_when_running)
    killer.start()
    response, wall = trial(tmp_path, fake_model, "slow:10")
    killer.join()
    assert killed, "the CLI never started"
    assert wall < 10  # did not wait for the slow model: the crash ended the trial
    assert response["metadata"]["status"] == "infra_error"
    assert "error" in response and "exit code -9" in response["error"]
    assert_nothing_left(tmp_path, response)


def test_a_dead_endpoint_ends_each_trial_in_seconds_and_later_ones_before_the_cli_starts(tmp_path, fake_model):
    """The model server dies mid-eval. With the CLI's own retry budget (10 tries, about 3 minutes), each trial
    took minutes; now the proxy gives up after REFUSED_IN_A_ROW refused connections, and once two trials in a row
    got no answer the third fails before the CLI starts, naming the endpoint and the first error. Once the server
    is back, the next trial runs (what --retry-errors needs)."""
    from passhat.fake_model import start_in_thread

    dead = start_in_thread(TASKS, "oracle")
    url, port = dead.url, dead.server_address[1]
    dead.stop()
    config = {"fake_model_url": url, "unreachable_after": 2}  # max_retries unset: the CLI's default budget
    walls, errors = [], []
    for repeat in range(3):
        response, wall = trial(tmp_path, fake_model, "oracle", repeat=repeat, **config)
        assert response["metadata"]["status"] == "infra_error"
        walls.append(wall)
        errors.append(response["error"])
    for error in errors[:2]:
        assert f"the model API at http://127.0.0.1:{port} could not be reached 3 times in a row" in error, error
        assert "ConnectionRefusedError" in error and "--retry-errors" in error
    assert max(walls[:2]) < 20  # the CLI's retries would take about 180 s
    assert "gave no answer to the last 2 trials" in errors[2] and "first error" in errors[2]
    assert "this trial was not started" in errors[2] and walls[2] < 5
    back = start_in_thread(TASKS, "oracle", port=port, secret=dead.secret)
    try:
        response, _ = trial(tmp_path, fake_model, "oracle", repeat=3, **{**config, "fake_model_url": back.url})
    finally:
        back.stop()
    assert response["metadata"]["status"] == "ok"


def test_an_unwritable_state_dir_is_one_line_with_task_and_repeat(tmp_path, fake_model):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    response, _ = trial(tmp_path, fake_model, "oracle", repeat=4, state_dir=str(blocker / "state"))
    assert response["metadata"] == {
        "task_id": "py-median",
        "repeat_index": 4,
        "status": "infra_error",
        "scripted_model": True,
        "rateLimitKind": "quota",  # promptfoo's scheduler never reruns it (issue 23)
    }
    assert "\n" not in response["error"] and "Traceback" not in response["error"]
    assert "make the state dir" in response["error"] and str(blocker) in response["error"]


def test_a_refused_token_is_an_infra_error_naming_the_endpoint_and_the_fix(tmp_path, fake_model):
    """The scripted model restarted with a new secret while passhat kept the old URL: every request is refused
    (403) before the model answered anything. That is the infrastructure's (auth), not the agent's, and it trips
    the fail-fast like an unreachable endpoint: the next trial is not started."""
    from passhat.fake_model import start_in_thread

    old = start_in_thread(TASKS, "oracle")
    url, port = old.url, old.server_address[1]
    old.stop()
    restarted = start_in_thread(TASKS, "oracle", port=port)  # a new random secret
    try:
        config = {"fake_model_url": url, "unreachable_after": 1}
        first, wall = trial(tmp_path, fake_model, "oracle", repeat=0, **config)
        second, second_wall = trial(tmp_path, fake_model, "oracle", repeat=1, **config)
    finally:
        restarted.stop()
    assert first["metadata"]["status"] == "infra_error" and first["metadata"]["model_requests"] == 0
    assert f"the model API at http://127.0.0.1:{port} refused the credential (HTTP 403)" in first["error"]
    assert "--secret-file" in first["error"] and "--retry-errors" in first["error"]
    assert wall < 30
    assert "this trial was not started" in second["error"] and "refused the credential (HTTP 403" in second["error"]
    assert second_wall < 5
