"""`passhat report --format table|md|csv|json`: every format shows the same figures from `report_data`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from test_report import report, suite_rows, write_results

from passhat.report import _formats


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write_results(tmp_path / "results.json", suite_rows())


def test_csv_matches_json(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(report(capsys, str(results), "--format", "json", "--k", "1,3")[1])
    code, out, err = report(capsys, str(results), "--format", "csv", "--k", "1,3")
    assert (code, err) == (0, "")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == [
        "task", "provider", "tier", "n", "passes", "errors", "pass_rate", "wilson_low", "wilson_high",
        "pass_at_1", "pass_at_3", "pass_hat_1", "pass_hat_3", "flaky", "clean_exit_rate", "mean_duration_ms",
        "p90_duration_ms", "mean_turns", "mean_cost_usd", "cost_per_success_usd", "runs_needed",
    ]  # fmt: skip
    for row, task in zip(rows, data["tasks"], strict=True):
        assert (row["task"], row["provider"], int(row["n"]), int(row["passes"])) == (
            task["task"], task["provider"], task["n"], task["passes"],
        )  # fmt: skip
        assert row["pass_hat_3"] == ("" if task["pass_hat_k"]["3"] is None else repr(task["pass_hat_k"]["3"]))
        assert float(row["wilson_low"]) == task["wilson_95"][0]  # full precision, not rounded for display
        assert row["runs_needed"] == ("" if task["runs_needed"] is None else str(task["runs_needed"]))


def test_markdown(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = report(capsys, str(results), "--format", "md", "--k", "1,3", "--unattended-runs", "2")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == (
        "| task | provider | n | pass | err | unsc | pass@1 | 95% CI | pass@2 | pass@3 | **pass^2** | pass^3 | flaky | clean "
        "| mean s | p90 s | turns | mean $ | $/success | +runs |"
    )
    assert lines[1].startswith("| :-- | :-- | --: |")
    assert lines[2].startswith("| add-tests | anthropic:claude-agent-sdk | 2 | 1 | 1 | 0 | 0.500 | 0.095-0.905 |")
    assert lines[4].startswith("| fix-typo | sonnet | 3 | 3 | 0 | 0 | 1.000 |") and "|   |" in lines[4]  # empty cells
    assert lines[5] == ""
    assert all(line.startswith("- ") for line in lines[6:])
    assert lines[-1] == "- pass^2 (marked): the chance that all 2 unattended runs between two looks pass."


def test_json_is_indented_and_complete(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = report(capsys, str(results), "--format", "json")[1]
    data = json.loads(out)
    assert set(data) == {"ks", "unattended_runs", "ci_width", "bootstrap", "tasks", "suite", "summary", "gates"}
    assert out.startswith('{\n  "ks": [\n    1,\n')
    assert '\n    {"task": "add-tests", "provider": "anthropic:claude-agent-sdk", "n": 2,' in out  # one line per task


def test_table_and_json_agree(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(report(capsys, str(results), "--format", "json")[1])
    table = report(capsys, str(results))[1]
    assert table.split("\n\n", 1)[1].splitlines() == data["summary"]


def test_unknown_format(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        report(capsys, str(results), "--format", "xml")
    assert exit_info.value.code == 2
    assert "invalid choice: 'xml' (choose from" in capsys.readouterr().err


def test_helpers() -> None:
    assert _formats.aligned(["a", "bb"], [["ccc", "d"]], left={0}) == "a    bb\n---  --\nccc   d"
    assert _formats.markdown(["a|b"], [[""]]) == "| a\\|b |\n| :-- |\n|   |"
    assert _formats.csv_text(["x", "y"], [[None, 0.1], ["a,b", True]]) == 'x,y\n,0.1\n"a,b",True'
    assert _formats.json_text({"a": [1, {"b": 2}], "c": {}}) == '{\n  "a": [\n    1,\n    {"b": 2}\n  ],\n  "c": {}\n}'
    assert (_formats.p_value(0.0004), _formats.p_value(0.5), _formats.signed(0.25)) == ("4.0e-04", "0.500", "+0.250")
    assert _formats.some(["a", "b", "c"], limit=2) == "a, b and 1 more"
