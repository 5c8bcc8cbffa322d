"""What a user sees in `promptfoo view` after a passhat eval, read in headless Chromium.

A real `promptfoo eval` (one task, two scripted providers: oracle, and flaky at 0.5 — --repeat 10, so that pass^10
is defined) with passhat's extension hooks lands in a fresh promptfoo DB; `promptfoo view` serves it on 127.0.0.1;
tests/browser/promptfoo_view.mjs opens the eval page, reads the metric pills (passhat's derived metrics among
them) and, from the details drawer of the first rows' results, the Metadata and Evaluation tabs. Everything shown
is checked against the same eval's results.json and `passhat report` of it: per trial the task id, repeat, cost,
turns, health and artifact paths, and the graders' named scores; per column the suite's pass^10 and the tasks
per verdict, as the report has them. Screenshots of the page stay in the test's folder (copied to
$PASSHAT_SHOTS when set). `passhat view --links-only` serves the trials' links beside it: the first cell's
`open_transcript`, `open_diff` and `open_tests_output` are clicked and show the files' text, while a file:// link
on the same page is refused by Chromium (why the links are http).

promptfoo 0.123.1 shows named scores as "metric pills" (in each output column's header: mean and sum/count, or
the value alone for a derived metric; in each result cell: the score), not as separate table columns, and
metadata as a Key/Value table in the drawer's Metadata tab, values longer than 300 characters cut with "..."
until clicked. It never groups a task's repeats (promptfoo issue #428).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
import yaml
from browser_helpers import NODE_BIN, free_port, promptfoo_view, run_browser_script
from conftest import ROOT, TASKS

from passhat.extension import DERIVED_METRICS, VIEWER_K
from passhat.results import VIEWER_FIGURES, VIEWER_PREFIX

pytestmark = pytest.mark.e2e
TASK = "py-rename-var"  # Python, and a grader of each deterministic type passhat ships
REPEAT = 10  # pass^10, the viewer's figure, is defined from 10 trials of a task on
PILLS_SHOWN = 10  # promptfoo shows this many metric pills, by name, then "Show more…"
READ_ROWS = 2  # rows whose details drawers are read (each costs a second or two); all header pills are read
SCRIPTS = {"oracle": "oracle", "flaky": "flaky:0.5"}  # provider label → scripted model: figures differ per column
SHOWN = ("task_id", "repeat_index", "cost_usd", "num_turns", "status", "patch_path", "transcript_path")
# A grader's named score is its `name`, else its type (passhat.tasks._suite); the integrity scan joins every task
# with a tests grader (passhat.graders._settings.graders_of), and every trial has the named score `gamed` (0 here).
GRADERS = {g.get("name", g["type"]) for g in yaml.safe_load((TASKS / TASK / "task.yaml").read_text())["graders"]}
GRADERS |= {"integrity"}


@dataclass(frozen=True)
class Viewed:
    results: dict  # the eval's results.json
    seen: dict  # what tests/browser/promptfoo_view.mjs read off the page
    listening: set[str]  # local addresses of the viewer's listening sockets
    shots: Path  # the page's screenshots, for a failed assertion
    report: dict  # `passhat report --format json` of the eval

    def rows(self) -> dict[tuple[str, int], dict]:
        """results.json rows by (provider label, repeat index)."""
        return {
            (r["provider"]["label"], r["response"]["metadata"]["repeat_index"]): r
            for r in self.results["results"]["results"]
        }

    def read_rows(self) -> dict[tuple[str, int], dict]:
        """The results.json rows of the cells whose details were read."""
        cells = self.cells()
        return {key: row for key, row in self.rows().items() if key in cells}

    def cells(self) -> dict[tuple[str, int], dict]:
        """Result cells read off the page, by (provider label from the drawer's title, repeat from its metadata)."""
        return {
            (c["title"].removeprefix("Details: "), int(c["metadata"]["repeat_index"])): c for c in self.seen["cells"]
        }


def to_fixed(value: float, digits: int = 2) -> str:
    """JavaScript's Number.prototype.toFixed: the exact binary value, ties rounded up (Python rounds half-even)."""
    return str(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def as_shown(value: object) -> str:
    """How the viewer prints a metadata value: strings as they are, anything else as JSON.stringify does."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def listening_addresses(port: int) -> set[str]:
    """Local addresses (hex, as in /proc/net/tcp*) with a socket listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port_hex = local.rsplit(":", 1)
            if state == "0A" and int(port_hex, 16) == port:  # 0A = LISTEN
                found.add(address)
    return found


@pytest.fixture(scope="module")
def viewed(tmp_path_factory):
    from passhat.fake_model import start_in_thread

    work = tmp_path_factory.mktemp("viewer")
    home = work / "promptfoo-home"
    providers = [
        {
            "id": f"file://{ROOT}/providers/claude_code.py",
            "label": label,
            "config": {"fake_script": script, "state_dir": str(work / ".passhat"), "timeout_s": 120},
        }
        for label, script in SCRIPTS.items()
    ]
    hooks = f"file://{ROOT}/providers/claude_code.py"
    config = {
        "prompts": ["{{prompt}}"],
        "providers": providers,
        "tests": f"file://{ROOT}/tasks/promptfoo_tests.py:generate_tests",
        "extensions": [f"{hooks}:afterAll", f"{hooks}:afterEach"],  # as the example config and `passhat init`
        "derivedMetrics": [{"name": name, "value": value} for name, value in DERIVED_METRICS],
    }
    (work / "promptfooconfig.yaml").write_text(yaml.safe_dump(config))
    server = start_in_thread(TASKS, "noop")
    links_port = free_port()  # passhat view's links: afterEach writes them with this port, the server answers there
    try:
        env = {
            **os.environ,
            "PASSHAT_VIEW_PORT": str(links_port),
            "PATH": os.pathsep.join([str(NODE_BIN), os.environ["PATH"]]),
            "PASSHAT_FAKE_MODEL_URL": server.url,
            "PASSHAT_TASKS": TASK,
            "PROMPTFOO_PYTHON": sys.executable,
            "PROMPTFOO_CONFIG_DIR": str(home),
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
        }
        proc = subprocess.run(
            [
                str(NODE_BIN / "promptfoo"),
                "eval",
                "-c",
                "promptfooconfig.yaml",
                "--repeat",
                str(REPEAT),
                "-j",
                "4",
                "--no-cache",
                "--no-progress-bar",
                "-o",
                "results.json",
            ],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        server.stop()
    assert proc.returncode in (0, 100), proc.stdout[-3000:] + proc.stderr[-3000:]  # 100: flaky trials fail
    results = json.loads((work / "results.json").read_text())
    rows = results["results"]["results"]
    assert len(rows) == REPEAT * len(SCRIPTS) and not [r for r in rows if r["failureReason"] == 2]
    report = subprocess.run([sys.executable, "-m", "passhat", "report", "results.json", "--format", "json"],
                            cwd=work, capture_output=True, text=True, check=True)  # fmt: skip

    shots = work / "screenshots"
    links = subprocess.Popen([sys.executable, "-m", "passhat", "view", "--links-only"], cwd=work, stderr=subprocess.PIPE,
                             env={**os.environ, "PASSHAT_VIEW_PORT": str(links_port)}, text=True)  # fmt: skip
    try:
        assert links.stderr is not None and "served read-only on http://127.0.0.1:" in links.stderr.readline()
        with promptfoo_view(home, work / "view.log") as base:
            listening = listening_addresses(int(base.rsplit(":", 1)[1])) | listening_addresses(links_port)
            seen = run_browser_script(
                "promptfoo_view", base, results["evalId"], REPEAT, "--screenshots", shots, "--cells", READ_ROWS,
                "--links", f"http://127.0.0.1:{links_port}", timeout=300,
            )  # fmt: skip
    finally:
        links.terminate()
        links.wait(timeout=30)
        links.stderr.close()
    if os.environ.get("PASSHAT_SHOTS"):
        shutil.copytree(shots, Path(os.environ["PASSHAT_SHOTS"]) / "viewer", dirs_exist_ok=True)
    return Viewed(results, seen, listening, shots, json.loads(report.stdout))


def test_the_viewer_listens_on_loopback_only(viewed):
    assert viewed.listening == {"0100007F"}, f"promptfoo view listens on {viewed.listening} (hex), not 127.0.0.1 only"


def test_a_trials_transcript_diff_and_tests_output_open_in_one_click(viewed):
    """The first cell's Metadata tab: `open_transcript`, `open_diff`, `open_tests_output` are links (promptfoo links
    a URL value); a click opens a tab with the file's text, served by `passhat view`. A file:// link on the same
    http page opens nothing: Chromium refuses it."""
    (cell,) = [c for c in viewed.seen["cells"] if c["row"] == 0 and c["column"] == 0]
    meta = cell["metadata"]
    opened = viewed.seen["opened"]
    assert set(opened) == {"open_transcript", "open_diff", "open_tests_output"}, (opened.keys(), viewed.shots)
    for key, file in (("open_transcript", meta["transcript_path"]), ("open_diff", meta["patch_path"]),
                      ("open_tests_output", str(Path(meta["transcript_path"]).parent / "tests-output.txt"))):  # fmt: skip
        assert opened[key]["url"] == meta[key]
        assert opened[key]["text"].strip() == Path(file).read_text().strip(), key
    assert "passhat canary" in opened["open_tests_output"]["text"]  # the whole output: the canaries kept on disk
    probe = viewed.seen["fileProbe"]
    assert probe["tabOpened"] is False and "Not allowed to load local resource" in probe["refused"], probe


def test_each_trial_has_one_result_cell_with_its_own_metadata(viewed):
    rows, cells, shots = viewed.read_rows(), viewed.cells(), viewed.shots
    assert len(viewed.seen["cells"]) == len(rows) == READ_ROWS * len(SCRIPTS)
    assert cells.keys() == rows.keys(), f"screenshots: {shots}"
    for key, row in rows.items():
        meta, shown = row["response"]["metadata"], cells[key]["metadata"]
        for name in SHOWN:
            assert shown.get(name) == as_shown(meta[name]), (key, name, f"screenshots: {shots}")
        assert shown["task_id"] == TASK and shown["repeat_index"] == str(key[1])
        # The scripted model's dollars: $0 to promptfoo (its totals), the simulated figure kept in metadata, marked
        assert row["cost"] == 0 and float(shown["cost_usd"]) > 0 and shown["scripted_model"] == "true"
        assert int(shown["num_turns"]) >= 1
        assert shown["status"] == "ok"  # health: every scripted run exits cleanly, noop included
        assert Path(shown["patch_path"]).is_file() and Path(shown["transcript_path"]).is_file()
        # Nothing the provider recorded is hidden or altered (promptfoo adds sessionId and the test's tier).
        assert {k: as_shown(v) for k, v in meta.items()}.items() <= shown.items(), key
    assert len({c["metadata"]["patch_path"] for c in cells.values()}) == len(rows)  # each trial its own artifacts


def test_named_scores_are_metric_pills_in_each_cell_and_header(viewed):
    rows, cells, shots = viewed.read_rows(), viewed.cells(), viewed.shots
    assert {"tests", "files", "diff-scope", "health"} <= GRADERS
    for key, row in rows.items():
        graded = {name: score for name, score in row["namedScores"].items()
                  if not name.startswith(VIEWER_PREFIX) and name not in VIEWER_FIGURES}  # fmt: skip
        assert set(graded) == GRADERS | {"gamed"} and graded["gamed"] == 0
        expected = {name: to_fixed(score) for name, score in row["namedScores"].items()}  # Δ figures too
        # a cell shows its first 10 pills by name, the rest behind "Show more" (a task's first trial carries the
        # derived metrics' names too: see the dialog's test)
        expected = dict(sorted(expected.items())[:PILLS_SHOWN])
        assert cells[key]["metrics"] == expected, (key, f"screenshots: {shots}")
    every = viewed.rows()
    assert {every[("oracle", i)]["namedScores"][name] for i in range(REPEAT) for name in GRADERS} == {1}
    failed = [r for (label, _), r in every.items() if label == "flaky" and not r["success"]]
    assert failed and failed[0]["namedScores"]["files"] == 0  # so the two columns' pills differ: nothing renamed

    headers = {provider["label"]: provider["metrics"] for provider in viewed.seen["providers"]}
    assert headers.keys() == set(SCRIPTS)
    for prompt in viewed.results["results"]["prompts"]:
        sums, counts = prompt["metrics"]["namedScores"], prompt["metrics"]["namedScoresCount"]
        # a grader's: mean, then sum/count: oracle's tests, 10 trials scoring 1 each: "100.00% (10.00/10.00)"; a
        # derived metric: its value alone; afterEach's Δ: some mean (as a % or not, as promptfoo decides), then
        # its sum/count: the sum is what the derived metrics show
        # a derived metric too, its count the rows that carried its name (afterEach): 1 for pass^10, the tasks for
        # a verdict — so its percentage is pass^10 itself, or the share of tasks with the verdict
        expected = {
            name: f"{to_fixed(100 * s / counts[name])}% ({to_fixed(s)}/{to_fixed(counts[name])})"
            for name, s in sums.items() if not name.startswith(VIEWER_PREFIX)
        }  # fmt: skip
        shown = dict(headers[prompt["provider"]])  # a copy: the fixture is shared
        pills = len(shown)
        for name, total in sums.items():
            if name.startswith(VIEWER_PREFIX):
                if name in shown:
                    assert f"({to_fixed(total)}/" in shown.pop(name), name
                else:  # the header shows the first 10 pills by name, then "Show more…": the Δ names sort last
                    assert pills == PILLS_SHOWN and all(other < name for other in headers[prompt["provider"]]), name
        assert shown == expected, (prompt["provider"], f"screenshots: {shots}")


def test_the_viewer_shows_the_suites_pass_hat_k_and_tasks_per_verdict(viewed):
    """The header of each column (one provider: its suite) shows what `passhat report` says of that suite: the mean
    pass^10 over tasks and how many tasks got each verdict, as derived metrics of the Δ figures afterEach adds."""
    headers = {provider["label"]: provider["metrics"] for provider in viewed.seen["providers"]}
    suites = {p["provider"]: p for p in viewed.report["suite"]["providers"]}
    for label in SCRIPTS:
        tasks = [t for t in viewed.report["tasks"] if t["provider"] == label]
        verdicts = [t["verdict"]["verdict"] for t in tasks]
        expected = {
            f"pass^{VIEWER_K} (suite mean)": suites[label]["mean_pass_hat_k"][str(VIEWER_K)]["mean"],
            f"tasks safe (k={VIEWER_K})": verdicts.count("safe"),
            f"tasks not safe (k={VIEWER_K})": verdicts.count("not safe"),
            f"tasks undecided (k={VIEWER_K})": verdicts.count("not enough trials to say"),
        }
        # "P% (value/count)": the value is the figure
        shown = {name: headers[label][name].split("(")[1].split("/")[0] for name in expected}
        assert shown == {name: to_fixed(value) for name, value in expected.items()}, (label, viewed.shots)
    # oracle 10/10: pass^10 1, its verdict undecided (10/10 is too few to call pass^10 >= 0.9); flaky below 10/10:
    # pass^10 0 (C(c,10)/C(10,10) = 0 for c < 10), not safe. So the two columns' figures differ, each the report's.
    assert headers["oracle"][f"pass^{VIEWER_K} (suite mean)"] == "100.00% (1.00/1.00)"
    assert headers["flaky"][f"pass^{VIEWER_K} (suite mean)"].endswith(" (0.00/1.00)")
    assert (viewed.shots / "table.png").stat().st_size > 10_000  # the page as a person sees it


def test_the_custom_metrics_dialog_reads_each_figure_as_what_it_is(viewed):
    """promptfoo's "Custom Metrics" dialog prints Pass = sum / count for every named score. Each derived metric
    has a count (the rows that carried its name): 1 for the suite's pass^10, so its Pass is pass^10 as a
    percentage; the tasks for each verdict, so its Pass is the share of tasks with that verdict — never the
    "0.00%" a count-less derived metric shows."""
    dialog = viewed.seen["metricsDialog"]
    assert dialog is not None, viewed.shots
    rows = {row[0]: row for row in dialog["rows"]}
    columns = [p["provider"] for p in viewed.results["results"]["prompts"]]
    for name, _ in DERIVED_METRICS:
        row = rows[name]
        for index, prompt in enumerate(viewed.results["results"]["prompts"]):
            total, count = prompt["metrics"]["namedScores"][name], prompt["metrics"]["namedScoresCount"][name]
            tasks = 1  # one task in this eval, no twin
            assert count == (1 if name.startswith("pass^") else tasks), (name, columns[index])
            pass_, score, shown_count = row[1 + 3 * index : 4 + 3 * index]
            assert (pass_, shown_count) == (f"{to_fixed(100 * total / count)}%", str(count)), (name, row, viewed.shots)
            assert float(score) == pytest.approx(total, abs=5e-7)  # shown to 6 decimals
    oracle = columns.index("oracle")
    assert rows[f"pass^{VIEWER_K} (suite mean)"][1 + 3 * oracle] == "100.00%"  # 10/10: pass^10 is 1
    assert rows[f"tasks undecided (k={VIEWER_K})"][1 + 3 * oracle] == "100.00%"  # the one task, undecided
    assert (viewed.shots / "metrics-dialog.png").stat().st_size > 10_000


def test_the_viewer_figures_are_not_read_as_grades(viewed):
    """The rows that carry a derived metric's name (value 0, for its count) keep it out of every grade reader."""
    assert {name for name, _ in DERIVED_METRICS} == VIEWER_FIGURES
    carried = [r for r in viewed.rows().values() if VIEWER_FIGURES & set(r["namedScores"])]
    assert carried and all(r["namedScores"][n] == 0 for r in carried for n in VIEWER_FIGURES & set(r["namedScores"]))
    for task in viewed.report["tasks"]:
        assert not VIEWER_FIGURES & set(task["named_scores"]), task["named_scores"]


def test_scripted_runs_cost_nothing_in_promptfoo(viewed):
    assert {row["cost"] for row in viewed.rows().values()} == {0}
    for prompt in viewed.results["results"]["prompts"]:
        assert prompt["metrics"]["cost"] == 0
    for provider in viewed.seen["providers"]:
        assert "Cost:" not in provider["text"], provider["text"]  # promptfoo shows no cost for $0


def test_the_evaluation_tab_lists_each_grader_with_its_verdict(viewed):
    cells = viewed.cells()
    for key, row in viewed.read_rows().items():
        graded = row["gradingResult"]["componentResults"]
        # the deterministic graders' one assertion has no metric of its own: its line shows none (then its graders)
        expected = [(c["assertion"].get("metric") or "", c["pass"], to_fixed(c["score"])) for c in graded]
        shown = [(e["Metric"], e["Pass"], e["Score"]) for e in cells[key]["evaluation"]]
        assert shown == expected, key


def test_passhats_canary_never_shows_in_a_result(viewed):
    """The graders' reasons (a cell's text, its Evaluation tab) name the task's tests only: passhat's canary tests
    and their traces stay in the tests grader's whole output on disk (open_tests_output)."""
    for key, row in viewed.rows().items():
        assert "passhat canary" not in json.dumps(row["gradingResult"]), key
    failed = [r for r in viewed.rows().values() if not r["success"]]
    assert failed and all("(passhat's canary tests left out" in json.dumps(r["gradingResult"]) for r in failed)
    for cell in viewed.seen["cells"]:
        assert not [e for e in cell["evaluation"] if "passhat canary" in e["Reason"]], cell["evaluation"]


def test_the_page_renders_without_errors_and_stays_on_loopback(viewed):
    seen = viewed.seen
    # The viewer's bundled analytics (PostHog) asks for a remote host even with PROMPTFOO_DISABLE_TELEMETRY=1;
    # the script aborts every request that leaves the viewer's origin, and those aborts are the only errors.
    assert all(not r["url"].startswith("http://127.0.0.1") for r in seen["blockedRequests"])
    assert [e for e in seen["consoleErrors"] if "ERR_BLOCKED_BY_CLIENT" not in e] == []
    assert seen["title"].endswith("| promptfoo")
