"""passhat.promptfoo: Promptfoo's entry points from the installed package — the provider, one function for a task's
deterministic graders, one for a grader of any kind, and a tests generator whose assertions name the one entry
file a repository holds."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys

from conftest import ROOT, TASKS

import passhat.promptfoo as entry
from passhat.graders._suite import ALL_FILE, ONE_FILE


def test_two_assertion_functions_serve_every_grader_kind():
    for name in [entry.ALL_GRADERS, entry.ONE_GRADER]:
        assert callable(getattr(entry, name)) and name in entry.__all__


def test_the_repos_own_entry_files_are_the_same_functions():
    """providers/ and assertions/ are re-exports: the example suite and a user's repository run the same code."""
    for file_name, function in ((ALL_FILE, entry.get_assert_graders), (ONE_FILE, entry.get_assert_grader)):
        spec = importlib.util.spec_from_file_location(f"_entry_{file_name[:-3]}", ROOT / "assertions" / file_name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert module.get_assert is function
    assert sorted(p.name for p in (ROOT / "assertions").glob("*.py")) == sorted([ALL_FILE, ONE_FILE])


def test_an_unknown_kind_in_a_hand_written_assertion_fails_it_saying_so():
    result = entry.get_assert_grader("", {"config": {"type": "lnit"}})
    assert result["pass"] is False and "'lnit' is not a passhat grader kind" in result["reason"]


def test_importing_it_imports_no_stage():
    """Each assertion call is a fresh Python process: the import alone must stay cheap (graders: ~0.3 s)."""
    code = "import sys, passhat.promptfoo; print(sorted(m for m in sys.modules if m.startswith('passhat.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.replace("'", '"')) == ["passhat.promptfoo"]


def test_generated_tests_name_the_entry_files_functions(tmp_path, monkeypatch):
    monkeypatch.delenv("PASSHAT_TASKS", raising=False)
    shutil.copytree(TASKS / "py-median", tmp_path / "evals" / "py-median")
    entry_file = tmp_path / "my_entry.py"
    generate = entry.tests_generator(entry_file, tasks_dir="evals")
    [test] = generate()
    values = [a["value"] for a in test["assert"]]
    assert values == [f"file://{entry_file}:get_assert_graders"]  # py-median's tests, diff-scope, health: one
    graders = [g["type"] for g in test["assert"][0]["config"]["graders"]]
    assert graders == ["tests", "diff-scope", "health", "integrity"]  # + the scan a tests grader brings
    assert test["vars"]["task_dir"] == str(tmp_path / "evals" / "py-median")
    assert generate({"anything": 1}) == [test]  # a `tests: {path, config}` entry passes its config
