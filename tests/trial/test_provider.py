"""The provider through the real Agent SDK and bundled Claude Code CLI, against the scripted model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import ROOT

from passhat.common._errors import PasshatError
from passhat.trial._config import model_endpoint, parse_config
from passhat.trial._provider import call_api


def _call(tmp_path, fake_model, task_id="py-median", repeat=0, **config):
    options = {
        "config": {
            "basePath": str(ROOT),
            "state_dir": str(tmp_path / "state"),
            "fake_model_url": fake_model.url,
            **config,
        }
    }
    return call_api("Fix the bug.", options, {"vars": {"task_id": task_id}, "repeatIndex": repeat, "evaluationId": "t"})


def _live_process_groups(trial_dir) -> list[int]:
    """Process groups the launcher recorded for this trial that still have a member."""
    alive = []
    for pid in map(int, (Path(trial_dir) / "cli.pid").read_text().split()):
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            continue
        alive.append(pid)
    return alive


def test_oracle_trial_records_the_solution_as_its_patch(tmp_path, fake_model):
    response = _call(tmp_path, fake_model, repeat=3)
    meta = response["metadata"]
    assert "error" not in response
    assert response["output"].startswith("Done. I changed 1 file(s): stats_utils/median.py")
    assert meta["status"] == "ok" and meta["subtype"] == "success" and meta["is_error"] is False
    assert meta["task_id"] == "py-median" and meta["repeat_index"] == 3
    assert meta["changed_paths"] == ["stats_utils/median.py"]
    assert meta["num_turns"] >= 3  # Read, Edit, summary
    assert meta["scripted_model"] is True  # its dollars are not real money: reports label them
    assert meta["model_requests"] >= meta["num_turns"]  # the proxy saw every turn answered
    # The scripted model's dollars are the CLI pricing made-up tokens: Promptfoo's totals get $0 ("Total Cost: $9.78"
    # for a free rehearsal before), the figure stays in metadata beside scripted_model: true.
    assert response["cost"] == 0 and meta["cost_usd"] > 0
    assert meta["eval_id"] == "t"  # the viewer's running figures are kept per eval
    assert response["tokenUsage"]["total"] > 0
    patch = Path(meta["patch_path"]).read_text()
    assert "+    return (ordered[middle - 1] + ordered[middle]) / 2" in patch
    assert '"type": "ResultMessage"' in Path(meta["transcript_path"]).read_text()
    assert not (tmp_path / "state" / "sandboxes").exists() or not any((tmp_path / "state" / "sandboxes").iterdir())


def test_noop_trial_changes_nothing(tmp_path, fake_model):
    response = _call(tmp_path, fake_model, fake_script="noop")
    assert response["metadata"]["status"] == "ok"
    assert response["metadata"]["changed_paths"] == []
    assert Path(response["metadata"]["patch_path"]).read_bytes() == b""


def test_deadline_kills_the_cli_and_marks_a_timeout(tmp_path, fake_model):
    response = _call(tmp_path, fake_model, timeout_s=0.3)
    meta = response["metadata"]
    assert "error" not in response  # a timeout is the agent's failure, not infrastructure
    assert meta["status"] == "timeout" and meta["subtype"] == "timeout"
    assert (Path(meta["trial_dir"]) / "cli.pid").read_text().strip()  # the CLI did start
    assert _live_process_groups(meta["trial_dir"]) == []


def test_claude_md_variant_reaches_the_model_but_not_the_patch(tmp_path, fake_model):
    context = tmp_path / "terse.md"
    context.write_text("Always answer tersely. passhat-context-marker-42\n")
    response = _call(tmp_path, fake_model, claude_md=str(context))
    sent = [str(r["body"]) for r in fake_model.requests if r["task_id"] == "py-median"]
    assert any("passhat-context-marker-42" in body for body in sent)
    assert response["metadata"]["changed_paths"] == ["stats_utils/median.py"]


def test_append_system_prompt_reaches_the_model(tmp_path, fake_model):
    _call(tmp_path, fake_model, fake_script="noop", append_system_prompt="passhat-append-marker-7")
    assert any("passhat-append-marker-7" in str(r["body"].get("system")) for r in fake_model.requests)


def test_the_agent_runs_with_claude_codes_own_system_prompt(tmp_path, fake_model):
    _call(tmp_path, fake_model, fake_script="noop")
    system = str(fake_model.requests[-1]["body"].get("system"))
    assert len(system) > 2000  # the SDK alone would send a one-line prompt, not Claude Code's


def test_max_turns_is_an_agent_failure_not_infrastructure(tmp_path, fake_model):
    response = _call(tmp_path, fake_model, max_turns=1)  # the oracle needs Read, Edit, then a summary
    assert "error" not in response
    assert response["metadata"]["status"] == "max_turns"
    assert response["metadata"]["subtype"] == "error_max_turns"


def test_without_claude_md_no_project_settings_leak_in(tmp_path, fake_model):
    _call(tmp_path, fake_model, fake_script="noop")
    sent = [str(r["body"]) for r in fake_model.requests]
    assert sent and not any("passhat-context-marker-42" in body for body in sent)


def test_the_cli_sees_a_scrubbed_environment(tmp_path, fake_model, monkeypatch):
    monkeypatch.setenv("PASSHAT_TEST_SECRET", "do-not-leak")
    response = _call(tmp_path, fake_model, fake_script="noop", env={"VISIBLE_FLAG": "1"})
    launcher = (Path(response["metadata"]["trial_dir"]) / "launcher.sh").read_text()
    assert "/usr/bin/env -i" in launcher and "setsid" in launcher
    assert "PASSHAT_TEST_SECRET" not in launcher and "VISIBLE_FLAG" in launcher
    assert "passhat-scripted-model" not in launcher  # values (keys!) never land on disk
    assert response["metadata"]["status"] == "ok"


def test_api_failure_is_an_infrastructure_error_not_a_failed_output(tmp_path, fake_model):
    response = _call(tmp_path, fake_model, fake_script="error:500", max_retries=1)  # the default retries take 3 min
    assert "output" not in response
    assert response["error"].startswith("infrastructure error in task py-median trial 0:")
    assert response["metadata"]["status"] == "infra_error"


def test_sandbox_setup_failure_is_an_infrastructure_error(tmp_path, fake_model, task_copy):
    folder = task_copy("py-median")
    (folder / "task.yaml").write_text((folder / "task.yaml").read_text() + "setup: exit 7\n")
    options = {
        "config": {"basePath": str(ROOT), "state_dir": str(tmp_path / "state"), "fake_model_url": fake_model.url}
    }
    response = call_api("x", options, {"vars": {"task_id": "py-median", "task_dir": str(folder)}, "repeatIndex": 1})
    assert "output" not in response
    assert "infrastructure error (sandbox) in task py-median" in response["error"]
    assert "setup 'exit 7' exited 7" in response["error"]
    assert response["metadata"] == {
        "task_id": "py-median",
        "repeat_index": 1,
        "status": "infra_error",
        "scripted_model": True,
        "rateLimitKind": "quota",  # promptfoo's scheduler never reruns it (issue 23)
    }


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param({"max_turn": 3}, r"field 'max_turn': 3: unknown field; known fields: ", id="unknown-field"),
        pytest.param({"max_turns": "3"}, r"field 'max_turns': '3': expected a int", id="wrong-type"),
        pytest.param({"timeout_s": True}, r"field 'timeout_s': True: expected a number", id="bool-as-number"),
        pytest.param(
            {"permission_mode": "yolo"}, r"'permission_mode': 'yolo': use one of default, acceptEdits", id="mode"
        ),
        pytest.param({"timeout_s": 0}, r"'timeout_s': 0.0: use a positive number", id="timeout"),
        pytest.param({"claude_md": "nope.md"}, r"'claude_md': 'nope.md': no such file .*nope.md", id="claude-md"),
    ],
)
def test_bad_provider_config_is_one_clear_error(config, message, tmp_path):
    with pytest.raises(PasshatError, match=message):
        parse_config({"basePath": str(tmp_path), **config})


def test_no_model_without_fake_url_or_explicit_opt_in(tmp_path, monkeypatch):
    monkeypatch.delenv("PASSHAT_FAKE_MODEL_URL", raising=False)
    monkeypatch.delenv("PASSHAT_REAL_CLAUDE", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-real-key")  # a key alone never spends money
    with pytest.raises(PasshatError, match="opt in to real Claude with PASSHAT_REAL_CLAUDE=1"):
        model_endpoint(parse_config({"basePath": str(tmp_path)}), "t", 0)
    monkeypatch.setenv("PASSHAT_REAL_CLAUDE", "1")
    assert model_endpoint(parse_config({"basePath": str(tmp_path)}), "t", 0) == {"ANTHROPIC_API_KEY": "sk-real-key"}


def test_call_api_returns_an_error_for_bad_config_not_a_traceback(tmp_path):
    response = call_api("x", {"config": {"basePath": str(tmp_path), "nope": 1}}, {"vars": {"task_id": "py-median"}})
    assert response == {"error": response["error"], "metadata": {"rateLimitKind": "quota"}}  # never rerun
    assert "field 'nope'" in response["error"]


# --- what ran, and the trial's end as the CLI saw it (issue 34, point 5) -------------------------------------------


def test_the_record_names_the_cli_the_sdk_and_the_models_that_answered(tmp_path, fake_model):
    """The init message's claude_code_version, the SDK's __version__ and the result's per-model usage keys land in
    the row's metadata and in trial.json: the report's header and the drift history read them."""
    import json

    import claude_agent_sdk

    from passhat.trial._agent import bundled_cli

    response = _call(tmp_path, fake_model, fake_script="noop")
    meta = response["metadata"]
    shipped = (bundled_cli().parent / "claude.version").read_text().split()[0]  # "2.1.332 (Claude Code)"
    assert meta["claude_code_version"] == shipped
    assert meta["agent_sdk_version"] == claude_agent_sdk.__version__
    asked = sorted({r["body"]["model"] for r in fake_model.requests if r["task_id"] == "py-median"})
    assert meta["models"] == asked  # the scripted model answers as the model asked for
    assert meta["model_usage"][asked[0]]["outputTokens"] > 0
    assert meta["terminal_reason"] == "completed" and meta["api_error_status"] is None
    on_disk = json.loads((Path(meta["trial_dir"]) / "trial.json").read_text())
    assert {key: on_disk[key] for key in ("claude_code_version", "agent_sdk_version", "models")} == {
        "claude_code_version": shipped, "agent_sdk_version": claude_agent_sdk.__version__, "models": asked,
    }  # fmt: skip


def test_the_cli_version_without_an_init_message_is_asked_of_the_cli_once(tmp_path):
    from passhat.trial._agent import bundled_cli, cli_version

    shipped = (bundled_cli().parent / "claude.version").read_text().split()[0]
    assert cli_version() == shipped and cli_version.cache_info().currsize == 1


@pytest.mark.parametrize(
    ("script", "words", "status"),
    [
        pytest.param("error:529", ["the model API was overloaded (HTTP 529)", "max_retries:"], 529, id="529"),
        pytest.param(
            "rate-limit:9", ["the model API rate-limited the trial (HTTP 429)", "promptfoo eval -j"], 429, id="429"
        ),
        pytest.param("error:503", ["the model API failed (HTTP 503, a server error)"], 503, id="503"),
        pytest.param("oracle+overloaded:9", ["the model API was overloaded (HTTP 529)"], 529, id="529-overloaded"),
        pytest.param(
            "cut:9", ["the model API's replies broke off mid-stream", "cut: the event stream ended"], None, id="cut"
        ),
        pytest.param("hang", ["the model API did not answer in time", "api_timeout_s:"], None, id="hang"),
    ],
)
def test_an_api_error_is_an_infra_error_that_names_the_status_and_the_fix(tmp_path, fake_model, script, words, status):
    response = _call(tmp_path, fake_model, fake_script=script, max_retries=0, api_timeout_s=5)
    meta = response["metadata"]
    assert meta["status"] == "infra_error" and "output" not in response
    for word in [*words, "--retry-errors"]:
        assert word in response["error"], response["error"]
    assert response["error"].startswith(f"infrastructure error in task py-median trial 0: {words[0]}")
    assert meta["api_error_status"] == status and meta["terminal_reason"] == "api_error"


def test_permission_denials_are_recorded_tool_by_tool(tmp_path, fake_model):
    """In `default` permission mode the headless CLI refuses the oracle's Edit: the trial record lists it."""
    response = _call(tmp_path, fake_model, permission_mode="default")
    meta = response["metadata"]
    assert meta["permission_denials"] == 1 and meta["changed_paths"] == []
    (denied,) = meta["permission_denied"]
    assert denied["tool_name"] == "Edit" and denied["tool_use_id"].startswith("toolu_")
    assert "stats_utils/median.py" in denied["input"] and len(denied["input"]) <= 200


def test_promptfoos_token_usage_is_the_clis_per_model_usage_after_a_retried_request(tmp_path, fake_model):
    """After a 529 and a stream broken by overloaded_error, the CLI's `usage` leaves out replies that its per-model
    usage counts: Promptfoo's tokenUsage sums the per-model figures, every reply the trial was charged for."""
    response = _call(tmp_path, fake_model, fake_script="oracle+overloaded:1+stream-error:1+cache")
    meta = response["metadata"]
    assert meta["status"] == "ok", response.get("error")
    by_model = meta["model_usage"].values()
    output, prompt = (sum(m[key] for m in by_model) for key in ("outputTokens", "inputTokens"))
    assert response["tokenUsage"]["completion"] == output and response["tokenUsage"]["prompt"] == prompt
    assert response["tokenUsage"]["cached"] == sum(m["cacheReadInputTokens"] for m in by_model) > 0


def _tools_offered(meta: dict) -> list[str]:
    """The tools of the CLI's init message, as the transcript holds it."""
    import json

    for line in Path(meta["transcript_path"]).read_text().splitlines():
        message = json.loads(line)
        if message.get("type") == "SystemMessage" and message.get("subtype") == "init":
            return sorted(message["data"]["tools"])
    raise AssertionError("no init message in the transcript")


def test_bare_runs_the_cli_as_claude_bare_does(tmp_path, fake_model):
    """`bare: true` is `claude --bare -p` (a team's cron job): Bash, Edit and Read only; without it, the full set."""
    bare = _call(tmp_path / "bare", fake_model, bare=True)
    full = _call(tmp_path / "full", fake_model, repeat=1)
    assert "error" not in bare, bare.get("error")
    assert bare["metadata"]["changed_paths"] == ["stats_utils/median.py"]
    assert _tools_offered(bare["metadata"]) == ["Bash", "Edit", "Read"]
    assert {"Bash", "Edit", "Read", "Write"} <= set(_tools_offered(full["metadata"]))


@pytest.mark.parametrize(
    ("extra", "named"),
    [({"setting_sources": ["project"]}, "setting_sources"), ({"claude_md": "README.md"}, "claude_md"),
     ({"auth": {"oauth_token_env": "CLAUDE_CODE_OAUTH_TOKEN"}}, "OAuth token")],
)  # fmt: skip
def test_bare_with_what_it_cannot_read_is_one_clear_error(tmp_path, extra, named):
    with pytest.raises(PasshatError, match=f"'bare': True: .*{named}"):
        parse_config({"basePath": str(ROOT), "bare": True, **extra})
