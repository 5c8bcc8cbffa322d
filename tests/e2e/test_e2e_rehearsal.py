"""The rehearsal of the real-API path that costs nothing: the example suite (promptfooconfig.yaml) through the real
`promptfoo eval`, once in real-API mode — PASSHAT_REAL_CLAUDE=1, a dummy ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL at
`passhat fake-model --open`, which answers the API's own /v1/messages as the API does (compressed as the CLI
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
import time
from pathlib import Path

import pytest
from conftest import ROOT, SHIPPED_TASKS, TASKS

from passhat.tasks import load_task
from passhat.trial.spend import cost_usd

pytestmark = pytest.mark.e2e
REPEAT = 2
SCRIPT = "oracle+real"
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
def server_url(tmp_path_factory):
    folder = tmp_path_factory.mktemp("open")
    url_file, log = folder / "url", folder / "server.log"
    command = [sys.executable, "-m", "passhat.cli", "fake-model", "--open", "--tasks-dir", str(TASKS)]
    with log.open("w") as err:
        server = subprocess.Popen(
            [*command, "--script", SCRIPT, "--port", "0", "--url-file", str(url_file)], stderr=err
        )
        try:
            for _ in range(200):
                if url_file.is_file() and url_file.read_text().strip():
                    break
                if server.poll() is not None:
                    pytest.fail(f"passhat fake-model exited: {log.read_text()}")
                time.sleep(0.05)
            yield url_file.read_text().strip()  # http://passhat:<secret>@127.0.0.1:PORT
        finally:
            server.terminate()
            server.wait(timeout=10)


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
def runs(tmp_path_factory, server_url):
    origin = server_url.replace(server_url.split("//", 1)[1].split("@", 1)[0] + "@", "")  # the URL without its secret
    work = tmp_path_factory.mktemp("rehearsal")
    real = _eval(
        work / "real",
        {"PASSHAT_REAL_CLAUDE": "1", "ANTHROPIC_BASE_URL": origin, "ANTHROPIC_API_KEY": "sk-ant-passhat-rehearsal"},
    )
    scripted = _eval(work / "scripted", {"PASSHAT_FAKE_MODEL_URL": server_url})
    return real, scripted


def _meta(row: dict) -> dict:
    return row["response"]["metadata"]


def verdicts(rows: list[dict]) -> dict[tuple[str, int], bool]:
    return {(_meta(r)["task_id"], _meta(r)["repeat_index"]): r["success"] for r in rows}


def test_every_trial_ran_without_an_infra_error(runs):
    for rows, scripted in zip(runs, (False, True), strict=True):
        assert len(rows) == len(SHIPPED_TASKS) * REPEAT
        assert [
            (_meta(r)["task_id"], _meta(r)["status"], r.get("error")) for r in rows if _meta(r)["status"] != "ok"
        ] == []
        assert all(_meta(r)["scripted_model"] is scripted for r in rows)


def test_real_mode_gives_the_verdicts_of_the_scripted_routes(runs):
    real, scripted = runs
    assert verdicts(real) == verdicts(scripted)
    impossible = {t for t in SHIPPED_TASKS if load_task(TASKS / t).expect == "impossible"}
    assert impossible and {task for (task, _), passed in verdicts(real).items() if not passed} == impossible  # oracle


def test_every_real_trial_is_charged_the_usage_the_cli_saw_priced_as_the_cli_prices_it(runs):
    real, _ = runs
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
