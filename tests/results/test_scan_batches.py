"""The report's rows are decoded by msgspec in batches, and whatever msgspec refuses is read as `json` reads it.

The batch path is checked against the general path (each row by `json`, then converted) on the same files:
`general_only` makes every batch decode refuse, as a broken one would.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
import varied_rows

from passhat.common._errors import ResultsError
from passhat.results import _rows
from passhat.results._rows import load_trials
from passhat.results._scan import Typed


class Refusing:
    """A decoder that refuses everything, as msgspec does a batch it cannot read."""

    def decode(self, text: object) -> Any:
        raise msgspec.DecodeError("refused")

    def decode_lines(self, text: object) -> Any:
        raise msgspec.DecodeError("refused")


def counting(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Count the rows the general path reads (each is converted one by one)."""
    seen: list[object] = []
    typed = _rows._TYPED

    def convert(value: object) -> object:
        seen.append(value)
        return typed.convert(value)

    monkeypatch.setattr(_rows, "_TYPED", typed._replace(convert=convert))
    return seen


def general_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_rows, "_TYPED", Typed(Refusing(), Refusing(), _rows._TYPED.convert))  # type: ignore[arg-type]


@pytest.mark.parametrize("form", ["json", "jsonl"])
def test_rows_come_in_batches_and_read_as_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    path = tmp_path / f"results.{form}"
    if form == "json":
        varied_rows.write_json(path, 600)
    else:
        varied_rows.write_jsonl(path, 600)
    seen = counting(monkeypatch)
    fast = load_trials(path)
    assert len(fast) == 600 and len(seen) <= 2  # JSON: the first row shows the layout, the last closes the array
    general_only(monkeypatch)
    assert load_trials(path) == fast


def rows_with(text_of: dict[int, str]) -> list[str]:
    """Compact JSON rows of a small varied eval, some replaced by the given text."""
    rows = [json.dumps(row) for row in varied_rows.rows(40)]
    for index, text in text_of.items():
        rows[index] = text
    return rows


def write(path: Path, rows: list[str]) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    else:
        body = ",\n      ".join(rows)
        path.write_text('{"results": {"version": 3, "results": [\n      ' + body + "\n    ]}}", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["results.json", "results.jsonl"])
def test_what_msgspec_refuses_is_read_by_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    # A lone surrogate in a string and 1e400 are JSON that `json` reads and msgspec does not.
    row = next(varied_rows.rows(1))
    odd = json.dumps({**row, "error": "half of a pair: \ud800", "id": 1e400}).replace("Infinity", "1e400")
    path = write(tmp_path / name, rows_with({17: odd}))
    trials = load_trials(path)
    assert trials[17].error == "half of a pair: \ud800"
    general_only(monkeypatch)
    assert load_trials(path) == trials


@pytest.mark.parametrize(
    ("name", "place"), [("results.json", "results.results[23]"), ("results.jsonl", "line 24: row")]
)
def test_a_nan_is_the_same_error_as_before(tmp_path: Path, name: str, place: str) -> None:
    row = next(varied_rows.rows(1))
    path = write(tmp_path / name, rows_with({23: json.dumps({**row, "latencyMs": float("nan")})}))
    with pytest.raises(
        ResultsError, match=rf": {re.escape(place)}\.latencyMs is NaN; expected a finite number or null"
    ):
        load_trials(path)


def test_jsonl_blank_lines_keep_line_numbers(tmp_path: Path) -> None:
    rows = rows_with({})
    rows[5] = "   "
    rows[30] = json.dumps({**json.loads(rows[30]), "success": "yes"})
    path = write(tmp_path / "results.jsonl", rows)
    with pytest.raises(ResultsError, match=r"line 31: row\.success is \"yes\""):
        load_trials(path)
