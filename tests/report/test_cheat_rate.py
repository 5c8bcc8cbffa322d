"""The cheat rate's arithmetic and its input: rows of an impossible twin (the test's metadata `expect`) are
taken out of the suite's figures and counted as cheats, c/n with the Wilson interval, per task and pooled per
provider; a bad `expect` is one clear error. (End to end through promptfoo: test_report_cheats.py.)"""

from __future__ import annotations

import json

import pytest

from passhat.cli import main
from passhat.report._summary import summarize
from passhat.report.cheats import cheat_data, split_impossible
from passhat.results import iter_trials
from passhat.stats import wilson_interval


def _row(task: str, passed: bool, repeat: int, expect: str | None) -> dict:
    meta = {"task_id": task, "tier": "simple", **({"expect": expect} if expect else {})}
    return {
        "success": passed, "failureReason": 0 if passed else 1, "provider": {"id": "p", "label": "agent"},
        "metadata": {"task_id": task, "repeat_index": repeat}, "testCase": {"description": task, "metadata": meta},
        "namedScores": {}, "cost": 0.01, "latencyMs": 10,
    }  # fmt: skip


def _results(tmp_path, rows: list[dict]) -> str:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"evalId": "e", "results": {"version": 3, "results": rows}}))
    return str(path)


# twin-a: c=1 of n=3; twin-b: c=2 of n=2; real: c=2 of n=2
ROWS = (
    [_row("twin-a", i == 0, i, "impossible") for i in range(3)]
    + [_row("twin-b", True, i, "impossible") for i in range(2)]
    + [_row("real", True, i, None) for i in range(2)]
)


def test_impossible_rows_are_cheats_per_task_and_pooled_per_provider(tmp_path):
    summaries = summarize(iter_trials(_results(tmp_path, ROWS)), (1,))
    possible, twins = split_impossible(summaries)
    assert [s.task for s in possible] == ["real"] and [s.task for s in twins] == ["twin-a", "twin-b"]
    data = cheat_data(twins)
    by_task = {t["task"]: t for t in data["tasks"]}
    assert (by_task["twin-a"]["cheats"], by_task["twin-a"]["n"]) == (1, 3)
    assert by_task["twin-a"]["wilson_95"] == list(wilson_interval(3, 1))
    [pooled] = data["providers"]
    assert (pooled["n"], pooled["cheats"], pooled["tasks"]) == (5, 3, 2)  # 3 + 2 trials, 1 + 2 cheats
    assert pooled["cheat_rate"] == 3 / 5 and pooled["wilson_95"] == list(wilson_interval(5, 3))


def test_the_suite_mean_leaves_the_twins_out(tmp_path, capsys):
    assert main(["report", _results(tmp_path, ROWS), "--k", "1", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["suite"]["mean_pass_hat_k"]["1"] == 1.0  # real alone: 2/2 (with the twins: (1/3 + 1 + 1) / 3)
    assert [t["task"] for t in data["tasks"]] == ["real"]
    text_rows = [line for line in data["summary"] if "twin" in line]
    assert text_rows == []


def test_a_bad_expect_is_one_clear_error(tmp_path, capsys):
    path = _results(tmp_path, [_row("t", True, 0, "maybe")])
    assert main(["report", path, "--k", "1"]) == 2
    err = capsys.readouterr().err
    assert 'results[0].testCase.metadata.expect is "maybe"; expected "possible" or "impossible"' in err


@pytest.mark.parametrize("form", ["table", "md", "html"])
def test_no_impossible_task_no_section(tmp_path, capsys, form):
    assert main(["report", _results(tmp_path, ROWS[-2:]), "--k", "1", "--format", form]) == 0
    out = capsys.readouterr().out
    assert "Cheat rate" not in out and "cheats" not in out


def test_csv_keeps_its_columns_whatever_the_tasks(tmp_path, capsys):
    """One schema for a consumer: the cheat columns are there, empty for a task that can be passed."""
    assert main(["report", _results(tmp_path, ROWS[-2:]), "--k", "1", "--format", "csv"]) == 0
    head, row = capsys.readouterr().out.splitlines()[:2]
    assert head.endswith(",expect,cheats,cheat_rate,cheat_low,cheat_high") and row.endswith(",possible,,,,")
