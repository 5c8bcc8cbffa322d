"""What the report does with rows that are not plain passes or failures: doubled or missing repeats
(resume, merges, promptfoo's --retry-errors trap), graders killed mid-run, judges that could not score."""

from __future__ import annotations

import json
from pathlib import Path

from test_report import passhat_row, write_results

from passhat.cli import main


def report_json(capsys, path: Path) -> dict:
    assert main(["report", str(path), "--format", "json", "--k", "1"]) == 0
    return json.loads(capsys.readouterr().out)


def test_doubled_and_missing_repeats_are_named_with_the_fix(tmp_path, capsys):
    rows = [passhat_row("t", "pass", turns=1, repeat=r) for r in (0, 1, 1, 3)]
    path = write_results(tmp_path / "r.json", rows)
    task = report_json(capsys, path)["tasks"][0]
    assert (task["duplicate_repeats"], task["missing_repeats"]) == ([1], [2])
    assert main(["report", str(path), "--k", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the summary wraps at 120 columns
    assert "WARNING: t has repeat(s) 1 more than once" in out
    assert (
        "WARNING: t is missing repeat(s) 2: if you ran `promptfoo eval --retry-errors` without `--repeat 4`, "
        "it dropped errored trials; rerun with --retry-errors --repeat 4."
    ) in out  # the real --repeat (here the largest repeat seen + 1: the file has no eval options), not a literal N


def test_a_round_from_an_offset_misses_no_repeat_and_its_header_says_its_trials(tmp_path, capsys):
    """Round 2 of `passhat eval --until-decided` runs repeats 5-9 (the provider adds the round's offset): none of
    0-4 is missing, its header counts 5 repeats, not 10; a gap inside the span is still named."""
    rows = [passhat_row(t, "pass", turns=1, repeat=r) for t in ("a", "b") for r in range(5, 10) if (t, r) != ("b", 7)]
    path = write_results(tmp_path / "round-02.json", rows)
    data = report_json(capsys, path)
    assert {t["task"]: t["missing_repeats"] for t in data["tasks"]} == {"a": [], "b": [7]}
    assert (data["provenance"]["repeats_seen"], data["provenance"]["first_repeat"]) == (5, 5)
    assert main(["report", str(path), "--k", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "; 5 repeats (5–9);" in out, out[:300]
    assert "WARNING: b is missing repeat(s) 7:" in out and "missing repeat(s) 0" not in out
    assert main(["report", str(path), "--k", "1", "--format", "html"]) == 0
    assert ">5 repeats (5–9)</dd>" in capsys.readouterr().out


def test_a_complete_run_has_no_warning(tmp_path, capsys):
    path = write_results(tmp_path / "r.json", [passhat_row("t", "pass", turns=1, repeat=r) for r in range(4)])
    assert main(["report", str(path), "--k", "1"]) == 0
    assert "WARNING" not in capsys.readouterr().out


def test_a_grader_killed_mid_run_is_an_infra_error_not_a_failure(tmp_path, capsys):
    crashed = passhat_row("t", "fail", turns=1, repeat=2)
    crashed["error"] = (
        "Error running Python script: Invalid JSON returned by Python script: Unexpected end of JSON input"
    )
    rows = [passhat_row("t", "pass", turns=1, repeat=0), passhat_row("t", "pass", turns=1, repeat=1), crashed]
    task = report_json(capsys, write_results(tmp_path / "r.json", rows))["tasks"][0]
    # n = 2 scored trials, both passed; the crashed grading is counted apart
    assert (task["n"], task["passes"], task["errors"]) == (2, 2, 1)


def test_a_trial_the_judge_could_not_score_is_unscored_not_failed(tmp_path, capsys):
    unscored = passhat_row("t", "fail", turns=1, repeat=1)
    unscored["namedScores"] = {"tests": 1.0, "judge_unscored": 1.0}
    unscored["gradingResult"] = {
        "pass": False,
        "score": 0.5,
        "componentResults": [
            {"pass": True, "score": 1.0, "reason": "`pytest` passed"},
            {"pass": False, "score": 0.0, "reason": "UNSCORED: the judge's reply was malformed 3 times"},
        ],
    }
    judged_fail = passhat_row("t", "fail", turns=1, repeat=2)  # a deterministic grader failed: a real failure
    judged_fail["namedScores"] = {"tests": 0.0, "judge_unscored": 1.0}
    judged_fail["gradingResult"] = {
        "pass": False,
        "score": 0.0,
        "componentResults": [
            {"pass": False, "score": 0.0, "reason": "`pytest` failed"},
            {"pass": False, "score": 0.0, "reason": "UNSCORED: the judge's reply was malformed 3 times"},
        ],
    }
    rows = [passhat_row("t", "pass", turns=1, repeat=0), unscored, judged_fail]
    path = write_results(tmp_path / "r.json", rows)
    task = report_json(capsys, path)["tasks"][0]
    assert (task["n"], task["passes"], task["errors"], task["unscored"]) == (2, 1, 0, 1)
    assert main(["report", str(path), "--k", "1"]) == 0
    assert "t: 1 trial unscored (the judge's reply could not be read after its retries)" in capsys.readouterr().out
