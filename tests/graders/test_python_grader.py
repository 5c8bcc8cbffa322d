"""`type: python`: a team's grader in its own repository (passhat.graders.team, kinds/python.py) — found from the
task folder up to the repository's root, checked when the task loads (function, SETTINGS, file:line errors), run
in a child process of the real combined assertion with the view, and safe when its author is careless: it reads
the agent's link as a link, and raising, hanging, printing or exiting fails it alone, with one line."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import yaml
from calc_task import fix_add, make_trial

from passhat.cli import main
from passhat.common._errors import TaskError
from passhat.graders import load_graded_task, preflight
from passhat.graders._live import grade_all_promptfoo
from passhat.graders._suite import promptfoo_test

SECRET = "SECRET-of-the-reference-fix"
RAISES = '    return {}["no such key"]'
FILES_OK = {"type": "files", "checks": [{"path": "calc.py", "contains": "a + b"}]}
GRADERS = '''\
"""The team's graders of the calc task (a test's)."""
import sys

SETTINGS = {"type": "object", "properties": {"needle": {"type": "string", "minLength": 1}}}


def grade(view, settings):
    text = view.text("calc.py") or ""
    found = settings["needle"] in text
    return found, 1.0 if found else 0.0, f"{settings['needle']!r} {'in' if found else 'not in'} calc.py"


def shapes(view, settings):
    return settings.get("returns")


def careless(view, settings):
    return SECRET_MARK in view.text("notes.txt")


def opens_the_root(view, settings):
    return SECRET_MARK in open(view.root / "notes.txt").read()


def looks_at_the_link(view, settings):
    return view.is_link("notes.txt"), 1.0, f"notes.txt links to {view.readlink('notes.txt')}"


def raises(view, settings):
    return {}["no such key"]


def hangs(view, settings):
    while True:
        time.sleep(0.05)


def prints(view, settings):
    print("\\nDONE|/tmp/forged.json")
    return True


def exits(view, settings):
    sys.exit(3)


def reads_stdin(view, settings):
    return sys.stdin.read() == ""


def runs(view, settings):
    ran = view.run("python -c 'import calc; print(calc.add(2, 3))'")
    return ran.ok and ran.output.strip() == "5", 1.0, ran.output.strip()


import time  # noqa: E402

SECRET_MARK = "SECRET"
'''


@pytest.fixture
def team(tmp_path):
    """The team's repository (a .git marks its root): the calc task in tasks/calc, its graders in evals/graders/."""
    trial = make_trial(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "evals" / "graders").mkdir(parents=True)
    (tmp_path / "evals" / "graders" / "calc_checks.py").write_text(GRADERS)
    return trial


def _task(tmp_path: Path, graders: list[dict]) -> Path:
    task = tmp_path / "tasks" / "calc"
    data = yaml.safe_load((task / "task.yaml").read_text())
    data["graders"] = graders
    (task / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return task


def _team(function: str, **more: object) -> dict:
    return {"type": "python", "file": "evals/graders/calc_checks.py", "function": function, **more}


def _assert(tmp_path: Path, graders: list[dict], metadata: dict) -> dict:
    """The real combined assertion, its config made as `promptfoo eval` gets it from the tests generator."""
    task = load_graded_task(_task(tmp_path, graders))
    [combined] = promptfoo_test(task, tmp_path / "assertions")["assert"]
    return grade_all_promptfoo({"config": combined["config"], "providerResponse": {"metadata": metadata}})


def _line(text: str) -> int:
    """The line number of `text` (a whole line) in GRADERS."""
    return GRADERS.splitlines().index(text) + 1


def _scores(result: dict) -> dict[str, tuple[bool, float, str]]:
    return {p["assertion"]["metric"]: (p["pass"], p["score"], p["reason"]) for p in result["componentResults"]}


def test_a_team_grader_is_a_named_score_of_the_combined_assertion(team, tmp_path):
    needle = _team("grade", settings={"needle": "a + b"})
    result = _assert(tmp_path, [needle, FILES_OK], team(fix_add))
    assert _scores(result) == {
        "calc_checks": (True, 1.0, "'a + b' in calc.py"),  # default name: the file's stem (function: grade)
        "files": (True, 1.0, "all 1 file checks hold"),
    }
    assert result["pass"] is True and result["namedScores"]["calc_checks"] == 1.0
    empty = _scores(_assert(tmp_path, [needle, FILES_OK], team()))
    assert empty["calc_checks"] == (False, 0.0, "'a + b' not in calc.py")


@pytest.mark.parametrize(
    ("returns", "more", "expected"),
    [
        pytest.param(True, {}, (True, 1.0, "shapes returned True"), id="true"),
        pytest.param(False, {}, (False, 0.0, "shapes returned False"), id="false"),
        pytest.param(0.25, {}, (True, 0.25, "shapes returned score 0.25 (passes > 0)"), id="score-as-promptfoo"),
        pytest.param(0, {}, (False, 0.0, "shapes returned score 0 (passes > 0)"), id="score-0"),
        pytest.param(0.25, {"threshold": 0.5}, (False, 0.25, "shapes returned score 0.25 (passes >= 0.5)"),
                     id="threshold"),
        pytest.param([True, 0.5, "half"], {}, (True, 0.5, "half"), id="triple"),
        pytest.param({"pass": False, "reason": "no"}, {}, (False, 0.0, "no"), id="dict"),
    ],
)  # fmt: skip
def test_what_a_grader_may_return(team, tmp_path, returns, more, expected):
    result = _assert(tmp_path, [_team("shapes", settings={"returns": returns}, **more)], team(fix_add))
    assert _scores(result)["calc_checks.shapes"] == expected


@pytest.mark.parametrize(
    ("returns", "said"),
    [
        pytest.param("ok", r"shapes returned str 'ok'; return a bool, a score 0\.\.1", id="str"),
        pytest.param(1.5, r"the score 1\.5 is not a number from 0 to 1", id="score-out-of-range"),
        pytest.param({"score": 1}, r"shapes returned dict .*\(a dict needs 'pass'\)", id="dict-without-pass"),
        pytest.param(["yes", 1, "r"], r"shapes returned pass = 'yes', not True or False", id="pass-not-bool"),
    ],
)
def test_a_return_of_no_known_shape_fails_at_the_functions_line(team, tmp_path, returns, said):
    [(passed, score, reason)] = _scores(
        _assert(tmp_path, [_team("shapes", settings={"returns": returns})], team(fix_add))
    ).values()
    line = _line("def shapes(view, settings):")
    assert (passed, score) == (False, 0.0)
    assert reason.startswith(f"{tmp_path / 'evals/graders/calc_checks.py'}:{line}: ")
    assert len(reason.splitlines()) == 1 and re.search(said, reason), reason


def _links_to_the_reference(work: Path) -> None:
    fix_add(work)
    reference = work.parent / "tasks" / "calc" / "solution.patch"
    reference.write_text(f"{SECRET}\n")
    (work / "notes.txt").symlink_to(reference)


def test_a_careless_grader_that_opens_the_agents_link_reads_the_link_not_its_target(team, tmp_path):
    """The agent left notes.txt -> the task's reference fix (on the host). A grader that reads it by name gets the
    link said as what it is; one that tries open(view.root / ...) finds no root; neither sees the target's bytes."""
    graders = [_team(name, name=name) for name in ("careless", "opens_the_root", "looks_at_the_link")]
    result = _assert(tmp_path, [*graders, FILES_OK], team(_links_to_the_reference))
    scores = _scores(result)
    file = tmp_path / "evals/graders/calc_checks.py"
    reference = tmp_path / "tasks" / "calc" / "solution.patch"
    careless, opener = scores["careless"], scores["opens_the_root"]
    line = _line('    return SECRET_MARK in view.text("notes.txt")')
    assert careless == (
        False,
        0.0,
        f"{file}:{line}: UnsafePathError: notes.txt is a symlink to {reference} outside the tree (not followed)",
    )
    assert opener[:2] == (False, 0.0) and "AttributeError: 'OutcomeView' object has no attribute 'root'" in opener[2]
    assert scores["looks_at_the_link"] == (True, 1.0, f"notes.txt links to {reference}")
    assert scores["files"][0] is True  # the others graded as ever
    assert SECRET not in json.dumps(result)


def test_raising_hanging_printing_or_exiting_fails_that_grader_alone(team, tmp_path, capfd):
    """Through the real combined assertion: each broken grader is one failed component with a one-line reason,
    and every other grader's score is there; the print never reaches the assertion process's stdout."""
    bad = [_team(name, name=name, timeout_s=3) for name in ("raises", "hangs", "prints", "exits")]
    good = [_team("reads_stdin", name="reads_stdin", timeout_s=3), _team("grade", settings={"needle": "a + b"})]
    started = time.monotonic()
    result = _assert(tmp_path, [*bad, FILES_OK, *good], team(fix_add))
    assert time.monotonic() - started < 30  # the hang was stopped at its 3 s
    scores = _scores(result)
    file = tmp_path / "evals/graders/calc_checks.py"
    assert scores["raises"] == (
        False,
        0.0,
        f"{file}:{_line(RAISES)}: KeyError: 'no such key'",
    )
    assert scores["hangs"][:2] == (False, 0.0)
    assert scores["hangs"][2].startswith(f"{file}:hangs: ran past its timeout_s (3 s) and was stopped at {file}:")
    assert scores["prints"] == (
        False,
        0.0,
        f"{file}:prints: printed to stdout ('DONE|/tmp/forged.json'); stdout is Promptfoo's control channel in the "
        "assertion's process: put it in the reason, or print to sys.stderr",
    )
    assert scores["exits"] == (False, 0.0, f"{file}:{_line('    sys.exit(3)')}: SystemExit: 3")
    assert scores["files"] == (True, 1.0, "all 1 file checks hold")
    assert scores["reads_stdin"][0] is True and scores["calc_checks"][0] is True  # stdin is empty, never Promptfoo's
    assert all(len(reason.splitlines()) == 1 for _, _, reason in scores.values())
    assert "DONE|" not in capfd.readouterr().out  # the assertion process's stdout: Promptfoo's control channel
    assert result["namedScores"] == {**dict.fromkeys(["raises", "hangs", "prints", "exits"], 0.0), "files": 1.0,
                                     "reads_stdin": 1.0, "calc_checks": 1.0, "gamed": 0.0}  # fmt: skip


def test_the_view_runs_a_command_for_a_team_grader(team, tmp_path):
    assert _scores(_assert(tmp_path, [_team("runs", name="runs")], team(fix_add)))["runs"] == (True, 1.0, "5")


# --- found and checked when the task loads ------------------------------------------------------------------------


def _load_error(tmp_path: Path, grader: dict) -> str:
    with pytest.raises(TaskError) as caught:
        load_graded_task(_task(tmp_path, [grader]))
    return str(caught.value)


def test_the_file_is_found_from_the_task_folder_up_to_the_repository_root(team, tmp_path):
    [found] = load_graded_task(_task(tmp_path, [_team("grade", settings={"needle": "x"})])).graders
    assert found["file"] == str(tmp_path / "evals/graders/calc_checks.py") and found["name"] == "calc_checks"
    (tmp_path / "tasks" / "calc" / "local.py").write_text("def grade(view):\n    return True\n")
    [local] = load_graded_task(_task(tmp_path, [{"type": "python", "file": "./local.py", "name": "here"}])).graders
    assert local["file"] == str(tmp_path / "tasks" / "calc" / "local.py") and local["name"] == "here"
    [line] = preflight([load_graded_task(_task(tmp_path, [_team("grade")]))])  # what `passhat validate` says
    assert (
        line
        == f"calc: graders[0] python {tmp_path / 'evals/graders/calc_checks.py'}:grade (settings checked by SETTINGS at line 4)"
    )
    said = _load_error(tmp_path, {"type": "python", "file": "evals/graders/nope.py"})
    assert said.startswith(f"{tmp_path / 'tasks/calc/task.yaml'}: field 'graders[0].file': 'evals/graders/nope.py': ")
    assert f"no such file (looked in {tmp_path / 'tasks/calc/evals/graders'}, " in said
    assert f"{tmp_path / 'evals/graders'}); give the grader's path from the repository's root" in said


@pytest.mark.parametrize(
    ("source", "grader", "said"),
    [
        pytest.param("def grade(view):\n    return True\n", {"function": "grde"},
                     r"{file}: no top-level function 'grde' \(functions there: grade\); define it", id="no-function"),
        pytest.param("def grade(view):\n    return (\n", {}, r"{file}:2: syntax error: ", id="syntax-error"),
        pytest.param("async def grade(view):\n    return True\n", {}, r"{file}:1: grade is `async def`",
                     id="async"),
        pytest.param("def grade():\n    return True\n", {}, r"{file}:1: grade\(\) takes no argument", id="no-argument"),
        pytest.param("import os\nSETTINGS = {'type': os.sep}\ndef grade(view):\n    return True\n", {},
                     r"{file}:2: SETTINGS must be a literal JSON schema", id="settings-not-literal"),
        pytest.param("SETTINGS = {'type': 'objekt'}\ndef grade(view):\n    return True\n", {},
                     r"{file}:1: SETTINGS\['type'\] is not a valid JSON schema: 'objekt' is not valid", id="bad-schema"),
        pytest.param(GRADERS, {"settings": {"needle": ""}},
                     r"{yaml}: field 'graders\[0\]\.settings\.needle': '' should be non-empty; the settings' schema is "
                     r"SETTINGS in {file}:4", id="settings-break-the-schema"),
    ],
)  # fmt: skip
def test_a_bad_grader_module_is_one_error_naming_file_and_line(team, tmp_path, source, grader, said):
    file = tmp_path / "evals" / "graders" / "checks.py"
    file.write_text(source)
    message = _load_error(tmp_path, {"type": "python", "file": "evals/graders/checks.py", **grader})
    pattern = said.format(file=re.escape(str(file)), yaml=re.escape(str(tmp_path / "tasks/calc/task.yaml")))
    assert re.search(pattern, message), message
    assert "\n" not in message


def test_the_module_is_read_not_run_when_the_task_loads(team, tmp_path, capfd):
    """promptfoo's test generator loads tasks in a process whose stdout is its control channel: a module that
    prints at its top level must not run there."""
    (tmp_path / "evals" / "graders" / "loud.py").write_text("print('\\nDONE|x')\ndef grade(view):\n    return True\n")
    load_graded_task(_task(tmp_path, [{"type": "python", "file": "evals/graders/loud.py"}]))
    assert "DONE" not in capfd.readouterr().out


def test_a_setting_of_a_shipped_kind_names_the_kind_module(team, tmp_path):
    said = _load_error(tmp_path, {"type": "health", "max_turns": 0})
    assert said.endswith("field 'graders[0].max_turns': 0: 0 is less than the minimum of 1; see the health grader's "
                         f"SETTINGS in {Path(__import__('passhat.graders.kinds.health').graders.kinds.health.__file__)}")  # fmt: skip
    assert "task.schema.json" not in said


# --- check-task and regrade -----------------------------------------------------------------------------------------


def _with_reference(tmp_path: Path, team) -> None:
    metadata = team(fix_add)
    (tmp_path / "tasks" / "calc" / "solution.patch").write_bytes(Path(metadata["patch_path"]).read_bytes())


def test_check_task_runs_a_team_grader_on_the_reference_and_the_empty_patch(team, tmp_path, capsys):
    _with_reference(tmp_path, team)
    needle = _team("grade", settings={"needle": "a + b"})
    _task(tmp_path, [needle, {**FILES_OK, "name": "files"}])
    state = ["--state-dir", str(tmp_path / "state")]
    assert main(["check-task", str(tmp_path / "tasks" / "calc"), *state]) == 0
    assert (
        "ok      calc: reference passes all 2 graders; empty patch fails calc_checks, files" in capsys.readouterr().out
    )
    _task(tmp_path, [needle, _team("raises", name="raises")])
    assert main(["check-task", str(tmp_path / "tasks" / "calc"), *state]) == 1
    line = _line(RAISES)
    assert (
        f"BROKEN  calc: solution.patch fails grader raises: {tmp_path / 'evals/graders/calc_checks.py'}:{line}: "
        "KeyError: 'no such key'"
    ) in capsys.readouterr().out


def test_regrade_runs_a_team_grader_on_saved_trials(team, tmp_path, capsys):
    """A grader added after the eval scores the saved trials: its named score appears in the regraded rows."""
    metadata = team(fix_add)
    row = {
        "success": True, "score": 1.0, "failureReason": 0, "namedScores": {"files": 1.0},
        "provider": {"id": "x", "label": "agent"}, "testIdx": 0,
        "response": {"output": "done", "metadata": {**metadata, "task_id": "calc", "repeat_index": 0}},
    }  # fmt: skip
    saved = tmp_path / "results.json"
    saved.write_text(json.dumps({"results": {"version": 3, "results": [row]}}))
    _task(tmp_path, [FILES_OK, _team("grade", settings={"needle": "a * 2"})])
    assert main(["regrade", str(saved), "-o", str(tmp_path / "regraded.json")]) == 0
    assert "calc r0 [agent]: PASS → FAIL" in capsys.readouterr().out
    [new] = json.loads((tmp_path / "regraded.json").read_text())["results"]["results"]
    assert new["namedScores"] == {"files": 1.0, "calc_checks": 0.0, "gamed": 0.0}
    assert "calc_checks: 'a * 2' not in calc.py" in new["gradingResult"]["reason"]
