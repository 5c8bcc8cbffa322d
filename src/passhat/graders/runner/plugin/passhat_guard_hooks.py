"""passhat's pytest plugin for the `tests` grader: each test's outcome over a channel the code under test did
not open, canary tests run and accounted for, and a check that pytest's own machinery is still pytest's.

Loaded first (`PYTEST_ADDOPTS=-p passhat_runner_guard`, a shim that imports these hooks, from a read-only folder
of passhat's on PYTHONPATH), before any conftest or test module is imported. At import it reads its setup from the file descriptor named by
PASSHAT_GUARD_FD (a pipe passhat filled and closed: a MAC key, the descriptor of the result file, the canary)
and closes it, so code imported later cannot read the key. Every record it writes is one JSON line with a
sequence number and an HMAC; passhat (passhat.graders.runner) reads them back after the run.

Without a setup (PASSHAT_GUARD_FD unset or already read: a pytest started by a test, a second pytest in the
same command) it only keeps passhat's canary files out of the collection. Standard library and pytest only:
it runs in the grader's sandbox, in the process of the code under test.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import Any

import passhat_guard_audit as _audit  # type: ignore[import-not-found]
import passhat_guard_late as _late  # type: ignore[import-not-found]
import passhat_guard_loader as _loader  # type: ignore[import-not-found]
import passhat_guard_twins as _twins  # type: ignore[import-not-found]
import pytest
from _pytest import main as _main
from _pytest import runner as _runner
from _pytest.outcomes import Skipped, XFailed
from _pytest.python import Function
from _pytest.reports import TestReport
from _pytest.runner import CallInfo

CANARY_MARK = "# passhat canary"
# bound now, before any test module: a later patch of os.write or json.dumps changes nothing here
_write, _close, _sha256, _dumps = os.write, os.close, hashlib.sha256, json.dumps


def _mac(key: bytes, body: bytes) -> bytes:
    """HMAC-SHA256 (RFC 2104) from hashlib alone. This module imports nothing that pytest has not imported
    already: when pytest 9 imports a `-p` plugin, its `pythonpath` ini folders (often the work tree) are first on
    sys.path, and the stdlib's `hmac`, not imported yet, would come from an `hmac.py` there and see the key."""
    block = key.ljust(64, b"\0")  # the key is 32 bytes, within SHA-256's 64-byte block
    inner = _sha256(bytes(b ^ 0x36 for b in block) + body).digest()
    return _sha256(bytes(b ^ 0x5C for b in block) + inner).hexdigest().encode()


def _own(owner: Any, name: str) -> object:
    """The attribute itself (a class's own entry, not a bound method), or None where this pytest has none."""
    return owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)


_CORE: dict[str, tuple[Any, str]] = {
    "TestReport.from_item_and_call": (TestReport, "from_item_and_call"),
    "CallInfo.from_call": (CallInfo, "from_call"),
    "Function.runtest": (Function, "runtest"),
    "_pytest.runner.runtestprotocol": (_runner, "runtestprotocol"),
    "_pytest.runner.call_and_report": (_runner, "call_and_report"),
    "_pytest.runner.pytest_runtest_protocol": (_runner, "pytest_runtest_protocol"),
    "_pytest.runner.pytest_runtest_makereport": (_runner, "pytest_runtest_makereport"),
    "_pytest.runner.pytest_runtest_call": (_runner, "pytest_runtest_call"),
    "_pytest.main.pytest_runtestloop": (_main, "pytest_runtestloop"),
    "Session.pytest_runtest_logreport": (_main.Session, "pytest_runtest_logreport"),
}
_ORIGINAL = {label: _own(owner, name) for label, (owner, name) in _CORE.items()}  # before any test module


class _Channel:
    """The result file: one `JSON<TAB>HMAC` line per record, numbered. Test outcomes go in batches (`tests`, up
    to BATCH per record): one MAC and one write per batch, not per test. A batch not yet written when the process
    dies is lost, which can only make the run look worse (a test the report claims and the channel never saw is
    a disagreement); every other record flushes the batch first, so the order holds."""

    BATCH = 64

    def __init__(self, key: bytes, fd: int) -> None:
        self.key, self.fd, self.seq = key, fd, 0
        self.tests: list[list[object]] = []

    def test(self, *outcome: object) -> None:
        self.tests.append(list(outcome))
        if len(self.tests) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        if self.tests:
            items, self.tests = self.tests, []
            self._write_record("tests", items=items)

    def send(self, kind: str, **fields: object) -> None:
        self.flush()
        self._write_record(kind, **fields)

    def _write_record(self, kind: str, **fields: object) -> None:
        body = _dumps({"seq": self.seq, "kind": kind, **fields}, sort_keys=True).encode()
        mac = _mac(self.key, body)
        self.seq += 1
        line = body + b"\t" + mac + b"\n"
        while line:
            line = line[_write(self.fd, line) :]


def _setup() -> tuple[_Channel, dict[str, Any]] | None:
    fd_text = os.environ.pop("PASSHAT_GUARD_FD", "")
    if not fd_text.isdigit():
        return None
    chunks = []
    try:
        while chunk := os.read(int(fd_text), 65536):
            chunks.append(chunk)
        _close(int(fd_text))
    except OSError:
        return None
    try:
        setup = json.loads(b"".join(chunks))
    except ValueError:
        return None
    return _Channel(bytes.fromhex(setup["key"]), int(setup["out"])), setup


_SETUP = _setup()
# the audit hook: before any test module is imported
_audited = (
    _audit.install(_loader._TREE, _SETUP[1].get("tests", ())) if _SETUP is not None and _SETUP[1].get("audit") else None
)
if _SETUP is not None:
    _loader.source_only(_loader._TREE)  # before any module of the tree is imported
if os.environ.pop("PASSHAT_GUARD_SAFE_PATH", "") == "1":
    # PYTHONSAFEPATH was passhat's, for the runner's start alone: pytest came from site-packages, not from the
    # work tree. Now that it is imported, `python -m pytest` gets the start folder on sys.path as `python -m`
    # puts it (the tests import from it), and the processes the tests start get no PYTHONSAFEPATH.
    os.environ.pop("PYTHONSAFEPATH", None)
    if sys.argv[0].endswith("__main__.py"):
        sys.path.insert(0, os.getcwd())
_raw: dict[str, str] = {}
_reported: dict[str, str] = {}  # node id → its call report's outcome
_canary_ids: dict[str, str] = {}  # "pass" / "fail" → the canary's node id, once collected
_watched: list[pytest.Config] = []  # the command's own pytest session (not one a test runs in-process)
_in_body: list[str] = []  # the node id of the test whose body is running: a report meanwhile is an inner session's
_twin_raw: dict[str, str] = {}  # node id → what its twin's body did (a twin runs unlogged)
_twin_now: list[str] = []  # the node id whose twin is running
_planner = _twins.Planner()
_before_run: set[int] = set()  # the hook implementations registered when the tests began to run
_is_test = _late.test_files(_SETUP[1].get("tests", ()) if _SETUP is not None else ())
_swaps: dict[str, list[str]] = {}  # node id → what of its run was not pytest's when its body was called


def _ours(config: pytest.Config) -> bool:
    return _SETUP is not None and bool(_watched) and _watched[0] is config


def _canary(config: pytest.Config) -> dict[str, str] | None:
    return _SETUP[1].get("canary") if _SETUP is not None and _ours(config) else None


def _is_canary_file(path: Path) -> bool:
    if path.suffix != ".py" or not path.name.startswith("test_"):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.readline().rstrip("\n") == CANARY_MARK
    except OSError:
        return False


def pytest_configure(config: pytest.Config) -> None:
    if _SETUP is not None and not _watched:
        _watched.append(config)
        _SETUP[0].send("start", pid=os.getpid(), argv=sys.argv[1:], cwd=os.getcwd())


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A canary file of another run (or one the agent planted) is never collected: only this run's."""
    canary = _canary(config)
    if canary is not None and str(collection_path) == canary["path"]:
        return None
    return True if _is_canary_file(collection_path) else None


def _covered(path: Path, args: Iterable[str], start: Path) -> bool:
    for arg in args:
        root = (start / arg.split("::", 1)[0]).resolve()
        if path == root or path.is_relative_to(root):
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """The canary is collected whatever the command names (explicit files, testpaths)."""
    canary = _canary(session.config)
    if canary is None:
        return
    path, start = Path(canary["path"]), session.config.invocation_params.dir
    patterns = session.config.getini("python_files")
    named = any(Path(path.name).match(pattern) for pattern in patterns)
    if not (named and _covered(path, session.config.args, start)):
        session.config.args.append(str(path))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> Generator[None, None, None]:
    """Canaries run last (so -x or an earlier stop never cuts the task's tests short): the passing one, then the
    failing one; a canary deselected by -k or -m is put back."""
    before = list(items)
    result = yield
    canary = _canary(config)
    if canary is not None:
        names = [canary["pass"], canary["fail"]]
        found = {item.name: item for item in before if str(item.path) == canary["path"] and item.name in names}
        items[:] = [item for item in items if item not in found.values()]
        items.extend(found[name] for name in names if name in found)
        if canary["fail"] in found:  # its failure is expected: a one-line report, not a formatted traceback
            found[canary["fail"]].repr_failure = _canary_failure  # type: ignore[method-assign]
        _canary_ids.update(
            {key: found[name].nodeid for key, name in zip(("pass", "fail"), names, strict=True) if name in found}
        )
        if _SETUP is not None:
            _SETUP[0].send("canaries", ids=_canary_ids)
    return result


def _canary_failure(excinfo: pytest.ExceptionInfo[BaseException], style: str | None = None) -> str:
    return f"passhat canary: failed as it must ({excinfo.typename})"


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """What the test body really did, seen next to runtest(), before any report is made of it."""
    if not _ours(item.config):
        return (yield)
    raw = _twin_raw if _twin_now else _raw
    if item.nodeid != _canary_ids.get("fail") and (found := _late.swapped(item, _loader._TREE, _is_test)):
        _swaps.setdefault(item.nodeid, found)
    _in_body.append(item.nodeid)
    try:
        result = yield
    except (Skipped, XFailed):
        raw[item.nodeid] = "skipped"
        raise
    except BaseException:
        raw[item.nodeid] = "failed"
        raise
    finally:
        _in_body.pop()
    raw[item.nodeid] = "passed"
    return result


def _junit_id(nodeid: str) -> str:
    """As passhat's reader names a test (graders._junit.junit_id): `a/b.py::C::t` → `a.b.C::t`."""
    path, *names = nodeid.split("::")
    module = path.removesuffix(".py").replace("/", ".")
    return f"{'.'.join([module, *names[:-1]])}::{names[-1]}" if names else module


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """A listed test (FAIL_TO_PASS) also runs as its perturbed-expectation twin, before or after it at random."""
    wanted = _SETUP[1].get("twins") if _SETUP is not None and _ours(item.config) and not _in_body else None
    twin = _plan(item) if wanted and _junit_id(item.nodeid) in wanted else None
    if twin is None:
        return (yield)
    first = _twins.draw(2) == 0
    if first:
        _run_twin(item, twin, item.parent)
    result = yield
    if not first:
        _run_twin(item, twin, nextitem)
    assert _SETUP is not None
    _SETUP[0].send("twin", id=item.nodeid, where=twin.where, raw=_twin_raw.get(item.nodeid), first=first)
    return result


def _plan(item: pytest.Item) -> Any:
    """The item's twin, or None: one that cannot be built (a warning made an error, a decorator that raises) is not
    run, and the test runs as it would have."""
    try:
        return _planner.plan(item)
    except Exception:  # any: the test itself still runs
        return None


def _run_twin(item: pytest.Item, twin: object, nextitem: object) -> None:
    _twin_now.append(item.nodeid)
    try:
        _twins.run(item, twin, nextitem)
    except Exception:  # a twin that breaks is not a pass: its raw outcome stays unset
        _twin_raw.pop(item.nodeid, None)
    finally:
        _twin_now.pop()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _SETUP is None or not _watched or _in_body:
        return
    if report.when == "call":
        _reported[report.nodeid] = report.outcome
    elif report.outcome == "passed":
        return  # a setup or teardown that passed says nothing the call's record does not (a third of the records)
    raw = _raw.get(report.nodeid) if report.when == "call" else None
    xfail = hasattr(report, "wasxfail")
    _SETUP[0].test(report.nodeid, report.when, report.outcome, raw, xfail)  # TEST_FIELDS of passhat's reader


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, bool, bool]:
    """The failing canary's failure is passhat's, not the task's: it does not count toward the exit status
    (nor toward -x / --maxfail, as it runs last)."""
    if not _ours(session.config):
        return (yield)
    _before_run.update(_late.snapshot(session.config))
    try:
        result: bool = yield
    except session.Failed:
        if not _excuse_canary(session) or session.testsfailed:
            raise
        session.shouldfail = False
        return True
    _excuse_canary(session)
    return result


def _excuse_canary(session: pytest.Session) -> bool:
    if _reported.get(_canary_ids.get("fail", "")) != "failed":
        return False  # only a failure the runner counted is taken off its count
    session.testsfailed = max(0, session.testsfailed - 1)
    return True


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> Generator[None, None, None]:
    result = yield
    if _SETUP is not None and _ours(session.config):
        replaced = [label for label, (owner, name) in _CORE.items() if _own(owner, name) is not _ORIGINAL[label]]
        if _audited is not None:
            _SETUP[0].send("audit", events=_audited())
        exempt = {_canary_ids.get("fail", "")}
        late = _late.late(session.config, _loader._TREE, _before_run, list(session.items), exempt, _is_test)
        seen = {entry[1] for entry in late if entry[0] == "item-method-replaced"}
        late += [
            ["item-method-replaced", test, 0, ", ".join(what)] for test, what in _swaps.items() if test not in seen
        ]
        late = late[:20] if _SETUP[1].get("late") else []
        _SETUP[0].send("end", exitstatus=int(session.exitstatus), replaced=replaced, late=late)
    return result
