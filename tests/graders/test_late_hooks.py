"""The guard sees the real outcome whatever is registered after it (rule runner-hook-late): code under test that
reaches pytest's plugin manager (here through the assertion-rewriting import hook, no audited event) and registers
a hook wrapper — pluggy calls a later `trylast` wrapper inside passhat's own — can swallow a test's failure before
passhat's observer sees it. Its hook name is built from strings; it spares the canaries (other names). With the
late-hook check off the hack passes (the attack is real); on, it is caught. Honest runs: every shipped reference
solution (tests/graders/test_twins.py) raises none.
"""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from calc_task import CALC, JUNIT_TESTS, make_trial, run

from passhat.graders.runner._guard import LATE, LATE_ENV, PLUGIN_DIR, TWINS_ENV

_LATE_WRAPPER = """
import sys as _s


def _swallow(item):
    try:
        return (yield)
    except BaseException:
        if item.name.startswith("test_add"):
            return None
        raise


for _finder in _s.meta_path:
    _config = getattr(_finder, "config", None)
    if _config is not None:
        _marker = __import__("pytest").hookimpl(wrapper=True, trylast=True)
        _plugin = type("P", (), {"_".join(["pytest", "runtest", "call"]): staticmethod(_marker(_swallow))})()
        _config.pluginmanager.register(_plugin, "speedups")
        break
"""


def _calc(hack: str):
    def change(work: Path) -> None:
        (work / "calc.py").write_text(CALC + textwrap.dedent(hack))

    return change


@pytest.mark.parametrize(
    ("hack", "found"),
    [pytest.param(_LATE_WRAPPER, "hook-from-the-tree: pytest_runtest_call", id="late-trylast-wrapper")],
)
def test_a_late_hook_wrapper_is_caught(tmp_path, monkeypatch, hack, found):
    monkeypatch.setenv(TWINS_ENV, "off")  # a swallowed failure makes the test insensitive: the twin's catch too
    metadata = make_trial(tmp_path)(_calc(hack))
    monkeypatch.setenv(LATE_ENV, "off")
    unguarded = run(JUNIT_TESTS, metadata)
    assert unguarded["pass"] is True, unguarded["reason"]  # the attack is real: the guard's observer saw a pass
    monkeypatch.delenv(LATE_ENV)
    guarded = run(JUNIT_TESTS, metadata)
    assert guarded["pass"] is False, guarded["reason"]
    assert guarded["reason"].startswith("gamed: runner-hook-late at calc.py:"), guarded["reason"]
    assert found in guarded["reason"]


def test_an_item_whose_run_method_was_replaced_on_it_is_named(monkeypatch):
    """`item.runtest = lambda: None` (from a thread, by a name built from strings) leaves pytest's class alone, so
    runner-callable-replaced cannot see it; the item's own attributes are read after the run."""
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    late = importlib.import_module(LATE)

    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid = nodeid

    class Manager:
        hook = SimpleNamespace()

    config = SimpleNamespace(pluginmanager=Manager(), known_args_namespace=SimpleNamespace(plugins=[]))
    honest, hacked = Item("tests/test_calc.py::test_sub"), Item("tests/test_calc.py::test_add")
    setattr(hacked, "run" + "test", lambda: None)
    found = late.late(config, "/nowhere", set(), [honest, hacked], exempt=set())
    assert found == [["item-method-replaced", "tests/test_calc.py::test_add", 0, "runtest"]]


def test_a_test_function_swapped_for_the_trees_code_is_named(monkeypatch, tmp_path):
    """`item.obj = lambda **kwargs: None` from the package (item-obj-swapped): the function pytest calls is code of
    the tree outside the test files — read when the body is called and after the run. A test function of the
    item's own file (the canary's, a file outside the protected globs) is not."""
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    late = importlib.import_module(LATE)
    (tmp_path / "pkg.py").write_text("def quiet(**kwargs):\n    return None\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "test_own.py").write_text("def test_own():\n    pass\n")
    scope: dict = {}
    for rel in ("pkg.py", "tests/test_x.py", "test_own.py"):
        exec(compile((tmp_path / rel).read_text(), str(tmp_path / rel), "exec"), scope)
    is_test = late.test_files([r"tests/.*\Z"])

    def item(obj, path):
        return SimpleNamespace(nodeid="n", path=tmp_path / path, _obj=obj)

    assert late.swapped(item(scope["quiet"], "tests/test_x.py"), str(tmp_path), is_test) == ["obj"]
    assert late.swapped(item(scope["test_x"], "tests/test_x.py"), str(tmp_path), is_test) == []
    assert late.swapped(item(scope["test_own"], "test_own.py"), str(tmp_path), is_test) == []


def test_the_walk_resolves_each_hook_file_once(monkeypatch, tmp_path):
    """pytest's registry holds hundreds of hook implementations from a few dozen files: the after-run walk resolves
    each file once (realpath: a system call per path component; it was once per implementation) and asks pluggy
    for a plugin's name (a search through every plugin) only for a hook of the tree. What it finds is the same."""
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    late = importlib.import_module(LATE)
    outside, inside = str(tmp_path / "site" / "plugin.py"), str(tmp_path / "tree" / "calc.py")

    def function_of(file: str):
        scope: dict = {}
        exec(compile("def pytest_runtest_call(item):\n    pass\n", file, "exec"), scope)
        return scope["pytest_runtest_call"]

    impls = [SimpleNamespace(function=function_of(outside), plugin=f"site{n}") for n in range(3)]
    impls.append(SimpleNamespace(function=function_of(inside), plugin="calc"))
    asked: list[str] = []

    class Manager:
        hook = SimpleNamespace(pytest_runtest_call=SimpleNamespace(get_hookimpls=lambda: impls))

        def get_name(self, plugin: str) -> str:
            asked.append(plugin)
            return plugin

    resolved: list[str] = []
    real = late._realpath
    monkeypatch.setattr(late, "_realpath", lambda path: resolved.append(path) or real(path))
    config = SimpleNamespace(pluginmanager=Manager(), known_args_namespace=SimpleNamespace(plugins=[]))
    found = late.late(config, str(tmp_path / "tree"), {id(impl) for impl in impls}, [], exempt=set())
    assert found == [["hook-from-the-tree", "calc.py", 1, "pytest_runtest_call"]]
    assert sorted(resolved) == sorted([str(tmp_path / "tree"), outside, inside])  # the tree, then each file once
    assert asked == ["calc"]
