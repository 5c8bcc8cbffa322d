"""`passhat init [DIR]`: the files a repository needs to run passhat, the next commands as they work from where
it ran, and never an overwritten file (everything checked before the first write, one error naming what exists)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT, TASKS

from passhat.cli import init, main
from passhat.common._errors import TaskError
from passhat.extension import DERIVED_METRICS
from passhat.graders import TrialOutcome, grade, load_graded_task
from passhat.trial._sandbox import prepare_base

WRITTEN = ["promptfooconfig.yaml", "passhat_promptfoo.py", "package.json", "tasks/README.md", "graders/leftovers.py"]
FAKE = {"PASSHAT_FAKE_MODEL_URL": f"http://passhat:{'0' * 64}@127.0.0.1:9"}


@pytest.fixture
def repo(tmp_path):
    folder = tmp_path / "team-repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def tree(folder) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(folder).parts
    }


def test_init_writes_the_files_and_prints_the_next_commands(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert sorted(tree(repo)) == sorted([*WRITTEN, ".gitignore", ".env"])
    assert (repo / ".gitignore").read_text() == "# passhat\n.passhat/\nnode_modules/\nresults.json\n"
    config = yaml.safe_load((repo / "promptfooconfig.yaml").read_text())
    assert config["providers"][0]["id"] == "file://passhat_promptfoo.py"
    assert config["tests"] == "file://passhat_promptfoo.py:generate_tests"
    # promptfoo eval ends with passhat's verdict (afterAll), and the viewer sums afterEach's figures
    assert config["extensions"] == ["file://passhat_promptfoo.py:afterAll", "file://passhat_promptfoo.py:afterEach"]
    assert [(m["name"], m["value"]) for m in config["derivedMetrics"]] == list(DERIVED_METRICS)
    assert config["commandLineOptions"] == {"table": False}
    next_lines = out.split("Next:\n")[1].splitlines()[:4]
    assert [line.split("  #")[0].strip() for line in next_lines] == [
        "npm install",
        "passhat task from-commit . COMMIT --id ID",
        "npx promptfoo eval --repeat 10 -o results.json",
        "passhat report results.json --format html -o report.html",
    ]
    assert "&&" not in out  # `eval && report` skipped the report exactly when a trial failed (exit 100)
    assert max(len(line) for line in out.splitlines()) <= 120
    assert "export PASSHAT_FAKE_MODEL_URL=$(cat .passhat/model.url)" in out


def test_the_env_file_turns_telemetry_off_and_a_failed_trial_into_exit_0(repo, capsys):
    """promptfoo loads .env from its folder: no telemetry (nor its "telemetry.shutdown() timed out"), no update
    check, and exit 0 when trials failed, so a command after the eval runs; the gates decide a build."""
    (repo / ".env").write_text("ANTHROPIC_BASE_URL=http://example.invalid\nPROMPTFOO_DISABLE_UPDATE=0")
    assert main(["init", str(repo)]) == 0
    text = (repo / ".env").read_text()
    assert text.startswith("ANTHROPIC_BASE_URL=http://example.invalid\nPROMPTFOO_DISABLE_UPDATE=0\n")  # kept
    values = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    assert values == {"ANTHROPIC_BASE_URL": "http://example.invalid", "PROMPTFOO_DISABLE_UPDATE": "0",
                      "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_FAILED_TEST_EXIT_CODE": "0"}  # fmt: skip
    said = " ".join(capsys.readouterr().out.split())  # the "wrote" line is wrapped at 120 columns
    assert ".env (+ PROMPTFOO_DISABLE_TELEMETRY PROMPTFOO_FAILED_TEST_EXIT_CODE)" in said
    assert max(len(line) for line in text.splitlines()) <= 120


def test_package_json_pins_the_promptfoo_and_node_passhat_runs_with():
    ours = json.loads((ROOT / "package.json").read_text())["dependencies"]
    theirs = json.loads(init.package_json())["dependencies"]
    assert theirs == {"node": ours["node"], "promptfoo": ours["promptfoo"]}


def test_the_written_entry_file_is_what_promptfoo_calls(repo, monkeypatch, capsys):
    """Loaded as Promptfoo loads it (by path): the provider, every grader, and tests naming this file."""
    monkeypatch.delenv("PASSHAT_TASKS", raising=False)
    assert main(["init", str(repo)]) == 0
    shutil.copytree(TASKS / "py-median", repo / "tasks" / "py-median")
    spec = importlib.util.spec_from_file_location("passhat_promptfoo", repo / "passhat_promptfoo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.call_api)
    [test] = module.generate_tests()
    for assertion in test["assert"]:
        path, function = assertion["value"].removeprefix("file://").split(":")
        assert path == str(repo / "passhat_promptfoo.py") and callable(getattr(module, function))


def test_passhat_validate_accepts_what_init_wrote(repo, monkeypatch, capsys, fake_model):
    assert main(["init", str(repo)]) == 0
    shutil.copytree(TASKS / "py-median", repo / "tasks" / "py-median")
    capsys.readouterr()
    monkeypatch.setenv("PASSHAT_FAKE_MODEL_URL", fake_model.url)  # validate probes it
    assert main(["validate", str(repo / "promptfooconfig.yaml")]) == 0
    out = capsys.readouterr().out
    assert "provider claude-code: config ok" in out and "ok: ready to run" in out
    assert f"1 task(s) in {repo / 'tasks'}: py-median" in out  # the tasks the entry file's generator loads
    assert "extension file://passhat_promptfoo.py:afterAll: promptfoo eval ends with passhat's verdict" in out


def test_the_example_grader_init_writes_is_a_team_grader_a_task_can_name(repo, tmp_path):
    """graders/leftovers.py, named as its docstring says (`file: graders/leftovers.py` from a task's folder), with
    its settings checked against its SETTINGS; then graded: the reference fix is clean, the same fix with a
    breakpoint() left in is not."""
    assert main(["init", str(repo)]) == 0
    task = repo / "tasks" / "py-median"
    shutil.copytree(TASKS / "py-median", task)
    spec = yaml.safe_load((task / "task.yaml").read_text())
    documented = yaml.safe_load(init.GRADER.split("    graders:\n", 1)[1].split("\n\n", 1)[0])[1]
    assert documented["file"] == "graders/leftovers.py"
    spec["graders"] = [documented]
    (task / "task.yaml").write_text(yaml.safe_dump(spec))
    [grader] = load_graded_task(task).graders
    assert grader["file"] == str(repo / "graders" / "leftovers.py") and grader["name"] == "leftovers"
    spec["graders"] = [{**documented, "settings": {"markers": "pdb"}}]
    (task / "task.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(TaskError, match=r"field 'graders\[0\]\.settings\.markers': 'pdb' is not of type 'array'; "
                       rf"the settings' schema is SETTINGS in {repo / 'graders' / 'leftovers.py'}:\d+"):  # fmt: skip
        load_graded_task(task)

    base = prepare_base(load_graded_task(TASKS / "py-median"), tmp_path / "state" / "cache")
    fix = (TASKS / "py-median" / "solution.patch").read_bytes()
    left = fix.replace(b"+    if len(ordered) % 2:", b"+    breakpoint()\n+    if len(ordered) % 2:").replace(
        b"+11,6", b"+11,7"
    )
    graded = [grade(TrialOutcome(task, base.path, patch, {}), grader) for patch in (fix, left)]
    assert [(g.passed, g.score) for g in graded] == [(True, 1.0), (False, 0.0)]
    assert graded[1].reason.startswith("1 leftover(s): stats_utils/median.py:") and "breakpoint()" in graded[1].reason


def test_validate_in_an_init_ed_repository_checks_its_tasks(repo, monkeypatch, capsys):
    """It said "ok: ready to run" for a task without `prompt:`: it only looked for tasks/promptfoo_tests.py."""
    assert main(["init", str(repo)]) == 0
    task = repo / "tasks" / "py-median"
    shutil.copytree(TASKS / "py-median", task)
    spec = yaml.safe_load((task / "task.yaml").read_text())
    del spec["prompt"]
    (task / "task.yaml").write_text(yaml.safe_dump(spec))
    capsys.readouterr()
    for name, value in FAKE.items():
        monkeypatch.setenv(name, value)
    assert main(["validate", str(repo / "promptfooconfig.yaml")]) == 2
    out, err = capsys.readouterr()
    assert "ok: ready to run" not in out
    assert err.count("\n") == 1 and str(task / "task.yaml") in err and "prompt" in err, err


@pytest.mark.parametrize("existing", [*WRITTEN, "tasks", "graders"], ids=lambda name: name)
def test_an_existing_file_stops_init_before_it_writes_anything(repo, capsys, existing):
    (repo / existing).parent.mkdir(exist_ok=True)
    (repo / existing).write_text("theirs\n")
    before = tree(repo)
    assert main(["init", str(repo)]) == 2
    err = capsys.readouterr().err
    assert tree(repo) == before  # nothing written, .gitignore included
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{repo / existing} already exists; init overwrites nothing and wrote nothing" in err
    assert "move it aside, or run `passhat init SUBFOLDER`" in err


def test_every_existing_file_is_named_at_once(repo, capsys):
    for name in ("promptfooconfig.yaml", "package.json"):
        (repo / name).write_text("theirs\n")
    assert main(["init", str(repo)]) == 2
    err = capsys.readouterr().err
    assert f"{repo / 'promptfooconfig.yaml'}, {repo / 'package.json'} already exist;" in err
    assert "move them aside" in err


def test_a_gitignore_that_is_not_a_file_stops_init_before_it_writes_anything(repo, capsys):
    (repo / ".gitignore").mkdir()
    assert main(["init", str(repo)]) == 2
    assert (
        f"init: {repo / '.gitignore'}: not a regular file; init adds .passhat/, node_modules/, results.json to it"
        in (capsys.readouterr().err)
    )
    assert tree(repo) == {}


def test_no_such_folder(tmp_path, capsys):
    assert main(["init", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert f"init {tmp_path / 'nope'}: no such folder; create it" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "build/\nnode_modules", "build/\nnode_modules\n# passhat\n.passhat/\nresults.json\n", id="no-final-newline"
        ),
        pytest.param(".passhat\nnode_modules/\nresults.json\n", None, id="has-all"),
    ],
)
def test_gitignore_gains_only_the_lines_it_lacks(repo, capsys, before, after):
    (repo / ".gitignore").write_text(before)
    assert main(["init", str(repo)]) == 0
    assert (repo / ".gitignore").read_text() == (after or before)
    assert (".gitignore (+" in capsys.readouterr().out) == bool(after)


def test_from_a_parent_folder_the_commands_start_with_cd_and_name_the_repository(repo, monkeypatch, capsys):
    """A node project has its own package.json: init goes into a folder of its own, e.g. evals/."""
    (repo / "evals").mkdir()
    monkeypatch.chdir(repo)
    assert main(["init", "evals"]) == 0
    lines = capsys.readouterr().out.split("Next:\n")[1].splitlines()
    assert lines[0].strip() == "cd evals"
    assert lines[2].split("  #")[0].strip() == "passhat task from-commit .. COMMIT --id ID"
    assert "    passhat task from-commit .. COMMIT --id ID" in (repo / "evals" / "tasks" / "README.md").read_text()


def test_outside_a_git_repository_the_command_says_repo(tmp_path):
    assert "passhat task from-commit REPO COMMIT" in init.next_commands(tmp_path, tmp_path)[1]


def test_it_says_which_python_promptfoo_must_run_when_path_finds_another(tmp_path, monkeypatch):
    other = tmp_path / "bin"
    other.mkdir()
    (other / "python3").write_text("#!/bin/sh\n")
    (other / "python3").chmod(0o755)
    monkeypatch.setenv("PATH", str(other))
    assert init._python_note() == f"promptfoo must run this passhat's Python: export PROMPTFOO_PYTHON={sys.executable}"
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), str(other)]))
    assert init._python_note() is None
