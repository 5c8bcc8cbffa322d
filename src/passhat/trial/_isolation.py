"""Confinement of a trial: Claude Code under bubblewrap (bwrap), or plainly not confined.

With `isolation: bwrap` (the default where bwrap works) the CLI, and everything it starts,
  * never holds host root: when passhat runs as root, bwrap (as root) builds the view and the namespaces,
    then `setpriv` drops to the uid of the task's base (never 0; no capability, no group, nothing of root's;
    concurrent trials of one task share it, each in namespaces of its own); as
    another user bwrap makes a user namespace and drops every capability. /proc/sys is read-only;
  * has its own network namespace: nothing but its own loopback, where _inside.py's forwarder relays one
    port to passhat's model proxy outside (_proxy.py); own PID, IPC, UTS (hostname) and cgroup namespaces;
  * runs under a seccomp filter (_inside.py): no unix sockets (the host's are unreachable), no keyrings,
    no ptrace, no io_uring, bpf, perf, mount or namespace calls;
  * sees the system read-only (`--ro-bind / /`), a fresh /dev and /proc, and empty read-only folders over
    the host HOME (keys, credentials, ~/.claude), passhat's state dir (other trials, the base cache), the
    tasks (reference solutions) and runtime secrets (/run/user, /run/secrets, the docker socket);
  * has private, size-limited tmpfs over /tmp, /var/tmp and /dev/shm, gone with the trial;
  * can write only its work dir, HOME and TMPDIR;
  * ends whole: when the CLI exits, or passhat kills the launcher's process group at the deadline, the
    PID namespace goes and the kernel kills every process of the trial, setsid or not.
What a PATH entry or the bundled CLI needs under a hidden folder (a venv, node_modules) is bound
back read-only. Mounts are applied shallow to deep, so the deepest rule for a path wins.
"""

from __future__ import annotations

import functools
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from passhat.common._errors import PasshatError
from passhat.trial._limits import Cgroups, Limits, chown_tree, make_cgroups

if TYPE_CHECKING:  # the model proxy (http.client, the spend's readers) is imported by open_jail: graders never need it
    from passhat.common._endpoint import Endpoint
    from passhat.trial._proxy import ModelProxy, Witness
    from passhat.trial.spend import Spend

Isolation = Literal["auto", "bwrap", "none"]
ISOLATIONS = ("auto", "bwrap", "none")
UNCONFINED = (
    "the agent can read and write whatever the passhat user can (the host HOME with its keys, "
    "other trials, the base cache, the tasks' reference solutions) and processes it detaches "
    "(setsid, double fork) can outlive the trial"
)
_NAMESPACES = (
    "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
    "--hostname", "passhat-trial", "--new-session", "--die-with-parent",
)  # fmt: skip
# as root: keep only what setpriv needs to drop to the trial's uid; as another user: a user namespace, no caps
_AS_ROOT = ("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID")
_AS_USER = ("--unshare-user", "--disable-userns", "--cap-drop", "ALL")
MODEL_PORT = 8787  # the trial's own loopback: any fixed port is free there
_INSIDE = Path(__file__).resolve().with_name("_inside.py")
_MB = 1024 * 1024


def as_root() -> bool:
    return os.geteuid() == 0


def _flags() -> tuple[str, ...]:
    return (*_NAMESPACES, *(_AS_ROOT if as_root() else _AS_USER))


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
            *_flags(),
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


@functools.lru_cache(maxsize=16)  # the same PATH and CLI for every trial of a worker
def _needed(path_env: str, cli: Path) -> tuple[Path, ...]:
    """What the CLI and the agent's tools need to run: the bundled CLI, PATH dirs, their venv / node_modules."""
    needed = [_real(cli).parent]
    for entry in filter(None, path_env.split(os.pathsep)):
        folder = _real(entry)
        try:
            if not folder.is_dir():
                continue
        except OSError:  # a PATH entry this user cannot reach: nothing of it is needed
            continue
        needed.append(folder)
        config = folder.parent / "pyvenv.cfg"
        if config.is_file():
            needed.append(folder.parent)
            for line in config.read_text(errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    needed.append(_real(value.strip()).parent)  # the base interpreter's prefix
            needed += _pth_folders(folder.parent)
        if folder.name == ".bin" and folder.parent.name == "node_modules":
            needed.append(folder.parent)
    return tuple(needed)


def _pth_folders(venv: Path) -> list[Path]:
    """The folders a venv's `.pth` files put on sys.path (a package installed from a folder elsewhere, another
    environment's site-packages): its python imports from them, so a run in the sandbox must see them too — and,
    for a folder of links (a farm of another environment's packages), the folders its links point into."""
    found = []
    for pth in venv.glob("lib/python3*/site-packages/*.pth"):
        for line in pth.read_text(errors="replace").splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "import ", "import\t")):  # (an `import` line runs code: skipped)
                folder = _real(pth.parent / line)
                if folder.is_dir():
                    found.append(folder)
                    found += sorted({_real(entry).parent for entry in folder.iterdir() if entry.is_symlink()})
    return found


def _within(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def mounts(
    writable: Iterable[Path], private: Iterable[Path], path_env: str, cli: Path, exposed: Iterable[Path] = ()
) -> list[tuple[Path, Kind]]:
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
    for path in [*_needed(path_env, cli), *map(_real, exposed)]:
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
    workdir: Path,
    writable: Iterable[Path],
    private: Iterable[Path],
    path_env: str,
    cli: Path,
    *,
    exposed: Iterable[Path] = (),
    tmpfs_mb: int = 512,
) -> list[str]:
    """bwrap's options (for `bwrap --args FD`): the view `mounts` describes, plus namespaces and no caps."""
    size = str(tmpfs_mb * _MB)
    exposed = [*exposed, _INSIDE.parent]
    path_env = os.pathsep.join([str(Path(sys.executable).parent), path_env])  # _inside.py's interpreter too
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]
    args += [*_flags(), "--perms", "01777", "--size", size, "--tmpfs", "/dev/shm"]
    read_only: list[str] = []
    empties: list[Path] = []  # tmpfs folders: the folders bwrap makes in them for binds must be 0755
    made: set[Path] = set()
    for path, kind in mounts(writable, private, path_env, cli, exposed):
        within = [root for root in empties if path != root and path.is_relative_to(root)]
        if within:
            root = max(within, key=lambda r: len(r.parts))
            for parent in reversed(path.relative_to(root).parents[:-1]):
                if root / parent not in made:
                    made.add(root / parent)
                    args += ["--perms", "0755", "--dir", str(root / parent)]
        if kind in ("hide", "scratch") and path.is_dir():
            empties.append(path)
        if kind == "hide" and not path.is_dir():
            args += ["--ro-bind", "/dev/null", str(path)]
        elif kind == "hide":
            args += ["--tmpfs", str(path)]
            read_only.append(str(path))
        elif kind == "scratch":
            args += ["--perms", "01777", "--size", size, "--tmpfs", str(path)]
        else:
            args += ["--ro-bind" if kind == "expose" else "--bind", str(path), str(path)]
    for folder in read_only:  # after the binds inside them exist; not recursive, so the binds stay writable
        args += ["--remount-ro", folder]
    return [*args, "--chdir", str(workdir)]


def sandbox_command(
    bwrap: str, args_fd: int, uid: int | None, fsize_mb: int, processes: int, model_socket: Path | None
) -> list[str]:
    """Everything before the program: limits, bwrap (options from `args_fd`), the drop to the trial's uid,
    and _inside.py (the model port when `model_socket` is given, then the seccomp filter)."""
    limits = [f"--fsize={fsize_mb * _MB}", *([f"--nproc={processes}"] if uid is not None else [])]
    command = ["/usr/bin/prlimit", *limits, "--", bwrap, "--args", str(args_fd), "--"]
    if uid is not None:
        command += ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    command += [sys.executable, "-I", "-S", str(_INSIDE)]
    if model_socket is not None:
        command += ["--socket", str(model_socket), "--port", str(MODEL_PORT)]
    return [*command, "--"]


def trial_uid() -> int | None:
    """A uid of the trial's own when passhat runs as root (never 0, nobody's, or a system one), else None."""
    return secrets.randbelow(2_000_000_000 - 1_000_000) + 1_000_000 if as_root() else None


def tree_uid(tree: Path) -> int | None:
    """The uid to run the agent's code in `tree` as (root only; None otherwise): the owner of the tree, which
    is its base's uid (passhat.trial._sandbox.base_uid), so nothing is chowned. A tree passhat did not
    prepare (owned by root or a login account) is given, whole, to a uid of its own instead."""
    if not as_root():
        return None
    owner = os.lstat(tree).st_uid
    if owner >= 1_000_000:
        return owner
    uid = trial_uid()
    if uid is not None:
        chown_tree(tree, uid=uid)
    return uid


@dataclass
class Jail:
    """How run_agent confines the CLI (see _isolation.py): bwrap's view, the trial's uid, its limits, the
    model proxy's socket and what the proxy saw, the cgroups."""

    bwrap: str
    view: list[str]
    uid: int | None
    limits: Limits
    model_socket: Path | None
    witness: Witness | None
    cgroups: Cgroups
    workdir: Path
    spend: Spend | None = None  # what the trial spent of the model API, and its caps


def open_jail(
    bwrap: str,
    sandbox: Path,
    hidden: tuple[Path, ...],
    limits: Limits,
    endpoint: dict[str, str],
    network: tuple[str, ...],
    cli_env: Callable[[dict[str, str]], dict[str, str]],
    cli: Path,
    visible: tuple[Path, ...] = (),
    model: str | None = None,
    check: Endpoint | None = None,
) -> tuple[Jail, ModelProxy, dict[str, str]]:
    """A trial's jail in `sandbox` (work/, home/, tmp/ there): its uid, cgroups, model proxy and bwrap view.

    `endpoint` holds the real model variables (URL, key): they go to the proxy, outside. The CLI's
    environment (`cli_env` of the variables it gets instead) points at the trial's own loopback port and
    holds a placeholder key. Returns the jail, the proxy (`stop()` it after the run: that removes its folder)
    and the CLI's environment. The proxy caps the trial's spend (`limits.model_*`) and admits only requests
    shaped like the CLI's, for `model` (the provider's `model:`; None: the model of the first request). `check` is
    how the proxy probes the endpoint itself (see passhat/common/_endpoint.py)."""
    from passhat.trial._proxy import inside_variables, model_proxy
    from passhat.trial.spend import Spend, api_of

    workdir, home, tmp = (sandbox / name for name in ("work", "home", "tmp"))
    run = Path(tempfile.mkdtemp(prefix="passhat-run-"))  # short: a unix socket path has at most 107 bytes
    proxy = model_proxy(run / "model.sock", endpoint, network, check)
    proxy.spend = Spend(limits.model_requests, limits.model_tokens, limits.model_usd, model, api_of(endpoint))
    local = f"http://127.0.0.1:{MODEL_PORT}"
    variables = {**inside_variables(endpoint, local), "NO_PROXY": "127.0.0.1,localhost"}
    if network:
        variables |= {"HTTPS_PROXY": local, "HTTP_PROXY": local}
    env = cli_env(variables)
    uid = tree_uid(workdir)  # the base's uid: the work tree is an overlay on the base (or a copy) it owns
    if uid is not None:
        chown_tree(home, tmp, run, uid=uid)  # run/ stays 0700: only the trial reaches its proxy
    view = bwrap_arguments(
        workdir, (workdir, home, tmp), hidden, env["PATH"], cli, exposed=(run, *visible), tmpfs_mb=limits.tmpfs_mb
    )
    jail = Jail(bwrap, view, uid, limits, run / "model.sock", proxy.witness, make_cgroups(limits), workdir, proxy.spend)
    return jail, proxy, env


def write_arguments(path: Path, args: list[str]) -> None:
    """NUL-separated, as `bwrap --args FD` reads them (paths only, no secrets)."""
    path.write_bytes(b"".join(arg.encode() + b"\0" for arg in args))
