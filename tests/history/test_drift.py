"""`passhat drift`: the rule's arithmetic by hand, then the command on small promptfoo-shaped results files.

Scores are in 0..1. A 1-5 rubric maps onto it as (s - 1) / 4, so 1 point = 0.25: the default absolute threshold
of 0.3 points is 0.3 / 4 = 0.075, and the seeded drop of 0.5 points is 0.5 / 4 = 0.125.
Each trial has a patch.diff and a transcript.jsonl in the shape passhat's provider writes (the Agent SDK's
messages as {"type": "AssistantMessage", "content": [{"id", "name", "input"}, ...]}, a final ResultMessage).
"""

from __future__ import annotations

import json
import math
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from passhat.cli import main
from passhat.history._drift import Sample, abs_threshold, overall, sample, verdict

ABS = 0.075  # 0.3 points / 4
PROVIDER = {"id": "file://providers/claude_code.py", "label": "sonnet"}
# alpha's baseline: mean (0.75 + 0.8 + 0.85 + 0.8 + 0.8) / 5 = 4.0 / 5 = 0.8; its best trial is r2 (0.85).
ALPHA = [0.75, 0.8, 0.85, 0.8, 0.8]
BETA = [0.9, 0.9, 1.0, 1.0, 0.9]  # mean 4.7 / 5 = 0.94, unchanged in every eval below


def test_abs_threshold_is_points_on_a_five_point_scale_over_four() -> None:
    assert abs_threshold(0.3) == pytest.approx(0.075)  # 0.3 / (5 - 1)
    assert abs_threshold(0.5) == pytest.approx(0.125)  # the seeded drop below
    assert abs_threshold(4.0) == 1.0  # the whole scale, 1 -> 5, is the whole 0..1 range


def test_sample_mean_and_standard_error() -> None:
    # [0.625, 0.675, 0.725, 0.675, 0.675]: mean 3.375 / 5 = 0.675; deviations -0.05, 0, 0.05, 0, 0;
    # s^2 = 0.005 / 4 = 0.00125, s = 0.035355; SE = s / sqrt(5) = 0.015811.
    got = sample([x - 0.125 for x in ALPHA])
    assert (got.n, got.mean, got.se) == (5, pytest.approx(0.675), pytest.approx(0.0158114, abs=1e-7))
    assert sample([0.5]) == Sample(1, 0.5, None)  # one trial: no s, no SE
    assert sample([]) == Sample(0, None, None)


@pytest.mark.parametrize(
    ("batch", "by_se", "by_abs"),
    [
        # Seeded drop of 0.5 points = 0.125: mean 0.675, 2 x SE = 2 x 0.015811 = 0.031623.
        # 0.125 > 0.0316 and 0.125 > 0.075: drift by both tests.
        pytest.param([x - 0.125 for x in ALPHA], True, True, id="seeded-drop-0.125"),
        # Noise the size of the batch SE: five 0.60 and five 0.90, mean 0.75, deviations +-0.15;
        # s^2 = 10 x 0.0225 / 9 = 0.025, s = 0.158114, SE = s / sqrt(10) = 0.05. Drop 0.8 - 0.75 = 0.05 = 1 SE:
        # 0.05 < 2 x SE = 0.1 and 0.05 < 0.075: no drift.
        pytest.param([0.6, 0.9] * 5, False, False, id="noise-one-se"),
        # Tight but lower: five 0.74 and five 0.76, mean 0.75, SE = 0.01 x sqrt(10/9) / sqrt(10) = 0.00333.
        # Drop 0.05 > 2 x SE = 0.00667 but < 0.075: drift by the SE test alone.
        pytest.param([0.74, 0.76] * 5, True, False, id="se-only"),
        # Wide and lower: five 0.4 and five 1.0, mean 0.7, SE = 0.3 / 3 = 0.1. Drop 0.1 < 2 x SE = 0.2
        # but > 0.075: drift by the absolute test alone.
        pytest.param([0.4, 1.0] * 5, False, True, id="abs-only"),
        # One trial: no SE, so only the absolute test can fire. Drop 0.8 - 0.75 = 0.05 < 0.075.
        pytest.param([0.75], False, False, id="one-trial"),
        # Better than the baseline never drifts: drop -0.2.
        pytest.param([1.0, 1.0], False, False, id="better"),
    ],
)
def test_the_rule(batch: list[float], by_se: bool, by_abs: bool) -> None:
    got = verdict(sample(ALPHA), sample(batch), ABS)
    assert (got.by_se, got.by_abs, got.drifted) == (by_se, by_abs, by_se or by_abs)


def test_overall_is_the_mean_of_task_means() -> None:
    # Task means 0.8 and 0.6 -> 0.7; SEs 0.03 and 0.04 -> sqrt(0.0009 + 0.0016) / 2 = 0.05 / 2 = 0.025.
    got = overall([Sample(5, 0.8, 0.03), Sample(10, 0.6, 0.04)])
    assert (got.n, got.mean, got.se) == (15, pytest.approx(0.7), pytest.approx(0.025))
    assert overall([Sample(5, 0.8, 0.03), Sample(1, 0.6, None)]).se is None  # one task without SE: none
    assert math.isclose(overall([Sample(2, 0.5, 0.0), Sample(0, None, None)]).mean or 0, 0.5)


# --- the command on results files -------------------------------------------------------------------------------


def transcript(tools: list[str], turns: int, cost: float) -> str:
    lines: list[dict[str, Any]] = [{"type": "SystemMessage", "subtype": "init", "data": {"tools": tools}}]
    for i, name in enumerate(tools):
        lines.append({"type": "AssistantMessage", "content": [{"id": f"toolu_{i}", "name": name, "input": {}}]})
        lines.append({"type": "UserMessage", "content": [{"tool_use_id": f"toolu_{i}", "content": "ok"}]})
    lines.append({"type": "AssistantMessage", "content": [{"text": "Done."}]})
    lines.append({"type": "ResultMessage", "subtype": "success", "num_turns": turns, "total_cost_usd": cost})
    return "\n".join(json.dumps(line) for line in lines) + "\n"


GOOD_PATCH = """diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def median(xs):
-    return xs[len(xs) // 2]
+    return statistics.median(xs)
"""
POOR_PATCH = """diff --git a/notes.txt b/notes.txt
new file mode 100644
--- /dev/null
+++ b/notes.txt
@@ -0,0 +1 @@
+TODO: fix median
"""


def trial_row(root: Path, eval_id: str, task: str, repeat: int, score: float, **extra: Any) -> dict[str, Any]:
    """A promptfoo row plus its artifacts: trials scoring >= 0.8 edit and test, the others write a note."""
    good = score >= 0.8
    folder = root / "artifacts" / eval_id / task / f"r{repeat:03d}"
    folder.mkdir(parents=True)
    (folder / "patch.diff").write_text(GOOD_PATCH if good else POOR_PATCH)
    tools = ["Read", "Edit", "Bash"] if good else ["Read", "Write"]
    (folder / "transcript.jsonl").write_text(transcript(tools, 4 if good else 2, 0.06 if good else 0.02))
    named = extra.pop("named", {})
    meta = {
        "task_id": task,
        "repeat_index": repeat,
        "model": "claude-x",
        "patch_path": str(folder / "patch.diff"),
        "transcript_path": str(folder / "transcript.jsonl"),
        **extra,
    }
    return {
        "error": None if score >= 0.5 else "graded below 0.5",
        "failureReason": 0 if score >= 0.5 else 1,
        "gradingResult": {"pass": score >= 0.5, "score": score},
        "metadata": meta,
        "namedScores": named,
        "provider": PROVIDER,
        "response": {"output": "Done.", "metadata": meta},
        "score": score,
        "success": score >= 0.5,
        "testCase": {"description": task, "vars": {}},
        "vars": {},
    }


def results(root: Path, eval_id: str, day: int, tasks: dict[str, list[float]], **extra: Any) -> str:
    rows = [
        trial_row(root, eval_id, task, repeat, score, **dict(extra))
        for task, scores in tasks.items()
        for repeat, score in enumerate(scores)
    ]
    for index, row in enumerate(rows):
        row["testIdx"] = index
    stamp = f"2026-01-{day:02d}T00:00:00.000Z"
    data = {"evalId": eval_id, "results": {"version": 3, "timestamp": stamp, "results": rows, "stats": {}}}
    path = root / f"{eval_id}.json"
    path.write_text(json.dumps(data))
    return str(path)


def drift(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`passhat drift ARGS`, on the row's score unless ARGS name a --metric: these tests are about the rule for
    scores (the default metric, pass/fail, has tests of its own in test_drift_pass.py)."""
    if "--metric" not in args:
        args = (*args, "--metric", "score")
    code = main(["drift", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """A history holding one baseline eval (day 1): alpha mean 0.8, beta mean 0.94."""
    db = tmp_path / "h.db"
    code, out, _ = drift(capsys, results(tmp_path, "eval-base", 1, {"alpha": ALPHA, "beta": BETA}), "--db", str(db))
    assert code == 0
    assert "Note: this eval is the baseline, nothing to compare yet: alpha [sonnet], beta [sonnet]." in out
    return db, str(db)


def test_a_seeded_drop_drifts_and_is_explained(tmp_path: Path, capsys: pytest.CaptureFixture[str], history) -> None:
    _, db = history
    # alpha falls 0.125 (0.5 points) on every trial; beta is unchanged.
    new = results(tmp_path, "eval-new", 2, {"alpha": [x - 0.125 for x in ALPHA], "beta": BETA})
    code, out, err = drift(capsys, new, "--db", db)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"Appended eval eval-new (10 trials) to {db}."
    alpha = next(line for line in lines if line.startswith("alpha "))
    #                        task     provider  judge   baseline     n0   mean0    n    mean     drop     2xSE
    assert alpha.split() == ["alpha", "sonnet", "none", "eval-base", "5", "0.800", "5", "0.675", "0.125", "0.032"] + [
        "DRIFT"
    ]
    assert next(line for line in lines if line.startswith("beta ")).split()[-1] == "ok"
    # Overall: task means (0.8 + 0.94) / 2 = 0.87 -> (0.675 + 0.94) / 2 = 0.8075, drop 0.0625 < 0.075.
    # beta: deviations -0.04 x3, +0.06 x2, s^2 = 0.012 / 4 = 0.003, SE_beta = 0.054772 / sqrt(5) = 0.024495.
    # SE = sqrt(0.015811^2 + 0.024495^2) / 2 = sqrt(0.00085) / 2 = 0.014577; 2 x SE = 0.029 < 0.0625: drift.
    assert next(line for line in lines if line.startswith("(overall)")).split()[-3:] == ["0.062", "0.029", "DRIFT"]
    assert "DRIFT alpha [sonnet]: mean 0.800 -> 0.675, drop 0.125 (> 2xSE 0.032, > abs 0.075)." in lines
    assert "Drift in 2: alpha [sonnet], (overall) [sonnet]." in lines
    # The explanation: best baseline trial r2 (0.85) against the worst new trial r0 (0.75 - 0.125 = 0.625).
    assert "Why alpha [sonnet] drifted: best baseline trial vs worst new trial" in lines
    assert "  baseline eval-base r2: score 0.850 pass, turns 4, cost $0.0600, result success" in lines
    assert "  new      eval-new r0: score 0.625 pass, turns 2, cost $0.0200, result success" in lines
    assert "           tools: Read Edit Bash" in lines and "           tools: Read Write" in lines
    assert "  tool calls differ from call 2: Edit (baseline) vs Write (new)" in lines
    assert "           files changed: calc.py" in lines and "           files changed: notes.txt" in lines
    assert "    --- baseline eval-base r2 patch" in lines and "    +++ new eval-new r0 patch" in lines
    assert "    -+    return statistics.median(xs)" in lines and "    ++TODO: fix median" in lines


def test_noise_the_size_of_the_se_does_not_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str], history) -> None:
    _, db = history
    # alpha: five 0.6 and five 0.9, mean 0.75, SE 0.05, drop 0.05 (see test_the_rule); beta unchanged.
    new = results(tmp_path, "eval-noise", 2, {"alpha": [0.6, 0.9] * 5, "beta": BETA})
    code, out, err = drift(capsys, new, "--db", db, "--fail-on-drift")
    assert (code, err) == (0, "")
    alpha = next(line for line in out.splitlines() if line.startswith("alpha "))
    assert alpha.split()[-5:] == ["10", "0.750", "0.050", "0.100", "ok"]
    assert out.splitlines()[-1] == "No drift."


def test_fail_on_drift_exits_1_and_names_the_tasks(tmp_path: Path, capsys: pytest.CaptureFixture[str], history) -> None:
    _, db = history
    new = results(tmp_path, "eval-new", 2, {"alpha": [x - 0.125 for x in ALPHA], "beta": BETA})
    code, _, err = drift(capsys, new, "--db", db, "--fail-on-drift")
    assert code == 1
    assert err == "passhat: drift in alpha [sonnet], (overall) [sonnet]; exit 1 (--fail-on-drift)\n"


def test_a_new_judge_version_starts_a_new_series(tmp_path: Path, capsys: pytest.CaptureFixture[str], history) -> None:
    _, db = history
    # The same 0.125 drop, but graded by judge v2: never compared with the "none" series, so no drift.
    new = results(tmp_path, "eval-j2", 2, {"alpha": [x - 0.125 for x in ALPHA]}, judge_version="v2")
    code, out, _ = drift(capsys, new, "--db", db, "--fail-on-drift", "--format", "json")
    assert code == 0
    data = json.loads(out)
    (alpha,) = data["series"]
    assert (alpha["judge_version"], alpha["status"], alpha["baseline_eval"]) == ("v2", "baseline", "eval-j2")
    assert alpha["notes"][0] == (
        "judge_version v2 is new (was none): a new series with its own baseline, never compared with none"
    )
    # The next v2 eval is compared with eval-j2 (mean 0.675), not with the v1 baseline (0.8).
    later = results(tmp_path, "eval-j2b", 3, {"alpha": [x - 0.125 for x in ALPHA]}, judge_version="v2")
    code, out, _ = drift(capsys, later, "--db", db, "--format", "json")
    (alpha,) = json.loads(out)["series"]
    assert (alpha["status"], alpha["baseline_eval"], alpha["notes"]) == ("ok", "eval-j2", [])
    assert alpha["baseline"]["mean"] == pytest.approx(0.675)


def test_the_same_eval_twice_is_appended_once(tmp_path: Path, capsys: pytest.CaptureFixture[str], history) -> None:
    db_path, db = history
    again = str(tmp_path / "eval-base.json")
    code, out, _ = drift(capsys, again, "--db", db, "--format", "json")
    assert code == 0 and json.loads(out)["appended"] is False
    code, out, _ = drift(capsys, again, "--db", db)
    assert out.startswith(f"Eval eval-base is already in {db} (appended 20")
    assert "; not appended again." in out.splitlines()[0]
    with closing(sqlite3.connect(db_path)) as conn:
        # 2 tasks x 5 trials x 2 metrics (pass, score), once
        assert conn.execute("SELECT count(*) FROM scores").fetchone()[0] == 20


def test_metric_and_baseline_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "h.db")
    first = results(tmp_path, "e1", 1, {"alpha": [0.9, 0.9]}, named={"judge": 1.0})
    second = results(tmp_path, "e2", 2, {"alpha": [0.9, 0.9]}, named={"judge": 0.5})
    assert drift(capsys, first, "--db", db)[0] == 0
    # The row score is flat (0.9 -> 0.9); namedScores.judge fell 1.0 -> 0.5 (both batches have SE 0).
    code, out, _ = drift(capsys, second, "--db", db, "--metric", "judge", "--format", "json", "--baseline", "e1")
    (alpha,) = json.loads(out)["series"]
    assert (alpha["metric"], alpha["status"], alpha["verdict"]["drop"]) == ("namedScores.judge", "drift", 0.5)
    code, _, err = drift(capsys, second, "--db", db, "--metric", "tone")
    assert code == 2
    assert err == (
        f"passhat: error: {second}: no row has namedScores.tone; named scores there: judge; pass one of them to "
        "--metric, or `--metric pass` (the default: each trial's pass/fail) or `--metric score` (the row's score)\n"
    )
    code, _, err = drift(capsys, second, "--db", db, "--baseline", "e9")
    assert code == 2 and err.startswith(f"passhat: error: --baseline e9: no such eval in {db} (latest: e1, e2)")


def test_abs_option_is_in_five_point_units(tmp_path: Path, capsys: pytest.CaptureFixture[str], history) -> None:
    _, db = history
    # alpha 0.8 -> 0.75 with SE 0.05 (noise above): no drift at --abs 0.3 (0.075), drift at --abs 0.1 (0.025).
    new = results(tmp_path, "eval-noise", 2, {"alpha": [0.6, 0.9] * 5})
    code, out, _ = drift(capsys, new, "--db", db, "--abs", "0.1", "--format", "json")
    data = json.loads(out)
    assert data["abs_threshold"] == pytest.approx(0.025)
    assert data["series"][0]["verdict"] | {"drop": 0} == {
        "drop": 0,
        "se_limit": pytest.approx(0.1),
        "abs_limit": pytest.approx(0.025),
        "by_se": False,
        "by_abs": True,
        "drifted": True,
    }


def test_infra_errors_are_left_out_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str], history) -> None:
    _, db = history
    path = Path(results(tmp_path, "eval-err", 2, {"alpha": ALPHA}))
    data = json.loads(path.read_text())
    row = data["results"]["results"][0]
    row.update(failureReason=2, success=False, score=0, error="API error 529", gradingResult=None)
    path.write_text(json.dumps(data))
    code, out, _ = drift(capsys, str(path), "--db", db, "--format", "json")
    (alpha,) = json.loads(out)["series"]
    # 4 scored trials: 0.8, 0.85, 0.8, 0.8 -> mean 0.8125, above the baseline 0.8: ok. The infra error is no 0.
    assert (alpha["status"], alpha["batch"]["n"], alpha["unscored"]) == ("ok", 4, 1)
    assert alpha["batch"]["mean"] == pytest.approx(0.8125)
    assert alpha["notes"] == ["1 of 5 trials unscored (infra error or no score), left out"]


@pytest.mark.parametrize(
    ("setup", "match"),
    [
        pytest.param(
            "garbage-db", "h.db: cannot be read as a passhat history database (file is not a database)", id="corrupt-db"
        ),
        pytest.param("bad-results", "results.results[0].score is 3; expected a number in 0..1", id="bad-score"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str, match: str
) -> None:
    db = tmp_path / "h.db"
    path = Path(results(tmp_path, "e1", 1, {"alpha": ALPHA}))
    if setup == "garbage-db":
        db.write_bytes(b"\x00garbage" * 512)
    else:
        data = json.loads(path.read_text())
        data["results"]["results"][0]["score"] = 3
        path.write_text(json.dumps(data))
    before = db.read_bytes() if db.exists() else None
    code, out, err = drift(capsys, str(path), "--db", str(db))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("passhat: error: ") and match in err
    assert (db.read_bytes() if db.exists() else None) == before


def test_the_first_full_batch_is_the_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "h.db")
    path = Path(results(tmp_path, "e1", 1, {"alpha": ALPHA}))
    data = json.loads(path.read_text())
    data["results"]["results"][0].update(failureReason=2, success=False, score=0, error="API error 529")
    path.write_text(json.dumps(data))
    _, out, _ = drift(capsys, str(path), "--db", db, "--format", "json")
    (alpha,) = json.loads(out)["series"]
    assert alpha["status"] == "no-baseline"  # 4 of 5 scored: not full, so not a baseline
    assert alpha["notes"][-1] == "no full batch yet (every trial scored, n >= 2) to be its baseline; not compared"
    _, out, _ = drift(capsys, results(tmp_path, "e2", 2, {"alpha": ALPHA}), "--db", db, "--format", "json")
    assert json.loads(out)["series"][0]["status"] == "baseline"
    _, out, _ = drift(capsys, results(tmp_path, "e3", 3, {"alpha": [0.5] * 5}), "--db", db, "--format", "json")
    (alpha,) = json.loads(out)["series"]
    assert (alpha["baseline_eval"], alpha["status"]) == ("e2", "drift")  # 0.8 -> 0.5: drop 0.3 > 0.075


def test_explain_survives_missing_artifacts_and_trims_the_diff(tmp_path: Path) -> None:
    from passhat.history._explain import explain, explain_lines
    from passhat.history._store import ScoreRow

    long_patch = tmp_path / "long.diff"
    long_patch.write_text("".join(f"+line {i}\n" for i in range(100)))
    best = ScoreRow("e1", "alpha", "sonnet", 2, 2, "score", 0.9, True, "none", "m", None, str(long_patch), 0.1, 3)
    gone = str(tmp_path / "gone")
    worst = ScoreRow("e2", "alpha", "sonnet", None, 7, "score", 0.1, False, "none", "m", gone, gone, None, None)
    e = explain(best, worst)
    # The diff removes 100 lines: 2 file lines + 1 hunk line + 100 = 103 lines, 40 shown, 63 left out.
    assert (len(e["patch_diff"]), e["patch_diff_omitted"]) == (40, 63)
    assert e["baseline"]["turns"] == 3  # no transcript: turns and cost from the history row
    lines = explain_lines(e)
    assert "  new      e2 row 7: score 0.100 fail, turns -, cost -, result -" in lines
    assert "  no transcript_path in the row's metadata" in lines
    assert f"  transcript not readable: {gone} (No such file or directory)" in lines
    assert f"  patch not readable: {gone} (No such file or directory)" in lines
    assert lines[-1] == "    ... 63 more lines"


def judged_results(root: Path, eval_id: str, day: int, scores: list[float | None]) -> str:
    """alpha graded by a judge (judge_version jv1 in its assertion's metadata, as passhat's judges record it);
    None: an infra error, which no judge saw: no gradingResult, no judge_version anywhere."""
    path = Path(results(root, eval_id, day, {"alpha": [0.0 if s is None else s for s in scores]}))
    data = json.loads(path.read_text())
    for row, score in zip(data["results"]["results"], scores, strict=True):
        if score is None:
            row.update(failureReason=2, success=False, score=0, error="API error 529", gradingResult=None)
        else:
            row["gradingResult"]["componentResults"] = [{"pass": True, "score": score, "assertion": {"metric": "judge"},
                                                         "metadata": {"judge_version": "jv1"}}]  # fmt: skip
    path.write_text(json.dumps(data))
    return str(path)


def test_infra_errors_belong_to_their_series_unscored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "h.db")
    assert drift(capsys, judged_results(tmp_path, "e1", 1, ALPHA), "--db", db)[0] == 0
    # e2: 3 scored trials and 2 infra errors. Before: the errors made a series "none" of their own, with a false
    # "judge_version none is new (was jv1)", and the jv1 series said 0 unscored.
    code, out, _ = drift(capsys, judged_results(tmp_path, "e2", 2, [0.8, None, 0.85, None, 0.8]), "--db", db,
                         "--format", "json")  # fmt: skip
    (alpha,) = json.loads(out)["series"]
    assert (alpha["judge_version"], alpha["status"], alpha["batch"]["n"], alpha["unscored"]) == ("jv1", "ok", 3, 2)
    assert alpha["notes"] == ["2 of 5 trials unscored (infra error or no score), left out"]
    # e3: every trial an infra error: still jv1's series, unscored; no "none" series, no note of a new judge.
    e3 = judged_results(tmp_path, "e3", 3, [None] * 5)
    code, out, _ = drift(capsys, e3, "--db", db, "--format", "json")
    (alpha,) = json.loads(out)["series"]
    assert (alpha["judge_version"], alpha["status"], alpha["unscored"]) == ("jv1", "unscored", 5)
    assert not any("is new" in note for note in alpha["notes"])
    code, out, _ = drift(capsys, e3, "--db", db)  # the table too: one series, jv1
    assert [line.split()[:3] for line in out.splitlines() if line.startswith("alpha")] == [["alpha", "sonnet", "jv1"]]
