"""`passhat check-task`: a task's reference passes every grader, the empty patch fails one, and `auto` test
lists are computed (cached) and shown (logic in passhat.graders)."""

from __future__ import annotations

import argparse
from pathlib import Path

from passhat.common._errors import PasshatError
from passhat.graders._check import check_task, describe, uncached_auto

HELP = "check tasks without a model: solution.patch passes every grader, the empty patch fails one"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tasks", nargs="*", help="task folders, e.g. tasks/bump-version")
    parser.add_argument("--all", action="store_true", help="every task under --tasks-dir")
    parser.add_argument("--tasks-dir", default="tasks", help="folder of tasks/<id>/task.yaml (default tasks)")
    parser.add_argument("--state-dir", default=".passhat", help="where bases are cached (default .passhat)")


def run(args: argparse.Namespace) -> int:
    from passhat.graders import load_graded_task as load_task
    from passhat.graders import load_graded_tasks as load_tasks

    if args.all == bool(args.tasks):
        msg = "check-task: name task folders (passhat check-task tasks/<id>) or pass --all, not both or neither"
        raise PasshatError(msg)
    tasks = load_tasks(args.tasks_dir) if args.all else [load_task(path) for path in args.tasks]
    broken = []
    for task in tasks:
        if uncached_auto(task, Path(args.state_dir)):
            print(
                f"        {task.id}: computing the auto test lists (each command runs twice at the base, twice "
                "with solution.patch)",
                flush=True,
            )
        check = check_task(task, Path(args.state_dir))  # absolute (cli.main): bwrap --chdir needs it so
        if not check.ok:
            broken.append(task.id)
        for line in describe(check):
            print(line, flush=True)
    print(
        f"{len(tasks) - len(broken)} of {len(tasks)} task(s) valid"
        + (f"; {len(broken)} broken: {', '.join(broken)}" if broken else "")
    )
    return 1 if broken else 0
