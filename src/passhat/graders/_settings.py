"""A task's graders checked against their kinds (graders/kinds/): the type is a known one, the settings follow
the kind's schema fragment and rules — with the task loader's messages (file, field, value, fix).

Why here and not in passhat.tasks: tasks is the first stage and knows no grader; the schema of a grader's
settings lives in its kind module, so the full task.yaml schema is assembled here at load time from
schemas/task.schema.json (the task's own fields) and the kinds' fragments. A new kind's module is all it takes.
`load_graded_task(s)` is what every command that grades or validates calls.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from passhat.common._errors import PasshatError, TaskError
from passhat.graders.kinds import GraderKind, grader_kinds
from passhat.tasks import Task, describe_schema_error, load_task, load_tasks

_COMMON = {"type": {"type": "string"}, "name": {"type": "string", "minLength": 1}}


def _summary(kind: GraderKind) -> str:
    """The first paragraph of the kind module's docstring, on one line."""
    doc = sys.modules[kind.grade.__module__].__doc__ or ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def _item_schema(kind: GraderKind) -> dict[str, Any]:
    settings = {key: value for key, value in kind.settings.items() if key != "$defs"}
    properties = {**_COMMON, "type": {"const": kind.name}, **settings.pop("properties", {})}
    required = ["type", *settings.pop("required", [])]
    return {
        "description": _summary(kind),
        "type": "object",
        "required": required,
        "additionalProperties": False,
        "properties": properties,
        **settings,
    }


@functools.cache
def graders_schema() -> dict[str, Any]:
    """The JSON schema of task.yaml's `graders:` list, one if/then rule per kind (as `{"graders": [...]}`)."""
    rules, defs = [], {}
    for kind in grader_kinds().values():
        defs.update(kind.settings.get("$defs", {}))
        then = _item_schema(kind)
        rules.append({"if": {"properties": {"type": {"const": kind.name}}, "required": ["type"]}, "then": then})
    item = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"enum": list(grader_kinds())}, "name": _COMMON["name"]},
        "allOf": rules,
    }
    return {"type": "object", "properties": {"graders": {"type": "array", "items": item}}, "$defs": defs}


@functools.cache
def _validator() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(graders_schema())


def _hint(error: Any) -> str | None:
    """A missing setting's fix, from its kind's own description of it (the message names the grader type)."""
    if error.validator != "required" or len(error.absolute_path) != 2:
        return None
    kind = grader_kinds().get(str(error.instance.get("type")))
    missing = [key for key in error.validator_value if key not in error.instance]
    if kind is None or not missing:
        return None
    about = kind.settings.get("properties", {}).get(missing[0], {}).get("description")
    return f"a {kind.name} grader needs it: {about}" if about else f"a {kind.name} grader needs it"


def check_graders(task: Task) -> Task:
    """The task, when every grader is a known kind with valid settings, each item as its kind resolves it (a team
    grader's file found); else TaskError naming task.yaml (and, for a setting, the module whose schema it breaks)."""
    import dataclasses

    from jsonschema.exceptions import best_match

    file = task.dir / "task.yaml"
    items = {"graders": [dict(g) for g in task.graders]}
    error = best_match(_validator().iter_errors(items))
    if error is not None:
        home = _kind_home(items, error)
        raise TaskError(f"{file}: {describe_schema_error(error, _hint(error), home)}") from None
    resolved = []
    for index, grader in enumerate(task.graders):
        kind = grader_kinds()[grader["type"]]
        if kind.rules and (problem := kind.rules(dict(grader))):
            raise TaskError(f"{file}: field 'graders[{index}]': {problem}")
        try:
            resolved.append(kind.resolve(task.dir, dict(grader)) if kind.resolve else dict(grader))
        except TaskError as problem:  # "field 'file': ..." or "MODULE:LINE: ..." (a team grader's module)
            said = str(problem)
            where = f"field 'graders[{index}].{said[7:]}" if said.startswith("field '") else f"graders[{index}]: {said}"
            raise TaskError(f"{file}: {where}") from None
    return dataclasses.replace(task, graders=tuple(resolved))


def _kind_home(items: dict, error: Any) -> str | None:
    """Where the schema a grader's setting breaks lives: its kind's module (None: not a grader's setting)."""
    path = list(error.absolute_path)
    if len(path) < 3 or path[0] != "graders" or not isinstance(path[1], int):
        return None
    kind = grader_kinds().get(str(items["graders"][path[1]].get("type")))
    module = sys.modules.get(kind.grade.__module__) if kind is not None else None
    if kind is None or module is None or not module.__file__:
        return None
    return f"the {kind.name} grader's SETTINGS in {module.__file__}"


def graders_of(task: Task) -> tuple[dict[str, Any], ...]:
    """The graders a task is graded by: its task.yaml list, plus the integrity scan when it has a tests grader
    (unless `integrity: off`, or it lists an integrity grader itself), in the mode of its `integrity:` field.
    The scan skips the test files: the tests graders' protected globs (theirs, else the default ones)."""
    from passhat.graders._globs import DEFAULT_PROTECTED

    graders = [dict(g) for g in task.graders]
    tests = [g for g in graders if g["type"] == "tests"]
    protected = sorted({glob for g in tests for glob in g.get("protected", DEFAULT_PROTECTED)} or DEFAULT_PROTECTED)
    for grader in graders:
        if grader["type"] == "tests" and task.integrity == "flag":  # the runner guard's findings: counted, not failed
            grader.setdefault("integrity", "flag")
        if grader["type"] == "integrity":
            grader.setdefault("protected", protected)
            grader.setdefault("mode", "flag" if task.integrity == "flag" else "fail")
    if tests and task.integrity != "off" and not any(g["type"] == "integrity" for g in graders):
        graders.append({"type": "integrity", "mode": task.integrity, "protected": protected})
    return tuple(graders)


def load_graded_task(path: str | Path) -> Task:
    """passhat.tasks.load_task, then its graders checked against their kinds."""
    return check_graders(load_task(path))


def load_graded_tasks(tasks_dir: str | Path, only: Sequence[str] | None = None) -> list[Task]:
    """passhat.tasks.load_tasks, then every task's graders checked against their kinds."""
    return [check_graders(task) for task in load_tasks(tasks_dir, only=only)]


def preflight(tasks: Sequence[Task]) -> list[str]:
    """What `passhat validate` says of the graders that need more than a schema (the judges' rubric files and
    references): one line per such grader, or a PasshatError naming task.yaml, the grader and the problem."""
    lines = []
    for task in tasks:
        for index, grader in enumerate(task.graders):
            kind = grader_kinds().get(grader.get("type", ""))
            if kind is None or kind.preflight is None:
                continue
            try:
                lines.append(f"{task.id}: graders[{index}] {kind.preflight(task.dir, task.id, dict(grader))}")
            except PasshatError as error:
                raise type(error)(f"{task.dir / 'task.yaml'}: graders[{index}]: {error}") from None
    return lines
