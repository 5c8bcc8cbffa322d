"""`passhat report --format html` as headless Chromium shows it: the page renders with its plots, every figure
it shows is the `--format json` report's, and it makes no request (self-contained) and logs no error; at 1400 and
800 px no column hides behind a scroll bar or past the window, and no task name breaks inside a word."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import run_browser_script
from test_report import passhat_row, report, write_results
from test_report_figures import trial_row
from test_report_html import assert_figures_match, history, html_rows  # noqa: F401 - history is a fixture

pytestmark = pytest.mark.e2e


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def seen_in_chromium(page: Path, shot: Path) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """What the browser shows, and its figures as {name: [JSON-decoded value, ...]} (summary lines as text)."""
    seen = run_browser_script("render_html", page, "#plot-pass-rate", "--screenshot", shot)
    figures = {}
    for name, values in seen["dataset"].items():
        values = values if isinstance(values, list) else [values]
        figures[name] = values if name == "(report)||summary" else [json.loads(v) for v in values]
    return seen, figures


def render(capsys: pytest.CaptureFixture[str], results: Path, out: Path, *args: str) -> dict[str, Any]:
    """Write the page with -o; return the JSON report of the same file and options."""
    code, _, _ = report(capsys, str(results), "--format", "html", "-o", str(out), *args)
    assert code in (0, 1)  # 1: a gate failed, which the page shows
    return json.loads(report(capsys, str(results), "--format", "json", *args)[1])


def test_the_page_shows_the_json_reports_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write_results(tmp_path / "results.json", html_rows())
    page = tmp_path / "report.html"
    data = render(capsys, results, page, "--unattended-runs", "3", "--gate", "pass^3>=0.5", "--gate", "errors<=1")
    seen, figures = seen_in_chromium(page, tmp_path / "report.png")

    assert seen["title"] == "passhat report: pass@k and pass^k per task"
    assert seen["text"].startswith("passhat report source file ")  # where the figures come from, first
    assert "Safe for 3 unattended runs?" in seen["text"].split("Summary")[0]  # the verdict before anything else
    # The pass-rate plot, the cost plot and one pass^k panel per task (4 tasks).
    assert seen["svgCount"] == 2 + len(data["tasks"]) >= 3
    assert (seen["consoleErrors"], seen["failedRequests"]) == ([], [])  # no script error; not one request
    summary = figures.pop("(report)||summary")
    assert summary == [_squash(line) for line in data["summary"]]
    assert_figures_match(figures, data)
    # Spot checks, by hand: bump-version 6/10, pass^3 = (6/10)^3 = 0.216 (table and plot);
    # add-tests n=2 < k=3: null, shown "n<k", never 0.
    assert figures["bump-version|sonnet|pass_hat_k.3"] == [pytest.approx(0.216), pytest.approx(0.216)]
    assert figures["add-tests|anthropic:claude-agent-sdk|pass_hat_k.3"] == [None, None]
    assert figures["(gate)|errors<=1|passed"] == [True] and figures["(gate)|pass^3>=0.5|passed"] == [False]
    assert '<script>alert("odd & co")</script>' in seen["text"]  # the task name, as text
    assert "Cost per success" in seen["text"] and "pass^k against k" in seen["text"]
    assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_drift_plot_from_the_history(
    history: tuple[Path, Path],  # noqa: F811 - the fixture
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    results, db = history
    page = tmp_path / "drift.html"
    data = render(capsys, results, page, "--db", str(db))
    seen, figures = seen_in_chromium(page, tmp_path / "drift.png")
    assert seen["svgCount"] == 2 + 1 + 1  # rate, cost, one pass^k panel, one drift panel (alpha)
    assert (seen["consoleErrors"], seen["failedRequests"]) == ([], [])
    figures.pop("(report)||summary")
    assert_figures_match(figures, data)
    # alpha's pass rate per eval (a trial passes at score >= 0.5): 3/3, 3/3 (0.6, 0.7, 0.5), then 1/3 (0.5 only).
    means = [figures[f"alpha|sonnet|history.eval-{i}.mean"] for i in (1, 2, 3)]
    assert means == [[1.0], [1.0], [pytest.approx(1 / 3)]]
    assert "Drift over evals" in seen["text"]


def crowded_rows() -> list[dict[str, Any]]:
    """A report that stretches the page: long names (hyphens, underscores, one long word), tiers, two providers,
    infra errors with long reasons, costs from the scripted model."""
    rows = html_rows()
    names = ["py-strategy-pattern-refactor-with-a-long-name", "migrate_the_settings_module_to_pydantic_v2",
             "averyveryverylongtasknamewithoutanyseparatorsatall"]  # fmt: skip
    for task in names:
        for repeat in range(10):
            row = trial_row(task, "pass" if repeat % 4 else "fail", tier="very-complex")
            row["metadata"].update(repeat_index=repeat, scripted_model=True, cost_usd=1.2345)
            rows.append(row)
    for repeat in range(3):
        row = passhat_row("every-trial-errored", "error", turns=None, repeat=repeat)
        row["error"] = "infrastructure error in task every-trial-errored trial 0: " + "x" * 300
        rows.append(row)
    return rows


@pytest.mark.parametrize("width", [1400, 800])
def test_no_column_is_clipped_and_no_name_breaks_mid_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], width: int
) -> None:
    results = write_results(tmp_path / "results.json", crowded_rows())
    page = tmp_path / "report.html"
    render(capsys, results, page, "--unattended-runs", "7", "--gate", "pass^7>=0.9", "--gate", "errors==0")
    seen = run_browser_script("html_layout", page, width, "--screenshot", tmp_path / f"layout-{width}.png")
    assert seen["width"] == width and seen["cells"] > 100 and seen["names"] > 20
    assert seen["scrolled"] == []  # no table wider than its box: $/success and +runs in view
    assert seen["clipped"] == []
    assert seen["pageOverflow"] == 0
    assert seen["midWordBreaks"] == []  # names wrap after - _ / . : only
