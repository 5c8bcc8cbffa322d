"""`passhat drift` names what ran differently between the baseline and the new batch: the model ids that answered,
the Claude Code and the Agent SDK versions each trial recorded (row metadata `models`, `claude_code_version`,
`agent_sdk_version`; history schema v4). A history written before v4 is upgraded in place and still read."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from test_drift import ALPHA, BETA, drift, results

from passhat.history._store import MIGRATIONS, load_rows, open_history

OLD = {"models": ["claude-opus-5-1"], "claude_code_version": "2.1.300", "agent_sdk_version": "0.2.180"}
NEW = {"models": ["claude-opus-5-5"], "claude_code_version": "2.1.327", "agent_sdk_version": "0.2.180"}
CHANGED = "model claude-opus-5-1 → claude-opus-5-5; Claude Code 2.1.300 → 2.1.327"


def test_a_drift_names_the_new_cli_and_the_other_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "h.db")
    assert drift(capsys, results(tmp_path, "eval-base", 1, {"alpha": ALPHA, "beta": BETA}, **OLD), "--db", db)[0] == 0
    dropped = [x - 0.125 for x in ALPHA]  # alpha falls 0.125 on every trial (test_drift's seeded drop)
    code, out, _ = drift(capsys, results(tmp_path, "eval-new", 2, {"alpha": dropped, "beta": BETA}, **NEW), "--db", db)
    lines = out.splitlines()
    assert code == 0 and "DRIFT" in out
    # Said once for every series it applies to; the Agent SDK did not change, so it is not named.
    assert f"Note: what ran changed since baseline eval-base: {CHANGED}: alpha [sonnet], beta [sonnet]." in lines
    # The explanation: what ran each side, and what changed between the two trials.
    assert "           ran: claude-opus-5-1, Claude Code 2.1.300, Agent SDK 0.2.180" in lines
    assert "           ran: claude-opus-5-5, Claude Code 2.1.327, Agent SDK 0.2.180" in lines
    assert f"  what ran changed: {CHANGED}" in lines


def test_the_json_says_it_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "h.db")
    drift(capsys, results(tmp_path, "eval-base", 1, {"alpha": ALPHA}, **OLD), "--db", db)
    new = results(tmp_path, "eval-new", 2, {"alpha": [x - 0.125 for x in ALPHA]}, **{**NEW, "models": OLD["models"]})
    data = json.loads(drift(capsys, new, "--db", db, "--format", "json")[1])
    (alpha,) = [s for s in data["series"] if s["task"] == "alpha"]
    assert "what ran changed since baseline eval-base: Claude Code 2.1.300 → 2.1.327" in alpha["notes"]
    (why,) = data["explain"]
    assert why["ran_changed"] == "Claude Code 2.1.300 → 2.1.327"
    assert (why["baseline"]["ran"], why["new"]["ran"]) == (
        "claude-opus-5-1, Claude Code 2.1.300, Agent SDK 0.2.180",
        "claude-opus-5-1, Claude Code 2.1.327, Agent SDK 0.2.180",
    )


def test_nothing_changed_says_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "h.db")
    drift(capsys, results(tmp_path, "eval-base", 1, {"alpha": ALPHA}, **OLD), "--db", db)
    out = drift(capsys, results(tmp_path, "eval-new", 2, {"alpha": ALPHA}, **OLD), "--db", db)[1]
    assert "what ran changed" not in out


def v3_history(db: Path) -> None:
    """A history as passhat wrote it at schema v3 (before what ran was stored), one eval of alpha in it."""
    with closing(sqlite3.connect(db)) as conn:
        for script in MIGRATIONS[:3]:
            conn.executescript(script)
        conn.execute("PRAGMA user_version = 3")
        conn.execute("INSERT INTO evals VALUES ('eval-v3', '2025-12-01T00:00:00.000Z', '2025-12-01T01:00:00Z', 'r')")
        for trial, score in enumerate(ALPHA):
            conn.execute(
                "INSERT INTO scores (eval_id, task, provider, trial, score, passed, judge_version, model, metric, "
                "row_index) VALUES ('eval-v3', 'alpha', 'sonnet', ?, ?, 1, 'none', 'claude-x', 'score', ?)",
                (trial, score, trial),
            )
        conn.commit()


def test_a_v3_history_is_upgraded_and_its_rows_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "h.db"
    v3_history(db)
    code, out, _ = drift(capsys, results(tmp_path, "eval-new", 2, {"alpha": ALPHA}, **NEW), "--db", str(db))
    assert code == 0 and "eval-v3" in out  # the v3 eval is the baseline
    # The baseline recorded no version: not a change. Its model (configured, claude-x) against the models that
    # answered the new trials is not compared either: the configured models match (test_drift's rows: claude-x).
    assert "what ran changed" not in out
    with closing(open_history(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
        rows = load_rows(conn, "score", [("alpha", "sonnet")])
    old = [r for r in rows if r.eval_id == "eval-v3"]
    new = [r for r in rows if r.eval_id == "eval-new"]
    assert [r.score for r in old] == ALPHA and {(r.claude_code_version, r.models_answered) for r in old} == {
        (None, None)
    }
    assert {(r.models_answered, r.claude_code_version, r.agent_sdk_version) for r in new} == {
        ("claude-opus-5-5", "2.1.327", "0.2.180")
    }
