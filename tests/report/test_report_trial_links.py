"""A trial's transcript and diff open in one click from the HTML report: its Trials table has a row per trial with
links to the files the provider recorded (relative to the page when it is written with -o, so the page and the
eval's artifacts open together from disk; else file:// URLs). Checked in headless Chromium: the click opens the
file's text. Screenshots stay in the test's folder (copied to $PASSHAT_SHOTS when set)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest
from test_report import passhat_row, write_results

from passhat.cli import main

DIFF = "diff --git a/median.py b/median.py\n-    return s[n // 2]\n+    return (s[n // 2 - 1] + s[n // 2]) / 2\n"


def _eval(root: Path, outcomes: list[str]) -> Path:
    """A results file whose trials' transcripts, diffs and tests outputs are on disk, as the provider leaves them."""
    rows = []
    for repeat, outcome in enumerate(outcomes):
        trial = root / ".passhat" / "artifacts" / "eval-x" / "py-median" / f"r{repeat:03d}-abc"
        trial.mkdir(parents=True)
        (trial / "transcript.jsonl").write_text(f'{{"type": "result", "repeat": {repeat}}}\n')
        (trial / "patch.diff").write_text(DIFF + f"# repeat {repeat}\n")
        (trial / "tests-output.txt").write_text(f"{repeat}: 1 failed, 9 passed\n")
        row = passhat_row("py-median", outcome, turns=3, repeat=repeat)  # type: ignore[arg-type]
        row["response"]["metadata"] |= {"transcript_path": str(trial / "transcript.jsonl"),
                                        "patch_path": str(trial / "patch.diff")}  # fmt: skip
        rows.append(row)
    return write_results(root / "results.json", rows)


def test_each_trial_has_a_row_with_its_files_linked_relative_to_the_page(tmp_path, capsys):
    results = _eval(tmp_path, ["pass", "fail", "error"])
    page = tmp_path / "reports" / "report.html"
    page.parent.mkdir()
    assert main(["report", str(results), "--format", "html", "-o", str(page)]) == 0
    html = page.read_text()
    assert '<h2 id="trials">Trials</h2>' in html
    for repeat, outcome in enumerate(["passed", "failed", "infra error"]):
        assert f'<td data-label="repeat">{repeat}</td><td class="l" data-label="outcome"' in html
        assert f">{outcome}</td>" in html
        trial = f"../.passhat/artifacts/eval-x/py-median/r{repeat:03d}-abc"
        for name, file in (
            ("transcript", "transcript.jsonl"),
            ("diff", "patch.diff"),
            ("tests output", "tests-output.txt"),
        ):
            assert f'<a href="{trial}/{file}" target="_blank">{name}</a>' in html
            assert (page.parent / unquote(f"{trial}/{file}")).resolve().is_file()
    # without -o (the page to stdout, saved who knows where): absolute file:// links
    assert main(["report", str(results), "--format", "html"]) == 0
    assert (
        f'href="{(tmp_path / ".passhat/artifacts/eval-x/py-median/r000-abc/patch.diff").as_uri()}"'
        in capsys.readouterr().out
    )


def test_a_big_eval_shows_the_trials_that_did_not_pass_first(tmp_path, monkeypatch):
    from passhat.report import _html

    monkeypatch.setattr(_html, "TRIALS_SHOWN", 2)
    results = _eval(tmp_path, ["pass", "pass", "fail", "pass"])
    shown = _html.trial_links(results, None)
    assert [(t["repeat"], t["outcome"]) for t in shown] == [(0, "passed"), (2, "failed")]
    assert _html.trials_table(shown, 2).count("More than 2 trials of py-median") == 1


@pytest.mark.e2e
def test_a_click_on_a_trials_diff_in_chromium_opens_it(tmp_path):
    from browser_helpers import run_browser_script

    results = _eval(tmp_path, ["fail", "pass"])
    page = tmp_path / "reports" / "report.html"
    page.parent.mkdir()
    assert main(["report", str(results), "--format", "html", "-o", str(page)]) == 0
    shots = tmp_path / "shots"
    row = 'table.trials tbody tr:nth-child(1) a:text-is("{}")'
    seen = run_browser_script("click_links", page.as_uri(), row.format("diff"), row.format("transcript"),
                              row.format("tests output"), "--screenshots", shots)  # fmt: skip
    diff, transcript, output = seen["opened"]
    assert diff["text"].strip() == (DIFF + "# repeat 0\n").strip(), diff
    assert transcript["text"].strip() == '{"type": "result", "repeat": 0}'
    assert output["text"].strip() == "0: 1 failed, 9 passed"
    assert seen["consoleErrors"] == [] and seen["blockedRequests"] == []
    if os.environ.get("PASSHAT_SHOTS"):
        shutil.copytree(shots, Path(os.environ["PASSHAT_SHOTS"]) / "report-trial-links", dirs_exist_ok=True)
