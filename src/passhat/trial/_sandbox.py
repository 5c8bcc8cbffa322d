"""Bases and sandboxes: the pinned starting point of every trial, and what a trial changed.

A base is prepared once per task version (the task's files, `git init`, its test.patch when it shows its tests,
commit "base", run `setup`, commit what setup changed in tracked files) and cached under
`<cache>/bases/<id>-<version>`. Once it is ready
nothing writes in it again: git's automatic gc and maintenance are off there (a `git gc --auto` once
deleted loose objects under a running trial), and the patch is collected with the index and new objects
elsewhere. As root the base is given once to a uid of its own (`base_uid`): every trial and every grader
run on it runs as that uid, so no trial has to chown a tree.

A trial's sandbox (`open_sandbox`) is an overlay on the base where passhat runs as root and the kernel
mounts one: it costs the same for 10 files or 100,000, and all the agent writes lands in the sandbox's
`upper/`. Elsewhere it is a full copy. The patch is read from what changed (`collect_outcome`).
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from passhat.common._errors import SandboxError
from passhat.common._lock import locked
from passhat.tasks._load import Task
from passhat.tasks._source import export_source
from passhat.trial._git import (
    GitError,
    GitOutputTooLargeError,
    git,
    isolated_git_env,
    not_ignored,
    stage_changes,
    staged_sizes,
    streaming,
    upper_changes,
)
from passhat.trial._limits import Limits, chown_tree, oversized, track_writes, tree_usage, written

_READY = ".passhat-base"  # "<commit>\n<uid>\n" (uid "-" when not root); written last: its presence means done
_BASE_CONFIG = (("gc.auto", "0"), ("maintenance.auto", "false"), ("core.untrackedCache", "false"))
SETUP_TIMEOUT_S = 900
MIN_UID = 1_000_000  # base uids: never root, nobody or a system or login account
_MB = 1024 * 1024
_OWNER = "owner"  # "<pid> <start time>" of the process that made a sandbox, beside work/
_MNT_DETACH = 2
_MS_RDONLY, _MS_REMOUNT, _MS_BIND = 1, 32, 4096
_BASE_GIT = "base-git"  # a read-only bind of the base's .git beside work/: what collect_outcome reads
_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Base:
    path: Path
    commit: str
    uid: int | None = None  # the owner of its files (as root): the uid its trials and graders run as


@dataclass(frozen=True)
class Outcome:
    """What a trial produced: a binary-safe patch against the base commit and the paths it touches."""

    patch: bytes
    changed_paths: tuple[str, ...]


def base_uid(name: str) -> int:
    """The uid of the base called `name`: the same in every process, in [1,000,000, 2,000,000,000)."""
    return MIN_UID + int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") % (2_000_000_000 - MIN_UID)


def _read_base(path: Path) -> Base | None:
    """The ready base at `path`; as root, one without a uid of its own (an older passhat's) is not ready."""
    marker = path / ".git" / _READY
    if not marker.is_file():
        return None
    commit, _, uid = marker.read_text().partition("\n")
    if os.geteuid() == 0 and not uid.strip().isdigit():
        return None
    return Base(path, commit.strip(), int(uid) if uid.strip().isdigit() else None)


def prepare_base(task: Task, cache_root: Path) -> Base:
    """The task's base workspace, built once per task version, safe across processes."""
    path = cache_root / "bases" / f"{task.id}-{task.version}"
    if (base := _read_base(path)) is not None:
        return base
    with locked(path):
        if (base := _read_base(path)) is not None:
            return base
        building = path.with_name(f"{path.name}.building-{os.getpid()}")
        shutil.rmtree(building, ignore_errors=True)
        uid = base_uid(path.name) if os.geteuid() == 0 else None
        try:
            export_source(task, building, cache_root)
            git(building, "init", "-q", "-b", "main")
            for key, value in _BASE_CONFIG:
                git(building, "config", key, value)
            if task.show_tests and task.test_patch is not None:  # the agent starts with these tests
                git(building, "apply", "--binary", "--whitespace=nowarn", "-", input=task.test_patch.read_bytes())
            git(building, "add", "-A")
            git(building, "commit", "-q", "--no-verify", "-m", "base")
            if task.setup:
                _run_setup(task, task.setup, building)
                git(building, "add", "-u")  # setup's edits of tracked files are part of the base, not of a patch
                if git(building, "write-tree") != git(building, "rev-parse", "HEAD^{tree}"):
                    git(building, "commit", "-q", "--no-verify", "-m", "setup")
            commit = git(building, "rev-parse", "HEAD").decode().strip()
            _exclude_untracked(building)
            if uid is not None:
                chown_tree(building, uid=uid)
            git(building, "update-index", "-q", "--refresh", ok_codes=(0, 1))  # stat data as trials will see it
            marker = building / ".git" / _READY
            marker.write_text(f"{commit}\n{'-' if uid is None else uid}\n")
            if uid is not None:
                for owned in (building / ".git" / "index", marker):
                    os.lchown(owned, uid, uid)
        except (GitError, OSError) as error:
            shutil.rmtree(building, ignore_errors=True)
            msg = f"preparing the base of task {task.id!r} failed: {error}"
            raise SandboxError(msg) from None
        except SandboxError:
            shutil.rmtree(building, ignore_errors=True)
            raise
        if os.path.lexists(path):  # an older passhat's base: replaced, never reused
            stale = path.with_name(f"{path.name}.stale-{os.getpid()}")
            os.replace(path, stale)
            shutil.rmtree(stale, ignore_errors=True)
        os.replace(building, path)
        return Base(path, commit, uid)


def _run_setup(task: Task, setup: str, workdir: Path) -> None:
    try:
        proc = subprocess.run(setup, shell=True, cwd=workdir, capture_output=True, text=True, timeout=SETUP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        msg = f"task {task.id!r}: setup {setup!r} ran past {SETUP_TIMEOUT_S} s"
        raise SandboxError(msg) from None
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip()[-800:]
        msg = f"task {task.id!r}: setup {setup!r} exited {proc.returncode}: {tail}"
        raise SandboxError(msg)


def _exclude_untracked(workdir: Path) -> None:
    """What setup made (node_modules, build output) is part of the base, not of any patch."""
    listing = git(workdir, "ls-files", "--others", "--directory", "-z")
    entries = [entry for entry in listing.decode().split("\0") if entry]
    if entries:
        with open(workdir / ".git" / "info" / "exclude", "a") as handle:
            handle.writelines(f"/{entry}\n" for entry in entries)


def copy_tree(source: Path, dest: Path) -> None:
    """A full, independent copy (reflinked where the filesystem can), never hard links; as root, owners kept."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["cp", "-a", "--reflink=auto", f"{source}/.", str(dest)], capture_output=True, text=True)
    if proc.returncode != 0:
        msg = f"copying {source} to {dest} failed: {proc.stderr.strip()}"
        raise SandboxError(msg)


# --- sandboxes: an overlay on the base, or a copy --------------------------------------------------------


@dataclass(frozen=True)
class Sandbox:
    """`root/work`, the tree a trial or a grader command works in; `upper` holds what it wrote (overlay only)."""

    root: Path
    overlay: bool
    readonly_git: bool = False

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def upper(self) -> Path | None:
        return self.root / "upper" if self.overlay else None

    @property
    def git_dir(self) -> Path | None:
        """The base's .git, read-only (as root): git cannot write there, not even an object's mtime."""
        return self.root / _BASE_GIT if self.readonly_git else None


def open_sandbox(lower: Path, root: Path, overlay: bool = True, base_git: Path | None = None) -> Sandbox:
    """`root/work` as a writable view of `lower`: an overlay where it mounts (root, a filesystem overlayfs
    takes as upper), else a full copy; with `base_git`, also a read-only view of it for collect_outcome.
    `root` records its owner process: a sandbox whose owner died (a provider killed mid-trial) is
    unmounted and removed when the next one in its folder opens."""
    reap_sandboxes(root.parent)
    try:
        root.mkdir(parents=True, exist_ok=True)
        (root / _OWNER).write_text(f"{os.getpid()} {_started(os.getpid())}\n")
        readonly = base_git is not None and _bind_readonly(base_git, root / _BASE_GIT)
        if overlay and _mount_overlay(lower, root):
            return Sandbox(root, True, readonly)
    except OSError as error:
        close_sandbox(root)
        msg = f"making the sandbox {root} failed: {error}"
        raise SandboxError(msg) from None
    copy_tree(lower, root / "work")
    return Sandbox(root, False, readonly)


def _bind_readonly(source: Path, target: Path) -> bool:
    if os.geteuid() != 0:
        return False
    target.mkdir()
    where = os.fsencode(target)
    if _libc.mount(os.fsencode(source), where, None, _MS_BIND, None) != 0:
        target.rmdir()
        return False
    if _libc.mount(None, where, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None) != 0:
        _libc.umount2(where, _MNT_DETACH)
        return False
    return True


overlay_refused: str | None = None  # why the last overlay mount failed (None: none failed)


def _mount_overlay(lower: Path, root: Path) -> bool:
    global overlay_refused
    work, upper, scratch = root / "work", root / "upper", root / "ovl"
    if os.geteuid() != 0:
        overlay_refused = "passhat is not root"
        return False
    if any(char in str(path) for path in (lower, root) for char in ",:\\="):
        overlay_refused = f"{lower} or {root} holds a character overlayfs options cannot carry"
        return False
    info = os.lstat(lower)
    for folder in (work, upper, scratch):
        folder.mkdir()
    os.chown(upper, info.st_uid, info.st_gid)  # the merged root is the upper dir: as the base's root
    os.chmod(upper, stat.S_IMODE(info.st_mode))
    options = f"lowerdir={lower},upperdir={upper},workdir={scratch},redirect_dir=on,index=off,metacopy=off,volatile"
    if _libc.mount(b"overlay", os.fsencode(work), b"overlay", 0, options.encode()) != 0:
        overlay_refused = f"mount -t overlay: {os.strerror(ctypes.get_errno())}"
        for folder in (work, upper, scratch):
            shutil.rmtree(folder, ignore_errors=True)
        return False
    track_writes(work, upper)
    return True


def close_sandbox(root: Path, keep: bool = False) -> None:
    """Unmount root/work if it is an overlay (lazily when busy) and the base's .git view, and remove root;
    with `keep`, only unmount (what the agent wrote stays in root/upper). Never removes a tree that is
    still mounted."""
    work, view = root / "work", root / _BASE_GIT
    if written(work) is not None or os.path.ismount(work):
        _unmount(work)
        track_writes(work, None)
        if os.path.ismount(work):
            return
    if os.path.isdir(view):  # a bind on the same filesystem: ismount cannot tell; the folder is empty once free
        _unmount(view)
        try:
            if os.listdir(view):
                return
        except OSError:
            return
    if keep:
        (root / _OWNER).unlink(missing_ok=True)
    else:
        shutil.rmtree(root, ignore_errors=True)


def _unmount(path: Path) -> None:
    if _libc.umount2(os.fsencode(path), 0) != 0 and ctypes.get_errno() == errno.EBUSY:
        _libc.umount2(os.fsencode(path), _MNT_DETACH)


def _started(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot), or None if there is no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def reap_sandboxes(folder: Path) -> None:
    """Unmount and remove the sandboxes in `folder` whose owner process is gone."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            pid, start = (Path(entry.path) / _OWNER).read_text().split()
            int(pid)
        except (OSError, ValueError):
            continue
        if _started(int(pid)) != start:  # gone, or its pid reused by another process
            close_sandbox(Path(entry.path))


# --- what a trial changed -----------------------------------------------------------------------------


class AgentTreeError(Exception):
    """The tree the agent left cannot be collected: over a limit (`limit` True) or git fails on it.

    Both are the agent's doing (the base was fine), so the trial is an agent failure, never an infra error."""

    def __init__(self, reason: str, limit: bool) -> None:
        super().__init__(reason)
        self.limit = limit


def collect_outcome(
    workdir: Path, base: Base, limits: Limits | None = None, upper: Path | None = None, git_dir: Path | None = None
) -> Outcome:
    """The trial's patch against the base commit: untracked files included, binary-safe, bounded by `limits`.

    With `upper` (an overlay sandbox) git looks only at the paths written there; else it walks the whole
    work tree. Either way the patch is the same. The agent's .git is never read as a repository, and the
    base's is only read (isolated_git_env): through `git_dir`, its read-only view (Sandbox.git_dir), git
    cannot even refresh the mtime of a base object it finds again (without it, it may)."""
    limits = limits or Limits()
    over = tree_usage(upper or workdir, limits.worktree_mb * _MB, limits.worktree_files)
    if over is not None:
        raise AgentTreeError(over, limit=True)
    try:
        os.stat(base.path / ".git" / _READY)
    except OSError as error:  # the base itself is gone: nothing the work tree can explain
        msg = f"the base {base.path} cannot be read: {error.strerror}"
        raise SandboxError(msg) from None
    changes = upper_changes(upper, base.path) if upper is not None else None
    if changes is not None and not changes.present and not changes.deleted:
        return Outcome(b"", ())
    cap = limits.patch_mb * _MB  # no file over it is ever read on the host, nor held whole by git
    with tempfile.TemporaryDirectory(prefix="collect-", dir=workdir.parent) as scratch:
        env = isolated_git_env(git_dir or base.path / ".git", workdir, Path(scratch))
        try:
            written = changes.present if changes is not None else (b"",)
            big = oversized(upper or workdir, cap, written, None if upper is not None else base.path)
            unread = "passhat did not read it"
            _refuse_big(not_ignored(workdir, [path for path, _ in big], env) if big else [], dict(big), limits, unread)
            if changes is None:
                shutil.copyfile(base.path / ".git" / "index", env["GIT_INDEX_FILE"])
                git(workdir, *streaming(cap), "add", "-A", env=env)
            else:
                stage_changes(workdir, base.commit, changes, env, cap)
            paths = () if changes is None else ("--", *map(os.fsdecode, [*changes.present, *changes.deleted]))
            staged = staged_sizes(workdir, base.commit, paths, env)  # a big file git streamed: refused unread
            streamed = "git hashed it in chunks, and nothing diffed it"
            _refuse_big([path for path, size in staged if size > cap], dict(staged), limits, streamed)
            patch = git(
                workdir, "diff", "--cached", "--no-renames", "--binary", "--no-color", "--no-ext-diff", base.commit,
                *paths, max_output=cap, env=env,
            )  # fmt: skip
        except OSError as error:
            msg = f"the base {base.path} cannot be read: {error}"
            raise SandboxError(msg) from None
        except GitOutputTooLargeError:
            msg = f"patch size limit (patch_mb): the patch is over {limits.patch_mb} MB"
            raise AgentTreeError(msg, limit=True) from None
        except GitError as error:
            msg = f"collecting the patch failed on the work tree the agent left: {error}"
            raise AgentTreeError(msg, limit=False) from None
    return Outcome(patch, tuple(path.decode(errors="replace") for path, _ in staged))


def _refuse_big(paths: list[bytes], sizes: dict[bytes, int], limits: Limits, how: str) -> None:
    """A limit when the patch would hold a file over patch_mb: named with its size, never held whole."""
    if paths:
        more = f" (and {len(paths) - 1} more)" if len(paths) > 1 else ""
        name, size = paths[0].decode(errors="replace"), sizes[paths[0]] / _MB
        msg = (f"patch size limit (patch_mb): {name!r} is {size:.0f} MB{more}, over the {limits.patch_mb} MB a "
               f"patch may hold; {how}")  # fmt: skip
        raise AgentTreeError(msg, limit=True)


def base_for(task_dir: Path, base_dir: Path) -> Base:
    """The base a trial ran on; rebuilt from the task (same version, same place) if it was removed."""
    from passhat.tasks._load import load_task

    if (base := _read_base(base_dir)) is not None:
        return base
    return prepare_base(load_task(task_dir), base_dir.parent.parent)
