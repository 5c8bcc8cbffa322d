from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from passhat.common._errors import TaskError
from passhat.graders import grader_kinds, load_graded_task
from passhat.tasks._load import Task, load_task, load_tasks

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tasks"
BAD = ROOT / "tests" / "data" / "tasks"  # one tiny folder per failure mode


def test_every_shipped_task_loads():
    tasks = load_tasks(SHIPPED)
    folders = sorted(p.name for p in SHIPPED.iterdir() if (p / "task.yaml").is_file())
    assert [t.id for t in tasks] == folders and len(folders) >= 8
    for task in tasks:
        assert isinstance(task, Task)
        assert task.dir == SHIPPED / task.id
        assert task.repo == task.dir / "repo"
        assert task.repo.is_dir()
        assert task.solution == task.dir / "solution.patch"
        assert task.solution.is_file()
        assert task.prompt.strip()
        assert task.graders
        assert any(g["type"] == "tests" and g["command"] for g in task.graders)
        assert re.fullmatch(r"[0-9a-f]{16}", task.version)


def test_shipped_repos_hold_only_sources():
    junk = {"__pycache__", ".pytest_cache", "node_modules", ".git"}
    found = [p for p in SHIPPED.glob("*/repo/**/*") if p.name in junk or p.suffix == ".pyc"]
    assert found == []


def test_load_task_accepts_the_yaml_file():
    assert load_task(SHIPPED / "py-median" / "task.yaml") == load_task(SHIPPED / "py-median")


def test_only_filters_by_id():
    tasks = load_tasks(SHIPPED, only=["py-rename-var", "bump-version"])
    assert [t.id for t in tasks] == ["bump-version", "py-rename-var"]


def test_only_with_unknown_id_lists_the_known_ones():
    known = ", ".join(sorted(p.name for p in SHIPPED.iterdir() if (p / "task.yaml").is_file()))
    with pytest.raises(TaskError, match=f"no task 'nope'; the tasks there are: {known}"):
        load_tasks(SHIPPED, only=["py-median", "nope"])


def test_empty_tasks_folder(tmp_path):
    with pytest.raises(TaskError, match=r"no tasks found"):
        load_tasks(tmp_path)


def test_missing_tasks_folder(tmp_path):
    with pytest.raises(TaskError, match=r"no such tasks folder"):
        load_tasks(tmp_path / "absent")


@pytest.fixture
def task_copy(tmp_path: Path) -> Path:
    """A copy of a shipped task, safe to mutate."""
    dest = tmp_path / "bump-version"
    shutil.copytree(SHIPPED / "bump-version", dest)
    return dest


def test_version_does_not_depend_on_location(task_copy):
    assert load_task(task_copy).version == load_task(SHIPPED / "bump-version").version


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda d: (d / "repo" / "index.js").write_text("// x\n"), id="repo-file-edited"),
        pytest.param(lambda d: (d / "repo" / "NEW.md").write_text("new\n"), id="repo-file-added"),
        pytest.param(lambda d: (d / "repo" / "CHANGELOG.md").unlink(), id="repo-file-removed"),
        pytest.param(lambda d: (d / "repo" / "index.js").rename(d / "repo" / "x.js"), id="repo-file-renamed"),
        pytest.param(lambda d: (d / "repo" / "index.js").chmod(0o755), id="repo-file-made-executable"),
        pytest.param(
            lambda d: (d / "task.yaml").write_text((d / "task.yaml").read_text().replace("simple", "medium")),
            id="task-yaml-edited",
        ),
    ],
)
def test_version_changes_when_the_task_changes(task_copy, change):
    before = load_task(task_copy).version
    change(task_copy)
    assert load_task(task_copy).version != before


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        pytest.param(
            "wrong-tier",
            "field 'tier': 'easy' is not one of simple, medium, complex, very-complex; use one of those",
            id="wrong-tier",
        ),
        pytest.param("missing-prompt", "field 'prompt' is missing; add the `prompt:`", id="missing-prompt"),
        pytest.param(
            "bad-expect",
            "field 'expect': 'maybe' is not one of possible, impossible; use one of those",
            id="bad-expect",
        ),
        pytest.param(
            "show-tests-not-boolean",
            "field 'show_tests': 'yes' is not true or false; write it as true or false",
            id="show-tests-not-boolean",
        ),
        pytest.param(
            "grader-without-type",
            "field 'graders[0].type' is missing (graders[0] is {'command': 'npm test'}); add it, e.g. `type: tests`",
            id="grader-without-type",
        ),
        pytest.param(
            "tests-grader-without-command",
            "field 'graders[0].command' is missing (graders[0] is {'type': 'tests'}); a tests grader needs",
            id="tests-grader-without-command",
        ),
        pytest.param(
            "grader-timeout-zero",
            "field 'graders[0].timeout_s': 0 must be greater than 0",
            id="grader-timeout-zero",
        ),
        pytest.param("no-graders", "field 'graders': [] is empty; add `graders:`", id="no-graders"),
        pytest.param(
            "unknown-field",
            "field 'timeout' is not a known field (value 60); rename it to 'timeout_s' or remove it",
            id="unknown-field",
        ),
        pytest.param(
            "yaml-syntax-error",
            "YAML syntax error at line 4, column 15: mapping values are not allowed here; fix the YAML",
            id="yaml-syntax-error",
        ),
        pytest.param(
            "id-mismatch",
            "field 'id': 'another-task' does not match the folder name 'id-mismatch'; set `id: id-mismatch`",
            id="id-mismatch",
        ),
        pytest.param("missing-repo", "the task has no repo/ folder (", id="missing-repo"),
        pytest.param(
            "missing-solution",
            "field 'solution': 'solution.patch' is not a file inside the task folder (",
            id="missing-solution",
        ),
    ],
)
def test_bad_task(scenario, message):
    # every message starts with the file, then names the field and the value, then the fix
    with pytest.raises(TaskError, match=re.escape(f"{BAD / scenario / 'task.yaml'}: {message}")):
        load_graded_task(BAD / scenario)  # the task's fields (passhat.tasks), then its graders' (passhat.graders)


HEAD = "id: t\ndescription: d\ntier: simple\nprompt: p\n"
TESTS = "graders: [{type: tests, command: x}]\n"


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        pytest.param(
            "",
            "the file must be a mapping of fields (id, description, tier, prompt, graders), not None",
            id="empty-file",
        ),
        pytest.param("- just\n- a list\n", "the file must be a mapping", id="not-a-mapping"),
        pytest.param(
            HEAD.replace("id: t", "id: Bad_Id") + TESTS,
            "field 'id': 'Bad_Id' does not match ^[a-z0-9][a-z0-9-]*$; use lowercase letters",
            id="bad-id",
        ),
        pytest.param(
            HEAD.replace("prompt: p", "prompt: ''") + TESTS,
            "field 'prompt': '' is empty",
            id="empty-prompt",
        ),
        pytest.param(
            HEAD + "graders: [{type: 3}]\n",
            "field 'graders[0].type': 3 is not a string; write it as a string",
            id="grader-type-not-a-string",
        ),
        pytest.param(
            HEAD + "graders: [{type: judge}]\n",
            f"field 'graders[0].type': 'judge' is not one of {', '.join(grader_kinds())}; use one of those",
            id="unknown-grader-type",
        ),
        pytest.param(
            HEAD + "graders: [{type: tests, command: x, fail_to_pass: [a]}]\n",
            "field 'graders[0]'",
            id="fail-to-pass-without-junit",
        ),
        pytest.param(
            HEAD + "graders: [{type: tests, command: x, comand: y}]\n",
            "field 'graders[0].comand' is not a known field (value 'y'); rename it to 'command' or remove it",
            id="tests-grader-typo",
        ),
        pytest.param(
            HEAD + "timeout_s: soon\n" + TESTS,
            "field 'timeout_s': 'soon' is not a number; write it as a number",
            id="timeout-not-a-number",
        ),
    ],
)
def test_bad_task_yaml(tmp_path, yaml_text, message):
    folder = tmp_path / "t"
    (folder / "repo").mkdir(parents=True)
    (folder / "solution.patch").write_text("")
    (folder / "task.yaml").write_text(yaml_text)
    with pytest.raises(TaskError, match=re.escape(f"{folder / 'task.yaml'}: {message}")):
        load_graded_task(folder)


def test_every_grader_type_loads_as_written(tmp_path):
    folder = tmp_path / "t"
    (folder / "repo").mkdir(parents=True)
    (folder / "solution.patch").write_text("")
    (folder / "task.yaml").write_text(
        HEAD
        + "solution: solution.patch\ngraders:\n"
        + "  - type: files\n    checks: [{path: package.json, key: version, equals: 1.2.4}]\n"
        + "  - type: tests\n    command: make test\n    timeout_s: 60\n"
        + "  - type: diff-scope\n    deny: [tests/**]\n"
        + "  - type: health\n"
    )
    task = load_graded_task(folder)
    assert task.graders == (
        {"type": "files", "checks": [{"path": "package.json", "key": "version", "equals": "1.2.4"}]},
        {"type": "tests", "command": "make test", "timeout_s": 60},
        {"type": "diff-scope", "deny": ["tests/**"]},
        {"type": "health"},
    )
    assert task.setup is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param('network: ["bad host"]\n', "write it as host:port", id="network-not-host-port"),
        pytest.param("limits: {memory: 100}\n", "field 'limits.memory' is not a known field", id="limits-unknown"),
        pytest.param("limits: {memory_mb: 0}\n", "field 'limits.memory_mb'", id="limits-zero"),
    ],
)
def test_network_and_limits_are_validated(task_copy, extra, message):
    (task_copy / "task.yaml").write_text((task_copy / "task.yaml").read_text() + extra)
    with pytest.raises(TaskError, match=re.escape(message)):
        load_task(task_copy)


def test_network_and_limits_load(task_copy):
    text = (task_copy / "task.yaml").read_text() + 'network: ["registry.npmjs.org:443"]\nlimits: {memory_mb: 512}\n'
    (task_copy / "task.yaml").write_text(text)
    task = load_task(task_copy)
    assert task.network == ("registry.npmjs.org:443",) and task.limits == {"memory_mb": 512}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param({"limits": {"ram": 1}}, "'limits.ram': unknown limit; known: processes, memory_mb", id="unknown"),
        pytest.param(
            {"limits": {"processes": -1}}, "'limits.processes': -1: expected a positive whole number", id="neg"
        ),
        pytest.param({"limits": 5}, "'limits': 5: expected a dict", id="not-mapping"),
        pytest.param({"unreachable_after": 0}, "'unreachable_after': 0: use a positive whole number", id="unreachable"),
    ],
)
def test_provider_limits_are_validated(raw, message):
    from passhat.common._errors import PasshatError
    from passhat.trial._config import parse_config

    with pytest.raises(PasshatError, match=re.escape(message)):
        parse_config(raw)
