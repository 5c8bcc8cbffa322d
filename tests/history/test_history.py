"""The score history: what one results file appends, schema versions and migrations, all-or-nothing writes.

Results files are small copies of the shape promptfoo 0.123.1 writes with `-o results.json` (see
tests/test_report.py): rows in results.results, the provider's metadata merged into row.metadata.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from passhat.common._errors import PasshatError, ResultsError
from passhat.history._store import (
    SCHEMA_VERSION,
    ScoreRow,
    append_batch,
    batch_from_results,
    eval_order,
    load_rows,
    open_history,
)

PROVIDER = {"id": "file://providers/claude_code.py", "label": "sonnet"}


def make_row(task: str, repeat: int, score: float | None, **metadata: Any) -> dict[str, Any]:
    """One promptfoo row; score None = infra error (failureReason 2, promptfoo's score 0)."""
    named = metadata.pop("named", None) or {}
    meta = {"task_id": task, "repeat_index": repeat, **metadata}
    error = score is None
    return {
        "error": "API error 529 after 3 retries" if error else None,
        "failureReason": 2 if error else (0 if score >= 0.5 else 1),
        "gradingResult": None if error else {"pass": score >= 0.5, "score": score},
        "latencyMs": 2500,
        "metadata": meta,
        "namedScores": named,
        "provider": PROVIDER,
        "response": {"error": "API error 529"} if error else {"output": "Done.", "metadata": meta},
        "score": 0 if error else score,
        "success": not error and score >= 0.5,
        "testCase": {"description": f"{task}: description", "vars": {}},
        "vars": {},
    }


def write_results(path: Path, rows: list[Any], stamp: str = "2026-01-01T00:00:00.000Z") -> Path:
    for index, row in enumerate(rows):
        row["testIdx"] = index
    data = {"evalId": "eval-a", "results": {"version": 3, "timestamp": stamp, "results": rows, "stats": {}}}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def connect(db: Path) -> closing[sqlite3.Connection]:
    """A plain connection, autocommit, closed on exit (sqlite3's own `with` commits but does not close)."""
    return closing(sqlite3.connect(db, isolation_level=None))


def count(db: Path, table: str) -> int:
    with connect(db) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_a_results_file_becomes_one_row_per_trial_and_metric(tmp_path: Path) -> None:
    rows = [
        make_row("alpha", 0, 0.8, model="claude-x", judge_version="j1", named={"tests": 1.0}),
        make_row("alpha", 1, 0.4, model="claude-x", judge_version="j1"),  # no namedScores.tests: unscored
        make_row("alpha", 2, None),  # infra error
    ]
    batch = batch_from_results(write_results(tmp_path / "r.json", rows))
    assert (batch.eval_id, batch.eval_time) == ("eval-a", "2026-01-01T00:00:00.000Z")
    got = {(r.trial, r.metric): (r.score, r.passed, r.judge_version, r.model) for r in batch.rows}
    assert got == {
        (0, "namedScores.tests"): (1.0, True, "j1", "claude-x"),
        (0, "pass"): (1.0, True, "j1", "claude-x"),  # the outcome, 1 / 0: its mean is the pass rate
        (0, "score"): (0.8, True, "j1", "claude-x"),
        (1, "pass"): (0.0, False, "j1", "claude-x"),
        (1, "namedScores.tests"): (None, False, "j1", "claude-x"),
        (1, "score"): (0.4, False, "j1", "claude-x"),
        # infra error: unscored, not failed, and in its task's series (j1), not a "none" series of its own
        (2, "namedScores.tests"): (None, None, "j1", None),
        (2, "pass"): (None, None, "j1", None),
        (2, "score"): (None, None, "j1", None),
    }


def test_judge_version_comes_from_the_judge_assertion_and_unscored_judges_store_null(tmp_path: Path) -> None:
    def judged(repeat: int, unscored: bool) -> dict[str, Any]:
        row = make_row("alpha", repeat, 0.9, named={"tests": 1.0, "judge": 0.8, "judge.completeness": 1.0})
        judge_meta = {"judge_version": "jv-abc", "judge_unscored": unscored}
        row["gradingResult"]["componentResults"] = [
            {"pass": True, "score": 1.0, "assertion": {"type": "python", "metric": "tests"}},
            {
                "pass": not unscored,
                "score": 0.8,
                "assertion": {"type": "python", "metric": "judge"},
                "metadata": judge_meta,
            },
        ]
        return row

    batch = batch_from_results(write_results(tmp_path / "r.json", [judged(0, False), judged(1, True)]))
    got = {(r.trial, r.metric): (r.score, r.judge_version) for r in batch.rows}
    assert got[(0, "namedScores.judge")] == (0.8, "jv-abc")
    assert got[(0, "namedScores.judge.completeness")] == (1.0, "jv-abc")  # a criterion of that judge
    assert got[(0, "namedScores.tests")] == (1.0, "none")  # not a judge: never tied to a judge_version
    assert got[(0, "score")] == (0.9, "jv-abc")
    assert got[(1, "namedScores.judge")] == (None, "jv-abc")  # unscored by the judge: NULL, not 0


@pytest.mark.parametrize(
    ("rows", "data", "match"),
    [
        pytest.param([make_row("a", 0, 0.5)], {"evalId": None}, r"r\.json: evalId is null; expected", id="no-eval-id"),
        pytest.param(
            [{**make_row("a", 0, 0.5), "score": 4}],
            {},
            r"results\.results\[0\]\.score is 4; expected a number in 0\.\.1; .* as \(s - 1\) / 4",
            id="score-5-point",
        ),
        pytest.param([make_row("a", 0, 0.5, named={"judge": -1})], {}, r"namedScores\.judge is -1", id="named-neg"),
    ],
)
def test_bad_results_name_file_field_and_value(
    tmp_path: Path, rows: list[Any], data: dict[str, Any], match: str
) -> None:
    path = write_results(tmp_path / "r.json", rows)
    raw = json.loads(path.read_text())
    path.write_text(json.dumps({**raw, **data}))
    with pytest.raises(ResultsError, match=match):
        batch_from_results(path)


def test_new_db_has_the_current_schema(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "history.db"
    open_history(db).close()
    with connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4


def test_append_is_idempotent_per_eval_id(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    batch = batch_from_results(write_results(tmp_path / "r.json", [make_row("a", i, 0.9) for i in range(3)]))
    conn = open_history(db)
    assert append_batch(conn, db, batch) is True
    assert append_batch(conn, db, batch) is False  # same evalId: nothing appended
    conn.close()
    assert (count(db, "evals"), count(db, "scores")) == (1, 6)  # 3 trials x (pass, score)


def test_a_failure_mid_append_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    batch = batch_from_results(write_results(tmp_path / "r.json", [make_row("a", i, 0.9) for i in range(3)]))

    def rows_then_crash():
        yield batch.rows[0]
        yield batch.rows[1]
        raise RuntimeError("disk pulled")

    conn = open_history(db)
    with pytest.raises(RuntimeError, match="disk pulled"):
        append_batch(conn, db, batch, rows_then_crash())
    conn.close()
    assert (count(db, "evals"), count(db, "scores")) == (0, 0)


V1_BY_HAND = """
CREATE TABLE evals (eval_id TEXT PRIMARY KEY, eval_time TEXT NOT NULL, appended_at TEXT NOT NULL);
CREATE TABLE scores (eval_id TEXT NOT NULL, task TEXT NOT NULL, provider TEXT NOT NULL, trial INTEGER,
                     score REAL, passed INTEGER, judge_version TEXT NOT NULL, model TEXT);
INSERT INTO evals VALUES ('eval-old', '2025-06-01T00:00:00.000Z', '2025-06-01T01:00:00Z');
INSERT INTO scores VALUES ('eval-old', 'a', 'sonnet', 0, 0.75, 1, 'none', 'claude-x');
INSERT INTO scores VALUES ('eval-old', 'a', 'sonnet', 1, 0.25, 0, 'none', 'claude-x');
PRAGMA user_version = 1;
"""


def test_a_v1_history_is_migrated_and_keeps_its_data(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with connect(db) as conn:
        conn.executescript(V1_BY_HAND)
    conn = open_history(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
    old = load_rows(conn, "score", [("a", "sonnet")])  # v1 rows were the aggregate score: metric 'score'
    assert [(r.eval_id, r.trial, r.score, r.passed, r.model, r.patch_path) for r in old] == [
        ("eval-old", 0, 0.75, True, "claude-x", None),
        ("eval-old", 1, 0.25, False, "claude-x", None),
    ]
    # v3: each old trial's outcome as metric 'pass' (1.0 passed, 0.0 failed), so drift's default has a baseline
    outcomes = load_rows(conn, "pass", [("a", "sonnet")])
    assert [(r.eval_id, r.trial, r.score, r.passed) for r in outcomes] == [
        ("eval-old", 0, 1.0, True),
        ("eval-old", 1, 0.0, False),
    ]
    new = batch_from_results(write_results(tmp_path / "r.json", [make_row("a", 0, 0.5)]))  # 2026: after eval-old
    assert append_batch(conn, db, new)
    assert eval_order(conn) == ["eval-old", "eval-a"]
    conn.close()


def test_a_failed_migration_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with connect(db) as conn:
        conn.executescript(V1_BY_HAND + "ALTER TABLE scores ADD COLUMN patch_path TEXT;")  # v2 adds it again
    with pytest.raises(PasshatError, match=r"upgrading the history schema v1 -> v2 failed \(duplicate column"):
        open_history(db)
    with connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
        columns = [row[1] for row in conn.execute("PRAGMA table_info(scores)")]
    assert "metric" not in columns  # the first ALTER of v2 was rolled back with the rest


def test_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    open_history(db).close()
    with connect(db) as conn:
        conn.execute("PRAGMA user_version = 7")
    before = db.read_bytes()
    newer = r"h\.db: history schema version is 7, newer than this passhat reads \(4\); upgrade passhat"
    with pytest.raises(PasshatError, match=newer):
        open_history(db)
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    ("content", "match"),
    [
        pytest.param(b"not sqlite at all\n" * 100, r"history database \(file is not a database\)", id="garbage"),
        pytest.param(None, r"without a passhat history \(user_version 0, tables: notes\); pass another", id="foreign"),
    ],
)
def test_a_file_that_is_not_a_history_is_refused_untouched(tmp_path: Path, content: bytes | None, match: str) -> None:
    db = tmp_path / "h.db"
    if content is None:
        with connect(db) as conn:
            conn.execute("CREATE TABLE notes (x)")
    else:
        db.write_bytes(content)
    before = db.read_bytes()
    with pytest.raises(PasshatError, match=match):
        open_history(db)
    assert db.read_bytes() == before


def test_score_rows_name_their_trial() -> None:
    row = ScoreRow("e", "t", "p", None, 4, "score", 1.0, True, "none", None, None, None, None, None)
    assert row.label == "row 4"
    assert ScoreRow("e", "t", "p", 3, 4, "score", 1.0, True, "none", None, None, None, None, None).label == "r3"


def test_a_jsonl_file_is_refused_it_has_no_eval_id(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(make_row("a", 0, 0.5)) + "\n")
    with pytest.raises(ResultsError, match=r"r\.jsonl: a JSONL file has no evalId.*promptfoo eval -o results\.json"):
        batch_from_results(path)


def test_a_directory_as_db_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PasshatError, match=r"is a directory; pass a file path to --db"):
        open_history(tmp_path)
