"""The history of graded scores: an SQLite file (`.passhat/history.db` by default) that `passhat drift` appends to.

One eval (a Promptfoo `-o` results file, keyed by its `evalId`) is appended as one batch, in one transaction:
one row per (trial, metric). Metric "pass" is the trial's outcome, 1.0 passed or 0.0 failed (its mean is the pass
rate: what the verdict is about); "score" is the row's `score` (Promptfoo's aggregate, 0..1); "namedScores.NAME"
is the row's `namedScores[NAME]` (a grader's score, a judge criterion's `judge.clarity`). A NULL score means
unscored (an infra error, a judge that could not be read, or a trial without that named score) — never a 0.

The schema is versioned with `PRAGMA user_version` and upgraded in place by MIGRATIONS, inside one transaction:
  v1  evals(eval_id, eval_time, appended_at); scores(eval_id, task, provider, trial, score, passed,
      judge_version, model)
  v2  + evals.source; + scores.metric (old rows: 'score'), row_index, transcript_path, patch_path, cost_usd,
      turns; an index on the series key (task, provider, metric, judge_version)
  v3  + metric 'pass' for the evals already stored, from each 'score' row's `passed` (a judge-unscored trial of
      an old eval reads as failed: its row kept no sign of it)
  v4  + scores.models_answered (the model ids that answered, ", "-joined), claude_code_version, agent_sdk_version:
      what ran each trial (NULL for the rows stored before, and for rows whose provider did not record it)
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from passhat.common._errors import PasshatError, ResultsError
from passhat.judge._status import grader_components
from passhat.results import VIEWER_FIGURES, VIEWER_PREFIX
from passhat.results._rows import Trial, load_trials

DEFAULT_DB = ".passhat/history.db"
PASS = "pass"
AGGREGATE = "score"
NAMED_PREFIX = "namedScores."
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE evals (eval_id TEXT PRIMARY KEY, eval_time TEXT NOT NULL, appended_at TEXT NOT NULL);
    CREATE TABLE scores (
        eval_id TEXT NOT NULL REFERENCES evals (eval_id), task TEXT NOT NULL, provider TEXT NOT NULL,
        trial INTEGER, score REAL, passed INTEGER, judge_version TEXT NOT NULL, model TEXT
    );
    """,
    """
    ALTER TABLE evals ADD COLUMN source TEXT;
    ALTER TABLE scores ADD COLUMN metric TEXT NOT NULL DEFAULT 'score';
    ALTER TABLE scores ADD COLUMN row_index INTEGER;
    ALTER TABLE scores ADD COLUMN transcript_path TEXT;
    ALTER TABLE scores ADD COLUMN patch_path TEXT;
    ALTER TABLE scores ADD COLUMN cost_usd REAL;
    ALTER TABLE scores ADD COLUMN turns INTEGER;
    CREATE INDEX scores_series ON scores (task, provider, metric, judge_version);
    """,
    """
    INSERT INTO scores (eval_id, task, provider, trial, score, passed, judge_version, model, metric, row_index,
                        transcript_path, patch_path, cost_usd, turns)
    SELECT eval_id, task, provider, trial, CASE passed WHEN 1 THEN 1.0 WHEN 0 THEN 0.0 END, passed, judge_version,
           model, 'pass', row_index, transcript_path, patch_path, cost_usd, turns
    FROM scores WHERE metric = 'score' ORDER BY rowid;
    """,
    """
    ALTER TABLE scores ADD COLUMN models_answered TEXT;
    ALTER TABLE scores ADD COLUMN claude_code_version TEXT;
    ALTER TABLE scores ADD COLUMN agent_sdk_version TEXT;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


@dataclass(frozen=True)
class ScoreRow:
    """One trial's score for one metric, as stored. score None = unscored; passed None = infra error."""

    eval_id: str
    task: str
    provider: str
    trial: int | None  # Promptfoo's repeatIndex, echoed by the provider; None if the provider does not
    row_index: int | None  # position in results.results; names the trial when `trial` is None
    metric: str
    score: float | None
    passed: bool | None
    judge_version: str
    model: str | None
    transcript_path: str | None
    patch_path: str | None
    cost_usd: float | None
    turns: int | None
    models_answered: str | None = None  # what ran (schema v4): the model ids that answered, ", "-joined
    claude_code_version: str | None = None
    agent_sdk_version: str | None = None

    @property
    def label(self) -> str:
        return f"r{self.trial}" if self.trial is not None else f"row {self.row_index}"


@dataclass(frozen=True)
class EvalBatch:
    """Every ScoreRow of one results file."""

    eval_id: str
    eval_time: str
    source: str
    rows: tuple[ScoreRow, ...]


_COLUMNS = [field.name for field in fields(ScoreRow)]


# --- results file -> batch ------------------------------------------------------------------------------------


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _unit_score(path: str, field: str, value: object) -> float:
    if not _is_number(value) or not 0.0 <= value <= 1.0:  # type: ignore[operator]
        msg = (
            f"{path}: {field} is {json.dumps(value)}; expected a number in 0..1; passhat drift compares scores "
            "in 0..1, so have the grader return one (a 1-5 rubric score s as (s - 1) / 4)"
        )
        raise ResultsError(msg)
    return float(value)  # type: ignore[arg-type]


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _raw(path: str) -> tuple[dict[str, Any], list[Any]]:
    """The top level and the rows of a results file that load_trials has already validated."""
    data = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    return data, data["results"]["results"]


def batch_from_results(path: str | Path) -> EvalBatch:
    """Read a Promptfoo results file into the batch to append (validated; no database touched)."""
    path = str(path)
    if path.endswith(".jsonl"):
        msg = (
            f"{path}: a JSONL file has no evalId, which the history keys each eval by; "
            "pass the .json file written by `promptfoo eval -o results.json`"
        )
        raise ResultsError(msg)
    trials = load_trials(path)
    data, raw_rows = _raw(path)
    eval_id = data.get("evalId")
    if not isinstance(eval_id, str) or not eval_id:
        msg = (
            f'{path}: evalId is {json.dumps(eval_id)}; expected the eval\'s id string (e.g. "eval-abc-2026-..."); '
            "pass the file written by `promptfoo eval -o results.json`, unedited"
        )
        raise ResultsError(msg)
    stamp = data["results"].get("timestamp")
    if stamp is not None and not isinstance(stamp, str):
        msg = f"{path}: results.timestamp is {json.dumps(stamp)}; expected an ISO time string or no field"
        raise ResultsError(msg)
    eval_time = stamp or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    named: list[dict[str, float | None]] = []
    versions: dict[int, dict[str, str | None]] = {}  # judge_version per row and metric, from the judges' own metadata
    for index, (trial, raw) in enumerate(zip(trials, raw_rows, strict=True)):
        at = f"results.results[{index}]"
        scores = raw.get("namedScores") or {}
        if not isinstance(scores, dict):
            raise ResultsError(f"{path}: {at}.namedScores is {json.dumps(scores)}; expected an object or null")
        if trial.infra_error:
            named.append({})
            continue
        judges = _judge_components(raw)
        one: dict[str, float | None] = {
            PASS: None if trial.unscored else float(trial.passed),
            AGGREGATE: _unit_score(path, f"{at}.score", raw.get("score")),
        }
        for name, value in scores.items():
            if name.startswith(VIEWER_PREFIX) or name in VIEWER_FIGURES:  # the viewer's figures, not a grade
                continue
            judge = judges.get(name) or judges.get(name.split(".")[0])
            unscored = judge is not None and judge.get("judge_unscored")
            one[NAMED_PREFIX + name] = None if unscored else _unit_score(path, f"{at}.namedScores.{name}", value)
        named.append(one)
        versions[index] = {
            metric: (
                judges.get(metric.removeprefix(NAMED_PREFIX))
                or judges.get(metric.removeprefix(NAMED_PREFIX).split(".")[0])
                or {}
            ).get("judge_version")
            for metric in one
        }
        every = sorted({str(j["judge_version"]) for j in judges.values() if j.get("judge_version")})
        versions[index][AGGREGATE] = versions[index][PASS] = "+".join(every) or None
    # Every (task, provider) stores the same metrics on each of its trials: NULL where a trial lacks one,
    # so a batch knows how many of its trials went unscored.
    metrics: dict[tuple[str, str], set[str]] = {}
    for trial, scores in zip(trials, named, strict=True):
        metrics.setdefault((trial.task, trial.provider), {AGGREGATE}).update(scores)
    series = _series_versions(trials, metrics, versions)
    rows = tuple(
        _score_row(
            eval_id, index, trial, metric, scores.get(metric),
            _version(trial, versions.get(index, {}).get(metric)) or series.get((trial.task, trial.provider, metric)),
        )
        for index, (trial, scores) in enumerate(zip(trials, named, strict=True))
        for metric in sorted(metrics[(trial.task, trial.provider)])
    )  # fmt: skip
    return EvalBatch(eval_id=eval_id, eval_time=eval_time, source=path, rows=rows)


def _version(trial: Trial, judge_version: str | None) -> str | None:
    """The judge_version a trial's own judge (else its metadata) names for a metric; None when it names none."""
    named = judge_version or trial.judge_version
    return None if named is None or named == "" else str(named)


def _series_versions(
    trials: Sequence[Trial], metrics: dict[tuple[str, str], set[str]], versions: dict[int, dict[str, str | None]]
) -> dict[tuple[str, str, str], str]:
    """(task, provider, metric) -> the judge_version its scored trials name (the commonest; on a tie, the first in
    name order). A trial that names none — an infra error, which no judge saw — belongs to that series, unscored."""
    counts: dict[tuple[str, str, str], Counter[str]] = {}
    for index, trial in enumerate(trials):
        if trial.infra_error:
            continue
        for metric in metrics[(trial.task, trial.provider)]:
            named = _version(trial, versions.get(index, {}).get(metric))
            if named is not None:
                counts.setdefault((trial.task, trial.provider, metric), Counter())[named] += 1
    return {key: min(seen, key=lambda v: (-seen[v], v)) for key, seen in counts.items()}


def _judge_components(raw: dict) -> dict[str, dict]:
    """metric name → metadata of the judge assertion that scored it (judges record judge_version there)."""
    found = {}
    for component in grader_components(raw):
        metadata = component.get("metadata")
        metric = (component.get("assertion") or {}).get("metric")
        if isinstance(metadata, dict) and metadata.get("judge_version") and isinstance(metric, str):
            found[metric] = metadata
    return found


def _score_row(
    eval_id: str, index: int, trial: Trial, metric: str, score: float | None, judge_version: str | None = None
) -> ScoreRow:
    judge = judge_version or trial.judge_version
    return ScoreRow(
        eval_id=eval_id,
        task=trial.task,
        provider=trial.provider,
        trial=trial.repeat_index,
        row_index=index,
        metric=metric,
        score=score,
        passed=None if trial.infra_error else trial.passed,
        judge_version="none" if judge is None or judge == "" else str(judge),
        model=_text(trial.model),
        transcript_path=_text(trial.transcript_path),
        patch_path=_text(trial.patch_path),
        # Optional extras, shown when explaining drift; read defensively while Trial is being extended.
        cost_usd=getattr(trial, "cost_usd", None),
        turns=getattr(trial, "turns", None),
        models_answered=", ".join(trial.models) or None,
        claude_code_version=trial.claude_code_version,
        agent_sdk_version=trial.agent_sdk_version,
    )


# --- the database ---------------------------------------------------------------------------------------------


def _db_error(db: Path, problem: str, fix: str) -> PasshatError:
    return PasshatError(f"{db}: {problem}; {fix}")


_ANOTHER_DB = "move it aside or pass another --db"


def open_history(db: str | Path) -> sqlite3.Connection:
    """Open (creating if needed) a history database and upgrade it to SCHEMA_VERSION, all or nothing."""
    db = Path(db)
    if db.is_dir():
        raise _db_error(db, "is a directory", "pass a file path to --db, e.g. --db .passhat/history.db")
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(db, isolation_level=None)  # transactions are explicit: BEGIN ... COMMIT
    except (OSError, sqlite3.Error) as error:
        raise _db_error(db, f"cannot be opened ({error})", "check the path and its permissions") from None
    try:
        _check_and_migrate(db, conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _check_and_migrate(db: Path, conn: sqlite3.Connection) -> None:
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            check = conn.execute("PRAGMA quick_check").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
            _refuse(db, check, version, tables)
            for step, script in enumerate(MIGRATIONS[version:], start=version + 1):
                try:
                    for statement in filter(str.strip, script.split(";")):
                        conn.execute(statement)
                except sqlite3.Error as error:
                    problem = f"upgrading the history schema v{step - 1} -> v{step} failed ({error}); nothing changed"
                    raise _db_error(db, problem, _ANOTHER_DB) from None
                conn.execute(f"PRAGMA user_version = {step}")
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
    except sqlite3.DatabaseError as error:
        raise _db_error(db, f"cannot be read as a passhat history database ({error})", _ANOTHER_DB) from None


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _refuse(db: Path, check: str, version: int, tables: list[str]) -> None:
    if check != "ok":
        raise _db_error(db, f"the database is corrupt (quick_check: {check})", _ANOTHER_DB)
    if version > SCHEMA_VERSION:
        msg = f"history schema version is {version}, newer than this passhat reads ({SCHEMA_VERSION})"
        raise _db_error(db, msg, "upgrade passhat (pip install -U passhat) or pass another --db")
    if version == 0 and tables:
        msg = f"an SQLite database without a passhat history (user_version 0, tables: {', '.join(tables)})"
        raise _db_error(db, msg, "pass another --db")
    if version and not {"evals", "scores"} <= set(tables):
        msg = f"schema version {version} but tables {tables}; expected evals and scores"
        raise _db_error(db, msg, _ANOTHER_DB)


def appended_at(conn: sqlite3.Connection, eval_id: str) -> str | None:
    """When `eval_id` was appended, or None if it is not in the history."""
    row = conn.execute("SELECT appended_at FROM evals WHERE eval_id = ?", (eval_id,)).fetchone()
    return None if row is None else row[0]


def append_batch(
    conn: sqlite3.Connection, db: str | Path, batch: EvalBatch, rows: Iterable[ScoreRow] | None = None
) -> bool:
    """Append one eval in one transaction; False (and nothing written) if its eval_id is already there.

    `rows` defaults to batch.rows (tests pass a failing iterable to show that nothing is half-written).
    """
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    marks = ", ".join("?" for _ in _COLUMNS)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if appended_at(conn, batch.eval_id) is not None:
                conn.execute("ROLLBACK")
                return False
            conn.execute(
                "INSERT INTO evals (eval_id, eval_time, appended_at, source) VALUES (?, ?, ?, ?)",
                (batch.eval_id, batch.eval_time, now, batch.source),
            )
            conn.executemany(
                f"INSERT INTO scores ({', '.join(_COLUMNS)}) VALUES ({marks})",
                (astuple(row) for row in (batch.rows if rows is None else rows)),
            )
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
    except sqlite3.Error as error:
        problem = f"appending eval {batch.eval_id} failed ({error}); nothing was written"
        raise _db_error(Path(db), problem, "check the file's permissions and free space, then re-run") from None
    return True


def eval_order(conn: sqlite3.Connection) -> list[str]:
    """Every eval id, oldest first (by eval time, then by when it was appended)."""
    return [r[0] for r in conn.execute("SELECT eval_id FROM evals ORDER BY eval_time, rowid")]


def load_rows(conn: sqlite3.Connection, metric: str, pairs: Sequence[tuple[str, str]]) -> list[ScoreRow]:
    """Every stored row of `metric` for the given (task, provider) pairs, in eval order then row order."""
    order = {eval_id: i for i, eval_id in enumerate(eval_order(conn))}
    wanted = set(pairs)
    cursor = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM scores WHERE metric = ? ORDER BY rowid", (metric,))
    rows = [ScoreRow(*values) for values in cursor]
    rows = [
        row if row.passed is None else replace(row, passed=bool(row.passed))  # SQLite stores 0/1
        for row in rows
        if (row.task, row.provider) in wanted
    ]
    return sorted(rows, key=lambda row: order[row.eval_id])  # stable: row order kept within an eval
