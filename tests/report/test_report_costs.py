"""Cost in the report: a trial whose cost is unknown is not a $0 trial; figures from the scripted model are marked
as not real money wherever a cost shows (table, md, csv, json, html).

The rule (README, "Numbers"): a cost is known when the provider sets metadata `cost_usd` (passhat's provider does;
null: the CLI reported none), else from the row's `cost` — except promptfoo's `cost: 0` on an error row. mean $ is
the mean over every trial with a known cost (infra errors too); $/success is the cost of the scored trials with a
known cost over the passes among them.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from test_report import passhat_row, report, sdk_row, words, write_results

from passhat.results._rows import load_trials


def with_metadata(row: dict[str, Any], **meta: Any) -> dict[str, Any]:
    """The provider's metadata, as promptfoo writes it: in response.metadata and merged into the row's."""
    row["response"]["metadata"].update(meta)
    row["metadata"].update(meta)
    return row


def infra_task() -> list[dict[str, Any]]:
    # 8 real trials at $0.504 each (6 pass, 2 fail) and 2 sandbox failures: promptfoo wrote `cost: 0` on those
    # error rows, and the provider set no cost_usd (no CLI ran).
    rows = [
        with_metadata(passhat_row("infra", "pass" if i < 6 else "fail", turns=3, cost=0.504, repeat=i), cost_usd=0.504)
        for i in range(8)
    ]
    rows += [passhat_row("infra", "error", turns=None, cost=0.0, repeat=8 + i) for i in range(2)]
    return rows


def task(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in data["tasks"] if t["task"] == name)


def test_an_error_rows_zero_is_not_a_free_trial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "results.json", infra_task())
    data = json.loads(report(capsys, str(path), "--format", "json")[1])
    infra = task(data, "infra")
    # mean $ = 8 x 0.504 / 8 = 0.504 (counting the two $0 error rows gave 4.032 / 10 = 0.403)
    assert infra["mean_cost_usd"] == pytest.approx(0.504)
    assert infra["cost_known"] == 8
    # $/success = 8 x 0.504 / 6 passes = 0.672
    assert infra["cost_per_success_usd"] == pytest.approx(0.672)
    assert [t.cost_usd for t in load_trials(path)][-3:] == [0.504, None, None]


def test_known_and_unknown_costs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        # An infra error after the CLI ran and reported $0.30: paid for, known, in mean $ (not in $/success).
        with_metadata(passhat_row("t", "error", turns=None, cost=0.0, repeat=0), cost_usd=0.3),
        # A pass whose cost the CLI never reported (cost_usd null; the provider sent cost 0): unknown, left out of
        # both, its pass too.
        with_metadata(passhat_row("t", "pass", turns=2, cost=0.0, repeat=1), cost_usd=None),
        with_metadata(passhat_row("t", "pass", turns=2, cost=0.1, repeat=2), cost_usd=0.1),
        with_metadata(passhat_row("t", "fail", turns=2, cost=0.2, repeat=3), cost_usd=0.2),
        # Promptfoo's own SDK provider: no cost_usd field; its error row's cost is a price when not 0.
        sdk_row("sdk", "pass", turns=1, cost=0.4),
        sdk_row("sdk", "error", turns=1, cost=0.2),
        sdk_row("sdk", "error", turns=1, cost=0.0),
    ]
    data = json.loads(report(capsys, str(write_results(tmp_path / "r.json", rows)), "--format", "json")[1])
    t = task(data, "t")
    # mean $ over 3 known costs (0.3, 0.1, 0.2) = 0.2; $/success = scored known (0.1 + 0.2) / 1 pass among them
    assert (t["mean_cost_usd"], t["cost_known"]) == (pytest.approx(0.2), 3)
    assert t["cost_per_success_usd"] == pytest.approx(0.3)
    sdk = task(data, "sdk")
    assert (sdk["mean_cost_usd"], sdk["cost_known"]) == (pytest.approx(0.3), 2)  # (0.4 + 0.2) / 2
    assert sdk["cost_per_success_usd"] == pytest.approx(0.4)


def scripted_rows() -> list[dict[str, Any]]:
    rows = [
        with_metadata(passhat_row("demo", "pass", turns=3, cost=9.79, repeat=i), cost_usd=9.79, scripted_model=True)
        for i in range(3)
    ]
    rows += [with_metadata(passhat_row("real", "pass", turns=3, cost=0.5, repeat=i), cost_usd=0.5) for i in range(3)]
    return rows


def test_scripted_model_dollars_are_marked_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "results.json", scripted_rows())
    data = json.loads(report(capsys, str(path), "--format", "json")[1])
    assert (task(data, "demo")["scripted_model"], task(data, "real")["scripted_model"]) == (True, False)
    assert data["provenance"]["scripted_model"] is True
    assert any(line.startswith("Not real money: the costs of 1 task come from the scripted model") for line in
               data["summary"])  # fmt: skip

    table = report(capsys, str(path), "--wide")[1]
    assert "the scripted model (passhat fake-model), not real Claude." in " ".join(table.split("\n\n")[0].split())
    demo = next(line for line in table.splitlines() if line.startswith("demo "))
    real = next(line for line in table.splitlines() if line.startswith("real "))
    assert demo.split()[-2:] == ["$9.7900†", "$9.7900†"] and "†" not in real  # mean $, $/success (no +runs)
    assert "† scripted model: made-up tokens priced as if real, not money spent." in table
    assert any(line.startswith("Not real money") for line in words(table))
    assert "$9.7900†" in report(capsys, str(path))[1]  # the 120-column table's $/success too

    md = report(capsys, str(path), "--format", "md")[1]
    assert "\\$9.7900† | \\$9.7900† |" in md and "† scripted model" in md

    rows = list(csv.DictReader(io.StringIO(report(capsys, str(path), "--format", "csv")[1])))
    assert [(r["task"], r["scripted_model"]) for r in rows] == [("demo", "True"), ("real", "False")]

    html = report(capsys, str(path), "--format", "html")[1]
    assert html.count('<abbr class="scripted" title="scripted model (passhat fake-model)') == 2  # mean $, $/success
    assert '<abbr class="scripted">†</abbr> scripted model (passhat fake-model): made-up tokens' in html  # legend
    assert "$9.7900 scripted, not real</text>" in html  # the cost plot's label
