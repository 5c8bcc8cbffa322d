"""The trial's path as a pipeline (issue 32): the provider config and the context are parsed once, at the edge
(a Ray node parses what it was shipped with the same function, over its own folders); each stage cleans up on its
way out when a later one fails; the provider's package loads its stages on first use only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, TASKS

from passhat.cluster import _node
from passhat.trial import _config, _isolation, _provider
from passhat.trial._isolation import confinement
from passhat.trial._provider import call_api, on_node
from passhat.trial.stages import _run, _trial
from passhat.trial.stages._trial import Trial, parse_trial

FAKE = f"http://passhat:{'ab' * 16}@127.0.0.1:9"  # nothing listens: no stage here reaches the model
needs_bwrap = pytest.mark.skipif(confinement("auto").bwrap is None, reason="bwrap cannot build a sandbox here")


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    seen: list[dict] = []
    real = _config.parse_config

    def counted(raw: dict) -> _config.ProviderConfig:
        seen.append(raw)
        return real(raw)

    monkeypatch.setattr(_trial, "parse_config", counted)
    monkeypatch.setattr(_config, "parse_config", counted)
    return seen


def test_a_guarded_trial_parses_its_config_once(tmp_path, monkeypatch):
    """The budget guard, the limits and the stages read the parsed Trial: the raw config is parsed once."""
    seen = _count_parses(monkeypatch)
    monkeypatch.setattr(_isolation, "_which_bwrap", lambda: None)  # the trial ends at its first stage
    config = {"basePath": str(ROOT), "state_dir": str(tmp_path / "s"), "isolation": "bwrap", "budget_usd": 5,
              "fake_model_url": FAKE}  # fmt: skip
    response = call_api("x", {"config": config}, {"vars": {"task_id": "py-median"}, "evaluationId": "e"})
    assert "install the Debian package bubblewrap" in response["error"]
    assert len(seen) == 1
    assert json.loads((tmp_path / "s" / "budget" / "e.json").read_text())["in_flight"] == {}  # settled


def test_a_ray_node_parses_what_it_was_shipped_with_the_edges_parser(tmp_path, monkeypatch):
    """The driver ships the raw config as given (with the scripted model's URL it found); on the node, the cluster
    puts the node's folders and files over it and on_node parses it with parse_trial: the trial runs there locally,
    its CLAUDE.md the copy placed on the node, its task the node's copy, outside the driver's budget guard."""
    (tmp_path / "CLAUDE.md").write_text("driver's")
    raw = {"basePath": str(tmp_path), "executor": "ray", "ray_address": "127.0.0.1:1", "claude_md": "CLAUDE.md",
           "state_dir": "driver-state", "tasks_dir": str(TASKS), "budget_usd": 5}  # fmt: skip
    monkeypatch.setenv("PASSHAT_FAKE_MODEL_URL", FAKE)
    driver = parse_trial("p", raw, {"vars": {"task_id": "py-median"}, "repeatIndex": 4})
    assert driver.config.executor.kind == "ray" and driver.budget == 5
    shipped_raw, shipped_context = driver.shipped()
    assert shipped_raw == {**raw, "fake_model_url": FAKE}
    monkeypatch.delenv("PASSHAT_FAKE_MODEL_URL")  # the node's environment has none: the shipped URL counts

    parsed: list[Trial] = []
    monkeypatch.setattr(_provider, "_here", lambda trial: parsed.append(trial) or {"output": "ran"})
    monkeypatch.setattr(_node, "current_node", lambda: "f" * 40)
    monkeypatch.setattr(_node, "node_root", lambda node: tmp_path / "node")
    monkeypatch.setattr(_node, "task_here", lambda root, task_id, version, bundle: TASKS / task_id)
    files = {"claude_md": ("CLAUDE.md", b"node's")}
    result = _node.run_here(on_node, "p", shipped_raw, shipped_context, ("py-median", "1", []), files)
    assert result["response"] == {"output": "ran"}
    [node] = parsed
    assert node.config.executor.kind == "local" and node.budget is None and node.config.fake_model_url == FAKE
    assert node.config.state_dir == (tmp_path / "node" / "state").resolve() and node.repeat == 4
    assert node.task.dir == TASKS / "py-median" and node.config.claude_md is not None
    assert node.config.claude_md.read_text() == "node's" and node.config.claude_md.is_relative_to(tmp_path / "node")


def _trial_that_fails_in_the_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolation: str) -> dict:
    seen: dict = {}

    def agent_fails(prompt: str, config: object, workdir: Path, env: dict, trial_dir: Path, jail: object) -> None:
        seen["workdir"], seen["jail"] = workdir, jail
        assert workdir.is_dir()
        raise RuntimeError("the agent stage broke")

    monkeypatch.setattr(_run, "run_agent", agent_fails)
    config = {"basePath": str(ROOT), "state_dir": str(tmp_path / "s"), "isolation": isolation, "fake_model_url": FAKE}
    response = call_api("x", {"config": config}, {"vars": {"task_id": "py-median"}})
    assert "internal error (RuntimeError: the agent stage broke)" in response["error"]
    assert list((tmp_path / "s" / "sandboxes").iterdir()) == []  # the sandbox stage removed its sandbox
    return seen


def test_a_failing_stage_leaves_no_sandbox(tmp_path, monkeypatch):
    seen = _trial_that_fails_in_the_agent(tmp_path, monkeypatch, "none")
    assert seen["jail"] is None


@needs_bwrap
def test_a_failing_stage_leaves_no_proxy_and_no_sandbox(tmp_path, monkeypatch):
    seen = _trial_that_fails_in_the_agent(tmp_path, monkeypatch, "bwrap")
    socket = seen["jail"].model_socket
    assert socket is not None and not socket.parent.exists()  # the jail stage stopped its proxy


def test_a_trial_value_never_shows_the_raw_config():
    assert {"raw", "context"} <= {name for name, f in Trial.__dataclass_fields__.items() if not f.repr}


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_the_provider_loads_its_stages_with_the_first_trial_only():
    """A grader reading a TrialOutcome does not import the provider; the provider's edge does not import the
    Agent SDK, the sandbox or the proxy's jail until a trial runs here."""
    grader = _loaded_after("from passhat.trial._outcome import TrialOutcome")
    assert "passhat.trial._provider" not in grader and "claude_agent_sdk" not in grader
    edge = _loaded_after("from passhat.trial import call_api")
    assert "passhat.trial._provider" in edge
    assert not {"claude_agent_sdk", "passhat.trial._sandbox", "passhat.trial.stages._run"} & edge
