"""Adding a grader is one module: a contributor drops `graders/kinds/<type>.py` (its docstring, its function, its
settings) into the package and nothing else — and task.yaml validates it, the suite runs it inside the one
combined assertion, the row names its score, and `passhat report` shows it.

The toy kind here is a small `lint` grader (run a command on base + patch, pass on exit 0), written into the
installed package's kinds/ folder for the test and removed after it, exactly as a contributor would add one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, TASKS

import passhat.graders.kinds as kinds_package
from passhat.common._errors import TaskError
from passhat.graders import grader_kinds, load_graded_task
from passhat.graders._settings import _validator, graders_schema

TOY = textwrap.dedent('''\
    """The `{name}` grader (a test's toy): run `command` on base + the trial's patch; pass on exit 0."""

    from __future__ import annotations

    from passhat.graders._common import Grade
    from passhat.graders.kinds import GraderKind
    from passhat.graders.view import OutcomeView


    def grade_lint(view: OutcomeView, config: dict) -> Grade:
        ran = view.run(config["command"], timeout_s=60)  # a private copy of base + patch, confined
        return Grade(ran.ok, 1.0 if ran.ok else 0.0, f"`{{config['command']}}` exited {{ran.code}}: {{ran.output[-200:]}}")


    KIND = GraderKind(
        "{name}",
        grade_lint,
        deterministic=True,
        settings={{
            "required": ["command"],
            "properties": {{"command": {{"type": "string", "minLength": 1, "description": "the check to run"}}}},
        }},
    )
''')


def _forget() -> None:
    for cached in (grader_kinds, graders_schema, _validator):
        cached.cache_clear()


@pytest.fixture
def toy_kind() -> Iterator[str]:
    """A new grader kind module in the package, as a contributor adds one; gone (and forgotten) afterwards."""
    name = f"toy-lint-{uuid.uuid4().hex[:6]}"
    module = Path(kinds_package.__file__).parent / f"{name.replace('-', '_')}.py"
    module.write_text(TOY.format(name=name), encoding="utf-8")
    _forget()
    try:
        yield name
    finally:
        module.unlink()
        for compiled in module.parent.glob(f"__pycache__/{module.stem}.*"):
            compiled.unlink()
        _forget()


def _task_with(tmp_path: Path, grader: dict) -> Path:
    """py-median, with the toy grader added after its own."""
    task = tmp_path / "tasks" / "py-median"
    shutil.copytree(TASKS / "py-median", task)
    data = yaml.safe_load((task / "task.yaml").read_text())
    data["graders"].append(grader)
    (task / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return task


def test_the_registry_finds_the_new_module_and_task_yaml_validates_its_settings(toy_kind, tmp_path):
    assert toy_kind in grader_kinds() and grader_kinds()[toy_kind].deterministic
    assert set(grader_kinds()) >= {"tests", "files", "diff-scope", "health", "rubric", "pairwise"}
    ok = load_graded_task(_task_with(tmp_path / "ok", {"type": toy_kind, "command": "true"}))
    assert ok.graders[-1] == {"type": toy_kind, "command": "true"}
    with pytest.raises(TaskError, match=rf"field 'graders\[3\]\.command' is missing .*a {toy_kind} grader needs it"):
        load_graded_task(_task_with(tmp_path / "missing", {"type": toy_kind}))
    with pytest.raises(TaskError, match=r"field 'graders\[3\]\.comand' is not a known field .*rename it to 'command'"):
        load_graded_task(_task_with(tmp_path / "typo", {"type": toy_kind, "command": "true", "comand": "x"}))


def test_without_the_module_the_type_is_unknown(tmp_path):
    with pytest.raises(TaskError, match=r"field 'graders\[3\]\.type': 'toy-lint' is not one of diff-scope, "):
        load_graded_task(_task_with(tmp_path, {"type": "toy-lint", "command": "true"}))


@pytest.mark.e2e
def test_promptfoo_eval_runs_it_in_the_combined_assertion_and_the_report_names_it(toy_kind, tmp_path, fake_model):
    """The real promptfoo eval, provider, CLI and scripted model (oracle: py-median solved): the toy grader runs
    inside the one assertion of the deterministic graders, with its own named score, pass and fail."""
    passes = 'python -c "import stats_utils; assert stats_utils.median([1, 2, 3, 4]) == 2.5"'
    task = _task_with(tmp_path, {"type": toy_kind, "name": "lint-ok", "command": passes})
    data = yaml.safe_load((task / "task.yaml").read_text())
    data["graders"].append({"type": toy_kind, "name": "lint-strict", "command": "test -f NO_SUCH_FILE"})
    (task / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    entry = tmp_path / "passhat_promptfoo.py"
    entry.write_text("from passhat.promptfoo import *  # noqa: F403\ngenerate_tests = tests_generator(__file__)\n")
    config = {
        "prompts": ["{{prompt}}"],
        "providers": [{"id": f"file://{entry}", "label": "oracle",
                       "config": {"fake_script": "oracle", "state_dir": str(tmp_path / "state"), "timeout_s": 120}}],
        "tests": f"file://{entry}:generate_tests",
    }  # fmt: skip
    (tmp_path / "promptfooconfig.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "PASSHAT_FAKE_MODEL_URL": fake_model.url, "PROMPTFOO_PYTHON": sys.executable,
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo-home"), "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1"}  # fmt: skip
    proc = subprocess.run(
        ["promptfoo", "eval", "-c", "promptfooconfig.yaml", "--repeat", "2", "--no-cache", "--no-progress-bar",
         "-o", "results.json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 100, proc.stdout[-3000:] + proc.stderr[-3000:]  # lint-strict fails every trial
    rows = json.loads((tmp_path / "results.json").read_text())["results"]["results"]
    assert len(rows) == 2
    for row in rows:
        assert row["namedScores"]["lint-ok"] == 1 and row["namedScores"]["lint-strict"] == 0
        assert row["namedScores"]["tests"] == 1  # the oracle solved it: the toy is why the trial fails
        [combined] = [c for c in row["gradingResult"]["componentResults"] if c.get("componentResults")]
        assert [part["assertion"]["metric"] for part in combined["componentResults"]] == [
            "tests", "diff-scope", "health", "lint-ok", "lint-strict", "integrity"
        ]  # fmt: skip  # the integrity scan: on for every task with a tests grader, after the task's own
        assert "lint-strict: `test -f NO_SUCH_FILE` exited 1" in row["gradingResult"]["reason"]
    report = subprocess.run([sys.executable, "-m", "passhat.cli", "report", "results.json", "--format", "json"],
                            cwd=tmp_path, env=env, capture_output=True, text=True)  # fmt: skip
    assert report.returncode == 0, report.stderr
    [summary] = json.loads(report.stdout)["tasks"]
    assert summary["named_scores"]["lint-ok"] == 1 and summary["named_scores"]["lint-strict"] == 0
    assert (summary["n"], summary["passes"]) == (2, 0)
    assert ROOT.is_dir()
