"""A trial cut off by Ctrl+C: promptfoo 0.123.1 saves the unfinished provider call as an error row ("Worker
shutting down", no repeat_index: the provider never answered) and `promptfoo eval --resume` counts it as done.
The report names it by task and repeat (recovered from the row's testIdx) and gives the fix that works,
`promptfoo eval --retry-errors --repeat N`, not the `--retry-errors` without `--repeat` trap.

data/ctrl-c-then-resume/results.json is the real file (see its README): py-median, --repeat 4, repeat 2 cut off.
"""

from __future__ import annotations

import copy
import csv
import html
import io
import json
from pathlib import Path
from typing import Any

import pytest
from test_report import passhat_row, report, words, write_results

from passhat.report._summary import finish
from passhat.report.totals._tally import fold, merge
from passhat.results._rows import load_trials

CAPTURED = Path(__file__).parent / "data" / "ctrl-c-then-resume" / "results.json"
WARNING = (
    "WARNING: py-median repeat 2 was cut off by Ctrl+C: promptfoo saved the unfinished call as an error "
    '("Worker shutting down"; counted in err, outside n), and `promptfoo eval --resume` counts it as done and '
    "never runs it again. Run `promptfoo eval --retry-errors --repeat 4` (after `--resume`, if the eval is still "
    "paused) to run it."
)
WRONG_CAUSE = "without `--repeat N`"


def captured_rows() -> list[dict[str, Any]]:
    return json.loads(CAPTURED.read_text())["results"]["results"]


def with_rows(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    """The captured file with other rows: its wrapper (evalId, runtimeOptions.repeat 4, ...) kept."""
    data = json.loads(CAPTURED.read_text())
    data["results"]["results"] = rows
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    return path


def test_the_cut_off_row_is_read_as_an_interrupted_infra_error() -> None:
    trials = load_trials(CAPTURED)
    assert [(t.test_index, t.repeat_index, t.interrupted) for t in trials] == [
        (0, 0, False),
        (1, 1, False),
        (2, None, True),  # no repeat_index: the provider never answered
        (3, 3, False),
    ]
    cut = trials[2]
    assert (cut.task, cut.infra_error, cut.passed) == ("py-median", True, False)


def test_the_report_names_the_task_and_repeat_and_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = report(capsys, str(CAPTURED), "--format", "json", "--k", "1")
    assert code == 0
    summary = json.loads(out)["summary"]
    assert not [line for line in summary if WRONG_CAUSE in line]
    assert WARNING in summary
    (task,) = json.loads(out)["tasks"]
    # n = 3 finished trials, all passed; the cut-off call is an infra error, and repeat 2 is not "missing"
    assert (task["n"], task["passes"], task["errors"]) == (3, 3, 1)
    assert (task["interrupted_repeats"], task["missing_repeats"], task["duplicate_repeats"]) == ([2], [], [])


def test_every_format_with_notes_says_it(capsys: pytest.CaptureFixture[str]) -> None:
    _, table, _ = report(capsys, str(CAPTURED), "--k", "1")
    assert WRONG_CAUSE not in table and WARNING in words(table)
    _, md, _ = report(capsys, str(CAPTURED), "--format", "md", "--k", "1")
    assert f"- {WARNING}" in md.replace("\\", "").splitlines()  # Markdown escapes ` ( " ... with a backslash
    _, page, _ = report(capsys, str(CAPTURED), "--format", "html", "--k", "1")
    assert f'<li data-figure="(report)||summary">{html.escape(WARNING)}</li>' in page
    _, out, _ = report(capsys, str(CAPTURED), "--format", "csv", "--k", "1")
    (row,) = csv.DictReader(io.StringIO(out))
    assert (row["errors"], row["interrupted_repeats"]) == ("1", "[2]")


def as_task(row: dict[str, Any], task: str, test_index: int, repeat: int | None) -> dict[str, Any]:
    """A captured row moved to another task and step; `repeat` None keeps a cut-off row's (absent) repeat."""
    row = copy.deepcopy(row)
    row["testIdx"] = test_index
    row["testCase"]["description"] = row["vars"]["task_id"] = row["testCase"]["metadata"]["task_id"] = task
    for metadata in (row.get("metadata") or {}, (row.get("response") or {}).get("metadata") or {}):
        metadata["task_id"] = task
        if repeat is not None:
            metadata["repeat_index"] = repeat
    return row


def test_two_tasks_each_recover_their_own_repeat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # promptfoo numbers the steps test by test, repeats inside: with --repeat 4, task b's repeat r is testIdx 4 + r
    finished, cut = captured_rows()[0], captured_rows()[2]
    b = [as_task(finished, "b", 4 + r, r) for r in (0, 2, 3)] + [as_task(cut, "b", 5, None)]
    data = json.loads(report(capsys, str(with_rows(tmp_path, b + captured_rows())), "--format", "json", "--k", "1")[1])
    found = {t["task"]: (t["interrupted_repeats"], t["missing_repeats"], t["n"], t["errors"]) for t in data["tasks"]}
    assert found == {"b": ([1], [], 3, 1), "py-median": ([2], [], 3, 1)}
    assert any(line.startswith("WARNING: b repeat 1 was cut off by Ctrl+C") for line in data["summary"])


def test_a_repeat_nothing_can_place_is_still_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # only the cut-off row: no finished row of the task says which testIdx is repeat 0
    path = with_rows(tmp_path, [captured_rows()[2]])
    data = json.loads(report(capsys, str(path), "--format", "json", "--k", "1")[1])
    (task,) = data["tasks"]
    assert (task["interrupted_repeats"], task["n"], task["errors"]) == ([None], 0, 1)
    (line,) = [line for line in data["summary"] if line.startswith("WARNING")]
    assert line.startswith("WARNING: a trial of py-median (promptfoo did not record its repeat) was cut off by Ctrl+C")
    assert "Run `promptfoo eval --retry-errors --repeat 4`" in line


@pytest.mark.parametrize(
    ("error", "reason", "interrupted"),
    [
        pytest.param("Error: Worker shutting down\n    at PythonWorker.shutdown (x.js:1:2)", 2, True, id="worker"),
        pytest.param("Error: Worker pool shutting down\n    at PythonWorkerPool.shutdown", 2, True, id="queued"),
        pytest.param("Worker shutting down", 2, True, id="no-prefix"),
        pytest.param(
            "Error: Queue disposed\n    at SlotQueue.dispose (shared-DYKPCo-p.js:538:41)", 2, True, id="scheduler-queue"
        ),
        pytest.param("Error: Worker crashed", 2, False, id="crash-is-not-ctrl-c"),
        pytest.param("API error 529 (overloaded) after 3 retries", 2, False, id="other-error"),
        pytest.param("Error: Worker shutting down", 1, False, id="not-an-error-row"),
    ],
)
def test_which_rows_count_as_cut_off(tmp_path: Path, error: str, reason: int, interrupted: bool) -> None:
    row = captured_rows()[2]
    row["error"], row["failureReason"] = error, reason
    (trial,) = load_trials(with_rows(tmp_path, [row]))
    assert trial.interrupted is interrupted


def test_a_call_waiting_in_the_schedulers_queue_is_named_by_task_and_repeat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A call still queued in promptfoo's adaptive scheduler when the eval paused is rejected "Queue disposed"
    (its SlotQueue.dispose()): a cut-off trial like the one in flight, not an infra error of unknown cause."""
    rows = captured_rows()
    rows[2]["error"] = "Error: Queue disposed\n    at SlotQueue.dispose (x.js:1:2)"
    code, out, _ = report(capsys, str(with_rows(tmp_path, rows)), "--format", "json", "--k", "1")
    assert code == 0
    assert json.loads(out)["tasks"][0]["interrupted_repeats"] == [2]
    assert any(line.startswith("WARNING: py-median repeat 2 was cut off") for line in json.loads(out)["summary"])


def test_a_row_the_provider_answered_is_never_cut_off(tmp_path: Path) -> None:
    row = passhat_row("t", "error", turns=None, repeat=3)  # the provider's own error, with its repeat_index
    row["error"] = "Error: Worker shutting down"
    (trial,) = load_trials(write_results(tmp_path / "r.json", [row]))
    assert (trial.interrupted, trial.infra_error) == (False, True)


def test_two_halves_fold_to_the_same_figures() -> None:
    # the report may read a big file in two processes and merge the halves (`_parallel`)
    trials = load_trials(CAPTURED)
    for cut in range(len(trials) + 1):
        halves = merge(fold(trials[:cut]), fold(trials[cut:]))
        assert finish(halves, [1]) == finish(fold(trials), [1]), cut
