"""`passhat eval --until-decided` after the README's adoption block: promptfoo is found where `npx promptfoo` finds
it (the nearest node_modules/.bin, from the current folder up), and a round that never started leaves a state the
same command picks up. A stand-in promptfoo (a shell script) records each call and exits 1 without an output."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from passhat.cli import main

ARGS = ["eval", "--until-decided", "--out", "rounds", "--", "-c", "promptfooconfig.yaml"]


def stand_in(project: Path) -> Path:
    """project/node_modules/.bin/promptfoo: appends its arguments and PATH's first entry to project/calls."""
    bin_dir = project / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "promptfoo"
    script.write_text(f'#!/bin/sh\necho "$* | ${{PATH%%:*}}" >> {project / "calls"}\nexit 1\n')
    script.chmod(0o755)
    return bin_dir


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder, the current folder one below it; PATH without any promptfoo."""
    (tmp_path / "evals").mkdir()
    monkeypatch.chdir(tmp_path / "evals")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    return tmp_path


def test_promptfoo_is_found_in_node_modules_bin_above_the_current_folder(project, capsys):
    bin_dir = stand_in(project)
    assert main(ARGS) == 2
    err = capsys.readouterr().err
    assert "round 1: promptfoo eval exited 1 without writing" in err, err
    calls = (project / "calls").read_text().splitlines()
    assert len(calls) == 1 and calls[0].startswith("eval -c promptfooconfig.yaml --repeat 5 --no-cache -o ")
    assert calls[0].endswith(f"| {bin_dir}")  # its own node first on PATH, as npx runs it


def test_no_promptfoo_leaves_no_state_and_the_same_command_then_runs(project, capsys):
    assert main(ARGS) == 2
    err = capsys.readouterr().err
    assert "promptfoo is not in node_modules/.bin (here or above) nor on PATH" in err, err
    assert err.count("\n") == 1 and not (project / "evals" / "rounds" / "rounds.json").exists()
    stand_in(project)
    assert main(ARGS) == 2 and "promptfoo eval exited 1" in capsys.readouterr().err
    assert len((project / "calls").read_text().splitlines()) == 1


def test_a_round_that_never_started_is_started_by_the_same_command(project, capsys):
    stand_in(project)
    assert main(ARGS) == 2  # promptfoo ran and failed before making its eval: round 1 never started
    state = json.loads((project / "evals" / "rounds" / "rounds.json").read_text())
    assert [(r["number"], r["status"], r["eval_id"]) for r in state["rounds"]] == [(1, "running", None)]
    capsys.readouterr()
    assert main(ARGS) == 2
    captured = capsys.readouterr()
    assert "never started; starting it" in captured.out and "holds rounds already" not in captured.err
    assert len((project / "calls").read_text().splitlines()) == 2
    # other arguments: not the same command, so not picked up
    assert main([*ARGS[:-1], "other.yaml"]) == 2
    assert "it holds rounds already" in capsys.readouterr().err
    assert len((project / "calls").read_text().splitlines()) == 2
    os.remove(project / "calls")


def test_a_round_that_measured_nothing_stops_the_rounds_with_exit_1(project, capsys):
    """Every trial of round 1 an infra error: no figure to plan round 2 on; the rounds stop saying so, exit 1."""
    error = "passhat: tasks/t/task.yaml: field 'tier' is missing; add `tier:`"
    row = {"error": error, "failureReason": 2, "success": False, "score": 0, "namedScores": {}, "latencyMs": 1,
           "response": {"error": error, "metadata": {}}, "provider": {"id": "file://p.py", "label": "cc"},
           "promptIdx": 0, "testIdx": 0, "testCase": {"vars": {"task_id": "t"}, "metadata": {"task_id": "t"}},
           "metadata": {"task_id": "t"}}  # fmt: skip
    results = {"evalId": "eval-1", "results": {"version": 3, "results": [row, {**row, "testIdx": 1}]}}
    (project / "fixture.json").write_text(json.dumps(results))
    bin_dir = stand_in(project)
    (bin_dir / "promptfoo").write_text(
        f'#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && cp {project / "fixture.json"} "$2"; shift; done\n'
    )
    assert main(ARGS) == 1
    captured = capsys.readouterr()
    assert "passhat: stopped after round 1: measured nothing: no trial of round 1 passed or failed" in captured.err
    state = json.loads((project / "evals" / "rounds" / "rounds.json").read_text())
    assert state["stop"].startswith("measured nothing") and len(state["rounds"]) == 1
