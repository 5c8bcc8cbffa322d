"""The runner guard of one tests-grader run: what is set up before the command runs (canary, result channel,
safe start of the runner) and handed to passhat.graders.runner._verdict after it.

For any command: PATH keeps only absolute entries (none names the work tree). For a pytest command: the
grader's env gets PYTHONSAFEPATH=1 (so `python -m pytest` imports pytest from the venv, never a `pytest.py` or
`pytest/` of the work tree), PYTEST_ADDOPTS `-p passhat_runner_guard` and PYTHONPATH with passhat's plugin
folder (bound read-only in the sandbox), and two descriptors: a pipe holding the plugin's setup (a fresh MAC
key, the canary) and the result file, opened by passhat in a folder the sandbox cannot see. For `node --test`:
canary tests at the end of a test file. PASSHAT_RUNNER_GUARD=off turns all of it off (for tests that show an
attack works without it); the grade then rests on the exit status and the JUnit report alone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import re
import secrets
import shlex
import shutil
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from passhat.graders._globs import _compile
from passhat.graders.runner._canary import PRUNE, Canary, Runner, add_canary

GUARD_ENV = "PASSHAT_RUNNER_GUARD"
TWINS_ENV = "PASSHAT_TWINS"
AUDIT_ENV = "PASSHAT_AUDIT"
LATE_ENV = "PASSHAT_LATE_HOOKS"
_PIPE_BYTES = 60_000  # under Linux's 64 KiB pipe buffer
PLUGIN_DIR = Path(__file__).resolve().with_name("plugin")
PLUGIN = "passhat_runner_guard"  # the name pytest loads: a shim over HOOKS (what pytest rewrites is the shim)
HOOKS = "passhat_guard_hooks"
TWINS = "passhat_guard_twins"
LOADER = "passhat_guard_loader"
AUDIT = "passhat_guard_audit"
LATE = "passhat_guard_late"
PERTURB = "passhat_guard_perturb"
MODULES = (PLUGIN, HOOKS, TWINS, PERTURB, LOADER, AUDIT, LATE)  # every top-level module of the plugin's folder
_PYTEST = re.compile(r"(?:^|[\s/;&|(`])(?:py\.test|pytest)(?:\s|$|[;&|)`])")
_NODE_TEST = re.compile(r"(?:^|[\s/;&|(])node\s+(?:[^;&|]*\s)?--test(?:\s|$|=)")
_JS_FILE = re.compile(r"\.[cm]?js$|\*")


def guard_on() -> bool:
    return os.environ.get(GUARD_ENV, "on").strip().lower() not in ("off", "0", "false", "no")


def twins_on() -> bool:
    """PASSHAT_TWINS=off: no perturbed-expectation twins (for tests that show an attack works without them)."""
    return os.environ.get(TWINS_ENV, "on").strip().lower() not in ("off", "0", "false", "no")


def audit_on() -> bool:
    """PASSHAT_AUDIT=off: no audit hook in the test process (for tests that show an attack works without it)."""
    return _on(AUDIT_ENV)


def _on(name: str) -> bool:
    """A part of the guard that tests can turn off (=off) to show an attack works without it."""
    return os.environ.get(name, "on").strip().lower() not in ("off", "0", "false", "no")


def runner_of(command: str) -> Runner | None:
    """The runner a task's command runs, as far as its text says: pytest, `node --test`, or neither."""
    if _PYTEST.search(command):
        return "pytest"
    if (match := _NODE_TEST.search(command)) and not _names_files(command[match.start() :]):
        return "node"
    return None


def absolute_path(path: str) -> str:
    """PATH without relative or empty entries: the command runs at the root of the work tree, so `node_modules/.bin`
    or `.` in the host's PATH would let a `node` or `python` the agent wrote stand in for the real one."""
    return os.pathsep.join(entry for entry in path.split(os.pathsep) if os.path.isabs(entry))


def _names_files(tail: str) -> bool:
    """`node --test a.test.js` runs only the files it names, a name pattern only the tests it matches, and a `dot`
    reporter names no test: canaries could not be sure to run, or be read (not guarded yet)."""
    try:
        words = shlex.split(re.split(r"[;&|]", tail, maxsplit=1)[0])
    except ValueError:
        return True
    filters = ("--test-name-pattern", "--test-skip-pattern", "--test-only")
    reporters = [word.partition("=")[2] for word in words if word.startswith("--test-reporter=")]
    if reporters and not {"spec", "tap", "junit"} & set(reporters):
        return True  # e.g. only `dot`: no test's name is printed, so no canary's outcome could be read
    return any((not word.startswith("-") and _JS_FILE.search(word)) or word.startswith(filters) for word in words[1:])


@dataclass
class Guard:
    """One run's guard: its runner, canary, channel (pytest) and what run_command needs to pass them on."""

    runner: Runner
    canary: Canary
    tree: Path
    env: dict[str, str] = field(default_factory=dict)
    fds: tuple[int, ...] = ()
    results: Path | None = None
    key: bytes = b""
    impostors: tuple[str, ...] = ()  # files of the tree named as passhat's plugin modules (pytest)
    protected: tuple[str, ...] = ()  # the test files' globs (the audit hook's records from them are the tests')

    @property
    def exposed(self) -> tuple[Path, ...]:
        """Bound read-only in the sandbox: the plugin's folder (pytest)."""
        return (PLUGIN_DIR,) if self.runner == "pytest" else ()

    def close(self) -> None:
        """passhat's ends of the descriptors, once the command has started (or failed to)."""
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = ()


def open_guard(
    command: str, tree: Path, protected: tuple[str, ...], env: dict[str, str], twins: tuple[str, ...] = ()
) -> Guard | None:
    """The guard of a run of `command` in `tree` (None when the guard is off or the runner is not one it knows).
    Keeps only absolute PATH entries in `env` (any command); adds the canary to `tree` and, for pytest, makes the
    channel beside the tree and sets `env` for it. `twins`: JUnit ids of the tests run again as perturbed-
    expectation twins (pytest; none when PASSHAT_TWINS=off)."""
    if not guard_on():
        return None
    env["PATH"] = absolute_path(env.get("PATH", ""))
    runner = runner_of(command)
    if runner is None:
        return None
    guard = Guard(runner, add_canary(tree, runner, protected), tree.resolve(), protected=protected)
    if runner == "pytest":
        guard.impostors = impostors(guard.tree)
        _open_channel(guard, env, twins if twins_on() else ())
    return guard


@cache
def _compile_plugin() -> None:
    """The hooks' bytecode beside them, written here on the host once: the grader's python may only read the
    plugin's folder (and runs with PYTHONDONTWRITEBYTECODE), so it would compile them again on every run —
    about 3 ms of each pytest run's guard cost. Where the folder is not writable, python compiles them as before."""
    for name in MODULES[1:]:
        source = PLUGIN_DIR / f"{name}.py"
        compiled = Path(importlib.util.cache_from_source(str(source)))
        try:
            if compiled.stat().st_mtime_ns >= source.stat().st_mtime_ns:
                continue
        except OSError:
            pass
        try:
            py_compile.compile(str(source), cfile=str(compiled), doraise=True)
        except (OSError, py_compile.PyCompileError):
            pass


def impostors(tree: Path) -> tuple[str, ...]:
    """Paths of the tree named as passhat's plugin modules (`passhat_runner_guard.py`, a `passhat_guard_hooks/`
    package, ..., or an entry point of that name in a `*.dist-info/`). pytest puts its `pythonpath` ini folders
    (often `.`) on sys.path before it imports `-p` plugins: there such a module loads in place of passhat's, and
    could read the channel's key from the setup pipe. No honest change needs one, so the run is gamed (runner-shadowed). Folders no test path names
    (.git, node_modules, virtualenvs, caches) are not searched."""
    found = []
    for folder, dirs, names in os.walk(tree):  # never enters links
        dirs[:] = sorted(d for d in dirs if d not in PRUNE)
        here = Path(folder).relative_to(tree)
        found += [(here / name).as_posix() for name in (*dirs, *names) if name.split(".")[0] in MODULES]
        if here.name.endswith((".dist-info", ".egg-info")) and "entry_points.txt" in names:
            found += [(here / "entry_points.txt").as_posix()] if _names_ours(Path(folder) / "entry_points.txt") else []
    return tuple(sorted(found))


def _names_ours(entry_points: Path) -> bool:
    """An entry point named as a module of passhat's plugin: `-p passhat_runner_guard` loads it first."""
    try:
        text = entry_points.read_text(encoding="utf-8", errors="replace")[:100_000]
    except OSError:
        return False
    return any(line.split("=")[0].strip() in MODULES for line in text.splitlines() if "=" in line)


def _source_only(guard: Guard, env: dict[str, str]) -> None:
    """Only source runs from the tree: its `__pycache__` folders are removed from this private copy (the grader's
    python writes none: the tree's modules compile from source; a cache prefix would make the whole environment
    compile too), sourceless modules are not found (passhat_guard_loader's path hook), and pytest's plugin auto-load
    is off and done by passhat_guard_loader for distributions outside the tree (a task that turned it off keeps it
    off)."""
    for folder, dirs, _names in os.walk(guard.tree):  # never enters links
        for name in [d for d in dirs if d == "__pycache__"]:
            path = os.path.join(folder, name)
            os.unlink(path) if os.path.islink(path) else shutil.rmtree(path, ignore_errors=True)
        dirs[:] = [d for d in dirs if d not in (".git", "node_modules", "__pycache__")]
    env["PASSHAT_GUARD_TREE"] = str(guard.tree)
    if not env.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        env["PYTEST_PLUGINS"] = ",".join(filter(None, [LOADER, env.get("PYTEST_PLUGINS", "")]))


def _open_channel(guard: Guard, env: dict[str, str], twins: tuple[str, ...]) -> None:
    _compile_plugin()
    folder = guard.tree.parent / "guard"
    folder.mkdir(mode=0o700)
    guard.results = folder / "results.jsonl"
    out = os.open(guard.results, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)
    guard.key = secrets.token_bytes(32)
    canary = guard.canary
    setup = {
        "key": guard.key.hex(),
        "out": out,
        "canary": {"path": str(guard.tree / canary.rel), "pass": canary.passing, "fail": canary.failing},
        "twins": list(twins),
        "audit": audit_on(),
        "tests": [_compile(glob).pattern for glob in guard.protected],  # the audit hook's test files
        "late": _on(LATE_ENV),
    }
    read, write = os.pipe()
    data = json.dumps(setup).encode()
    if len(data) > _PIPE_BYTES:  # the pipe is filled before the runner starts: keep it within its buffer
        setup["twins"] = list(twins)[: max(0, len(twins) * _PIPE_BYTES // len(data) - 1)]
        data = json.dumps(setup).encode()
    os.write(write, data)
    os.close(write)
    guard.fds = (read, out)
    _source_only(guard, env)
    python_path = os.pathsep.join(filter(None, [str(PLUGIN_DIR), env.get("PYTHONPATH", "")]))
    addopts = " ".join(filter(None, [f"-p {PLUGIN}", env.get("PYTEST_ADDOPTS", "")]))
    if "PYTHONSAFEPATH" not in env:  # the task's own setting is left as it is
        env.update(PYTHONSAFEPATH="1", PASSHAT_GUARD_SAFE_PATH="1")
    env.update(
        PYTHONPATH=python_path,
        PYTEST_ADDOPTS=addopts,
        PASSHAT_GUARD_FD=str(read),
    )
