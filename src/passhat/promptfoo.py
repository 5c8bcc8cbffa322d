"""Promptfoo's entry points, importable from the installed package: the provider, the one assertion of a trial's
deterministic graders, an assertion of one grader of any kind, and the tests generator. A repository that uses
passhat needs one small file (`passhat init` writes it):

    # passhat_promptfoo.py
    from passhat.promptfoo import *  # noqa: F403
    generate_tests = tests_generator(__file__)

promptfooconfig.yaml names that file as the provider (`id: file://passhat_promptfoo.py`, which calls
`call_api`) and as the tests generator (`tests: file://passhat_promptfoo.py:generate_tests`); every test it
generates names the same file again for its graders: `file:///abs/passhat_promptfoo.py:get_assert_graders` runs
all of a task's deterministic graders (tests, files, diff-scope, health, ...) in one process, and each judge has
its own (`...:get_assert_grader`, the kind in its config); passhat.graders._suite says why.

Every assertion call is a fresh Python process (Promptfoo), so importing this module imports no stage:
each function imports the one it needs when called.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ALL_GRADERS = "get_assert_graders"  # the one assertion of a task's deterministic graders
ONE_GRADER = "get_assert_grader"  # an assertion of one grader of any kind (a judge), its type in its config

__all__ = [
    "ALL_GRADERS",
    "ONE_GRADER",
    "afterAll",
    "afterEach",
    "call_api",
    "get_assert_grader",
    "get_assert_graders",
    "tests_generator",
]


def call_api(prompt: str, options: dict, context: dict) -> dict:
    """The provider: one trial of Claude Code in a fresh sandbox (passhat.trial)."""
    from passhat.common import _cpu_roles as roles  # bench/where_cpu_goes.py; off unless asked

    roles.mark("provider")
    started = time.thread_time()  # this thread's: the proxy's threads are the rest of the worker's CPU
    try:
        from passhat.trial import call_api as run_trial

        return run_trial(prompt, options, context)
    finally:
        roles.stage("trial-thread", time.thread_time() - started)


def get_assert_graders(output: Any, context: dict) -> dict:
    """Every deterministic grader of the trial (`config.graders`) in this one process, on one view of the trial:
    a GradingResult with one component and one named score per grader."""
    from passhat.common import _cpu_roles as roles  # bench/where_cpu_goes.py; off unless asked

    roles.mark("assertion")
    started = time.process_time()
    from passhat.graders._live import grade_all_promptfoo

    roles.stage("import", time.process_time() - started)
    return grade_all_promptfoo(context)


def get_assert_grader(output: Any, context: dict) -> dict:
    """One grader, of the kind `config.type` names: a judge (rubric, pairwise) grades the live trial."""
    from passhat.common import _cpu_roles as roles  # bench/where_cpu_goes.py; off unless asked

    roles.mark(f"assertion:{(context.get('config') or {}).get('type')}")
    started = time.process_time()
    from passhat.graders._live import grade_one_promptfoo

    roles.stage("import", time.process_time() - started)
    return grade_one_promptfoo(output, context)


def tests_generator(entry_file: str | Path, tasks_dir: str | Path = "tasks") -> Callable[..., list[dict]]:
    """Promptfoo's `generate_tests` for the entry file `entry_file` (pass `__file__`): one test per folder in
    `tasks_dir` (relative to the entry file's folder; `PASSHAT_TASKS=a,b` picks some), each grader an
    assertion that calls `entry_file`'s `get_assert_graders` (deterministic graders) or `get_assert_grader`."""
    entry = Path(entry_file).resolve()
    tasks = entry.parent / tasks_dir

    def generate_tests(config: dict | None = None) -> list[dict]:
        """`config` is what a `tests: {path: ..., config: ...}` entry gives; nothing in it is read."""
        from passhat.common import _cpu_roles as roles  # bench/where_cpu_goes.py; off unless asked

        roles.mark("generator")
        started = time.process_time()
        from passhat.graders._suite import ALL, generate_tests

        roles.stage("import", time.process_time() - started)
        from passhat.common._errors import PasshatError

        where = lambda which: f"file://{entry}:{ALL_GRADERS if which == ALL else ONE_GRADER}"  # noqa: E731
        try:
            return generate_tests(tasks, where)
        except PasshatError:  # one task that does not load: the others run, and it errors once per trial
            return _each_task(tasks, where)

    return generate_tests


def _each_task(tasks: Path, where: Callable[[str], str]) -> list[dict]:
    """One test per task folder, as passhat.graders._suite.generate_tests makes them; a folder whose task.yaml
    does not load is a test without graders whose every trial is an error row saying why in one line (the
    provider loads the task again), not a Python and a Node trace that stop the eval. A problem of the whole
    folder (none there, an unknown PASSHAT_TASKS name) is said in one line, exit 2."""
    import os
    import sys

    from passhat.common._errors import PasshatError
    from passhat.graders._suite import TASKS_ENV, generate_tests

    given = os.environ.get(TASKS_ENV)
    only = {name.strip() for name in os.environ.get(TASKS_ENV, "").split(",") if name.strip()}
    folders = sorted(p for p in tasks.iterdir() if (p / "task.yaml").is_file() and (not only or p.name in only))
    if not folders or (only and only - {p.name for p in folders}):
        try:
            generate_tests(tasks, where)
        except PasshatError as error:
            print(f"passhat: error: {error}", file=sys.stderr, flush=True)
            raise SystemExit(2) from None
    found = []
    for folder in folders:
        os.environ[TASKS_ENV] = folder.name
        try:
            found += generate_tests(tasks, where)
        except PasshatError:
            vars_ = {"task_id": folder.name, "task_dir": str(folder), "prompt": f"(task {folder.name} does not load)"}
            found.append({"description": folder.name, "vars": vars_, "metadata": {"task_id": folder.name}})
    if given is None:
        del os.environ[TASKS_ENV]
    else:
        os.environ[TASKS_ENV] = given
    return found


# --- the extension hooks (`extensions: [file://passhat_promptfoo.py:afterAll, ...:afterEach]`) ---------------------
# Promptfoo calls a hook by the name after the colon, with (context, {"hookName": ...}); passhat.extension says what
# each does. The names are Promptfoo's.


def afterAll(context: dict, options: dict | None = None) -> None:  # noqa: N802
    """Print passhat's verdict on the eval's rows at the end of `promptfoo eval`, failed trials or not."""
    from passhat.common import _cpu_roles as roles  # bench/where_cpu_goes.py; off unless asked

    roles.mark("hook:afterAll")
    started = time.process_time()
    from passhat.extension import after_all

    roles.stage("import", time.process_time() - started)
    after_all(context)


def afterEach(context: dict, options: dict | None = None) -> dict | None:  # noqa: N802
    """Add to a finished row the changes it made to the suite's figures, which the viewer's derived metrics sum."""
    from passhat.common import _cpu_roles as roles  # bench/where_cpu_goes.py; off unless asked

    roles.mark("hook:afterEach")
    started = time.process_time()
    from passhat.extension import after_each

    roles.stage("import", time.process_time() - started)
    return after_each(context)
