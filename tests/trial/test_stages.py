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
from passhat.cluster._node import Placed
from passhat.trial import _config, _isolation
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


def test_a_ray_node_parses_what_it_was_shipped_over_its_own_folders(tmp_path):
    """The node gets the raw config as the driver got it, and parse_trial (the edge's own) puts the node's
    folders and files over it: the trial runs there locally, its CLAUDE.md the copy placed on the node."""
    (tmp_path / "CLAUDE.md").write_text("driver's")
    placed = tmp_path / "node" / "config" / "CLAUDE.md"
    placed.parent.mkdir(parents=True)
    placed.write_text("node's")
    raw = {"basePath": str(tmp_path), "executor": "ray", "ray_address": "127.0.0.1:1", "claude_md": "CLAUDE.md",
           "fake_model_url": FAKE, "state_dir": "driver-state", "tasks_dir": str(TASKS)}  # fmt: skip
    context = {"vars": {"task_id": "py-median"}, "repeatIndex": 4}
    driver = parse_trial("p", raw, context)
    assert driver.config.executor.kind == "ray" and driver.config.state_dir == (tmp_path / "driver-state").resolve()
    shipped_raw, shipped_context, files = driver.shipped()
    assert files == {"claude_md": (tmp_path / "CLAUDE.md").resolve()}
    here = Placed(tmp_path / "node" / "state", TASKS, TASKS / "py-median", {"claude_md": str(placed)})
    node = parse_trial("p", shipped_raw, shipped_context, here)
    assert node.config.executor.kind == "local" and node.budget is None
    assert (node.config.state_dir, node.config.tasks_dir) == (here.state_dir.resolve(), TASKS.resolve())
    assert (node.task.dir, node.repeat, node.config.claude_md) == (TASKS / "py-median", 4, placed.resolve())
    assert shipped_raw == raw  # the driver's dict is shipped as given


def test_run_here_gives_the_trial_the_nodes_folders_and_never_edits_the_config(tmp_path, monkeypatch):
    calls: list[tuple] = []
    monkeypatch.setattr(_node, "current_node", lambda: "f" * 40)
    monkeypatch.setattr(_node, "node_root", lambda node: tmp_path / node[:16])
    monkeypatch.setattr(_node, "task_here", lambda root, task_id, version, bundle: TASKS / task_id)
    raw, context = {"executor": "ray", "claude_md": "CLAUDE.md"}, {"vars": {"task_id": "py-median"}}

    def trial(prompt: str, got_raw: dict, got_context: dict, here: Placed) -> dict:
        calls.append((got_raw, got_context, here))
        return {"output": "ok"}

    result = _node.run_here(trial, "p", raw, context, ("py-median", "1", []), {"claude_md": ("CLAUDE.md", b"hi")})
    assert result["response"] == {"output": "ok"} and result["artifacts"] is None
    [(got_raw, got_context, here)] = calls
    assert (got_raw, got_context) == (raw, context)
    root = tmp_path / ("f" * 16)
    assert (here.state_dir, here.tasks_dir, here.task_dir) == (
        (root / "state").resolve(),
        root / "tasks",
        TASKS / "py-median",
    )
    assert Path(here.files["claude_md"]).read_bytes() == b"hi"
    assert on_node.__module__ == "passhat.trial._provider"  # what the driver ships: the edge's own parse, then run


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
