"""Streaming reads: JSON row by row at any chunk size, JSONL line by line, the same one-line errors
(with json.loads's own line and column) for every way a file can be cut short or broken."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_report import passhat_row, report, suite_rows, write_results

import passhat.results._scan as scan
from passhat.common._errors import ResultsError
from passhat.results._rows import iter_trials, load_trials


def unicode_rows() -> list[dict]:
    rows = suite_rows()
    rows[0]["response"]["metadata"]["task_id"] = "réparer-日本語-🙂"  # multi-byte UTF-8 across chunk edges
    rows[1]["error"] = "Échec: " + "ß" * 50
    rows[2]["latencyMs"] = 123456789  # a number that a chunk edge may split
    return rows


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 1000])
def test_any_chunk_size_reads_the_same_trials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    path = write_results(tmp_path / "results.json", unicode_rows())
    expected = load_trials(path)
    monkeypatch.setattr(scan, "CHUNK", chunk)
    assert load_trials(path) == expected
    assert expected[0].task == "réparer-日本語-🙂" and expected[2].latency_ms == 123456789


def test_key_order_and_long_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # results after config; version after the rows; a 100 KB value longer than the chunk; a BOM.
    rows = suite_rows()[:2]
    text = json.dumps({"config": {"notes": "x" * 100_000}, "results": {"results": rows, "version": 3}, "z": [1, 2.5]})
    path = tmp_path / "results.json"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    monkeypatch.setattr(scan, "CHUNK", 4096)
    assert [t.task for t in load_trials(path)] == ["bump-version", "bump-version"]


def test_rows_stream_before_the_file_is_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first rows arrive although the file breaks later: the reader never needed all of it.
    rows = [passhat_row("a", "pass", turns=1, repeat=i) for i in range(50)]
    path = write_results(tmp_path / "results.json", rows)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    monkeypatch.setattr(scan, "CHUNK", 1024)
    trials = iter_trials(path)
    assert next(trials).task == "a"
    with pytest.raises(ResultsError, match="not valid JSON at line"):
        list(trials)


def _position(message: str) -> tuple[int, int, str] | str:
    match = re.search(r"not valid JSON at line (\d+), column (\d+) \((.*?)\); ", message)
    return (int(match[1]), int(match[2]), match[3]) if match else message


def _json_error(text: str) -> tuple[int, int, str] | None:
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return error.lineno, error.colno, error.msg
    return None


@pytest.mark.parametrize("chunk", [5, 1 << 22])
def test_cut_anywhere_gives_json_loads_own_position(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(scan, "CHUNK", chunk)
    text = write_results(tmp_path / "full.json", unicode_rows()[:3]).read_text()
    path = tmp_path / "results.json"
    for cut in range(1, len(text) - 1, 7):
        path.write_text(text[:cut])
        with pytest.raises(ResultsError) as error:
            load_trials(path)
        message = str(error.value)
        assert "\n" not in message
        assert _position(message) == _json_error(text[:cut]), (cut, text[cut - 20 : cut])


@pytest.mark.parametrize("junk", ["x", "}", ",", "]", '"', "{"])
def test_broken_anywhere_gives_json_loads_own_position(tmp_path: Path, junk: str) -> None:
    text = write_results(tmp_path / "full.json", suite_rows()[:2]).read_text()
    path = tmp_path / "results.json"
    for at in range(0, len(text), 53):
        broken = text[:at] + junk + text[at:]
        expected = _json_error(broken)
        if expected is None:
            continue  # still valid JSON (e.g. inside a string): other checks apply
        path.write_text(broken)
        with pytest.raises(ResultsError) as error:
            load_trials(path)
        assert _position(str(error.value)) == expected, (at, junk)


def test_bad_utf8_in_a_later_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_results(tmp_path / "full.json", suite_rows()).read_bytes()
    path = tmp_path / "results.json"
    path.write_bytes(data[:5000] + b"\xff" + data[5000:])
    monkeypatch.setattr(scan, "CHUNK", 333)
    with pytest.raises(ResultsError, match=r"not UTF-8 text \(byte 5000\)"):
        load_trials(path)


def test_extra_data_after_the_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "results.json", suite_rows())
    path.write_text(path.read_text() + "\n{}")
    code, _, err = report(capsys, str(path))
    assert code == 2
    assert "(Extra data); pass the .json file written by `promptfoo eval -o results.json`, or name a JSONL" in err


# --- JSONL ---------------------------------------------------------------------------------------


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_jsonl_reads_like_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = unicode_rows()
    as_json = write_results(tmp_path / "results.json", rows)
    as_jsonl = write_jsonl(tmp_path / "results.jsonl", rows)
    assert load_trials(as_jsonl) == load_trials(as_json)
    outputs = [json.loads(report(capsys, str(path), "--format", "json")[1]) for path in (as_json, as_jsonl)]
    # The same figures; only where they come from differs: a JSONL file has no wrapper (no eval id, date, version).
    provenance = [data.pop("provenance") for data in outputs]
    assert outputs[0] == outputs[1]
    assert provenance[1] == {**provenance[0], "source": str(as_jsonl), "eval_id": None, "date": None,
                             "promptfoo_version": None, "description": None}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", "file is empty", id="empty"),
        pytest.param("\n\n", "file is empty", id="blank-lines"),
        pytest.param('{"success": true}\n{"succ', "line 2 is not valid JSON at column 2", id="cut-short"),
        pytest.param("7\n", "line 1: row is 7; expected an object", id="not-an-object"),
        pytest.param('{"success": "yes"}\n', 'line 1: row.success is "yes"; expected true or false', id="field"),
    ],
)
def test_jsonl_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(text)
    code, out, err = report(capsys, str(path))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err, err


def test_jsonl_cut_short_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "results.jsonl", suite_rows())
    path.write_text(path.read_text()[:-40])
    _, _, err = report(capsys, str(path))
    assert "(the file ends mid-row: the eval did not finish writing it)" in err


def test_jsonl_skips_blank_lines_and_bom(tmp_path: Path) -> None:
    rows = suite_rows()[:2]
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n").encode())
    assert len(load_trials(path)) == 2
