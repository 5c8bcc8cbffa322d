"""bench/integrity_cost.py compares like with like: its guard-off run of a pytest command loads the environment's
pytest plugins as the guard does (pytest's own auto-load also rewrites each plugin package's asserts, compiled from
source every run: a saving the guard makes that is not the defences' cost)."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest
from conftest import ROOT

from passhat.graders.runner._guard import LOADER, PLUGIN_DIR

_spec = importlib.util.spec_from_file_location("integrity_cost", ROOT / "bench" / "integrity_cost.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["integrity_cost"] = bench
_spec.loader.exec_module(bench)


def test_the_guard_off_run_of_pytest_loads_plugins_as_the_guard_does():
    grader = {"type": "tests", "command": "python -m pytest -q --junitxml={junit}"}
    assert bench._same_plugins(grader)["env"] == {
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTEST_PLUGINS": LOADER,
        "PYTHONPATH": str(PLUGIN_DIR),
    }
    assert "env" not in grader  # the task's grader is left as it was


def test_the_tasks_own_plugins_and_path_come_after_the_loader():
    grader = {"command": "pytest", "env": {"PYTEST_PLUGINS": "xdist", "PYTHONPATH": "lib"}}
    env = bench._same_plugins(grader)["env"]
    assert env["PYTEST_PLUGINS"] == f"{LOADER},xdist"
    assert env["PYTHONPATH"] == f"{PLUGIN_DIR}{os.pathsep}lib"


@pytest.mark.parametrize(
    "grader",
    [
        pytest.param({"command": "node --test"}, id="not pytest"),
        pytest.param({"command": "pytest", "env": {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}}, id="auto-load off"),
    ],
)
def test_a_run_the_guard_loads_no_plugins_for_is_left_as_it_is(grader):
    assert bench._same_plugins(grader) is grader
