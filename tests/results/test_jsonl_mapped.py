"""A JSONL file is read mapped into memory (`_jsonl._mapped`: no copy out of the page cache), and read() where it
cannot be mapped: both give the same trials and the same errors, count the same bytes for the progress line,
and split the same way for the two-process read.

Unmapped (`_mapped` patched to say no), every file is read by read(), as a pipe or an empty file is.
"""

from __future__ import annotations

import itertools
import json
import mmap
from pathlib import Path

import pytest
import varied_rows

from passhat.common._errors import ResultsError
from passhat.results import _jsonl, _scan
from passhat.results._rows import iter_made, iter_trials, load_trials
from passhat.results._trial import to_trial


def read_both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    """(mapped, read()) of the same file, each its trials or its error message."""

    def trials() -> object:
        try:
            return load_trials(path)
        except ResultsError as error:
            return str(error)

    mapped = trials()
    monkeypatch.setattr(_jsonl, "_mapped", lambda handle: None)
    return mapped, trials()


@pytest.mark.parametrize("chunk", [64, 4096, 1 << 18])  # 64: every line is longer than a block
def test_mapped_and_read_give_the_same_trials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    path = varied_rows.write_jsonl(tmp_path / "results.jsonl", 300)
    monkeypatch.setattr(_scan, "CHUNK", chunk)
    mapped, read = read_both(path, monkeypatch)
    assert isinstance(mapped, list) and len(mapped) == 300
    assert mapped == read


def test_a_last_line_without_newline_and_blank_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [json.dumps(row) for row in varied_rows.rows(20)]
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(lines[:10]) + "\n\n  \n" + "\n".join(lines[10:]), encoding="utf-8")  # no final newline
    monkeypatch.setattr(_scan, "CHUNK", 4096)
    mapped, read = read_both(path, monkeypatch)
    assert isinstance(mapped, list) and len(mapped) == 20
    assert mapped == read


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(lambda text: text[: len(text) // 2], id="cut short"),
        pytest.param(lambda text: text.replace('"success": true', '"success": 1', 1), id="bad field"),
        pytest.param(lambda text: "\ufeff" + text, id="byte order mark"),
    ],
)
def test_mapped_and_read_give_the_same_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: object) -> None:
    path = varied_rows.write_jsonl(tmp_path / "results.jsonl", 60)
    path.write_text(cut(path.read_text(encoding="utf-8")), encoding="utf-8")  # type: ignore[operator]
    monkeypatch.setattr(_scan, "CHUNK", 4096)
    mapped, read = read_both(path, monkeypatch)
    assert mapped == read


def test_a_regular_file_is_mapped_an_empty_one_is_not(tmp_path: Path) -> None:
    path = varied_rows.write_jsonl(tmp_path / "results.jsonl", 3)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with path.open("rb") as handle, empty.open("rb") as nothing:
        assert _jsonl._mapped(handle) is not None
        assert _jsonl._mapped(nothing) is None


def test_an_empty_file_says_so(tmp_path: Path) -> None:  # (an empty file cannot be mapped: read() finds nothing)
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"")
    with pytest.raises(ResultsError, match="file is empty"):
        load_trials(path)


def test_the_mapped_read_counts_every_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The progress line is told the bytes of each block, as read() would count them.
    path = varied_rows.write_jsonl(tmp_path / "results.jsonl", 200)
    monkeypatch.setattr(_scan, "CHUNK", 4096)
    counted: list[int] = []
    assert len(list(iter_trials(path, on_read=counted.append))) == 200
    assert sum(counted) == path.stat().st_size
    assert len(counted) > 1  # block by block, not once at the end


def test_halves_mapped_are_the_halves_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The two-process read: the head stops at the split (a byte limit), the tail starts there.
    path = varied_rows.write_jsonl(tmp_path / "results.jsonl", 200)
    monkeypatch.setattr(_scan, "CHUNK", 4096)
    data = path.read_bytes()
    start = data.index(b"\n", len(data) // 2) + 1  # a line start near the middle, as _parallel.split_point finds

    def halves() -> list[object]:
        return [list(iter_made(path, to_trial, part=(start, part))) for part in ("head", "tail")]

    mapped = halves()
    monkeypatch.setattr(_jsonl, "_mapped", lambda handle: None)
    assert mapped == halves()
    assert mapped[0] + mapped[1] == load_trials(path)  # type: ignore[operator]


def test_read_pages_leave_the_process_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Else every page of a mapped 2 GB file counts in the process's resident memory by the end (issue 33: < 500 MB).
    path = varied_rows.write_jsonl(tmp_path / "results.jsonl", 300)
    monkeypatch.setattr(_scan, "CHUNK", 4096)
    monkeypatch.setattr(_jsonl, "_RELEASE", mmap.PAGESIZE)
    released: list[tuple[int, int]] = []
    release = _jsonl._release

    def spy(mapped: mmap.mmap, start: int, end: int) -> int:
        released.append((start, release(mapped, start, end)))
        return released[-1][1]

    monkeypatch.setattr(_jsonl, "_release", spy)
    mapped, read = read_both(path, monkeypatch)
    assert mapped == read  # rows decoded from released pages (a judged row's raw grading) read them back
    assert released[0][0] == 0
    assert all(end == next_start for (_, end), (next_start, _) in itertools.pairwise(released))
    assert all(start % mmap.PAGESIZE == 0 and end % mmap.PAGESIZE == 0 for start, end in released)
    assert released[-1][1] > path.stat().st_size - 4096 - 2 * mmap.PAGESIZE  # up to the last block
