"""The verdict a cron owner needs, first in every format; the infra errors of a task that never ran, in every format;
the terminal table in 120 columns (every column with --wide)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from test_report import passhat_row, report, write_results
from test_report_figures import suite_of

# steady 400/400, shaky 6/10, young 10/10: for k = 10 at 0.9 — safe, not safe, not enough trials to say.
SPEC = {"steady": (400, 400, "simple"), "shaky": (6, 10, "simple"), "young": (10, 10, "simple")}


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write_results(tmp_path / "results.json", suite_of(SPEC))


def test_the_verdict_per_task_in_json(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(report(capsys, str(results), "--format", "json")[1])
    assert data["verdict"]["k"] == 10 and data["verdict"]["threshold"] == 0.9  # the largest --k, the default
    verdicts = {t["task"]: t["verdict"] for t in data["tasks"]}
    # The fixed-n verdict's interval is Clopper-Pearson. At c = n its low end solves p^n = 0.025 (the chance of n
    # passes in a row at the low end is alpha/2): steady 400/400: low = 0.025^(1/400), ^10 = 0.025^(1/40) = 0.9119.
    assert verdicts["steady"]["verdict"] == "safe"
    assert verdicts["steady"]["ci_95"][0] == pytest.approx(0.025 ** (10 / 400))
    # shaky 6/10: CP high = the 0.975 quantile of Beta(7, 4) = 0.8784, to the 10th 0.273 < 0.9: not safe.
    # Its estimate is the plug-in (6/10)^10 = 60466176/10^10, the column's pass^10 too (not C(6,10)/C(10,10) = 0).
    # The next 10 runs all pass with chance E[p^10 | Beta(7, 5)] = (7 x ... x 16) / (12 x ... x 21) = 0.0227.
    assert verdicts["shaky"] | {"ci_95": None} == {
        "verdict": "not safe", "k": 10, "threshold": 0.9, "estimate": 6**10 / 10**10, "estimator": "(c/n)^k",
        "ci_95": None, "passes": 6, "n": 10, "runs_to_decide": None, "interval": "clopper-pearson", "trials_used": 10,
        "next_runs_all_pass": pytest.approx(0.0227038, abs=1e-7), "prior": "Beta(1, 1)",
    }  # fmt: skip
    assert {t["task"]: t["pass_hat_k"]["10"] for t in data["tasks"]} == {t: v["estimate"] for t, v in verdicts.items()}
    assert verdicts["shaky"]["ci_95"][1] == pytest.approx(0.8784477**10, rel=1e-5)
    # young 10/10: low 0.025^(1/10) = 0.6915, to the 10th 0.025: the interval holds 0.9 — not enough trials to say.
    # All passes decide it at n >= 10 ln 0.025 / ln 0.9 = 350.1: n = 351, 341 more.
    assert (verdicts["young"]["verdict"], verdicts["young"]["runs_to_decide"]) == ("not enough trials to say", 341)
    assert verdicts["young"]["trials_used"] == 10


def test_sequential_widens_the_interval_to_the_anytime_valid_one(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(report(capsys, str(results), "--format", "json", "--sequential")[1])
    verdicts = {t["task"]: t["verdict"] for t in data["tasks"]}
    fixed = {t["task"]: t["verdict"] for t in json.loads(report(capsys, str(results), "--format", "json")[1])["tasks"]}
    assert data["verdict"]["interval"] == "mixture" and "anytime-valid" in data["verdict"]["rule"]
    # young 10/10: more trials to decide than at a fixed n, the price of looking after every round
    assert verdicts["young"]["runs_to_decide"] > fixed["young"]["runs_to_decide"]
    assert verdicts["steady"]["ci_95"][0] < fixed["steady"]["ci_95"][0]
    # steady 400/400 is safe at a fixed n but not when the 400 might have been stopped by looking: with the
    # uniform mixture, all passes give M_n(p) = B(n + 1, 1) / p^n = 1 / ((n + 1) p^n), and that reaches 20 at
    # p^10 = 0.9 only for n ln(1/0.98952) >= ln(20 (n + 1)): n of about 900.
    assert (fixed["steady"]["verdict"], verdicts["steady"]["verdict"]) == ("safe", "not enough trials to say")
    assert verdicts["shaky"]["verdict"] == "not safe"


def test_safe_at_and_unattended_runs_set_the_rule(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(report(capsys, str(results), "--format", "json", "--unattended-runs", "3", "--safe-at", "0.3")[1])
    verdicts = {t["task"]: t["verdict"]["verdict"] for t in data["tasks"]}
    # k = 3: young's interval [0.6915³, 1] = [0.331, 1] is above 0.3 now; shaky [0.2624³, 0.8784³] = [0.018, 0.678].
    assert (data["verdict"]["k"], verdicts) == (3, {"shaky": "not enough trials to say", "steady": "safe",
                                                    "young": "safe"})  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        report(capsys, str(results), "--safe-at", "1.5")
    assert exit_info.value.code == 2
    assert "--safe-at '1.5': expected a number between 0 and 1, e.g. 0.9" in capsys.readouterr().err


def test_the_verdict_leads_every_format(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = report(capsys, str(results))[1].splitlines()
    verdict = table.index("") + 1  # after where the figures come from
    assert table[verdict].startswith("Safe for 10 unattended runs in a row? safe when the whole 95% interval of")
    lines = [line for line in table[verdict : table.index("", verdict)] if not line.startswith("    ")]
    assert [line.split(":")[0].strip() for line in lines[-3:]] == ["shaky", "young", "steady"]  # the worst first
    assert lines[-3] == (
        "  shaky: not safe: pass^10 = (6/10)^10 = 0.006 (95% CI 0.000-0.274); next 10 runs all pass: 0.023 (uniform prior);"
    )
    md = report(capsys, str(results), "--format", "md")[1].splitlines()
    assert md[4:6] == ["### Safe for 10 unattended runs?", ""]  # after the title and where the figures come from
    assert "- **not enough trials to say**: young: pass^10 = (10/10)^10 = 1.000 (95% CI 0.025-1.000); next 10 runs " \
           "all pass: 0.524 (uniform prior); about 341 more trials would decide it if the rate holds" in md  # fmt: skip
    html = report(capsys, str(results), "--format", "html")[1]
    assert html.index('id="verdict"') < html.index('id="summary"') < html.index('id="tasks"')
    assert 'data-figure="steady|sonnet|verdict.verdict" data-value="&quot;safe&quot;">safe</td>' in html
    assert f'data-figure="shaky|sonnet|verdict.estimate" data-value="{6**10 / 10**10}">pass^10 = (6/10)^10' in html
    # trials used by a decided task, trials expected for an open one: in every format
    assert "(uniform prior); decided after 10 trials" in html and "about 341 more trials would decide it" in html
    rows = {r["task"]: r for r in csv.DictReader(io.StringIO(report(capsys, str(results), "--format", "csv")[1]))}
    assert (rows["shaky"]["trials_used"], rows["young"]["runs_to_decide"]) == ("10", "341")


def errored_rows() -> list[dict[str, Any]]:
    rows = suite_of({"ok": (3, 3, "simple")})
    reasons = ["infrastructure error in task down trial {i}: model API returned 529 (overloaded)\n  at retry 3"] * 3
    reasons.append("infrastructure error (sandbox) in task down: no space left on device")
    for i, reason in enumerate(reasons):
        row = passhat_row("down", "error", turns=None, repeat=i)
        row["error"] = row["response"]["error"] = reason.format(i=i)  # one cause, a trial number of its own each
        rows.append(row)
    return rows


def test_a_task_whose_every_trial_errored_says_why_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_results(tmp_path / "results.json", errored_rows())
    first = "infrastructure error in task down: model API returned 529 (overloaded)"  # the trial out of the key
    other = "infrastructure error (sandbox) in task down: no space left on device"
    data = json.loads(report(capsys, str(path), "--format", "json")[1])
    down = next(t for t in data["tasks"] if t["task"] == "down")
    assert down["infra_error_reasons"] == [{"reason": first, "count": 3}, {"reason": other, "count": 1}]
    said = f"Infra errors, down (all 4 trials): 3x {first}; 1x {other}."
    assert said in data["summary"]
    assert not any("run at least 1 trials" in line for line in data["summary"])  # was all it said
    table = " ".join(report(capsys, str(path))[1].split())
    assert said in table and "down: not enough trials to say: no scored trial: all 4 trials were infra errors" in table
    md = report(capsys, str(path), "--format", "md")[1]
    assert f"- Infra errors, down (all 4 trials): 3x {first}; 1x {other}." in md.replace("\\", "")
    rows = {r["task"]: r for r in csv.DictReader(io.StringIO(report(capsys, str(path), "--format", "csv")[1]))}
    assert json.loads(rows["down"]["infra_error_reasons"]) == down["infra_error_reasons"]
    html = report(capsys, str(path), "--format", "html")[1]
    assert f"<code>{first}</code>" in html and f"<code>{other}</code>" in html
    assert 'data-figure="down|sonnet|infra_error_reasons.0.count" data-value="3">3</td>' in html


def many_tasks() -> list[dict[str, Any]]:
    spec = {f"a-rather-long-task-name-for-the-table-number-{i:02d}": (i % 10 + 1, 10, "simple") for i in range(12)}
    rows = suite_of(spec)
    for row in rows[:40]:  # a second provider with a long label, for the provider column
        row["provider"] = {"id": "file://providers/claude_code.py", "label": "sonnet-with-a-terse-claude-md"}
    return rows


@pytest.mark.parametrize("ks", ["1,3,5,10", "1,2,3,4,5,6,7,8,9,10"])
def test_the_table_fits_120_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str], ks: str) -> None:
    path = write_results(tmp_path / "results.json", many_tasks())
    out = report(capsys, str(path), "--k", ks, "--unattended-runs", "7")[1]
    assert max(len(line) for line in out.splitlines()) <= 120
    head = next(line for line in out.splitlines() if line.startswith("task "))
    assert "pass^7*" in head and "$/success" in head  # the verdict's k and the cost stay
    names = [line.split()[0] for line in out.splitlines() if line.startswith("a-")]
    assert all("…" in name and name.startswith("a-rather") for name in names)  # cut in the middle,
    assert [name[-3:] for name in names[:2]] == ["-00", "-01"] and len(set(names)) == 12  # still told apart
    assert "pass^3" not in head and "left out to fit 120 columns: pass^" in out  # pass^k columns went first
    assert "(--wide adds pass@k, clean, mean s, p90 s, turns, mean $" in out
    wide = report(capsys, str(path), "--k", ks, "--unattended-runs", "7", "--wide")[1]
    assert max(len(line) for line in wide.splitlines()) > 120
    assert "a-rather-long-task-name-for-the-table-number-11" in wide and "mean $" in wide


def test_the_verdict_block_says_once_what_the_trials_at_hand_can_decide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ten trials a task: no task can be shown safe for 10 runs at 0.9 (that takes n passes in a row with
    0.025^(10/n) >= 0.9: n = 351), and two failures show not safe. Said once, in every format, before the tasks;
    with --sequential by the mixture (wider: 934), its name said."""
    path = write_results(tmp_path / "r.json", suite_of({"a": (10, 10, "simple"), "b": (9, 10, "simple")}))
    line = (
        "At n = 10: a task with 2 failures or more is shown not safe; no task can be shown safe for 10 runs in a row at "
        "0.9; that needs 351 passes in a row (Clopper-Pearson, trials at a fixed n)."
    )
    for form in ("table", "md", "html"):
        flat = " ".join(report(capsys, str(path), "--format", form)[1].split())
        assert flat.count(line) == 1, form
    data = json.loads(report(capsys, str(path), "--format", "json")[1])
    assert data["verdict"]["reach"] == {"n": 10, "safe_needs": 351, "not_safe_failures": 2, "method": "clopper-pearson"}
    sequential = json.loads(report(capsys, str(path), "--format", "json", "--sequential")[1])["verdict"]
    assert sequential["reach"]["safe_needs"] == 934 and "anytime-valid mixture" in sequential["reach_line"]
    steady = write_results(tmp_path / "s.json", suite_of({"a": (400, 400, "simple")}))
    said = " ".join(report(capsys, str(steady))[1].split())
    assert "a task can be shown safe for 10 runs in a row at 0.9 from 351 passes in a row on" in said
