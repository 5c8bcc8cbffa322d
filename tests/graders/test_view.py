"""The view every grader gets (passhat.graders.view): the final tree and the base read without following any link
out of the tree, listings, the patch and changed paths, the trial's record, the transcript's tool calls and a
confined command — and no path of the tree anywhere in it, so a careless grader cannot `open(view.root / x)`."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path

import pytest
from calc_task import CALC, fix_add, make_trial

from passhat.graders.view import OutcomeView, Tree, UnsafePathError, view_of
from passhat.trial._outcome import TrialOutcome

SECRET = "SECRET-of-the-reference-fix"


@pytest.fixture
def trial(tmp_path):
    return make_trial(tmp_path)


def _view(metadata: dict) -> OutcomeView:
    return view_of(TrialOutcome.from_metadata(metadata))


def _agent_links_out(work: Path) -> None:
    """The hostile agent: the fix, plus links out of the tree at the reference fix, and one link inside it."""
    fix_add(work)
    target = work.parent / "tasks" / "calc" / "solution.patch"
    target.write_text(f"{SECRET}\n")
    (work / "notes.txt").symlink_to(target)
    (work / "docs").symlink_to(target.parent)  # a folder link out
    (work / "alias.py").symlink_to("calc.py")  # inside the tree


def _strings(value: object, seen: set[int]) -> list[str]:
    """Every str and Path reachable from `value` (attributes, dataclass fields, mappings, sequences)."""
    if id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, str | Path):
        return [str(value)]
    if isinstance(value, bytes):
        return [value.decode(errors="replace")]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in _strings(getattr(value, f.name), seen)]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in _strings(k, seen) + _strings(v, seen)]
    if isinstance(value, tuple | list):
        return [s for item in value for s in _strings(item, seen)]
    return [s for item in getattr(value, "__dict__", {}).values() for s in _strings(item, seen)]


def test_no_path_of_the_tree_is_reachable_from_the_view(trial, tmp_path):
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(
        json.dumps({"type": "AssistantMessage", "content": [{"id": "t", "name": "Read", "input": {}}]})
    )
    metadata = trial(fix_add, run={"num_turns": 2, "transcript_path": str(transcript), "trial_dir": str(tmp_path)})
    view = _view(metadata)
    tree = TrialOutcome.from_metadata(metadata).tree()
    assert view.read("calc.py") is not None  # the tree is built: its path exists
    with pytest.raises(AttributeError):
        view.root  # noqa: B018 - the careless grader's `open(view.root / name)`
    with pytest.raises(TypeError, match="must have __dict__"):
        vars(view)  # no instance dict: nothing stored on the view
    found = []
    for name in dir(view):
        if name.startswith("__"):
            continue
        value = getattr(view, name)
        if callable(value):
            continue
        found += _strings(value, set())
    where = (str(tree), str(Path(metadata["base_dir"])), metadata["task_dir"], metadata["patch_path"])
    assert found and not [text for text in found for path in where if path in text]
    with pytest.raises(TypeError, match="made by passhat"):
        OutcomeView()


def test_a_link_out_of_the_tree_reads_as_a_link_never_as_its_target(trial):
    view = _view(trial(_agent_links_out))
    target = view.readlink("notes.txt")
    assert target is not None and target.endswith("solution.patch") and view.is_link("notes.txt")
    assert view.entry("notes.txt").kind == "symlink" and view.exists("notes.txt") and not view.is_file("notes.txt")
    for read in (view.read, view.text):
        with pytest.raises(UnsafePathError, match=rf"notes\.txt is a symlink to {target} outside the tree"):
            read("notes.txt")
    with pytest.raises(UnsafePathError, match=r"docs/solution\.patch leads to docs, a symlink to .* outside the tree"):
        view.read("docs/solution.patch")
    with pytest.raises(UnsafePathError, match="docs is a symlink; a listing does not follow links"):
        view.listdir("docs")
    assert view.read("alias.py") == view.read("calc.py")  # a link inside the tree is followed inside it
    assert view.listdir() == [".git", "alias.py", "calc.py", "docs", "notes.txt", "pytest.ini", "tests"]
    assert view.files("*.py") == ["alias.py", "calc.py", "tests/test_calc.py"]  # links listed, not entered
    assert view.read("missing.txt") is None and view.read("tests") is None  # nothing there / a folder
    for bad in ("/etc/passwd", "../calc/solution.patch"):
        with pytest.raises(UnsafePathError, match="not a relative path inside the tree"):
            view.read(bad)


def test_the_final_tree_the_base_the_patch_and_its_paths(trial):
    view = _view(trial(fix_add))
    assert isinstance(view.base, Tree) and not isinstance(view.base, OutcomeView)
    assert view.base.text("calc.py") == CALC and view.text("calc.py") == CALC.replace("a - b", "a + b", 1)
    assert view.changed_paths == ("calc.py",) and (view.lines_added, view.lines_removed) == (1, 1)
    assert view.patch.startswith(b"diff --git a/calc.py b/calc.py")
    empty = _view(trial())
    assert (empty.changed_paths, empty.patch, empty.lines_added) == ((), b"", 0)


def test_the_record_and_the_tool_calls(trial, tmp_path):
    transcript = tmp_path / "transcript.jsonl"
    messages = [  # as the provider writes the Agent SDK's messages (passhat.trial._agent._jsonable)
        {"type": "SystemMessage", "subtype": "init", "data": {}},
        {"type": "AssistantMessage", "content": [{"text": "Let me look."},
                                                 {"id": "t1", "name": "Bash", "input": {"command": "ls"}}]},
        {"type": "UserMessage", "content": [{"tool_use_id": "t1", "content": "calc.py\ntests", "is_error": None}]},
        {"type": "AssistantMessage", "content": [{"id": "t2", "name": "Edit", "input": {"file_path": "/w/calc.py"}}]},
        {"type": "UserMessage", "content": [{"tool_use_id": "t2", "content": [{"type": "text", "text": "no"}],
                                             "is_error": True}]},
        {"type": "ResultMessage", "num_turns": 3},
    ]  # fmt: skip
    transcript.write_text("\n".join(json.dumps(m) for m in messages) + '\n{"type": "Assistant')  # a cut last line
    run = {"task_id": "calc", "status": "ok", "subtype": "success", "num_turns": 3, "cost_usd": 0.25,
           "permission_denials": 1, "wall_s": 12.5, "output": "Fixed add.", "transcript_path": str(transcript)}  # fmt: skip
    view = _view(trial(fix_add, run=run))
    record = view.record
    assert (record.task_id, record.status, record.turns, record.cost_usd) == ("calc", "ok", 3, 0.25)
    assert (record.permission_denials, record.duration_s, record.final_text) == (1, 12.5, "Fixed add.")
    bash, edit = view.tool_calls
    assert (bash.name, dict(bash.input), bash.result, bash.is_error) == (
        "Bash",
        {"command": "ls"},
        "calc.py\ntests",
        False,
    )
    assert (edit.name, edit.result, edit.is_error) == ("Edit", "no", True)
    with pytest.raises(TypeError):
        bash.input["command"] = "rm -rf /"  # type: ignore[index]  # read-only
    assert _view(trial()).tool_calls == () and _view(trial()).record.status is None  # no trial behind it


def test_run_is_confined_to_a_private_copy_without_passhats_environment(trial, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-for-the-agent")
    view = _view(trial(fix_add))
    ran = view.run("python -c 'import calc; print(calc.add(2, 3))'; echo x > made.txt; echo key=$ANTHROPIC_API_KEY")
    assert ran.ok and ran.output.split() == ["5", "key="]
    assert view.read("made.txt") is None  # the command wrote to its own copy, never the shared tree
    assert view.run("echo $TZ", env={"TZ": "UTC"}).output.strip() == "UTC"
    slow = view.run("sleep 30", timeout_s=1)
    assert slow.timed_out and not slow.ok and slow.code is None
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-ant-not-for-the-agent"
