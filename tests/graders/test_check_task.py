"""`passhat check-task`: every shipped task validates without a model; broken tasks are named with the reason."""

from __future__ import annotations

import pytest
from conftest import ROOT, SHIPPED_TASKS

from passhat.cli import main

FIX = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n"


def make_task(root, task_id, graders: str, solution: str = FIX):
    folder = root / task_id
    (folder / "repo").mkdir(parents=True)
    (folder / "repo" / "a.txt").write_text("old\n")
    (folder / "solution.patch").write_text(solution)
    (folder / "task.yaml").write_text(f"id: {task_id}\ndescription: d\ntier: simple\nprompt: p\ngraders:\n{graders}")
    return folder


def test_every_shipped_task_is_valid(tmp_path, capsys):
    code = main(["check-task", "--all", "--tasks-dir", str(ROOT / "tasks"), "--state-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"{len(SHIPPED_TASKS)} of {len(SHIPPED_TASKS)} task(s) valid" in out
    assert all(f"ok      {task_id}:" in out for task_id in SHIPPED_TASKS)


def test_a_task_whose_empty_patch_gets_through_is_broken_and_names_the_graders(tmp_path, capsys):
    folder = make_task(tmp_path / "tasks", "lenient", "  - type: tests\n    command: 'true'\n  - type: health\n")
    assert main(["check-task", str(folder), "--state-dir", str(tmp_path / "state")]) == 1
    out = capsys.readouterr().out
    assert (
        "BROKEN  lenient: the empty patch passes every grader (tests#0, health#1): a do-nothing agent would score 100%"
    ) in out
    assert "0 of 1 task(s) valid; 1 broken" in out


def test_a_task_whose_solution_fails_is_broken_with_the_reason(tmp_path, capsys):
    graders = "  - type: files\n    checks: [{path: a.txt, contains: newer}]\n"
    folder = make_task(tmp_path / "tasks", "wrong-fix", graders)
    assert main(["check-task", str(folder), "--state-dir", str(tmp_path / "state")]) == 1
    assert (
        "BROKEN  wrong-fix: solution.patch fails grader files#0: 0/1 file checks hold; a.txt does not contain 'newer'"
    ) in capsys.readouterr().out


def test_a_solution_that_does_not_apply_is_broken(tmp_path, capsys):
    graders = "  - type: files\n    checks: [{path: a.txt, contains: new}]\n"
    folder = make_task(tmp_path / "tasks", "stale", graders, solution=FIX.replace("-old", "-gone"))
    assert main(["check-task", str(folder), "--state-dir", str(tmp_path / "state")]) == 1
    assert "the patch does not apply to the base" in capsys.readouterr().out


def test_a_valid_task_says_which_graders_the_empty_patch_gets_through(tmp_path, capsys):
    graders = "  - type: files\n    checks: [{path: a.txt, contains: new}]\n  - type: diff-scope\n    allow: [a.txt]\n"
    folder = make_task(tmp_path / "tasks", "fine", graders)
    assert main(["check-task", str(folder), "--state-dir", str(tmp_path / "state")]) == 0
    assert (
        "ok      fine: reference passes all 2 graders; empty patch fails files#0 (gets through diff-scope#1)"
        in capsys.readouterr().out
    )


@pytest.mark.parametrize("argv", [["check-task"], ["check-task", "tasks/x", "--all"]], ids=["neither", "both"])
def test_names_or_all_not_both(argv, capsys):
    assert main(argv) == 2
    assert "name task folders (passhat check-task tasks/<id>) or pass --all" in capsys.readouterr().err
