"""Confinement of a trial: Claude Code under bubblewrap (bwrap), or plainly not confined.

With `isolation: bwrap` (the default where bwrap works) the CLI, and everything it starts, sees
  * the system read-only (`--ro-bind / /`), a fresh /dev and /proc, and no capability at all
    (`--cap-drop ALL`: even as root the agent cannot unmount what hides things or remount / rw);
  * empty read-only folders over the host HOME (ssh keys, credentials, ~/.claude), passhat's state
    dir (other trials' sandboxes and artifacts, the base cache), the tasks (reference solutions)
    and a few runtime secrets (/run/user, /run/secrets, the docker socket);
  * empty scratch space over /tmp and /var/tmp, private to the trial and gone with it;
  * this trial's work dir, HOME and TMPDIR, writable: nothing else is;
  * its own PID namespace (`--unshare-pid`): when the CLI exits, or passhat kills the launcher's
    process group at the deadline, the kernel kills every process of the trial, setsid or not;
  * the host network (the scripted model is on loopback; real Claude needs the internet).
What a PATH entry or the bundled CLI needs under a hidden folder (a venv, node_modules) is bound
back read-only. Mounts are applied shallow to deep, so the deepest rule for a path wins.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from passhat._errors import PasshatError, SandboxError

Isolation = Literal["auto", "bwrap", "none"]
ISOLATIONS = ("auto", "bwrap", "none")
UNCONFINED = (
    "the agent can read and write whatever the passhat user can (the host HOME with its keys, "
    "other trials, the base cache, the tasks' reference solutions) and processes it detaches "
    "(setsid, double fork) can outlive the trial"
)
_FLAGS = ("--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--new-session", "--die-with-parent")
_SCRATCH = ("/tmp", "/var/tmp")
_SECRETS = ("/run/user", "/run/secrets", "/run/docker.sock", "/run/containerd", "/run/podman")
_PROBES: dict[str, str | None] = {}
_warned = False

Kind = Literal["hide", "scratch", "expose", "bind"]
_RANK = {"hide": 0, "scratch": 0, "expose": 1, "bind": 2}


@dataclass(frozen=True)
class Confinement:
    """How trials run here: `bwrap` is the path of a working bwrap, None = not confined (and why)."""

    bwrap: str | None
    why_none: str = ""

    @property
    def label(self) -> str:
        """The trial metadata's `confinement` field."""
        return "bwrap" if self.bwrap else f"none: {UNCONFINED}"


def _bad(value: str, fix: str) -> PasshatError:
    return PasshatError(f"promptfooconfig.yaml: provider config field 'isolation': {value!r}: {fix}")


def _which_bwrap() -> str | None:
    return shutil.which("bwrap")


def _probe(bwrap: str) -> str | None:
    """None if bwrap can build our kind of sandbox here, else its complaint (once per process)."""
    if bwrap not in _PROBES:
        command = [
            bwrap,
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            *_FLAGS,
            "--perms",
            "01777",
            "--tmpfs",
            "/tmp",
            "--remount-ro",
            "/tmp",
            "--",
            "/bin/sh",
            "-c",
            ":",
        ]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
            failure = (
                None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            failure = str(error)
        _PROBES[bwrap] = failure
    return _PROBES[bwrap]


def confinement(isolation: Isolation) -> Confinement:
    """Resolve `isolation` on this machine; an explicit `bwrap` that cannot work is a config error."""
    if isolation == "none":
        return Confinement(None, "the provider config says isolation: none")
    bwrap = _which_bwrap()
    if bwrap is None:
        if isolation == "bwrap":
            raise _bad(
                isolation,
                "bwrap is not on PATH; install the Debian package bubblewrap "
                "(apt-get install bubblewrap), or set isolation: none to run trials unconfined",
            )
        return Confinement(None, "bwrap is not on PATH; install the Debian package bubblewrap to confine them")
    failure = _probe(bwrap)
    if failure is not None:
        if isolation == "bwrap":
            raise _bad(
                isolation,
                f"{bwrap} cannot build a sandbox here ({failure}); allow unprivileged user "
                "namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu "
                "kernel.apparmor_restrict_unprivileged_userns=0), or set isolation: none",
            )
        return Confinement(None, f"{bwrap} cannot build a sandbox here: {failure}")
    return Confinement(bwrap)


def warn_if_unconfined(found: Confinement) -> None:
    """Say plainly, once per process, what an unconfined trial can reach."""
    global _warned
    if found.bwrap is None and not _warned:
        _warned = True
        print(f"passhat: warning: trials are not confined ({found.why_none}): {UNCONFINED}.", file=sys.stderr)


def host_homes() -> list[Path]:
    """The HOME of the passhat process and the passwd home of its user."""
    homes = [os.environ.get("HOME", "")]
    try:
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    return [Path(home) for home in homes if home]


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def _needed(path_env: str, cli: Path) -> list[Path]:
    """What the CLI and the agent's tools need to run: the bundled CLI, PATH dirs, their venv / node_modules."""
    needed = [_real(cli).parent]
    for entry in filter(None, path_env.split(os.pathsep)):
        folder = _real(entry)
        if not folder.is_dir():
            continue
        needed.append(folder)
        config = folder.parent / "pyvenv.cfg"
        if config.is_file():
            needed.append(folder.parent)
            for line in config.read_text(errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    needed.append(_real(value.strip()).parent)  # the base interpreter's prefix
        if folder.name == ".bin" and folder.parent.name == "node_modules":
            needed.append(folder.parent)
    return needed


def _within(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def mounts(writable: Iterable[Path], private: Iterable[Path], path_env: str, cli: Path) -> list[tuple[Path, Kind]]:
    """The trial's view as (path, kind), shallow to deep; a hide inside a hide is dropped."""
    ops: dict[Path, Kind] = {}
    candidates: list[str | Path] = [*host_homes(), *private, *_SECRETS]
    hidden = [_real(p) for p in candidates if os.path.lexists(p)]
    for path in hidden:
        if path != Path("/"):
            ops[path] = "hide"
    for path in map(_real, _SCRATCH):
        if path.is_dir():
            ops[path] = "scratch"
    roots = list(ops)
    for path in _needed(path_env, cli):
        inside = any(path.is_relative_to(root) for root in roots)
        if inside and not any(_within(root, path) for root in roots):
            ops.setdefault(path, "expose")
    for path in map(_real, writable):
        ops[path] = "bind"
    ordered = sorted(ops.items(), key=lambda item: (len(item[0].parts), _RANK[item[1]], str(item[0])))
    kept: list[tuple[Path, Kind]] = []
    for path, kind in ordered:
        enclosing = [k for p, k in kept if path.is_relative_to(p)]
        if kind == "hide" and enclosing and enclosing[-1] == "hide":
            continue  # already inside an empty read-only folder (inside scratch it is still hidden: read-only)
        kept.append((path, kind))
    return kept


def bwrap_arguments(
    workdir: Path, writable: Iterable[Path], private: Iterable[Path], path_env: str, cli: Path
) -> list[str]:
    """bwrap's options (for `bwrap --args FD`): the view `mounts` describes, plus namespaces and no caps."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *_FLAGS]
    read_only: list[str] = []
    for path, kind in mounts(writable, private, path_env, cli):
        if kind == "hide" and not path.is_dir():
            args += ["--ro-bind", "/dev/null", str(path)]
        elif kind == "hide":
            args += ["--tmpfs", str(path)]
            read_only.append(str(path))
        elif kind == "scratch":
            args += ["--perms", "01777", "--tmpfs", str(path)]
        else:
            args += ["--ro-bind" if kind == "expose" else "--bind", str(path), str(path)]
    for folder in read_only:  # after the binds inside them exist; not recursive, so the binds stay writable
        args += ["--remount-ro", folder]
    return [*args, "--chdir", str(workdir)]


def write_arguments(path: Path, args: list[str]) -> None:
    """NUL-separated, as `bwrap --args FD` reads them (paths only, no secrets)."""
    path.write_bytes(b"".join(arg.encode() + b"\0" for arg in args))


def reset_git_dir(workdir: Path, base: Path) -> None:
    """Give the work dir the base's .git back before passhat runs git in it, outside the sandbox.

    The agent's .git is its own to write: a `core.fsmonitor` or filter in its config, or a
    `post-index-change` hook, would run on the host when passhat collects the patch. The patch is the
    work tree against the base commit, so nothing of the agent's .git is needed; it is moved aside.
    """
    from passhat.trial._sandbox import copy_tree

    git_dir = workdir / ".git"
    try:
        if os.path.lexists(git_dir):
            os.replace(git_dir, workdir.parent / f"agent-git-{uuid.uuid4().hex[:8]}")
    except OSError as error:
        msg = f"moving the agent's .git out of {workdir} failed: {error}"
        raise SandboxError(msg) from None
    copy_tree(base / ".git", git_dir)
