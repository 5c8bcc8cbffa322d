"""passhat.promptfoo: Promptfoo's entry points from the installed package — one function per grader type, the
provider, and a tests generator whose assertions name the one entry file a repository holds."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys

from conftest import ROOT, TASKS

import passhat.promptfoo as entry
from passhat.graders import GRADERS
from passhat.tasks._suite import ASSERTION_FILES, GRADERS_FILE


def test_one_assertion_function_per_grader_type_and_one_for_all_deterministic_graders():
    assert set(entry.ASSERTIONS) == set(GRADERS) == set(ASSERTION_FILES)
    for name in [*entry.ASSERTIONS.values(), entry.ALL_GRADERS]:
        assert callable(getattr(entry, name)) and name in entry.__all__


def test_the_repos_own_entry_files_are_the_same_functions():
    """providers/ and assertions/ are re-exports: the example suite and a user's repository run the same code."""
    for grader_type, file_name in ASSERTION_FILES.items():
        spec = importlib.util.spec_from_file_location(f"_entry_{grader_type}", ROOT / "assertions" / file_name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert module.get_assert is getattr(entry, entry.ASSERTIONS[grader_type])
    spec = importlib.util.spec_from_file_location("_entry_graders", ROOT / "assertions" / GRADERS_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.get_assert is entry.get_assert_graders


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
    assert [g["type"] for g in test["assert"][0]["config"]["graders"]] == ["tests", "diff-scope", "health"]
    assert test["vars"]["task_dir"] == str(tmp_path / "evals" / "py-median")
    assert generate({"anything": 1}) == [test]  # a `tests: {path, config}` entry passes its config
