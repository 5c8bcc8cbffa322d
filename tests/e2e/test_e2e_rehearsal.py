"""The rehearsal of the real-API path that costs nothing: the example suite (promptfooconfig.yaml) through the real
`promptfoo eval`, once in real-API mode — PASSHAT_REAL_CLAUDE=1, a dummy ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL at
`passhat fake-model --open` (here in the test's process), which answers the API's own /v1/messages as the API does (compressed as the CLI
accepts, pings, thinking with signature deltas, prompt-cache usage in the final message_delta, web search, a 529
with retry-after, an overloaded_error mid-stream: script `oracle+real`) — and once on the scripted model's
tokened routes with the same server and script. Real mode must give the same verdicts, charge every trial, meter
the usage the CLI itself saw and price it as the CLI does, with no infra error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SHIPPED_TASKS, TASKS

from passhat.fake_model import OpenRoute, start_in_thread
from passhat.fake_model._open import trial_of
from passhat.fake_model._wire import choose_encoding
from passhat.tasks import load_task
from passhat.trial.spend import cost_usd

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
REPEAT = 2
SCRIPT = "oracle+real"
KEY = "sk-ant-passhat-rehearsal"  # a dummy key: the scripted model takes any
# the CLI's per-model usage (the result message's modelUsage) by passhat's usage field
CLI_FIELDS = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "cache_creation_input_tokens": "cacheCreationInputTokens",
    "cache_read_input_tokens": "cacheReadInputTokens",
    "ephemeral_5m_input_tokens": "cacheCreationEphemeral5mInputTokens",
    "ephemeral_1h_input_tokens": "cacheCreationEphemeral1hInputTokens",
    "web_search_requests": "webSearchRequests",
}


@pytest.fixture(scope="module")
def server():
    """The scripted model in this process (its ledger and calls are read here): `passhat fake-model --open`."""
    running = start_in_thread(TASKS, SCRIPT)
    running.front = OpenRoute.from_tasks(TASKS)
    yield running
    running.stop()


def _eval(work: Path, model_env: dict[str, str]) -> list[dict]:
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PASSHAT_", "ANTHROPIC_", "CLAUDE_"))}
    env |= {
        "PROMPTFOO_PYTHON": sys.executable,
        "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo-home"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_FAILED_TEST_EXIT_CODE": "0",
        **model_env,
    }
    command = [shutil.which("promptfoo") or "promptfoo", "eval", "-c", str(ROOT / "promptfooconfig.yaml")]
    command += ["--repeat", str(REPEAT), "--no-cache", "--no-progress-bar", "--no-table", "-o", "results.json"]
    proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "passhat report of promptfoo eval" in proc.stdout + proc.stderr  # the afterAll hook's verdict
    return json.loads((work / "results.json").read_text())["results"]["results"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, server):
    """The real-mode run, what the server saw of it (its calls; the usage it reported per trial), then the
    scripted-route run."""
    work = tmp_path_factory.mktemp("rehearsal")
    model_env = {"ANTHROPIC_BASE_URL": server.origin, "ANTHROPIC_API_KEY": KEY}
    real = _eval(work / "real", {"PASSHAT_REAL_CLAUDE": "1", **model_env})
    calls = list(server.calls)
    reported = {}
    for row in real:
        meta = _meta(row)
        route = (meta["task_id"], trial_of(meta["session_id"]), None)
        reported[(meta["task_id"], meta["repeat_index"])] = server.reported(route, broken=True)
    scripted = _eval(work / "scripted", {"PASSHAT_FAKE_MODEL_URL": server.url})
    return real, scripted, calls, reported


def _meta(row: dict) -> dict:
    return row["response"]["metadata"]


def verdicts(rows: list[dict]) -> dict[tuple[str, int], bool]:
    return {(_meta(r)["task_id"], _meta(r)["repeat_index"]): r["success"] for r in rows}


def test_every_trial_ran_without_an_infra_error(runs):
    for rows in runs[:2]:
        assert len(rows) == len(SHIPPED_TASKS) * REPEAT
        assert [
            (_meta(r)["task_id"], _meta(r)["status"], r.get("error")) for r in rows if _meta(r)["status"] != "ok"
        ] == []
        assert all(_meta(r)["scripted_model"] is True for r in rows)  # real mode too: the replies say they are scripted


def test_real_mode_gives_the_verdicts_of_the_scripted_routes(runs):
    real, scripted, _, _ = runs
    assert verdicts(real) == verdicts(scripted)
    impossible = {t for t in SHIPPED_TASKS if load_task(TASKS / t).expect == "impossible"}
    assert impossible and {task for (task, _), passed in verdicts(real).items() if not passed} == impossible  # oracle


def test_real_mode_asked_for_compressed_replies_on_the_apis_own_path(runs):
    _, _, calls, _ = runs
    asked = [call["headers"] for call in calls if call["endpoint"] == "v1/messages"]
    cli = [headers for headers in asked if headers["user-agent"].startswith("claude-cli/")]
    assert cli and all(headers["x-api-key"] == KEY for headers in cli)  # the proxy's key, not the CLI's placeholder
    judge = [headers for headers in asked if headers not in cli]  # passhat's judge: the anthropic SDK, Bearer
    assert judge and all(headers["authorization"] == f"Bearer {KEY}" for headers in judge)
    assert {choose_encoding(headers.get("accept-encoding")) for headers in asked} == {"gzip"}  # compressed replies


def test_every_real_trial_is_charged_the_usage_the_server_reported(runs):
    real, _, _, reported = runs
    for row in real:
        meta = _meta(row)
        key = (meta["task_id"], meta["repeat_index"])
        assert meta["model_spend"]["usage"] == reported[key] and reported[key]["input_tokens"] > 0, key


def test_every_real_trial_is_charged_the_usage_the_cli_saw_priced_as_the_cli_prices_it(runs):
    real, _, _, _ = runs
    for row in real:
        meta = _meta(row)
        spend, models = meta["model_spend"], meta["model_usage"]
        assert spend["usd"] > 0 and spend["requests"] > 0 and spend["over"] is None and spend["unmetered"] is None
        cli = {field: sum(m.get(name, 0) for m in models.values()) for field, name in CLI_FIELDS.items()}
        charged = spend["usage"]
        # every cache and server-tool count as the CLI saw it: read from compressed streams, in the final message_delta
        for field in CLI_FIELDS:
            if field not in ("input_tokens", "output_tokens"):
                assert charged[field] == cli[field] > 0, (meta["task_id"], field)
        # the reply cut by `event: error` (overloaded_error): passhat bills what its message_start reported, the CLI
        # drops it; nothing else differs
        assert charged["input_tokens"] > cli["input_tokens"] and charged["output_tokens"] >= cli["output_tokens"]
        (model,) = models  # one model ran the trial (the judge's calls are not the trial's)
        extra = {"input_tokens": charged["input_tokens"] - cli["input_tokens"]}
        extra["output_tokens"] = charged["output_tokens"] - cli["output_tokens"]
        assert spend["usd"] == pytest.approx(cost_usd(model, charged), abs=1e-6)
        assert models[model]["costUSD"] == pytest.approx(spend["usd"] - cost_usd(model, extra), abs=1e-6)


def test_make_rehearse_runs_the_real_path_for_free(tmp_path):
    """`make rehearse` (scripts/demo.sh --rehearse) as a user runs it: a real ANTHROPIC_API_KEY in the shell is
    replaced by a dummy one, the trial goes through real-API mode to the scripted model, spends nothing real and
    is charged what it metered."""
    home, results = tmp_path / "home", tmp_path / "rehearsal.json"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PASSHAT_", "ANTHROPIC_", "PROMPTFOO_"))}
    env.update(
        HOME=str(home), PATH=f"{ROOT / 'node_modules' / '.bin'}:{Path(sys.executable).parent}:{os.environ['PATH']}",
        PROMPTFOO_PYTHON=sys.executable, PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1",
        REPEAT="1", JOBS="1", PASSHAT_TASKS="py-median", OUT=str(results), PROGRESS="1", SCRIPT=SCRIPT,
        ANTHROPIC_API_KEY="sk-ant-a-real-key-that-must-not-be-used",
    )  # fmt: skip
    done = subprocess.run([str(ROOT / "scripts" / "demo.sh"), "--rehearse"], env=env, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "rehearse: real-API mode against the scripted model (oracle+real) at http://127.0.0.1:" in done.stdout
    (row,) = json.loads(results.read_text())["results"]["results"]
    meta = _meta(row)
    assert row["success"] and meta["status"] == "ok" and meta["scripted_model"] is True, row.get("error")
    assert meta["model_spend"]["usd"] > 0 and meta["model_spend"]["usage"]["web_search_requests"] > 0
    assert "the scripted model (passhat fake-model), not real Claude" in done.stdout  # the report says so
