"""A JSONL block msgspec decodes is not counted line by line (issue 33: a scan of every byte): an error's line
number is counted again from the file, and stays the line a reader counts, blank lines included.

Small blocks (`_scan.CHUNK`) put the blank lines in blocks read before the one with the error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import varied_rows

from passhat.common._errors import ResultsError
from passhat.results import _scan
from passhat.results._jsonl import line_of
from passhat.results._rows import load_trials
from passhat.results._scan import NotJson


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def lines_with_blanks(count: int) -> list[str]:
    """`count` compact rows with a blank line (spaces, an empty line, a CR) after every 7th row."""
    lines: list[str] = []
    for index, row in enumerate(varied_rows.rows(count)):
        lines.append(json.dumps(row))
        if index % 7 == 6:
            lines.append(("", "   ", "\r")[index % 3])
    return lines


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_scan, "CHUNK", 4096)  # a few rows a block


def test_a_row_error_after_uncounted_blocks_names_its_line(tmp_path: Path, small_blocks: None) -> None:
    lines = lines_with_blanks(120)
    bad_at = len(lines) - 5  # 0-based; its line is bad_at + 1
    lines[bad_at] = json.dumps({**json.loads(lines[bad_at]), "success": "yes"})
    path = write_lines(tmp_path / "results.jsonl", lines)
    with pytest.raises(ResultsError, match=rf"results\.jsonl: line {bad_at + 1}: row\.success is \"yes\""):
        load_trials(path)


def test_broken_json_after_uncounted_blocks_names_its_line(tmp_path: Path, small_blocks: None) -> None:
    lines = lines_with_blanks(120)
    bad_at = len(lines) - 3
    lines[bad_at] = lines[bad_at][:-1]  # the closing brace gone: this block is read line by line
    path = write_lines(tmp_path / "results.jsonl", lines)
    with pytest.raises(NotJson, match=rf"results\.jsonl: line {bad_at + 1} is not valid JSON at column"):
        load_trials(path)


def test_line_of_counts_blank_lines_and_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"\xef\xbb\xbf\n{}\n\n  \n{}\r\n{}")
    assert [line_of(str(path), index) for index in range(3)] == [2, 5, 6]
