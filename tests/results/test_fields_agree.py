"""The report's read (`report.totals`: each row's Trial fields from `trial_fields`, totalled without building a Trial)
gives exactly what the full read gives (Trials from `iter_trials`, folded), row by row and total by total, on a file
that mixes every kind of row: infra errors, unscored and judged rows, rows caught gaming and rows not looked at,
Ctrl+C cut-offs, impossible twins, the viewer's figures, what ran, several tasks and providers, repeats."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import varied_rows
from msgspec.structs import astuple

from passhat.common._errors import ResultsError
from passhat.report._summary import finish
from passhat.report.totals import _parallel, fold, fold_file
from passhat.results._rows import iter_checked, iter_trials
from passhat.results._trial import VIEWER_FIGURES, trial_fields


def mixed_rows(count: int) -> list[dict[str, Any]]:
    """`varied_rows` (every row shape the reader handles), with gaming scores, viewer figures, impossible twins and
    what ran mixed in."""
    rng = random.Random(5)
    rows = list(varied_rows.rows(count, seed=21, tasks=12))
    for row in rows:
        meta = (row.get("response") or {}).get("metadata")
        named = row["namedScores"]
        roll = rng.random()
        if roll < 0.3:
            named["gamed"] = rng.choice((0.0, 0.0, 1.0, 2))
        elif roll < 0.35:
            named[sorted(VIEWER_FIGURES)[0]] = 0
        if isinstance(meta, dict) and rng.random() < 0.4:
            meta.update(models=["claude-sonnet-4-5"], claude_code_version="2.0.1", agent_sdk_version="0.2.184")
        if rng.random() < 0.1 and isinstance(row["testCase"].get("metadata"), dict):
            row["testCase"]["metadata"]["expect"] = "impossible"
    return rows


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    """`-o results.jsonl` (a row per line), else `-o results.json` (the rows in promptfoo's wrapper, pretty)."""
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    else:
        path.write_text(json.dumps({"evalId": "eval-x", "results": {"version": 3, "results": rows}}, indent=2))
    return path


@pytest.fixture(params=["results.json", "results.jsonl"])
def mixed(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return write(tmp_path / request.param, mixed_rows(3000))


def test_every_row_s_fields_are_its_trial_s(mixed: Path) -> None:
    trials = list(iter_trials(mixed))
    assert list(iter_checked(mixed, trial_fields)) == [astuple(trial) for trial in trials]
    kinds = {
        (t.infra_error, t.unscored, t.gamed, t.scanned, t.interrupted, t.impossible, bool(t.models)) for t in trials
    }
    assert len(kinds) >= 8, kinds  # the mix has every kind of row


@pytest.mark.parametrize("parallel", [False, True])
def test_the_report_s_totals_are_the_trials_totals(
    mixed: Path, parallel: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_parallel, "PARALLEL_BYTES", 1 if parallel else 1 << 62)
    ks = (1, 2, 5)
    assert finish(fold_file(mixed), ks) == finish(fold(iter_trials(mixed)), ks)


@pytest.mark.parametrize("parallel", [False, True])
def test_a_bad_row_is_reported_alike(tmp_path: Path, parallel: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's read names no row (it reads a block's rows at C speed): at a problem it reads the file again a
    row at a time, for the full read's message."""
    monkeypatch.setattr(_parallel, "PARALLEL_BYTES", 1 if parallel else 1 << 62)
    rows = mixed_rows(50)
    rows[37]["metadata"] = {"num_turns": -2}
    rows[37]["response"] = None
    path = write(tmp_path / "results.jsonl", rows)
    with pytest.raises(ResultsError) as full:
        list(iter_trials(path))
    assert "line 38: row.metadata.num_turns is -2" in str(full.value)
    with pytest.raises(ResultsError) as fields:
        list(iter_checked(path, trial_fields))
    with pytest.raises(ResultsError) as report:
        fold_file(path)
    assert str(fields.value) == str(report.value) == str(full.value)
