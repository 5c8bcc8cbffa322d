"""Every subcommand, invoked as the README shows it (default options, relative paths), from a folder that is
not the repo: the real console script in a subprocess, cwd = a project in tmp_path. Relative paths mean the
cwd of the command — also where they travel on (a grader's bwrap --chdir, the scripted model's tasks)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, TASKS

from passhat.cli import main

PASSHAT = Path(sys.executable).parent / "passhat"
ROW = {"success": True, "failureReason": 0, "score": 1, "namedScores": {}, "provider": {"id": "p"},
       "testCase": {"description": "t"}, "response": {"output": "x", "metadata": {"task_id": "t"}}}  # fmt: skip
ERROR_ROW = {**ROW, "success": False, "failureReason": 2, "score": 0, "error": "API down"}


def results(*rows: dict) -> str:
    return json.dumps({"evalId": "eval-x", "results": {"version": 3, "results": list(rows)}})


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A suite beside the repo: promptfooconfig.yaml, providers/, two tasks (Python, Node), results files."""
    root = tmp_path_factory.mktemp("paths")
    work = root / "work"
    shutil.copytree(ROOT / "providers", work / "providers")
    for task in ("py-median", "node-slugify"):
        shutil.copytree(TASKS / task, work / "tasks" / task)
    shutil.copy(TASKS / "promptfoo_tests.py", work / "tasks")
    (work / "promptfooconfig.yaml").write_text(
        "prompts: ['{{prompt}}']\nproviders:\n  - id: file://providers/claude_code.py\n    label: cc\n"
        "tests: file://tasks/promptfoo_tests.py:generate_tests\n"
    )
    (work / "results.json").write_text(results(ROW, ROW))
    (work / "errors.json").write_text(results(ROW, ERROR_ROW))
    (work / "labels.csv").write_text("trial,criterion,human,judge\na,overall,3,4\nb,overall,4,4\nc,overall,2,2\n")
    (root / "elsewhere").mkdir()
    return root


def passhat(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PASSHAT_", "ANTHROPIC_"))}
    return subprocess.run([str(PASSHAT), *argv], cwd=cwd, env={**environ, **env}, capture_output=True, text=True,
                          timeout=600, check=False)  # fmt: skip


# (id, cwd under the project, argv, exit code, fragments of stdout ({work}: its absolute path), files it writes)
CASES = [
    ("check-task --all", "work", ["check-task", "--all"], 0, ["2 of 2 task(s) valid"], [".passhat/cache"]),
    ("check-task --all --tasks-dir", "elsewhere", ["check-task", "--all", "--tasks-dir", "../work/tasks"], 0,
     ["ok      py-median:", "ok      node-slugify:", "2 of 2 task(s) valid"], [".passhat/cache"]),
    ("check-task folder --state-dir", "elsewhere", ["check-task", "../work/tasks/py-median", "--state-dir", "st"], 0,
     ["1 of 1 task(s) valid"], ["st/cache"]),
    ("validate", "work", ["validate"], 0,
     ["provider cc: state dir {work}/.passhat writable", "2 task(s) in {work}/tasks", "ok: ready to run"], []),
    ("report", "work", ["report", "results.json"], 0, ["t "], []),
    ("report -o", "work", ["report", "results.json", "--format", "md", "-o", "report.md"], 0, [],
     ["report.md"]),
    ("compare", "work", ["compare", "results.json", "errors.json"], 0, ["t"], []),
    ("drift", "work", ["drift", "results.json"], 0, [], [".passhat/history.db"]),
    ("regrade", "work", ["regrade", "errors.json", "-o", "regraded.json"], 0,
     ["from {work}/errors.json into {work}/regraded.json", "2 kept as they were"], ["regraded.json"]),
    # no -o: beside the input (it was required: `passhat regrade results.json` stopped with a usage error)
    ("regrade, default output", "work", ["regrade", "errors.json"], 0,
     ["from {work}/errors.json into {work}/errors.regraded.json"], ["errors.regraded.json"]),
    ("judge-noise", "work", ["judge-noise", "results.json"], 0, ["no row was graded by a rubric"], []),
    ("calibrate", "work", ["calibrate", "labels.csv"], 0, ["calibration: 3 trial(s)"], []),
]  # fmt: skip


@pytest.mark.parametrize(("where", "argv", "code", "fragments", "writes"),
                         [pytest.param(*case[1:], id=case[0]) for case in CASES])  # fmt: skip
def test_default_invocation_from_another_cwd(project, fake_model, where, argv, code, fragments, writes):
    cwd = project / where
    done = passhat(argv, cwd, PASSHAT_FAKE_MODEL_URL=fake_model.url)  # validate probes it
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    for fragment in fragments:
        assert fragment.format(work=project / "work") in done.stdout, done.stdout
    for path in writes:
        assert (cwd / path).exists(), f"{path} not written under {cwd}"


def test_fake_model_default_tasks_dir_and_port_file_from_another_cwd(project):
    work = project / "work"
    (work / "port").unlink(missing_ok=True)
    server = subprocess.Popen([str(PASSHAT), "fake-model", "--port-file", "port"], cwd=work,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (work / "port").exists() and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (work / "port").read_text().strip().isdigit()
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert f"  tasks: {work / 'tasks'}\n" in err, err
    assert max(len(line) for line in err.splitlines()[:2]) <= 120  # the start line was 162 columns


def test_a_relative_state_dir_works_in_process(tmp_path, monkeypatch, capsys):
    """`--state-dir .passhat` (the default) reaches bwrap --chdir as an absolute path; before, every task
    with a `tests` grader was BROKEN with `bwrap: Can't chdir to .passhat/cache/scratch/...`."""
    shutil.copytree(TASKS / "py-median", tmp_path / "tasks" / "py-median")
    monkeypatch.chdir(tmp_path)
    assert main(["check-task", "--all"]) == 0, capsys.readouterr().out
    assert "1 of 1 task(s) valid" in capsys.readouterr().out


def test_a_failing_grader_shows_its_output_tail_under_the_broken_line(tmp_path, capsys):
    folder = tmp_path / "tasks" / "loud"
    (folder / "repo").mkdir(parents=True)
    (folder / "repo" / "a.txt").write_text("old\n")
    (folder / "solution.patch").write_text(
        "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n"
    )
    command = (
        "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do echo line-$i; done; echo why-it-failed; exit 3"
    )
    (folder / "task.yaml").write_text(
        f"id: loud\ndescription: d\ntier: simple\nprompt: p\ngraders:\n  - type: tests\n    command: '{command}'\n"
    )
    assert main(["check-task", str(folder), "--state-dir", str(tmp_path / "state")]) == 1
    out = capsys.readouterr().out.splitlines()
    broken = next(i for i, line in enumerate(out) if line.startswith("BROKEN  loud: solution.patch fails grader"))
    tail = [line for line in out[broken + 1 :] if line.startswith("        | ")]
    # the last 15 lines of the reason: "Output tail:" and line-1 .. line-6 are cut off; line-7 .. line-20 and the cause stay
    assert tail[-1] == "        | why-it-failed"
    assert len(tail) == 15 and tail[0] == "        | line-7"
    assert out[-1] == "0 of 1 task(s) valid; 1 broken: loud"
