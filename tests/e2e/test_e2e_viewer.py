"""What a user sees in `promptfoo view` after a passhat eval, read in headless Chromium.

A real `promptfoo eval` (one task, two scripted providers, --repeat 2) lands in a fresh promptfoo DB; `promptfoo
view` serves it on 127.0.0.1; tests/browser/promptfoo_view.mjs opens the eval page, reads the metric pills and,
from each result's details drawer, the Metadata and Evaluation tabs. Everything shown is checked against the
same eval's results.json: per trial the task id, repeat, cost, turns, health and artifact paths, and the
graders' named scores.

promptfoo 0.123.1 shows named scores as "metric pills" (in each output column's header: mean and sum/count;
in each result cell: the score), not as separate table columns, and metadata as a Key/Value table in the
drawer's Metadata tab, values longer than 300 characters cut with "..." until clicked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
import yaml
from browser_helpers import NODE_BIN, promptfoo_view, run_browser_script
from conftest import ROOT, TASKS

pytestmark = pytest.mark.e2e
TASK = "py-rename-var"  # Python, and a grader of each deterministic type passhat ships
REPEAT = 2
SCRIPTS = {"oracle": "oracle", "noop": "noop"}  # provider label → scripted model: scores differ per column
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

    def rows(self) -> dict[tuple[str, int], dict]:
        """results.json rows by (provider label, repeat index)."""
        return {
            (r["provider"]["label"], r["response"]["metadata"]["repeat_index"]): r
            for r in self.results["results"]["results"]
        }

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
    config = {
        "prompts": ["{{prompt}}"],
        "providers": providers,
        "tests": f"file://{ROOT}/tasks/promptfoo_tests.py:generate_tests",
    }
    (work / "promptfooconfig.yaml").write_text(yaml.safe_dump(config))
    server = start_in_thread(TASKS, "noop")
    try:
        env = {
            **os.environ,
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
    assert proc.returncode in (0, 100), proc.stdout[-3000:] + proc.stderr[-3000:]  # 100: the noop trials fail
    results = json.loads((work / "results.json").read_text())
    rows = results["results"]["results"]
    assert len(rows) == REPEAT * len(SCRIPTS) and not [r for r in rows if r["failureReason"] == 2]

    shots = work / "screenshots"
    with promptfoo_view(home, work / "view.log") as base:
        listening = listening_addresses(int(base.rsplit(":", 1)[1]))
        seen = run_browser_script(
            "promptfoo_view", base, results["evalId"], REPEAT, "--screenshots", shots, timeout=300
        )
    return Viewed(results, seen, listening, shots)


def test_the_viewer_listens_on_loopback_only(viewed):
    assert viewed.listening == {"0100007F"}, f"promptfoo view listens on {viewed.listening} (hex), not 127.0.0.1 only"


def test_each_trial_has_one_result_cell_with_its_own_metadata(viewed):
    rows, cells, shots = viewed.rows(), viewed.cells(), viewed.shots
    assert len(viewed.seen["cells"]) == len(rows) == REPEAT * len(SCRIPTS)
    assert cells.keys() == rows.keys(), f"screenshots: {shots}"
    for key, row in rows.items():
        meta, shown = row["response"]["metadata"], cells[key]["metadata"]
        for name in SHOWN:
            assert shown.get(name) == as_shown(meta[name]), (key, name, f"screenshots: {shots}")
        assert shown["task_id"] == TASK and shown["repeat_index"] == str(key[1])
        assert float(shown["cost_usd"]) == row["cost"] > 0 and int(shown["num_turns"]) >= 1
        assert shown["status"] == "ok"  # health: every scripted run exits cleanly, noop included
        assert Path(shown["patch_path"]).is_file() and Path(shown["transcript_path"]).is_file()
        # Nothing the provider recorded is hidden or altered (promptfoo adds sessionId and the test's tier).
        assert {k: as_shown(v) for k, v in meta.items()}.items() <= shown.items(), key
    assert len({c["metadata"]["patch_path"] for c in cells.values()}) == len(rows)  # each trial its own artifacts


def test_named_scores_are_metric_pills_in_each_cell_and_header(viewed):
    rows, cells, shots = viewed.rows(), viewed.cells(), viewed.shots
    assert {"tests", "files", "diff-scope", "health"} <= GRADERS
    for key, row in rows.items():
        assert set(row["namedScores"]) == GRADERS | {"gamed"} and row["namedScores"]["gamed"] == 0
        expected = {name: to_fixed(score) for name, score in row["namedScores"].items()}
        assert cells[key]["metrics"] == expected, (key, f"screenshots: {shots}")
    assert {rows[("oracle", i)]["namedScores"][name] for i in range(REPEAT) for name in GRADERS} == {1}
    noop = rows[("noop", 0)]["namedScores"]  # so the two columns' pills differ: nothing renamed
    assert noop["files"] == 0 and noop["tests"] < 1

    headers = {provider["label"]: provider["metrics"] for provider in viewed.seen["providers"]}
    assert headers.keys() == set(SCRIPTS)
    for prompt in viewed.results["results"]["prompts"]:
        sums, counts = prompt["metrics"]["namedScores"], prompt["metrics"]["namedScoresCount"]
        # mean, then sum/count: oracle's tests, 2 trials scoring 1 each: "100.00% (2.00/2.00)"
        expected = {
            name: f"{to_fixed(100 * s / counts[name])}% ({to_fixed(s)}/{to_fixed(counts[name])})"
            for name, s in sums.items()
        }
        assert headers[prompt["provider"]] == expected, (prompt["provider"], f"screenshots: {shots}")


def test_the_evaluation_tab_lists_each_grader_with_its_verdict(viewed):
    cells = viewed.cells()
    for key, row in viewed.rows().items():
        graded = row["gradingResult"]["componentResults"]
        # the deterministic graders' one assertion has no metric of its own: its line shows none (then its graders)
        expected = [(c["assertion"].get("metric") or "", c["pass"], to_fixed(c["score"])) for c in graded]
        shown = [(e["Metric"], e["Pass"], e["Score"]) for e in cells[key]["evaluation"]]
        assert shown == expected, key


def test_the_page_renders_without_errors_and_stays_on_loopback(viewed):
    seen = viewed.seen
    # The viewer's bundled analytics (PostHog) asks for a remote host even with PROMPTFOO_DISABLE_TELEMETRY=1;
    # the script aborts every request that leaves the viewer's origin, and those aborts are the only errors.
    assert all(not r["url"].startswith("http://127.0.0.1") for r in seen["blockedRequests"])
    assert [e for e in seen["consoleErrors"] if "ERR_BLOCKED_BY_CLIENT" not in e] == []
    assert seen["title"].endswith("| promptfoo")
