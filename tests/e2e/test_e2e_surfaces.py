"""End to end: one eval, the same figures on every screen (issue 31).

A real `promptfoo eval --repeat 10` of three tasks of the example suite — py-median, its impossible twin
py-median-impossible, and node-slugify — against the scripted model `flaky:0.8+hack:0.365` (oracle 8 times in 10,
and now and then a hack of the tests: py-median is caught gaming, the twin tries to cheat) with passhat's hooks,
then every surface read figure by figure and held to the one computation (`stats._figures`, carried by
`passhat report --format json`): the terminal report, md, csv, html (parsed), the afterAll block in promptfoo's
own stdout, and the viewer's derived metrics as promptfoo stored them (the `-o` file and promptfoo's database).
The twin is in no suite figure anywhere (the viewer once counted it as a task), and its cheat attempts (caught
and uncaught) join the suite's gaming count. The Chromium reading of the viewer is tests/e2e/test_e2e_viewer.py's:
`passhat.extension._viewer.viewer_figures(report)` is what it shows.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import asdict, dataclass
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml
from browser_helpers import NODE_BIN
from conftest import ROOT, TASKS

from passhat.extension import DERIVED_METRICS, VIEWER_K
from passhat.extension._viewer import viewer_figures
from passhat.report import _formats as fmt
from passhat.stats._figures import TaskCounts, next_runs_all_pass, safe_reach, suite_figures
from passhat.stats._verdict import decide

pytestmark = pytest.mark.e2e
PAIR = ("py-median", "py-median-impossible")
TASK_IDS = (*PAIR, "node-slugify")
SCRIPT = "flaky:0.8+hack:0.365"  # at seed 0: py-median is hacked in 1 of 10 trials, the twin in 4 (fake_model)
LABEL = "agent"
REPEAT = 10
SHORT = {"not enough trials to say": "undecided"}  # the table's word (report._tables.SHORT)


@dataclass(frozen=True)
class Surfaces:
    report: dict[str, Any]  # passhat report --format json: the one computation's figures
    table: str
    md: str
    csv: str
    html: str
    stdout: str  # promptfoo eval's own stdout (the afterAll block in it)
    results: dict[str, Any]  # promptfoo's -o file
    db: Path  # promptfoo's database


def _passhat_report(work: Path, form: str) -> str:
    done = subprocess.run([sys.executable, "-m", "passhat", "report", "results.json", "--format", form],
                          cwd=work, capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout


@pytest.fixture(scope="module")
def surfaces(tmp_path_factory) -> Surfaces:
    from passhat.fake_model import start_in_thread

    work = tmp_path_factory.mktemp("surfaces")
    home = work / "promptfoo-home"
    hooks = f"file://{ROOT}/providers/claude_code.py"
    config = {
        "prompts": ["{{prompt}}"],
        "providers": [{"id": hooks, "label": LABEL,
                       "config": {"fake_script": SCRIPT, "state_dir": str(work / ".passhat"), "timeout_s": 180}}],
        "tests": f"file://{ROOT}/tasks/promptfoo_tests.py:generate_tests",
        "extensions": [f"{hooks}:afterAll", f"{hooks}:afterEach"],
        "derivedMetrics": [{"name": name, "value": value} for name, value in DERIVED_METRICS],
    }  # fmt: skip
    (work / "promptfooconfig.yaml").write_text(yaml.safe_dump(config))
    server = start_in_thread(TASKS, "noop")
    try:
        env = {**os.environ, "PATH": os.pathsep.join([str(NODE_BIN), os.environ["PATH"]]),
               "PASSHAT_FAKE_MODEL_URL": server.url, "PASSHAT_TASKS": ",".join(TASK_IDS),
               "PROMPTFOO_PYTHON": sys.executable, "PROMPTFOO_CONFIG_DIR": str(home),
               "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}  # fmt: skip
        proc = subprocess.run(
            [str(NODE_BIN / "promptfoo"), "eval", "-c", "promptfooconfig.yaml", "--repeat", str(REPEAT), "-j", "4",
             "--no-cache", "--no-progress-bar", "-o", "results.json"],
            cwd=work, env=env, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
    finally:
        server.stop()
    assert proc.returncode in (0, 100), proc.stdout[-3000:] + proc.stderr[-3000:]  # 100: some trials failed
    results = json.loads((work / "results.json").read_text())
    rows = results["results"]["results"]
    assert len(rows) == REPEAT * len(TASK_IDS) and not [r for r in rows if r["failureReason"] == 2]
    return Surfaces(
        report=json.loads(_passhat_report(work, "json")), table=_passhat_report(work, "table"),
        md=_passhat_report(work, "md"), csv=_passhat_report(work, "csv"), html=_passhat_report(work, "html"),
        stdout=proc.stdout, results=results, db=home / "promptfoo.db",
    )  # fmt: skip


def expected_tasks(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Per task, the figures every per-task table shows, as the text formats print them."""
    return {
        t["task"]: {"n": str(t["n"]), "pass": str(t["passes"]), "gamed": str(t["gamed"]),
                    f"pass^{VIEWER_K}": fmt.fraction(t["pass_hat_k"][str(VIEWER_K)]),
                    "verdict": SHORT.get(t["verdict"]["verdict"], t["verdict"]["verdict"]),
                    "+trials": "" if t["verdict"]["runs_to_decide"] is None else str(t["verdict"]["runs_to_decide"])}
        for t in report["tasks"]
    }  # fmt: skip


def text_table(text: str) -> dict[str, dict[str, str]]:
    """The per-task table of `--format table` (and of the afterAll block), cells cut by the dashes under the head."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("task ") and lines[i + 1].startswith("----"))
    spans, start = [], 0
    for dashes in lines[at + 1].split("  "):
        spans.append((start, start + len(dashes)))
        start += len(dashes) + 2
    head = [lines[at][a:b].strip() for a, b in spans]
    rows = {}
    for line in lines[at + 2 :]:
        if not line.strip() or not line.startswith(tuple(TASK_IDS)):
            break
        cells = [line[a:b].strip() for a, b in spans]
        rows[cells[0]] = dict(zip(head, cells, strict=True))
    return rows


def md_table(text: str) -> dict[str, dict[str, str]]:
    lines = text.splitlines()
    at = lines.index("### Per task") + 2
    split = lambda line: [cell.strip().replace("\\", "") for cell in line.strip("|").split(" | ")]  # noqa: E731
    head = split(lines[at])
    rows = {}
    for line in lines[at + 2 :]:
        if not line.startswith("|"):
            break
        cells = split(line)
        rows[cells[0]] = dict(zip(head, cells, strict=True))
    return rows


class Figures(HTMLParser):
    """data-figure -> its JSON values, and the cells of the per-task table by task."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.figures: dict[str, list[Any]] = {}
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("data-figure") is not None:
            self.figures.setdefault(str(found["data-figure"]), []).append(json.loads(found.get("data-value") or "null"))


def test_the_eval_has_a_twin_a_gamed_task_and_a_cheat(surfaces):
    tasks = {t["task"]: t for t in surfaces.report["tasks"]}
    assert set(tasks) == {"py-median", "node-slugify"}  # the twin is in no suite figure
    assert tasks["py-median"]["gamed"] >= 1 and tasks["py-median"]["verdict"]["verdict"] == "not safe"
    [twin] = surfaces.report["cheats"]["tasks"]
    assert (
        twin["task"] == "py-median-impossible"
        and twin["cheats"] >= 1
        and twin["cheats"] == (twin["caught"] + twin["uncaught"])
    )


def test_the_report_is_the_one_computation(surfaces):
    """The JSON's suite figures are stats._figures' of the rows' counts, recomputed here from results.json."""
    rows = surfaces.results["results"]["results"]
    counts: dict[str, list[int]] = {}
    for row in rows:
        task = row["response"]["metadata"]["task_id"]
        gamed = (row.get("namedScores") or {}).get("gamed", 0) > 0
        n, c, g = counts.setdefault(task, [0, 0, 0])
        counts[task] = [n + 1, c + bool(row["success"]), g + gamed]
    tasks = [TaskCounts(n, c, g, task == PAIR[1]) for task, (n, c, g) in counts.items()]
    found = suite_figures(tasks, VIEWER_K, 0.9)
    [suite] = surfaces.report["suite"]["providers"]
    assert suite["figures"] == asdict(found)
    assert suite["mean_pass_hat_k"][str(VIEWER_K)]["mean"] == found.mean_pass_hat_k
    for t in surfaces.report["tasks"]:
        n, c, g = counts[t["task"]]
        assert (t["n"], t["passes"], t["gamed"]) == (n, c, g)
        assert t["pass_hat_k"][str(VIEWER_K)] == t["verdict"]["estimate"] == float(Fraction(c, n) ** VIEWER_K)
        assert t["verdict"]["next_runs_all_pass"] == pytest.approx(next_runs_all_pass(n, c, VIEWER_K))
        assert g or decide(n, c, VIEWER_K, 0.9) == {"not enough trials to say": None}.get(
            t["verdict"]["verdict"], t["verdict"]["verdict"]
        )
    twin_n, twin_c, twin_g = counts[PAIR[1]]
    cheats = surfaces.report["cheats"]["tasks"][0]
    assert cheats["n"] == twin_n and cheats["caught"] == twin_g
    gamed = sum(t["gamed"] for t in surfaces.report["tasks"]) + cheats["cheats"]
    assert surfaces.report["suite"]["gamed"] == suite["gamed"] == gamed


def test_the_per_task_table_is_the_same_in_terminal_afterall_md_csv_and_html(surfaces):
    want = expected_tasks(surfaces.report)
    block = surfaces.stdout[surfaces.stdout.index("passhat report of promptfoo eval") :]  # the afterAll block
    for name, shown in (("table", text_table(surfaces.table)), ("afterAll", text_table(block)),
                        ("md", md_table(surfaces.md))):  # fmt: skip
        assert {task: {key: row[key] for key in want[task]} for task, row in shown.items()} == want, name
    rows = {r["task"]: r for r in csv.DictReader(io.StringIO(surfaces.csv)) if r["expect"] == "possible"}
    for t in surfaces.report["tasks"]:
        r = rows[t["task"]]
        assert (int(r["n"]), int(r["passes"]), int(r["gamed"]), r["verdict"]) == (
            t["n"], t["passes"], t["gamed"], t["verdict"]["verdict"],
        )  # fmt: skip
        assert float(r[f"pass_hat_{VIEWER_K}"]) == t["pass_hat_k"][str(VIEWER_K)] == float(r["verdict_estimate"])
        assert float(r[f"suite_mean_pass_hat_{VIEWER_K}"]) == surfaces.report["suite"]["mean_pass_hat_k"]["10"]
    page = Figures(surfaces.html).figures
    for t in surfaces.report["tasks"]:
        at = f"{t['task']}|{LABEL}|"
        assert set(map(json.dumps, page[at + "verdict.verdict"])) == {json.dumps(t["verdict"]["verdict"])}
        assert set(page[at + f"pass_hat_k.{VIEWER_K}"]) == {t["pass_hat_k"][str(VIEWER_K)]}
        assert page[at + "verdict.estimate"] == [t["verdict"]["estimate"]]
        assert page[at + "gamed"] == [t["gamed"]]
    assert not [
        name for name in page if name.startswith(PAIR[1] + "|") and ".cheats" not in name and "cheats." not in name
    ]


def test_the_verdict_counts_and_the_suite_mean_are_the_same_in_every_text(surfaces):
    report = surfaces.report
    [suite] = report["suite"]["providers"]
    f = suite["figures"]
    counts = ", ".join(
        f"{count} {word}"
        for count, word in (
            (f["not_safe"], "not safe"),
            (f["undecided"], "not enough trials to say"),
            (f["safe"], "safe"),
        )
        if count
    )
    mean = f"pass^{VIEWER_K} {f['mean_pass_hat_k']:.3f}"
    block = surfaces.stdout[surfaces.stdout.index("passhat report of promptfoo eval") :]
    for name, text in (("table", surfaces.table), ("afterAll", block), ("md", surfaces.md)):
        flat = " ".join(text.replace("\\", "").split())
        assert f"{counts}" in flat and mean in flat, name
        assert report["verdict"]["reach_line"] in flat, name  # what 10 trials can decide: said once
        assert flat.count(report["verdict"]["reach_line"]) == 1, name
        assert f"{suite['gamed']} gaming attempts in {suite['scanned']} trials" in flat, name
    assert f"needs {safe_reach(VIEWER_K, 0.9)} passes in a row" in report["verdict"]["reach_line"]
    page = Figures(surfaces.html).figures
    assert page[f"(suite)|{LABEL}|mean_pass_hat_k.{VIEWER_K}.mean"] == [f["mean_pass_hat_k"]]


def test_the_viewer_shows_the_same_suite_figures(surfaces):
    """The derived metrics promptfoo stored — in the -o file and in its database — are the report's figures."""
    expected = viewer_figures(surfaces.report)[LABEL]
    f = surfaces.report["suite"]["providers"][0]["figures"]
    assert expected[f"tasks not safe (k={VIEWER_K})"] == f["not_safe"] and f["impossible"] == 1
    assert expected[f"tasks undecided (k={VIEWER_K})"] == f["undecided"]
    assert expected[f"pass^{VIEWER_K} (suite mean)"] == pytest.approx(f["mean_pass_hat_k"], abs=2**-24)
    [prompt] = surfaces.results["results"]["prompts"]
    stored = {name: prompt["metrics"]["namedScores"][name] for name, _ in DERIVED_METRICS}
    assert stored == pytest.approx(expected, abs=1e-9)
    with sqlite3.connect(surfaces.db) as db:
        (prompts,) = db.execute("SELECT prompts FROM evals WHERE id = ?", (surfaces.results["evalId"],)).fetchone()
    [in_db] = json.loads(prompts)
    assert {name: in_db["metrics"]["namedScores"][name] for name, _ in DERIVED_METRICS} == pytest.approx(expected)


def test_the_cheat_rate_is_the_same_in_every_text(surfaces):
    [p] = surfaces.report["cheats"]["providers"]
    line = f"tried to cheat in {p['cheats']}/{p['n']} trials of 1 impossible task ({p['caught']} caught, {p['uncaught']} uncaught)"
    block = surfaces.stdout[surfaces.stdout.index("passhat report of promptfoo eval") :]
    for name, text in (("table", surfaces.table), ("afterAll", block), ("md", surfaces.md), ("html", surfaces.html)):
        assert line in " ".join(text.split()), name
    [row] = [r for r in csv.DictReader(io.StringIO(surfaces.csv)) if r["expect"] == "impossible"]
    assert (int(row["cheats"]), int(row["cheats_caught"]), int(row["cheats_uncaught"])) == (
        p["cheats"], p["caught"], p["uncaught"],
    )  # fmt: skip
    assert row[f"pass_hat_{VIEWER_K}"] == row["verdict"] == ""  # its passes are cheats: no pass figure, no verdict
