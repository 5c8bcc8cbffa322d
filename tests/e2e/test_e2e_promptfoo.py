"""End to end, as a user runs it: `passhat fake-model` → `promptfoo eval --repeat N` through our provider,
the real Agent SDK and bundled Claude Code CLI → graded → `passhat report --format json`.

Everything is real except the model, which is our scripted server on loopback.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, TASKS

from passhat.cli import main

pytestmark = pytest.mark.e2e
REPEAT = 4
E2E_TASKS = ["bump-version", "py-median", "py-rename-var"]  # Node and Python; check-task covers the rest
FLAKY_P, FLAKY_SEED = 0.5, 11


def expected_oracle(task_id: str, trial: int) -> bool:
    """Computed here, independently of passhat: sha256("seed:task:trial"), first 16 hex digits, < p."""
    digest = hashlib.sha256(f"{FLAKY_SEED}:{task_id}:{trial}".encode()).hexdigest()
    return int(digest[:16], 16) / 16**16 < FLAKY_P


@pytest.fixture(scope="module")
def fake_model_url(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fake")
    url_file, log = folder / "url", folder / "server.log"
    with log.open("w") as err:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "passhat.cli",
                "fake-model",
                "--tasks",
                str(TASKS),
                "--script",
                "noop",
                "--port",
                "0",
                "--url-file",
                str(url_file),
            ],
            stderr=err,
        )
        try:
            for _ in range(200):
                if url_file.is_file() and url_file.read_text().strip():
                    break
                if server.poll() is not None:
                    pytest.fail(f"passhat fake-model exited: {log.read_text()}")
                time.sleep(0.05)
            yield url_file.read_text().strip()  # http://passhat:<secret>@127.0.0.1:PORT
        finally:
            server.terminate()
            server.wait(timeout=10)


@pytest.fixture(scope="module")
def eval_run(tmp_path_factory, fake_model_url):
    work = tmp_path_factory.mktemp("eval")
    state = work / ".passhat"
    providers = [
        {
            "id": f"file://{ROOT}/providers/claude_code.py",
            "label": label,
            "config": {"fake_script": script, "state_dir": str(state), "timeout_s": 120},
        }
        for label, script in (("flaky", f"flaky:{FLAKY_P}:{FLAKY_SEED}"), ("oracle", "oracle"), ("noop", "noop"))
    ]
    config = {
        "prompts": ["{{prompt}}"],
        "providers": providers,
        "tests": f"file://{ROOT}/tasks/promptfoo_tests.py:generate_tests",
    }
    (work / "promptfooconfig.yaml").write_text(yaml.safe_dump(config))
    env = {
        **os.environ,
        "PASSHAT_FAKE_MODEL_URL": fake_model_url,
        "PROMPTFOO_PYTHON": sys.executable,
        "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo-home"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
    }
    env["PASSHAT_TASKS"] = ",".join(E2E_TASKS)
    proc = subprocess.run(
        [
            shutil.which("promptfoo"),
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
        timeout=1500,
    )
    assert proc.returncode in (0, 100), proc.stdout[-3000:] + proc.stderr[-3000:]  # 100 = some test failed
    return work, json.loads((work / "results.json").read_text())


def _solution_tree(task_id: str, tmp_path: Path) -> dict[str, bytes]:
    dest = tmp_path / f"solved-{task_id}"
    shutil.copytree(TASKS / task_id / "repo", dest)
    subprocess.run(["git", "apply", str(TASKS / task_id / "solution.patch")], cwd=dest, check=True)
    return _tree(dest)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
    }


def test_every_trial_ran_once_without_infra_errors(eval_run):
    _, results = eval_run
    rows = results["results"]["results"]
    assert len(rows) == len(E2E_TASKS) * 3 * REPEAT
    assert [r for r in rows if r["failureReason"] == 2] == []
    keys = {
        (r["provider"]["label"], r["response"]["metadata"]["task_id"], r["response"]["metadata"]["repeat_index"])
        for r in rows
    }
    assert len(keys) == len(rows)
    assert len({r["response"]["metadata"]["trial_dir"] for r in rows}) == len(rows)  # artifacts never collide


def test_report_gives_exactly_the_seeded_pass_pattern(eval_run, capsys):
    work, _ = eval_run
    assert main(["report", str(work / "results.json"), "--format", "json", "--k", "1,2,4,5"]) == 0
    report = json.loads(capsys.readouterr().out)
    by_key = {(row["task"], row["provider"]): row for row in report["tasks"]}
    assert len(by_key) == len(E2E_TASKS) * 3
    for task_id in E2E_TASKS:
        expected = {
            "flaky": sum(expected_oracle(task_id, i) for i in range(REPEAT)),
            "oracle": REPEAT,
            "noop": 0,
        }
        for provider, c in expected.items():
            row = by_key[(task_id, provider)]
            assert (row["n"], row["passes"], row["errors"]) == (REPEAT, c, 0), (task_id, provider)
            for k in (1, 2, 4):
                assert row["pass_hat_k"][str(k)] == pytest.approx((c / REPEAT) ** k)  # (c/n)^k
                assert row["pass_at_k"][str(k)] == pytest.approx(1 - math.comb(REPEAT - c, k) / math.comb(REPEAT, k))
            assert row["pass_hat_k"]["5"] is None  # n=4 < k=5: undefined, not 0
            assert row["flaky"] == (0 < c < REPEAT)


def test_each_row_passes_exactly_when_its_trial_acted_as_oracle(eval_run):
    _, results = eval_run
    for row in results["results"]["results"]:
        meta = row["response"]["metadata"]
        label = row["provider"]["label"]
        oracle = (
            {"oracle": True, "noop": False}.get(label)
            if label != "flaky"
            else expected_oracle(meta["task_id"], meta["repeat_index"])
        )
        assert row["success"] is oracle, (label, meta["task_id"], meta["repeat_index"], row.get("error"))
        assert (row["namedScores"]["tests"] == 1.0) is oracle  # FAIL_TO_PASS fraction: 1.0 only when solved
        assert row["namedScores"]["health"] == 1.0  # noop or oracle, every run exited cleanly


def test_each_trial_patch_holds_only_its_own_edits(eval_run, tmp_path):
    _, results = eval_run
    solved = {task_id: _solution_tree(task_id, tmp_path) for task_id in E2E_TASKS}
    for index, row in enumerate(results["results"]["results"]):
        meta = row["response"]["metadata"]
        patch = Path(meta["patch_path"]).read_bytes()
        if not row["success"]:
            assert patch == b"" and meta["changed_paths"] == []
            continue
        rebuilt = tmp_path / f"rebuilt-{index}"
        shutil.copytree(meta["base_dir"], rebuilt, ignore=shutil.ignore_patterns(".git"))
        subprocess.run(["git", "apply", "--binary", "-"], input=patch, cwd=rebuilt, check=True)
        assert _tree(rebuilt) == solved[meta["task_id"]], (meta["task_id"], meta["repeat_index"])


def test_regrade_reproduces_the_verdicts_then_reports_a_changed_grader(eval_run, tmp_path, capsys):
    work, results = eval_run
    assert main(["regrade", str(work / "results.json"), "-o", str(tmp_path / "same.json")]) == 0
    assert "no verdict changed" in capsys.readouterr().out
    same = json.loads((tmp_path / "same.json").read_text())["results"]["results"]
    assert [r["success"] for r in same] == [r["success"] for r in results["results"]["results"]]

    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS, tasks, ignore=shutil.ignore_patterns("__pycache__"))
    spec = yaml.safe_load((tasks / "py-median" / "task.yaml").read_text())
    spec["graders"] = [{"type": "tests", "command": "exit 3"}, *[g for g in spec["graders"] if g["type"] != "tests"]]
    (tasks / "py-median" / "task.yaml").write_text(yaml.safe_dump(spec))
    assert (
        main(["regrade", str(work / "results.json"), "-o", str(tmp_path / "new.json"), "--tasks-dir", str(tasks)]) == 0
    )
    out = capsys.readouterr().out
    was_passing = sum(
        1 for r in results["results"]["results"] if r["success"] and r["response"]["metadata"]["task_id"] == "py-median"
    )
    assert f"{was_passing} verdict(s) changed:" in out
    assert f"py-median: passes {was_passing} → 0" in out
    assert main(["report", str(tmp_path / "new.json"), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {row["passes"] for row in report["tasks"] if row["task"] == "py-median"} == {0}


def test_a_row_has_one_component_and_one_named_score_per_grader_and_every_reader_reads_it(eval_run, tmp_path):
    """The task's deterministic graders run as ONE assertion (one process per trial): Promptfoo keeps its result
    and flattened copies of its graders' components; report, regrade and history each read one per grader."""
    from passhat.graders import load_graded_task
    from passhat.graders._regrade import regrade_row
    from passhat.graders._settings import graders_of
    from passhat.history import batch_from_results
    from passhat.judge._status import grader_components

    work, results = eval_run
    rows = results["results"]["results"]
    for row in rows:
        graders = graders_of(load_graded_task(TASKS / row["response"]["metadata"]["task_id"]))  # + integrity
        metrics = [g.get("name", g["type"]) for g in graders]
        components = grader_components(row)
        assert [c["assertion"]["metric"] for c in components] == metrics
        assert [c["assertion"]["config"] for c in components] == [dict(g) for g in graders]
        named = {c["assertion"]["metric"]: c["score"] for c in components}
        assert row["namedScores"] == {**named, "gamed": 0.0}  # the trial's gaming flag: the scripted agents do not
        [combined] = [a for a in row["testCase"]["assert"] if "graders" in a.get("config", {})]
        assert combined["value"].endswith(":get_assert_graders") or combined["value"].endswith("/graders.py")
        assert row["success"] == all(c["pass"] for c in components)
        assert row["score"] == pytest.approx(sum(c["score"] for c in components) / len(components))
        regraded = regrade_row(row, None)
        assert [(c["assertion"]["metric"], c["pass"], c["score"]) for c in grader_components(regraded)] == [
            (c["assertion"]["metric"], c["pass"], c["score"]) for c in components
        ]
        assert regraded["namedScores"] == row["namedScores"]
        assert len(regraded["gradingResult"]["componentResults"]) == len(row["gradingResult"]["componentResults"])
    batch = batch_from_results(work / "results.json")
    assert {r.metric for r in batch.rows} >= {"namedScores.tests", "namedScores.health", "namedScores.diff-scope"}
    assert len([r for r in batch.rows if r.metric == "namedScores.tests"]) == len(rows)
