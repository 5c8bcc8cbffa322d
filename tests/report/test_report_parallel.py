"""Reading a big file in two processes gives exactly the one-pass totals, and falls back to the one pass
(with its exact error messages) at any doubt."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from test_report import report, suite_rows, write_results
from test_report_figures import trial_row

from passhat.report._summary import finish
from passhat.report.totals import _parallel
from passhat.report.totals._parallel import _fold_in_two, fold_file, split_point
from passhat.report.totals._tally import fold
from passhat.results._rows import iter_trials

pytestmark = pytest.mark.skipif(threading.active_count() > 1, reason="two-process reads are off while threads run")


def many_rows(count: int = 400) -> list[dict]:
    """Rows of several tasks, tiers first seen in either half, costs and durations in both."""
    rows = []
    for i in range(count):
        task = f"t{i % 7}"
        tier = None if i < count // 2 and task == "t3" else ("simple" if i % 2 else "complex")
        row = trial_row(task, "pass" if i % 3 else "fail", tier=tier, latency=1000 + i, label=f"p{i % 2}")
        row["cost"] = 0.01 * (i % 11) + 1e-9 * i
        rows.append(row)
    rows.append(trial_row("t1", "error", status="infra_error"))
    return rows


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Force two-process reads for small files and record each merge of two halves."""
    merges: list[int] = []
    real_merge = _parallel.merge

    def merge(first: dict, second: dict) -> dict:
        merges.append(len(second))
        return real_merge(first, second)

    monkeypatch.setattr(_parallel, "merge", merge)
    monkeypatch.setattr(_parallel, "PARALLEL_BYTES", 0)
    return merges


def one_pass(path: Path) -> list:
    return finish(fold(iter_trials(path)), (1, 3))


def test_json_in_two_equals_one_pass(tmp_path: Path, spy: list[int]) -> None:
    path = write_results(tmp_path / "results.json", many_rows())  # indent=2, as promptfoo writes
    start = split_point(str(path), minimum=0)
    assert start is not None and path.read_bytes()[start : start + 1] == b"{"
    assert finish(fold_file(path), (1, 3)) == one_pass(path)
    assert spy  # the two halves were really read apart and merged


def test_jsonl_in_two_equals_one_pass(tmp_path: Path, spy: list[int]) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in many_rows()))
    assert finish(fold_file(path), (1, 3)) == one_pass(path)
    assert spy


def test_report_output_is_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str], spy: list[int]) -> None:
    path = write_results(tmp_path / "results.json", many_rows())
    two = report(capsys, str(path), "--format", "json")[1]
    assert spy
    spy.clear()
    _parallel.PARALLEL_BYTES = 1 << 40  # one pass (monkeypatch restores the value)
    assert report(capsys, str(path), "--format", "json")[1] == two
    assert not spy


def test_compact_json_is_read_in_one_pass(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"results": {"version": 3, "results": many_rows()}}))
    assert split_point(str(path), minimum=0) is None


@pytest.mark.parametrize("half", ["head", "tail"])
def test_a_bad_row_in_either_half_gives_the_one_pass_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spy: list[int], half: str
) -> None:
    rows = many_rows()
    rows[10 if half == "head" else -10]["success"] = "yes"
    path = write_results(tmp_path / "results.json", rows)
    index = 10 if half == "head" else len(rows) - 10
    code, _, err = report(capsys, str(path))
    assert code == 2
    assert err == (
        f'passhat: error: {path}: results.results[{index}].success is "yes"; expected true or false; re-run '
        "`npx promptfoo eval -o results.json` with the promptfoo pinned in package.json (0.123) and pass that file\n"
    )
    assert not spy


def test_broken_tail_gives_the_one_pass_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spy: list[int]
) -> None:
    path = write_results(tmp_path / "results.json", many_rows())
    text = path.read_text()
    path.write_text(text[: len(text) - 300])
    expected_line = text[: len(text) - 300].count("\n") + 1
    code, _, err = report(capsys, str(path))
    assert code == 2 and f"not valid JSON at line {expected_line}, column" in err
    assert not spy


def test_a_start_inside_a_row_is_refused(tmp_path: Path) -> None:
    path = write_results(tmp_path / "results.json", suite_rows() * 20)
    start = split_point(str(path), minimum=0)
    assert start is not None
    assert _fold_in_two(str(path), start + 1) is None  # not a row's start: read whole instead
    assert _fold_in_two(str(path), start - 40) is None


def test_version_after_the_rows_is_read_in_one_pass(tmp_path: Path, spy: list[int]) -> None:
    rows = many_rows()
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"results": {"results": rows, "version": 3}}, indent=2))
    assert finish(fold_file(path), (1,)) == finish(fold(iter_trials(path)), (1,))
    assert not spy
