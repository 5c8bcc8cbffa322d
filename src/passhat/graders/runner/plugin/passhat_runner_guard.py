"""passhat's pytest plugin as `-p passhat_runner_guard` names it; its hooks live in passhat_guard_hooks.

pytest rewrites the asserts of a module named by `-p`: it parses and compiles that module's source on every run
(the folder is read-only and the grader's python writes no bytecode, so nothing is kept). This shim is all it
rewrites; the hooks' module is imported as any other, from the bytecode passhat wrote beside it — about 5 ms off
every guarded pytest run.
"""

# pytest finds the hooks on this module; mypy sees this folder as a package of passhat, the grader as top level
from passhat_guard_hooks import (  # type: ignore[import-not-found]  # noqa: F401
    pytest_collection,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_ignore_collect,
    pytest_runtest_call,
    pytest_runtest_logreport,
    pytest_runtest_protocol,
    pytest_runtestloop,
    pytest_sessionfinish,
)
