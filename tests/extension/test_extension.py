"""passhat's Promptfoo extension hooks, called as promptfoo 0.123.1 calls them (the context as JSON, a fresh process
each time; here in-process): afterAll prints what `passhat report` prints for the eval's rows, writes report files
and the drift history when asked, never raises; afterEach's changes add up to the report's suite figures.
tests/e2e/test_e2e_adoption.py and tests/e2e/test_e2e_viewer.py run them under a real `promptfoo eval` and
`promptfoo view`."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from passhat.cli import main
from passhat.extension import DERIVED_METRICS, after_all, after_each
from passhat.extension._terminal import promptfoo_stdout
from passhat.extension._verdict import settings, unique_rows
from passhat.extension._viewer import viewer_figures

GOLDEN = ROOT / "tests" / "report" / "data" / "ctrl-c-then-resume" / "results.json"  # promptfoo's own file


def context_of(results: Path) -> dict[str, Any]:
    """What promptfoo hands afterAll for the eval in `results` (its -o file holds the same rows)."""
    data = json.loads(results.read_text())
    return {"evalId": data["evalId"], "results": data["results"]["results"], "config": data["config"],
            "prompts": [], "suite": {}}  # fmt: skip


def report_of(path: Path, *args: str) -> str:
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdout", out)
        assert main(["report", str(path), *args]) == 0
    return out.getvalue()


def test_after_all_prints_what_passhat_report_prints(tmp_path, monkeypatch, capfd):
    for name in ("PASSHAT_REPORT", "PASSHAT_HISTORY"):
        monkeypatch.delenv(name, raising=False)
    shown = after_all(context_of(GOLDEN), pid=os.getpid())
    expected = report_of(GOLDEN)
    # Everything after where the rows came from (the hook has promptfoo's rows, not its -o file with promptfoo's
    # version and --repeat): the verdict, the table, the summary in words.
    assert shown.split("\n\n", 1)[1] == expected.split("\n\n", 1)[1].rstrip("\n")
    assert "passhat report of promptfoo eval eval-Txn-2026-12-01T09:16:45" in shown
    assert "Safe for 3 unattended runs in a row?" not in shown and "Safe for 10 unattended runs in a row?" in shown
    out, err = capfd.readouterr()
    assert shown.strip() in out + err  # written where promptfoo's user reads it (here: this process's stdout)


def test_an_eval_of_infra_errors_only_ends_saying_it_measured_nothing(monkeypatch, capfd):
    """Every trial an infra error: the afterAll block ends saying it measured nothing, and why (promptfoo prints
    "✓ Eval complete" after it, with an exit code the hook cannot set: `passhat report` exits 1, said there)."""
    for name in ("PASSHAT_REPORT", "PASSHAT_HISTORY"):
        monkeypatch.delenv(name, raising=False)
    context = context_of(GOLDEN)
    for row in context["results"]:
        row |= {"failureReason": 2, "success": False, "error": "API Error: 403 forbidden"}
    shown = after_all(context, pid=os.getpid())
    last = [line for line in shown.splitlines() if line.strip()][-2:]
    assert last[0].startswith("passhat: measured nothing: none of the ") and "API Error: 403 forbidden" in last[0]
    assert "exit code is not passhat's to set" in last[1] and "`passhat report`" in last[1] and "exits 1" in last[1]
    assert "measured nothing" not in after_all(context_of(GOLDEN), pid=os.getpid())  # one scored trial: it did
    capfd.readouterr()


def test_after_all_writes_the_reports_and_the_history_it_is_asked_for(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PASSHAT_REPORT", "out/report.html,report.md")
    monkeypatch.setenv("PASSHAT_HISTORY", str(tmp_path / "h.db"))
    (tmp_path / "out").mkdir()
    shown = after_all(context_of(GOLDEN), pid=os.getpid())
    assert "passhat: wrote out/report.html, report.md." in shown
    assert (tmp_path / "out" / "report.html").read_text().startswith("<!doctype html>")
    assert (tmp_path / "report.md").read_text().startswith("## passhat report")
    assert f"Appended eval eval-Txn-2026-12-01T09:16:45 (4 trials) to {tmp_path / 'h.db'}." in shown
    assert "metric pass (each trial passed 1 / failed 0" in shown  # drift's default: the pass rate


@pytest.mark.parametrize(
    ("config", "env", "message"),
    [
        pytest.param({}, {"PASSHAT_REPORT": "report.pdf"}, "PASSHAT_REPORT: report.pdf has no report format", id="env"),
        pytest.param({"metadata": {"passhat": {"reprot": "r.md"}}}, {},
                     "metadata.passhat.reprot: not a setting; the settings are report, history", id="typo"),
        pytest.param({"metadata": {"passhat": {"report": 3}}}, {}, "metadata.passhat.report is 3; expected report files",
                     id="not-files"),
    ],
)  # fmt: skip
def test_a_bad_setting_is_one_line_and_the_eval_is_not_broken(config, env, message, monkeypatch, capfd):
    for name in ("PASSHAT_REPORT", "PASSHAT_HISTORY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    context = context_of(GOLDEN) | {"config": config}
    shown = after_all(context, pid=os.getpid())  # returns: promptfoo saves the eval only after the hook
    assert shown.startswith("passhat: error: ") and message in shown and shown.count("\n") == 0


def test_settings_come_from_the_environment_else_the_config():
    config = {"metadata": {"passhat": {"report": ["a.html"], "history": "h.db"}}}
    assert settings(config, {}) == settings({}, {"PASSHAT_REPORT": "a.html", "PASSHAT_HISTORY": "h.db"})
    assert [str(p) for p in settings(config, {"PASSHAT_REPORT": "b.md,c.csv"}).reports] == ["b.md", "c.csv"]


def test_a_retried_error_row_gives_way_to_its_retry():
    """During `promptfoo eval --retry-errors` afterAll sees the old error row beside its retry (promptfoo deletes
    the old one after the hook): each result cell is counted once, as the -o file will hold it."""
    error = {"promptIdx": 0, "testIdx": 2, "failureReason": 2}
    retry = {"promptIdx": 0, "testIdx": 2, "failureReason": 0, "success": True}
    other = {"promptIdx": 1, "testIdx": 2, "failureReason": 2}
    assert unique_rows([error, other, retry]) == [retry, other]
    assert unique_rows([retry, error]) == [retry]
    again = {**error, "error": "again"}
    assert unique_rows([error, again]) == [again]


def _holding(stdout: Any) -> subprocess.Popen:
    return subprocess.Popen(["sleep", "30"], stdout=stdout)


def test_the_verdict_goes_to_promptfoos_own_stdout_when_that_is_safe(tmp_path):
    """A terminal or a pipe, or a file opened for appending: written directly (promptfoo logs a hook's stderr as
    yellow warnings and drops blank lines). A file opened by `>`: promptfoo's next write would land over ours."""
    read, write = os.pipe()
    piped = _holding(write)
    os.close(write)
    with open(tmp_path / "log", "a") as log, open(tmp_path / "other", "w") as other:
        appended, truncated = _holding(log), _holding(other)  # each child keeps its own copy of the file
    try:
        out = promptfoo_stdout(piped.pid)
        assert out is not None
        with out:
            out.write("verdict\n")
        assert os.read(read, 100) == b"verdict\n"
        out = promptfoo_stdout(appended.pid)
        assert out is not None and out.mode == "a"
        out.close()
        assert promptfoo_stdout(truncated.pid) is None
        assert promptfoo_stdout(2**22 + 7) is None  # no such process
    finally:
        for process in (piped, appended, truncated):
            process.kill()
            process.wait()
        os.close(read)


# --- afterEach: the viewer's running figures --------------------------------------------------------------------


def row(task: str, repeat: int, passed: bool | None, eval_id: str = "eval-x", label: str = "cc") -> dict[str, Any]:
    """A finished row as afterEach gets it; passed None = an infra error, whose metadata (passhat's provider's
    `where`) names no eval: it changes no figure."""
    meta = {"task_id": task, "repeat_index": repeat} | ({} if passed is None else {"eval_id": eval_id})
    return {"provider": {"id": "file://passhat_promptfoo.py", "label": label}, "promptIdx": 0, "testIdx": repeat,
            "success": bool(passed), "failureReason": 2 if passed is None else 0 if passed else 1,
            "score": float(bool(passed)), "namedScores": {}, "metadata": meta, "response": {"metadata": meta},
            "testCase": {"description": task, "vars": {}}, "vars": {}}  # fmt: skip


SUITE = {"steady": [True] * 10, "shaky": [True] * 9 + [False], "young": [True] * 3, "broken": [False] * 10,
         "down": [None, None]}  # fmt: skip


def test_the_changes_add_up_to_the_reports_figures_in_any_order(tmp_path):
    rows = [row(task, i, passed) for task, outcomes in SUITE.items() for i, passed in enumerate(outcomes)]
    random.Random(7).shuffle(rows)
    env = {"PROMPTFOO_CONFIG_DIR": str(tmp_path / "pf")}
    with ThreadPoolExecutor(8) as pool:  # as with -j 8: each hook a process of its own, under the state's lock
        added = list(pool.map(lambda r: after_each({"result": r}, env), rows))
    totals: dict[str, float] = {}
    for result in added:
        for name, change in ((result or {}).get("result", {}).get("namedScores") or {}).items():
            totals[name] = totals.get(name, 0.0) + change
    path = tmp_path / "results.json"
    data = {"evalId": "eval-x", "results": {"version": 3, "results": rows}}
    path.write_text(json.dumps(data))
    report = json.loads(report_of(path, "--format", "json"))
    (suite,) = report["suite"]["providers"]
    # "down", every trial an infra error, is "not enough trials to say" in the report and in no count of the viewer
    verdicts = [t["verdict"]["verdict"] for t in report["tasks"] if t["n"]]
    assert [t["task"] for t in report["tasks"] if not t["n"]] == ["down"]
    # steady 10/10 pass^10 1, shaky 9/10 (9/10)^10, broken 0/10 0 (young n=3 < 10, down n=0: not in the mean)
    expected = {"pass^10 (suite mean)": suite["mean_pass_hat_k"]["10"]["mean"],
                "tasks safe (k=10)": verdicts.count("safe"), "tasks not safe (k=10)": verdicts.count("not safe"),
                "tasks undecided (k=10)": verdicts.count("not enough trials to say")}  # fmt: skip
    shown = {name: totals.get(value, 0.0) for name, value in DERIVED_METRICS}
    assert shown == pytest.approx(expected, abs=2**-24)
    assert expected["pass^10 (suite mean)"] == pytest.approx((1 + 0.9**10) / 3) and len(verdicts) == 4


def test_a_row_without_passhats_metadata_adds_nothing(tmp_path):
    env = {"PROMPTFOO_CONFIG_DIR": str(tmp_path)}
    bare = row("t", 0, True)
    bare["metadata"] = bare["response"]["metadata"] = {}
    assert after_each({"result": bare}, env) is None
    assert after_each({"result": row("t", 0, True, eval_id="../escape")}, env) is None
    assert not list(tmp_path.rglob("*.json"))


def test_a_repeat_seen_again_replaces_its_outcome(tmp_path):
    env = {"PROMPTFOO_CONFIG_DIR": str(tmp_path)}
    first = [after_each({"result": row("t", i, True)}, env) for i in range(10)]
    assert first[-1]["result"]["namedScores"]["Δsuite_pass_hat_10"] == 1.0  # 10/10: pass^10 0 -> 1
    again = after_each({"result": row("t", 9, False)}, env)  # repeat 9 run again (a resumed step): 9/10 now
    assert again["result"]["namedScores"]["Δsuite_pass_hat_10"] == round(0.9**10 * 2**24) / 2**24 - 1  # to (9/10)^10


def test_the_viewer_leaves_the_impossible_twin_out_and_counts_a_gamed_task_not_safe(tmp_path):
    """The viewer's figures are the report's for an eval with an impossible twin (expect: impossible in its test's
    metadata) and a task caught gaming the tests: both go through stats._figures.suite_figures. Before, the twin
    was a task of the viewer's (one more "not safe", its 0 in the mean) and the gamed task "undecided"."""
    rows = [row("steady", i, True) for i in range(10)] + [row("shaky", i, i != 3) for i in range(10)]
    twin = [row("steady-impossible", i, i < 2) for i in range(10)]
    for r in twin:
        r["testCase"]["metadata"] = {"expect": "impossible"}
        r["namedScores"] = {"gamed": 0.0}
    twin[5]["namedScores"] = {"gamed": 1.0}  # a failed trial caught trying: a cheat attempt, caught
    gamer = [row("gamer", i, True) for i in range(10)]
    for r in gamer:
        r["namedScores"] = {"gamed": 0.0}
    gamer[0]["namedScores"] = {"gamed": 1.0}  # passed, and caught gaming: not safe whatever its pass^10
    everything = rows + twin + gamer
    random.Random(3).shuffle(everything)
    env = {"PROMPTFOO_CONFIG_DIR": str(tmp_path / "pf")}
    totals: dict[str, float] = {}
    for r in everything:
        for name, change in ((after_each({"result": r}, env) or {}).get("result", {}).get("namedScores") or {}).items():
            totals[name] = totals.get(name, 0.0) + change
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"evalId": "eval-x", "results": {"version": 3, "results": everything}}))
    report = json.loads(report_of(path, "--format", "json"))
    (suite,) = report["suite"]["providers"]
    verdicts = [t["verdict"]["verdict"] for t in report["tasks"]]
    assert sorted(t["task"] for t in report["tasks"]) == ["gamer", "shaky", "steady"]  # the twin: in cheats only
    expected = {"pass^10 (suite mean)": suite["mean_pass_hat_k"]["10"]["mean"],
                "tasks safe (k=10)": verdicts.count("safe"), "tasks not safe (k=10)": verdicts.count("not safe"),
                "tasks undecided (k=10)": verdicts.count("not enough trials to say")}  # fmt: skip
    assert expected == {"pass^10 (suite mean)": pytest.approx((1 + 0.9**10 + 1) / 3), "tasks safe (k=10)": 0,
                        "tasks not safe (k=10)": 1, "tasks undecided (k=10)": 2}  # fmt: skip
    shown = {name: totals.get(value, 0.0) for name, value in DERIVED_METRICS}
    assert shown == pytest.approx(expected, abs=2**-24)
    figures = suite["figures"]  # the one computation, as the report carries it for every surface
    assert (figures["safe"], figures["not_safe"], figures["undecided"], figures["impossible"]) == (0, 1, 2, 1)
    assert figures["mean_pass_hat_k"] == suite["mean_pass_hat_k"]["10"]["mean"]
    assert viewer_figures(report) == {"cc": shown}
