"""No figure outside its own interval, no interval from too few tasks: the suite's mean pass^k in every format.

A suite interval is the cluster bootstrap over tasks; under 5 tasks (stats._suite.MIN_TASKS) every format says
"not enough tasks" where the interval would be, and says why when the bootstrap's interval leaves out its own
estimate (pass^k's unbiased mean at n close to k), instead of printing a range that does not hold its figure.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from test_report import report, write_results
from test_report_figures import suite_of

NOTE = "not enough tasks for a 95% interval (3; it needs 5)"
THREE = {"a": (10, 10, "simple"), "b": (9, 10, "simple"), "c": (6, 10, "simple")}
FIVE = THREE | {"d": (8, 10, "simple"), "e": (10, 10, "simple")}


def formats(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> dict[str, str]:
    return {
        form: report(capsys, str(path), "--format", form, *args)[1] for form in ("table", "md", "csv", "json", "html")
    }


def test_three_tasks_say_not_enough_tasks_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = formats(capsys, write_results(tmp_path / "r.json", suite_of(THREE)), "--k", "1,3")
    data = json.loads(out["json"])
    (suite,) = data["suite"]["providers"]
    # pass^1 = (1 + 0.9 + 0.6) / 3 = 0.8333: shown, with no interval beside it
    assert suite["mean_pass_hat_k"]["1"] | {"mean": 0} == {
        "mean": 0, "ci_95": None, "ci_note": NOTE, "tasks": 3, "undefined": [], "ci_method": "exact", "resamples": 0,
        "mc_error": 0.0,
    }  # fmt: skip
    said = f"Mean over tasks: pass^1 0.833, pass^3 0.648 ({NOTE})."  # pass^3 = (1 + 0.9^3 + 0.6^3) / 3 = 0.6483
    assert said in " ".join(out["table"].split())
    assert said in out["md"].replace("\\", "")
    rows = list(csv.DictReader(io.StringIO(out["csv"])))
    assert {(r["suite_mean_pass_hat_1_low"], r["suite_mean_pass_hat_1_note"]) for r in rows} == {("", NOTE)}
    assert (
        f'0.833</span><span class="ci note" data-figure="(suite)|sonnet|mean_pass_hat_k.1.ci_95" data-value="null"> ({NOTE})'
        in out["html"]
    )
    for form, text in out.items():
        assert "1.000-1.000" not in text, form  # the degenerate range a one-cluster bootstrap printed


def test_five_tasks_print_the_interval_beside_the_figure_it_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = formats(capsys, write_results(tmp_path / "r.json", suite_of(FIVE)), "--k", "1,3")
    (suite,) = json.loads(out["json"])["suite"]["providers"]
    figure = suite["mean_pass_hat_k"]["1"]
    low, high = figure["ci_95"]
    assert (figure["ci_note"], figure["tasks"]) == (None, 5)
    assert low <= figure["mean"] <= high  # (1 + 0.9 + 0.6 + 0.8 + 1) / 5 = 0.86
    interval = f"{low:.3f}-{high:.3f}"
    assert f"pass^1 0.860 ({interval})" in " ".join(out["table"].split())
    rows = list(csv.DictReader(io.StringIO(out["csv"])))
    assert {(float(r["suite_mean_pass_hat_1_low"]), r["suite_mean_pass_hat_1_note"]) for r in rows} == {(low, "")}
    assert f"({interval})</span>" in out["html"]


def test_the_mean_of_the_tasks_pass_hat_k_lies_inside_its_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 20 tasks at 9/10: pass^10 of each is (9/10)^10 = 0.349, the pass^k every screen prints, and so is the mean; the
    # bootstrap centres on it (0.15-0.55). With the unbiased C(9,10)/C(10,10) = 0 the mean was 0, outside, unprinted.
    spec = {f"t{i:02d}": (9, 10, "simple") for i in range(20)}
    out = formats(capsys, write_results(tmp_path / "r.json", suite_of(spec)))
    (suite,) = json.loads(out["json"])["suite"]["providers"]
    figure = suite["mean_pass_hat_k"]["10"]
    assert figure["mean"] == 0.9**10 or figure["mean"] == 3486784401 / 10**10
    assert figure["ci_95"] == [0.15, 0.55] and figure["ci_note"] is None
    assert "pass^10 0.349 (0.150-0.550)" in " ".join(out["table"].split())
