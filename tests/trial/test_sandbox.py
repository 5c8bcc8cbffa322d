"""Bases are built once per task version; a trial's patch is binary-safe and holds untracked files."""

from __future__ import annotations

import subprocess

import pytest

from passhat._errors import SandboxError
from passhat.tasks._load import load_task
from passhat.trial._outcome import materialize
from passhat.trial._sandbox import collect_outcome, copy_tree, prepare_base


def _files(root):
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
    }


def test_base_is_prepared_once_per_version_and_setup_output_stays_out_of_patches(task_copy, tmp_path):
    folder = task_copy("py-median")
    yaml = folder / "task.yaml"
    yaml.write_text(yaml.read_text() + "setup: echo built >> setup-runs.txt && mkdir -p build && touch build/out\n")
    task = load_task(folder)
    first = prepare_base(task, tmp_path / "cache")
    second = prepare_base(task, tmp_path / "cache")
    assert first == second
    assert (first.path / "setup-runs.txt").read_text() == "built\n"  # setup ran exactly once
    assert collect_outcome(first.path, first).patch == b""  # what setup made is base, not change

    (folder / "repo" / "extra.py").write_text("X = 1\n")  # a new task version gets its own base
    third = prepare_base(load_task(folder), tmp_path / "cache")
    assert third.path != first.path


def test_failing_setup_is_a_sandbox_error_and_leaves_nothing(task_copy, tmp_path):
    folder = task_copy("py-median")
    (folder / "task.yaml").write_text((folder / "task.yaml").read_text() + "setup: echo nope && exit 3\n")
    with pytest.raises(SandboxError, match=r"setup 'echo nope && exit 3' exited 3: nope"):
        prepare_base(load_task(folder), tmp_path / "cache")
    leftovers = [p.name for p in (tmp_path / "cache" / "bases").iterdir() if not p.name.endswith(".lock")]
    assert leftovers == []


def test_outcome_round_trips_edits_new_binary_and_deleted_files(task_copy, tmp_path):
    base = prepare_base(load_task(task_copy("py-median")), tmp_path / "cache")
    work = tmp_path / "work"
    copy_tree(base.path, work)
    (work / "stats_utils" / "median.py").write_text("changed = True\n")
    (work / "stats_utils" / "__init__.py").unlink()
    (work / "notes").mkdir()
    (work / "notes" / "new.txt").write_text("untracked, still part of the outcome\n")
    (work / "logo.bin").write_bytes(bytes(range(256)) * 3)
    outcome = collect_outcome(work, base)
    assert outcome.changed_paths == ("logo.bin", "notes/new.txt", "stats_utils/__init__.py", "stats_utils/median.py")
    rebuilt = materialize(base, outcome.patch, tmp_path / "m")
    assert _files(rebuilt) == _files(work)
    assert _files(base.path) != _files(work)  # the base itself was never touched


def test_a_patch_that_does_not_apply_is_a_clear_error(task_copy, tmp_path):
    base = prepare_base(load_task(task_copy("py-median")), tmp_path / "cache")
    bad = b"diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n"
    with pytest.raises(SandboxError, match="the patch does not apply to the base"):
        materialize(base, bad, tmp_path / "m")
    assert not any((tmp_path / "m").iterdir())


def test_base_commit_is_the_same_on_every_machine(task_copy, tmp_path):
    task = load_task(task_copy("bump-version"))
    one = prepare_base(task, tmp_path / "a")
    two = prepare_base(task, tmp_path / "b")
    assert one.commit == two.commit
    log = subprocess.run(
        ["git", "-c", "safe.directory=*", "log", "--format=%s"], cwd=one.path, capture_output=True, text=True
    ).stdout
    assert log.strip() == "base"
