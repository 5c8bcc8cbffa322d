"""Sandboxes in O(what changed): an overlay on the shared base as root, a copy otherwise — same patches.

The overlay tests run where passhat runs as root (as CI does). There the overlay must be the path taken:
a fallback to the copy would pass every other test while each trial copies the whole repository again
(set PASSHAT_TEST_NO_OVERLAY=1 to skip them on a root machine whose kernel refuses overlay mounts).
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SHIPPED_TASKS, TASKS
from test_confinement import attack, needs_bwrap, seen_by_model

from passhat.tasks._load import load_task
from passhat.trial import _git, _sandbox
from passhat.trial._git import git
from passhat.trial._isolation import as_root
from passhat.trial._limits import Limits
from passhat.trial._outcome import TrialOutcome
from passhat.trial._sandbox import (
    MIN_UID,
    AgentTreeError,
    base_uid,
    close_sandbox,
    collect_outcome,
    open_sandbox,
    prepare_base,
)

overlay_here = pytest.mark.skipif(
    not as_root() or os.environ.get("PASSHAT_TEST_NO_OVERLAY") == "1",
    reason="overlay sandboxes need passhat to run as root (CI does); PASSHAT_TEST_NO_OVERLAY=1 skips them",
)


def _task(tmp_path: Path, files: dict[str, str], setup: str | None = None) -> Path:
    folder = tmp_path / "tasks" / "edge"
    for rel, text in files.items():
        (folder / "repo" / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / "repo" / rel).write_text(text)
    (folder / "solution.patch").write_text("")
    yaml = "id: edge\ndescription: d\ntier: simple\nprompt: p\ngraders:\n  - type: tests\n    command: x\n"
    (folder / "task.yaml").write_text(yaml + (f"setup: {setup}\n" if setup else ""))
    return folder


def _both(base, tmp_path: Path, change, limits: Limits | None = None) -> tuple[bytes, bytes, tuple[str, ...]]:
    """The patch of `change` made on an overlay sandbox and on a copy sandbox of `base` (and its paths)."""
    patches = []
    for overlay in (True, False):
        sandbox = open_sandbox(base.path, tmp_path / "sandboxes" / f"s-{overlay}", overlay, base.path / ".git")
        try:
            assert sandbox.overlay is overlay, _sandbox.overlay_refused
            change(sandbox.work)
            patches.append(collect_outcome(sandbox.work, base, limits, sandbox.upper, sandbox.git_dir))
        finally:
            close_sandbox(sandbox.root)
    return patches[0].patch, patches[1].patch, patches[0].changed_paths


def _git_init_with_commit(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "inner.txt").write_text("inner\n")
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "inner")):
        git(folder, *args)


# --- the same patch on both paths -----------------------------------------------------------------------


@overlay_here
@pytest.mark.parametrize("task_id", SHIPPED_TASKS)
def test_every_shipped_solution_collects_to_the_same_patch_on_an_overlay_and_a_copy(tmp_path, task_id):
    base = prepare_base(load_task(TASKS / task_id), tmp_path / "cache")
    solution = (TASKS / task_id / "solution.patch").read_bytes()
    overlay, copy, _ = _both(base, tmp_path, lambda work: git(work, "apply", "--binary", "-", input=solution))
    assert overlay == copy
    assert overlay.startswith(b"diff --git ")


def _edges(work: Path) -> None:
    """Every kind of change the upper dir can hold."""
    (work / "keep.txt").write_text("edited\n")
    (work / "del.txt").unlink()
    subprocess.run(["rm", "-rf", str(work / "dir_gone")], check=True)  # a deleted folder: one whiteout
    subprocess.run(["rm", "-rf", str(work / "becomes_file")], check=True)
    (work / "becomes_file").write_text("a folder replaced by a file\n")
    (work / "becomes_dir").unlink()
    (work / "becomes_dir").mkdir()  # an opaque folder over a whiteout
    (work / "becomes_dir" / "inside.txt").write_text("a file replaced by a folder\n")
    (work / "run.sh").chmod(0o755)  # exec bit only
    (work / "newlink").symlink_to("keep.txt")
    (work / "new\nline-é.txt").write_text("a newline and non-ASCII in the name\n")
    os.rename(work / "moved_dir", work / "moved_here")  # a renamed folder: a redirect, contents left below
    (work / "fresh" / "deep").mkdir(parents=True)
    (work / "fresh" / "deep" / "f.txt").write_text("a new folder\n")
    _git_init_with_commit(work / "nested")  # a new .git inside a folder of the base
    _git_init_with_commit(work / "brand_new_repo")  # and a new folder that is a repository
    (work / "build" / "out.bin").write_bytes(b"setup made this; edited, still excluded")
    (work / "cache.log").unlink()  # setup made it: a deletion git never tracked
    (work / "new.log").write_text("ignored by the base's .gitignore\n")


EDGE_FILES = {
    ".gitignore": "*.log\n",
    "keep.txt": "keep\n",
    "del.txt": "del\n",
    "dir_gone/a.txt": "a\n",
    "dir_gone/sub/b.txt": "b\n",
    "becomes_file/x.txt": "x\n",
    "becomes_dir": "a file\n",
    "run.sh": "echo hi\n",
    "moved_dir/m.txt": "m\n",
    "moved_dir/sub/n.txt": "n\n",
    "nested/existing.txt": "e\n",
}


@overlay_here
def test_deletions_replacements_links_modes_odd_names_moves_and_nested_repos_collect_alike(tmp_path):
    folder = _task(tmp_path, EDGE_FILES, setup="mkdir -p build && echo out > build/out.bin && echo c > cache.log")
    base = prepare_base(load_task(folder), tmp_path / "cache")
    overlay, copy, paths = _both(base, tmp_path, _edges)
    assert overlay == copy
    assert set(paths) == {
        "becomes_dir",
        "becomes_dir/inside.txt",
        "becomes_file",
        "becomes_file/x.txt",
        "brand_new_repo",
        "del.txt",
        "dir_gone/a.txt",
        "dir_gone/sub/b.txt",
        "fresh/deep/f.txt",
        "keep.txt",
        "moved_dir/m.txt",
        "moved_dir/sub/n.txt",
        "moved_here/m.txt",
        "moved_here/sub/n.txt",
        "nested/inner.txt",  # a folder git already tracks stays one, its new .git or not
        "new\nline-é.txt",
        "newlink",
        "run.sh",
    }
    assert b"old mode 100644\nnew mode 100755" in overlay
    assert b"build/out.bin" not in overlay and b"cache.log" not in overlay and b"new.log" not in overlay


@overlay_here
@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda work: (work / ".gitignore").unlink(), id="ignore-file-deleted"),
        pytest.param(lambda work: (work / ".gitignore").write_text(""), id="ignore-file-emptied"),
        pytest.param(lambda work: (work / ".gitattributes").write_text("*.txt -text\n"), id="attributes-added"),
    ],
)
def test_changed_ignore_rules_show_files_the_agent_never_touched_as_a_full_walk_does(tmp_path, change):
    """old.log (ignored, untracked, in the base) is not in the upper dir; once ignore rules change it is
    part of the patch on a copy, so the overlay path must walk the whole tree too."""
    base = prepare_base(load_task(_task(tmp_path, {".gitignore": "*.log\n", "a.txt": "a\n"})), tmp_path / "cache")
    (base.path / "old.log").write_text("made before the base was ready\n")  # as setup would

    def edit(work: Path) -> None:
        change(work)
        (work / "a.txt").write_text("edited\n")

    overlay, copy, _ = _both(base, tmp_path, edit)
    assert overlay == copy


@overlay_here
def test_more_changed_paths_than_one_command_line_holds_walks_the_whole_tree(tmp_path, monkeypatch):
    base = prepare_base(load_task(_task(tmp_path, {f"f{i}.txt": f"{i}\n" for i in range(6)})), tmp_path / "cache")
    monkeypatch.setattr(_git, "_MAX_PATHSPECS", 3)

    def edit(work: Path) -> None:
        for i in range(5):
            (work / f"f{i}.txt").write_text("edited\n")

    overlay, copy, paths = _both(base, tmp_path, edit)
    assert overlay == copy and len(paths) == 5


# --- the base is never written; it belongs to a uid of its own --------------------------------------------


def _snapshot(root: Path) -> dict[str, tuple[int, int, int, int]]:
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            info = os.lstat(os.path.join(folder, name))
            out[os.path.relpath(os.path.join(folder, name), root)] = (
                info.st_mode,
                info.st_size,
                info.st_mtime_ns,
                info.st_uid,
            )
    return out


@pytest.mark.parametrize("overlay", [pytest.param(True, marks=overlay_here, id="overlay"), False], ids=str)
def test_collecting_a_patch_never_writes_the_base_and_gc_is_off_there(tmp_path, overlay):
    base = prepare_base(load_task(TASKS / "py-median"), tmp_path / "cache")
    before = _snapshot(base.path)
    sandbox = open_sandbox(base.path, tmp_path / "sandboxes" / "s", overlay, base.path / ".git")
    assert sandbox.git_dir is not None or not as_root()
    (sandbox.work / "stats_utils" / "median.py").write_text("changed = True\n")
    (sandbox.work / "new.py").write_text("X = 1\n")
    outcome = collect_outcome(sandbox.work, base, None, sandbox.upper, sandbox.git_dir)
    close_sandbox(sandbox.root)
    assert outcome.changed_paths == ("new.py", "stats_utils/median.py")
    after = _snapshot(base.path)
    if not as_root():  # no read-only view: git "freshens" (touches) the base objects a full walk finds again
        before, after = ({k: v[:2] + v[3:] for k, v in snap.items()} for snap in (before, after))
    assert after == before  # as root, without the read-only view, the copy walk touches every base object
    config = {key: git(base.path, "config", key).decode().strip() for key in ("gc.auto", "maintenance.auto")}
    assert config == {"gc.auto": "0", "maintenance.auto": "false"}


@pytest.mark.skipif(not as_root(), reason="bases are given to a uid of their own only when passhat runs as root")
def test_a_base_belongs_to_a_stable_uid_of_its_own_recorded_in_its_marker(tmp_path):
    task = load_task(TASKS / "py-median")
    base = prepare_base(task, tmp_path / "cache")
    assert base.uid == base_uid(base.path.name) >= MIN_UID
    assert prepare_base(task, tmp_path / "other").uid == base.uid  # the same in any cache and process
    assert {info[3] for info in _snapshot(base.path).values()} == {base.uid}
    assert (base.path / ".git" / ".passhat-base").read_text() == f"{base.commit}\n{base.uid}\n"


def test_what_setup_changes_in_tracked_files_is_part_of_the_base_not_of_a_patch(tmp_path):
    folder = _task(tmp_path, {"lock.txt": "v1\n", "a.txt": "a\n"}, setup="echo v2 > lock.txt")
    base = prepare_base(load_task(folder), tmp_path / "cache")
    sandbox = open_sandbox(base.path, tmp_path / "sandboxes" / "s")
    (sandbox.work / "a.txt").write_text("edited\n")
    outcome = collect_outcome(sandbox.work, base, upper=sandbox.upper)
    close_sandbox(sandbox.root)
    assert outcome.changed_paths == ("a.txt",)
    tree = TrialOutcome(folder, base.path, outcome.patch).tree()  # and the patch applies to the base
    assert (tree / "lock.txt").read_text() == "v2\n" and (tree / "a.txt").read_text() == "edited\n"


# --- the overlay is the path taken as root; the copy is the fallback -------------------------------------


@needs_bwrap
@overlay_here
def test_a_trial_runs_on_an_overlay_as_root(tmp_path, fake_model):
    response = attack(tmp_path, fake_model, ["stat -f -c 'FS-%T' .", "echo mine > own.txt"])
    assert "FS-overlayfs" in seen_by_model(fake_model), _sandbox.overlay_refused
    assert response["metadata"]["changed_paths"] == ["own.txt"]
    assert not list((tmp_path / "state" / "sandboxes").iterdir())  # unmounted and removed


class _NoMount:
    """libc as a kernel that refuses overlay mounts (a container without CAP_SYS_ADMIN, an upper on overlayfs)."""

    def __init__(self) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)

    def mount(self, *args: object) -> int:
        ctypes.set_errno(errno.EPERM)
        return -1

    def umount2(self, *args: object) -> int:
        return self.libc.umount2(*args)


@needs_bwrap
def test_where_no_overlay_mounts_the_trial_runs_on_a_copy_with_the_same_patch(tmp_path, fake_model, monkeypatch):
    monkeypatch.setattr(_sandbox, "_libc", _NoMount())
    response = attack(tmp_path, fake_model, ["stat -f -c 'FS-%T' .", "echo mine > own.txt"])
    assert "FS-overlayfs" not in seen_by_model(fake_model) and "FS-ext" in seen_by_model(fake_model)
    assert response["metadata"]["changed_paths"] == ["own.txt"]
    assert Path(response["metadata"]["patch_path"]).read_bytes().startswith(b"diff --git a/own.txt b/own.txt\n")


_HOLDER = """
import sys, time
from pathlib import Path
from passhat.trial._sandbox import open_sandbox
sandbox = open_sandbox(Path(sys.argv[1]), Path(sys.argv[2]), base_git=Path(sys.argv[1]) / ".git")
assert sandbox.git_dir is not None
(sandbox.work / "written.txt").write_text("by a provider about to be killed\\n")
print(sandbox.overlay, flush=True)
time.sleep(600)
"""


@overlay_here
def test_a_sandbox_left_mounted_by_a_killed_provider_is_unmounted_and_removed_by_the_next(tmp_path):
    base = prepare_base(load_task(TASKS / "py-median"), tmp_path / "cache")
    sandboxes = tmp_path / "sandboxes"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(base.path), str(sandboxes / "killed")], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "True"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    holder.stdout.close()
    assert os.path.ismount(sandboxes / "killed" / "work")  # leaked: its owner is dead
    assert os.listdir(sandboxes / "killed" / "base-git")  # and its read-only view of the base's .git
    (sandboxes / "kept").mkdir()  # a keep_sandbox leftover: no owner, never removed
    alive = open_sandbox(base.path, sandboxes / "alive")  # this process: alive, kept
    deadline = time.monotonic() + 5
    while (sandboxes / "killed").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    nxt = open_sandbox(base.path, sandboxes / "next")
    assert sorted(p.name for p in sandboxes.iterdir()) == ["alive", "kept", "next"]
    assert not (base.path / "written.txt").exists()
    for sandbox in (alive, nxt):
        close_sandbox(sandbox.root)
    assert sorted(p.name for p in sandboxes.iterdir()) == ["kept"]


# --- limits count what the trial wrote; graders get an overlay too ---------------------------------------


@overlay_here
def test_work_tree_limits_count_what_the_trial_wrote_not_the_shared_base(tmp_path):
    base = prepare_base(load_task(_task(tmp_path, {f"f{i}.txt": "x\n" for i in range(8)})), tmp_path / "cache")
    limits = Limits(worktree_files=5)
    overlay, _, paths = _both(base, tmp_path, lambda work: (work / "f0.txt").write_text("y\n"), limits=None)
    sandbox = open_sandbox(base.path, tmp_path / "sandboxes" / "one")
    (sandbox.work / "f0.txt").write_text("y\n")
    assert collect_outcome(sandbox.work, base, limits, sandbox.upper).patch == overlay  # 1 file written: fine
    for i in range(6):
        (sandbox.work / f"new{i}.txt").write_text("z\n")
    with pytest.raises(AgentTreeError, match=r"worktree_files\): more than 5 files") as raised:
        collect_outcome(sandbox.work, base, limits, sandbox.upper)
    assert raised.value.limit
    close_sandbox(sandbox.root)


@overlay_here
def test_a_graders_private_tree_is_an_overlay_owned_by_the_bases_uid_and_goes_away(tmp_path):
    base = prepare_base(load_task(TASKS / "py-median"), tmp_path / "cache")
    solution = (TASKS / "py-median" / "solution.patch").read_bytes()
    outcome = TrialOutcome(TASKS / "py-median", base.path, solution + b"")
    tree = outcome.tree()
    owners = {info[3] for info in _snapshot(tree).values()}
    assert owners == {base.uid}  # the files the patch wrote too (git apply ran as root)
    before = _snapshot(tree)
    with outcome.private_copy() as work:
        assert os.path.ismount(work)
        (work / "stats_utils" / "median.py").write_text("scribbled by a test command\n")
        (work / "junk").mkdir()
        root = work.parent
    assert not root.exists()
    assert _snapshot(tree) == before
    assert stat.S_ISDIR(os.lstat(tree).st_mode)
