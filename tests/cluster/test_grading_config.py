"""Where the tests grader runs: its config's executor fields, else PASSHAT_GRADER_EXECUTOR / PASSHAT_RAY_ADDRESS,
else the trial's cluster; one clear error per bad value; an unreachable cluster is an infra error, never a fail."""

from __future__ import annotations

import importlib.util
import shutil
import socket

import pytest
from conftest import TASKS

from passhat.cluster import Executor, grader_executor
from passhat.common._errors import GradingInfraError, PasshatError, TaskError

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray: pip install -e '.[ray]'")
TESTS = {"type": "tests", "command": "python -m pytest -q"}


@pytest.fixture(autouse=True)
def _no_executor_env(monkeypatch):
    for name in ("PASSHAT_GRADER_EXECUTOR", "PASSHAT_RAY_ADDRESS"):
        monkeypatch.delenv(name, raising=False)


def test_local_is_the_default_even_after_a_trial_on_ray():
    assert grader_executor(TESTS) == Executor("local")
    assert grader_executor(TESTS, trial_address="127.0.0.1:6379") == Executor("local")  # grading on Ray is asked for


@pytest.mark.parametrize(
    ("config", "env", "trial", "expected"),
    [
        pytest.param({"executor": "ray"}, {}, None, Executor("ray", "auto"), id="config-auto"),
        pytest.param({"executor": "ray"}, {}, "10.0.0.5:6379", Executor("ray", "10.0.0.5:6379"), id="trial-address"),
        pytest.param(
            {"executor": "ray"},
            {"PASSHAT_RAY_ADDRESS": "10.0.0.6:6379"},
            "10.0.0.5:6379",
            Executor("ray", "10.0.0.6:6379"),
            id="env-address-over-trial",
        ),
        pytest.param(
            {"executor": "ray", "ray_address": "h:1"},
            {"PASSHAT_RAY_ADDRESS": "10.0.0.6:6379"},
            None,
            Executor("ray", "h:1"),
            id="config-address-over-env",
        ),
        pytest.param(
            {}, {"PASSHAT_GRADER_EXECUTOR": "ray"}, "10.0.0.5:6379", Executor("ray", "10.0.0.5:6379"), id="env-executor"
        ),
        pytest.param(
            {"executor": "local"}, {"PASSHAT_GRADER_EXECUTOR": "ray"}, None, Executor("local"), id="config-over-env"
        ),
        pytest.param(
            {"executor": "ray", "ray_num_cpus": 0.5, "ray_memory_mb": 512},
            {},
            None,
            Executor("ray", "auto", 0.5, 512),
            id="resources",
        ),
        pytest.param(
            {},
            {"PASSHAT_GRADER_EXECUTOR": " ", "PASSHAT_RAY_ADDRESS": "x"},
            None,
            Executor("local"),
            id="blank-env-is-unset",
        ),
    ],
)
def test_where_the_run_goes(monkeypatch, config, env, trial, expected):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert grader_executor({**TESTS, **config}, trial_address=trial) == expected


@pytest.mark.parametrize(
    ("config", "env", "match"),
    [
        pytest.param(
            {"executor": "rya"},
            {},
            r"^tests grader field 'executor': 'rya': did you mean 'ray'\? use local "
            r"\(tests grader runs on this machine, the default\) or ray \(each tests grader run a Ray task",
            id="typo",
        ),
        pytest.param(
            {},
            {"PASSHAT_GRADER_EXECUTOR": "cluster"},
            r"^environment variable PASSHAT_GRADER_EXECUTOR: "
            r"'cluster': use local",
            id="env-typo",
        ),
        pytest.param(
            {},
            {"PASSHAT_GRADER_EXECUTOR": "ray", "PASSHAT_RAY_ADDRESS": "head"},
            r"^environment variable PASSHAT_RAY_ADDRESS: 'head': use auto .* or the head node's HOST:PORT",
            id="env-address",
        ),
        pytest.param(
            {"executor": "ray", "ray_address": "h:0"},
            {},
            r"^tests grader field 'ray_address': 'h:0': use "
            "auto",
            id="port-0",
        ),
        pytest.param(
            {"ray_address": "h:1"},
            {},
            r"^tests grader field 'ray_address': 'h:1': only read with "
            r"`executor: ray`; set executor: ray or remove it",
            id="stray",
        ),
        pytest.param(
            {"executor": "ray", "ray_num_cpus": -1},
            {},
            r"^tests grader field 'ray_num_cpus': -1: use the "
            "CPUs one tests grader run holds on its node",
            id="cpus",
        ),
        pytest.param(
            {"executor": "ray", "ray_memory_mb": "4G"},
            {},
            r"^tests grader field 'ray_memory_mb': '4G': use "
            "the MB of memory Ray reserves per tests grader run, a whole number",
            id="memory",
        ),
    ],
)
def test_bad_values_name_the_field_the_value_and_the_fix(monkeypatch, config, env, match):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(PasshatError, match=match):
        grader_executor({**TESTS, **config})


def test_task_yaml_refuses_an_unknown_executor(task_copy):
    from passhat.graders import load_graded_task as load_task

    task_dir = task_copy("py-median")
    text = (task_dir / "task.yaml").read_text()
    (task_dir / "task.yaml").write_text(text.replace("  - type: tests\n", "  - type: tests\n    executor: rya\n", 1))
    with pytest.raises(TaskError, match=r"field 'graders\[0\]\.executor': 'rya' is not one of local, ray"):
        load_task(task_dir)


def _suite(folder) -> str:
    shutil.copytree(TASKS / "py-median", folder / "tasks" / "py-median")
    shutil.copy(TASKS / "promptfoo_tests.py", folder / "tasks" / "promptfoo_tests.py")
    (folder / "promptfooconfig.yaml").write_text(
        "prompts: ['{{prompt}}']\nproviders:\n  - id: file://p/claude_code.py\n"
        "tests: file://tasks/promptfoo_tests.py:generate_tests\n"
    )
    (folder / "p").mkdir()
    (folder / "p" / "claude_code.py").write_text("from passhat.promptfoo import call_api\n")
    return str(folder / "promptfooconfig.yaml")


def test_validate_names_a_bad_grader_executor_and_exits_2(tmp_path, capsys, monkeypatch):
    from passhat.cli import main

    monkeypatch.setenv("PASSHAT_GRADER_EXECUTOR", "rya")
    assert main(["validate", _suite(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "task.yaml: graders[0]: environment variable PASSHAT_GRADER_EXECUTOR: 'rya': did you mean 'ray'?" in err


def test_validate_asks_the_grading_cluster_before_the_first_trial(tmp_path, capsys, monkeypatch):
    from passhat.cli import main

    monkeypatch.setenv("PASSHAT_GRADER_EXECUTOR", "ray")
    monkeypatch.setenv("PASSHAT_RAY_ADDRESS", f"127.0.0.1:{_dead_port()}")
    assert main(["validate", _suite(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "tests graders with executor: ray: their ray_address (the grader's `ray_address:`, else PASSHAT_RAY_" in err
    assert "cannot reach the Ray cluster" in err and "start the cluster (`ray start --head`)" in err


def _dead_port() -> int:
    with socket.socket() as probe:  # bound, never listening: a connection is refused at once
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_cluster_is_an_infra_error_raised_into_promptfoo(tmp_path):
    """Not a failed grade: the one assertion raises, Promptfoo records `Error running Python script`."""
    from passhat.graders._live import grade_all_promptfoo

    patch = tmp_path / "patch.diff"
    patch.write_bytes((TASKS / "py-median" / "solution.patch").read_bytes())
    metadata = {"task_dir": str(TASKS / "py-median"), "base_dir": str(tmp_path / "cache" / "bases" / "b"),
                "patch_path": str(patch), "executor": "ray", "ray_address": f"127.0.0.1:{_dead_port()}"}  # fmt: skip
    context = {"providerResponse": {"metadata": metadata}, "config": {"graders": [{**TESTS, "executor": "ray"}]}}
    with pytest.raises(GradingInfraError) as raised:
        grade_all_promptfoo(context)
    message = str(raised.value)
    assert message.startswith("infrastructure error: the tests grader of task py-median on Ray: ray: cannot reach "
                              f"the Ray cluster at ray_address '{metadata['ray_address']}'"), message  # fmt: skip


def test_a_row_whose_grading_raised_is_read_as_an_infra_error(tmp_path):
    """What Promptfoo 0.123 saves for an assertion that raised (python-shell's last traceback line)."""
    import json

    from passhat.results import load_trials

    error = ("Error running Python script: passhat.common._errors.GradingInfraError: infrastructure error: the tests grader "
             "of task py-median on Ray: ray: the Ray node running the tests grader died")  # fmt: skip
    row = {"success": False, "failureReason": 1, "error": error, "provider": {"id": "p"}, "score": 0,
           "response": {"output": "done", "metadata": {"task_id": "py-median", "repeat_index": 0}}}  # fmt: skip
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"results": {"version": 3, "results": [row]}}))
    [trial] = load_trials(path)
    assert trial.infra_error and not trial.passed
