"""Resource limits of a trial and of a grader's run of the agent's code.

Defaults below; `limits:` in the provider config overrides them, and `limits:` in a task.yaml overrides
both for that task. How each is enforced:

  processes    a cgroup's pids.max where passhat may create cgroups (root, v1 or v2), and RLIMIT_NPROC of
               the trial's uid (root: the uid of the task's base, which concurrent trials of that task share:
               without cgroups their processes count together)
  memory_mb    a cgroup's memory limit (swap included where the kernel accounts it); without cgroups, none
  tmpfs_mb     the size of each private tmpfs: /tmp, /var/tmp, /dev/shm
  file_mb      the largest file the agent can write (RLIMIT_FSIZE): a 50 GB sparse file fails with EFBIG
  worktree_mb  the work tree's size (allocated blocks), checked every second during the run and before the
  worktree_files  patch is collected: over it, the trial ends as an agent failure with `status: limit`. On an
               overlay sandbox only what the trial wrote counts (the overlay's upper dir: new and changed
               files, one entry per deletion), not the shared base under it; on a copy, the whole tree
  patch_mb     the largest patch passhat will collect and store
  model_requests  what one trial may ask of the model API through passhat's proxy (trial/spend): requests,
  model_tokens    tokens (input, output, cache writes and reads, from the responses' usage) and dollars at
  model_usd       list prices; past one the proxy refuses every further request and the trial ends
               `status: limit`. The CLI's own requests count too: set them above what a real session spends

Hitting a limit is the agent's failure (`status: limit`, the limit in the reason), never a host problem.
"""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path

from passhat.common._errors import PasshatError, SandboxError

_MB = 1024 * 1024
_DECIMAL = ("model_usd",)  # limits that take a fraction


@dataclass(frozen=True)
class Limits:
    processes: int = 512
    memory_mb: int = 4096
    tmpfs_mb: int = 512
    file_mb: int = 1024
    worktree_mb: int = 2048
    worktree_files: int = 200_000
    patch_mb: int = 64
    model_requests: int = 1000
    model_tokens: int = 20_000_000
    model_usd: float = 20.0

    def merged(self, raw: object, where: str) -> Limits:
        """These limits with `raw` (a `limits:` mapping) applied; one clear error for a bad key or value."""
        if raw is None:
            return self
        if not isinstance(raw, dict):
            msg = f"{where}: 'limits': {raw!r}: expected a mapping, e.g. limits: {{memory_mb: 2048}}"
            raise PasshatError(msg)
        names = [f.name for f in fields(self)]
        for key, value in raw.items():
            if key not in names:
                msg = f"{where}: 'limits.{key}': unknown limit; known: {', '.join(names)}"
                raise PasshatError(msg)
            number = (int, float) if key in _DECIMAL else int
            if not isinstance(value, number) or isinstance(value, bool) or value <= 0:
                what = "a positive number (dollars)" if key in _DECIMAL else "a positive whole number"
                msg = f"{where}: 'limits.{key}': {value!r}: expected {what}"
                raise PasshatError(msg)
        return replace(self, **raw)


def prlimit_args(limits: Limits, own_uid: bool) -> list[str]:
    """`prlimit` options: the file size always; the process count when the trial has a uid of its own."""
    args = [f"--fsize={limits.file_mb * _MB}"]
    if own_uid:
        args.append(f"--nproc={limits.processes}")
    return args


@dataclass
class Cgroups:
    """The cgroup folders of one trial (empty when cgroups are not available here)."""

    folders: list[Path]

    def breach(self) -> str | None:
        """Which cgroup limit the trial hit, if any."""
        for folder in self.folders:
            events = _read(folder / "memory.events")  # v2
            if "oom_kill" in events and _count(events, "oom_kill") > 0:
                return "memory limit (memory_mb): the kernel killed a process of the trial for memory"
            if _count(_read(folder / "memory.oom_control"), "oom_kill") > 0:  # v1
                return "memory limit (memory_mb): the kernel killed a process of the trial for memory"
            pids = _read(folder / "pids.events")
            if "max" in pids and _count(pids, "max") > 0:
                return "process limit (processes): the trial tried to start more processes than allowed"
        return None

    def remove(self) -> None:
        for folder in self.folders:
            try:
                folder.rmdir()
            except OSError:
                pass


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _count(text: str, key: str) -> int:
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def make_cgroups(limits: Limits, root: Path = Path("/sys/fs/cgroup")) -> Cgroups:
    """A memory and a pids cgroup for one trial, where this process may make them; else none."""
    if os.geteuid() != 0:
        return Cgroups([])
    name = f"passhat-{uuid.uuid4().hex[:12]}"
    memory = limits.memory_mb * _MB
    made: list[Path] = []
    if (root / "cgroup.controllers").is_file():  # v2: one folder with both controllers
        parent = root / "passhat"
        controllers = _read(root / "cgroup.controllers").split()
        if "memory" in controllers and "pids" in controllers:
            parent.mkdir(exist_ok=True)
            _write(root / "cgroup.subtree_control", "+memory +pids")
            _write(parent / "cgroup.subtree_control", "+memory +pids")
            folder = parent / name
            try:
                folder.mkdir()
            except OSError:
                return Cgroups([])
            ok = _write(folder / "memory.max", str(memory)) and _write(folder / "pids.max", str(limits.processes))
            _write(folder / "memory.swap.max", "0")
            return Cgroups([folder]) if ok else _undo([folder])
        return Cgroups([])
    for controller, files in (
        ("memory", (("memory.limit_in_bytes", str(memory)), ("memory.memsw.limit_in_bytes", str(memory)))),
        ("pids", (("pids.max", str(limits.processes)),)),
    ):
        base = root / controller
        if not base.is_dir():
            continue
        folder = base / "passhat" / name
        try:
            folder.mkdir(parents=True)
        except OSError:
            continue
        if not _write(folder / files[0][0], files[0][1]):
            _undo([folder])
            continue
        for file, value in files[1:]:
            _write(folder / file, value)  # memsw exists only with swap accounting
        made.append(folder)
    return Cgroups(made)


def _undo(folders: list[Path]) -> Cgroups:
    Cgroups(folders).remove()
    return Cgroups([])


_WRITTEN: dict[Path, Path] = {}  # an overlay work tree this process mounted → its upper dir


def track_writes(work: Path, upper: Path | None) -> None:
    """Record (or, with None, forget) where what is written in the overlay work tree `work` lands."""
    if upper is None:
        _WRITTEN.pop(work, None)
    else:
        _WRITTEN[work] = upper


def written(work: Path) -> Path | None:
    """The upper dir holding what was written in `work` when it is an overlay this process mounted, else None."""
    return _WRITTEN.get(work)


def tree_usage(root: Path, max_bytes: int, max_files: int) -> str | None:
    """Why the tree at root is over its limits, or None. Never follows a symlink; stops early when over.

    On an overlay work tree (`track_writes`) only its upper dir is walked: what the trial wrote. Size is
    what the files occupy on disk (allocated blocks) or their length, whichever is larger, so a sparse
    file counts at its full length."""
    total = files = 0
    stack = [str(written(root) or root)]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            files += 1
            if files > max_files:
                return f"work tree file limit (worktree_files): more than {max_files} files"
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                stack.append(entry.path)
                continue
            total += max(info.st_size, info.st_blocks * 512)
            if total > max_bytes:
                return f"work tree size limit (worktree_mb): more than {max_bytes // _MB} MB"
    return None


def oversized(
    root: Path, max_bytes: int, rels: Iterable[bytes] = (b"",), base: Path | None = None
) -> list[tuple[bytes, int]]:
    """(path, length) of the regular files under root/rel longer than max_bytes, found by their length alone: never read (a 1 GB
    sparse file once cost the host 1 GB of git). Links are not followed, `.git` folders not entered. With `base`
    (a sandbox that is a copy of it), a file the same length and age as the base's at its path is the base's own."""
    found: list[tuple[bytes, int]] = []
    stack = list(rels)
    top, lower = os.fsencode(root), os.fsencode(base) if base is not None else None
    while stack:
        rel = stack.pop()
        try:
            info = os.lstat(os.path.join(top, rel) if rel else top)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            try:
                names = os.listdir(os.path.join(top, rel) if rel else top)
            except OSError:
                continue
            stack += [os.path.join(rel, name) if rel else name for name in names if name != b".git"]
        elif stat.S_ISREG(info.st_mode) and info.st_size > max_bytes and not _same(lower, rel, info):
            found.append((rel, info.st_size))
    return sorted(found)


def _same(lower: bytes | None, rel: bytes, info: os.stat_result) -> bool:
    try:
        was = os.lstat(os.path.join(lower, rel)) if lower is not None else None
    except OSError:
        return False
    return was is not None and (was.st_size, was.st_mtime_ns) == (info.st_size, info.st_mtime_ns)


def chown_tree(*roots: Path, uid: int) -> None:
    """Give the trial's uid the writable folders it will use (root only; copies of the base are root's).
    In-process: no child to start, and never through a symlink (lchown)."""
    try:
        for root in roots:
            os.lchown(root, uid, uid)
            for folder, dirs, names in os.walk(root):
                for name in (*dirs, *names):
                    os.lchown(os.path.join(folder, name), uid, uid)
    except OSError as error:
        msg = f"giving {error.filename} to the trial's uid {uid} failed: {error.strerror}"
        raise SandboxError(msg) from None


_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def chown_paths(root: Path, rels: Iterable[bytes], uid: int) -> None:
    """Give `uid` each root/rel and every folder on the way there that is not its yet (what passhat wrote
    into a tree: a patch applied, a file restored). Never through a symlink: each step is opened O_NOFOLLOW;
    a missing path is skipped."""
    for rel in rels:
        parts = [part for part in rel.split(b"/") if part not in (b"", b".", b"..")]
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for i, name in enumerate(parts):
                try:
                    info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    if info.st_uid != uid:
                        os.chown(name, uid, uid, dir_fd=fd, follow_symlinks=False)
                    if i == len(parts) - 1 or not stat.S_ISDIR(info.st_mode):
                        break
                    child = os.open(name, _DIR, dir_fd=fd)
                except FileNotFoundError:
                    break
                except OSError as error:
                    msg = f"giving {root / os.fsdecode(rel)} to the uid {uid} failed: {error.strerror}"
                    raise SandboxError(msg) from None
                os.close(fd)
                fd = child
        finally:
            os.close(fd)


def chown_written(work: Path, uid: int) -> None:
    """Give `uid` whatever passhat wrote into `work` since it was made: on an overlay the upper dir's
    entries (changed through the overlay, which then sees them), on a copy every entry not `uid`'s yet."""
    upper = written(work)
    top = os.fsencode(upper if upper is not None else work)
    rels: list[bytes] = []
    for folder, dirs, names in os.walk(top):  # does not descend into symlinks
        here = os.path.relpath(folder, top)
        for name in (*dirs, *names):
            rel = name if here == b"." else os.path.join(here, name)
            if upper is not None or os.lstat(os.path.join(top, rel)).st_uid != uid:
                rels.append(rel)
    chown_paths(work, rels, uid)


# Promptfoo's per-call limit on a Python provider (`timeout` in the provider's config, ms; else $REQUEST_TIMEOUT_MS;
# else 300 s) books a call still running as an error row ("Python worker timed out") and lets it run on (promptfoo
# #10928). A trial must end, killed at timeout_s and recorded, before it: KILL_MARGIN_S is that margin.
PROMPTFOO_CALL_LIMIT_MS = 300_000
KILL_MARGIN_S = 30.0
DEFAULT_TIMEOUT_S = 600.0
_WAIT_IS = (
    "promptfoo's per-call limit in milliseconds, which cannot stop a trial; passhat's deadline is timeout_s, in seconds"
)


def deadline(raw: dict) -> float:
    """timeout_s, checked against Promptfoo's per-call limit; when not given, 600 s or what that limit leaves."""
    wait = raw.get("timeout")
    if wait is not None and (type(wait) not in (int, float) or wait <= 0):
        raise _bad_field("timeout", wait, _WAIT_IS)  # fmt: skip
    env_limit = os.environ.get("REQUEST_TIMEOUT_MS", "").strip()
    limit_ms = float(wait) if wait is not None else float(env_limit) if env_limit.isdigit() else PROMPTFOO_CALL_LIMIT_MS
    room_s = limit_ms / 1e3 - KILL_MARGIN_S
    if "timeout_s" not in raw:
        if room_s < 60:  # a trial gets a minute at least
            raise _bad_field("timeout", wait, f"{_WAIT_IS}: rename it to timeout_s, or give at least {(DEFAULT_TIMEOUT_S + KILL_MARGIN_S) * 1e3:.0f}")  # fmt: skip
        return min(DEFAULT_TIMEOUT_S, room_s)
    timeout_s = float(raw["timeout_s"])
    if timeout_s <= 0:
        raise _bad_field("timeout_s", timeout_s, "use a positive number of seconds")
    if timeout_s > room_s:
        need = f"{(timeout_s + KILL_MARGIN_S) * 1e3:.0f}"
        if wait is not None:
            raise _bad_field("timeout", wait, f"{_WAIT_IS}: rename it to timeout_s, or give at least {need} (timeout_s {timeout_s:g} s plus {KILL_MARGIN_S:g} s to stop and record it)")  # fmt: skip
        source = f"$REQUEST_TIMEOUT_MS={env_limit}" if env_limit.isdigit() else "its default, 300 s"
        raise _bad_field("timeout_s", raw["timeout_s"], f"promptfoo's per-call limit ({source}) would book a trial still running then as an error while it runs on; add `timeout: {need}` (ms: timeout_s plus {KILL_MARGIN_S:g} s to stop and record it) to this provider's config, or lower timeout_s to {max(room_s, 0):g}")  # fmt: skip
    return timeout_s


def _bad_field(field_name: str, value: object, fix: str) -> PasshatError:
    return PasshatError(f"provider config field {field_name!r}: {value!r}: {fix}")
