"""The report says what ran the trials: the model ids that answered and the Claude Code and Agent SDK versions,
as passhat's provider records them in each row's metadata (`models`, `claude_code_version`, `agent_sdk_version`;
tests/trial/test_provider.py checks a real trial writes them) — in the header of every format, several when rows
differ. Rows of an older passhat (or another provider) record none: "model not recorded", as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_report import passhat_row, report, write_results

from passhat.report.totals import _parallel

OLD_CLI, NEW_CLI, SDK = "2.1.9", "2.1.332", "0.2.189"


def ran_row(task: str, repeat: int, models: list[str], cli: str | None, outcome: str = "pass") -> dict[str, Any]:
    row = passhat_row(task, outcome, turns=3, repeat=repeat)  # type: ignore[arg-type]
    ran = {"models": models, "claude_code_version": cli, "agent_sdk_version": SDK, "model": "opus"}
    row["response"]["metadata"].update(ran)
    return row


def rows() -> list[dict[str, Any]]:
    """bump-version ran on Claude Code 2.1.9 with claude-opus-5-5; fix-typo on 2.1.332, one trial also answered by
    claude-haiku-4-5 (a side request); one infra error row that recorded nothing."""
    found = [ran_row("bump-version", i, ["claude-opus-5-5"], OLD_CLI) for i in range(2)]
    found += [ran_row("fix-typo", 0, ["claude-opus-5-5"], NEW_CLI)]
    found += [ran_row("fix-typo", 1, ["claude-haiku-4-5", "claude-opus-5-5"], NEW_CLI, "fail")]  # in the 2nd part
    found.append(passhat_row("fix-typo", "error", turns=None, repeat=2))
    return found


HEADER = "models claude-haiku-4-5, claude-opus-5-5; Claude Code 2.1.9, 2.1.332; Agent SDK 0.2.189"


def test_the_table_header_names_what_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "results.json", rows())
    code, out, _ = report(capsys, str(path))
    header = " ".join(out.split("\n\n")[0].split())  # the first paragraph, unwrapped
    assert code == 0 and HEADER in header, header  # 2.1.9 before 2.1.332: versions in version order
    assert "model not recorded" not in header


@pytest.mark.parametrize("two_parts", [False, True], ids=["one-pass", "two-parts"])
def test_json_provenance_says_what_ran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, two_parts: bool
) -> None:
    """The same whether the file is read in one pass or in two forked parts (their totals merged)."""
    monkeypatch.setattr(_parallel, "PARALLEL_BYTES", 0 if two_parts else 1 << 40)
    path = write_results(tmp_path / "results.json", rows())
    data = json.loads(report(capsys, str(path), "--format", "json")[1])
    origin = data["provenance"]
    assert origin["models_answered"] == ["claude-haiku-4-5", "claude-opus-5-5"]
    assert origin["claude_code_versions"] == [OLD_CLI, NEW_CLI] and origin["agent_sdk_versions"] == [SDK]
    assert origin["models"] == ["opus"]  # the configured model, as before


def test_markdown_and_html_say_what_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "results.json", rows())
    markdown = report(capsys, str(path), "--format", "md")[1]
    assert HEADER in markdown.splitlines()[2]
    page = report(capsys, str(path), "--format", "html")[1]
    assert '<dt>Claude Code</dt><dd data-figure="(report)||provenance.claude_code_versions"' in page
    assert ">2.1.9, 2.1.332</dd>" in page and ">0.2.189</dd>" in page
    assert ">claude-haiku-4-5, claude-opus-5-5</dd>" in page


def test_csv_rows_carry_what_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import csv
    import io

    path = write_results(tmp_path / "results.json", rows())
    first = next(csv.DictReader(io.StringIO(report(capsys, str(path), "--format", "csv")[1])))
    assert first["claude_code_versions"] == "2.1.9, 2.1.332" and first["agent_sdk_versions"] == SDK


def test_rows_that_record_nothing_say_model_not_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "results.json", [passhat_row("fix-typo", "pass", turns=1)])
    out = report(capsys, str(path))[1]
    assert "model not recorded" in out.split("\n\n")[0] and "Claude Code" not in out.split("\n\n")[0]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        pytest.param("models", "claude-opus-5-5", "a list of model id strings", id="models-not-a-list"),
        pytest.param("models", ["claude-opus-5-5", 7], "a list of model id strings", id="models-not-strings"),
        pytest.param("claude_code_version", 2.1, "a non-empty string", id="version-a-number"),
    ],
)
def test_a_bad_field_is_one_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object, expected: str
) -> None:
    row = ran_row("fix-typo", 0, ["claude-opus-5-5"], NEW_CLI)
    row["response"]["metadata"][field] = value
    code, _, err = report(capsys, str(write_results(tmp_path / "results.json", [row])))
    assert code != 0 or err
    assert f"results.results[0].response.metadata.{field} is {json.dumps(value)}; expected {expected}" in err
