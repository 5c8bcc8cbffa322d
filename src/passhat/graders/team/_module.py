"""A team grader's file, found and checked once, when its task is loaded — read, never run.

`file:` is looked for from the task folder up: the task folder, then each folder above it up to the repository's
root (the first folder with `.git`; without one, the folder that holds the tasks folder), the nearest first — so
`evals/graders/size.py` names the file at the repository's root from any task; `./x.py` or `../x.py` is relative
to the task folder only. The module is parsed, not imported (promptfoo's test generator loads tasks in a process
whose stdout is its control channel, and a module's top level may print): `function` must be defined at its top
level, and `SETTINGS`, when there, must be a literal JSON schema (checked as one). Every problem is one line
naming file:line.
"""

from __future__ import annotations

import ast
import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passhat.common._errors import TaskError

DEFAULT_FUNCTION = "grade"
SETTINGS_NAME = "SETTINGS"
SIGNATURE = "def grade(view, settings): return passed, score, reason"


@dataclass(frozen=True)
class TeamModule:
    """What the file says without running it: its top-level names (line, positional parameters or None when
    unknown: an assignment or an import), and SETTINGS (the schema and its line) when it declares one."""

    file: Path
    names: dict[str, tuple[int, int | None]]
    settings: dict[str, Any] | None
    settings_line: int


def _upward(task_dir: Path) -> list[Path]:
    folders = []
    for folder in (task_dir, *task_dir.parents):
        folders.append(folder)
        if (folder / ".git").exists():
            return folders
    return folders[:3]  # tasks/<id>/, tasks/, the folder holding tasks/


def find_file(task_dir: Path, name: str) -> Path:
    """The grader file `name` names for the task in `task_dir` (absolute), or TaskError saying where it looked."""
    given = Path(os.path.expanduser(name))
    if given.is_absolute():
        places = [given]
    elif name.startswith(("./", "../")):
        places = [task_dir / given]
    else:
        places = [folder / given for folder in _upward(task_dir)]
    found = next((place for place in places if place.is_file()), None)
    if found is None:
        where = ", ".join(str(place.parent) for place in places)
        msg = (
            f"field 'file': {name!r}: no such file (looked in {where}); give the grader's path from the repository's "
            "root (evals/graders/size.py) or from the task folder (./size.py)"
        )
        raise TaskError(msg)
    if found.suffix != ".py":
        msg = f"field 'file': {name!r} ({found}) is not a .py file; a python grader is a Python module"
        raise TaskError(msg)
    return found.resolve()


def _positional(node: ast.FunctionDef) -> int | None:
    """How many positional arguments it takes at most (None: *args, any number)."""
    if node.args.vararg is not None:
        return None
    return len(node.args.posonlyargs) + len(node.args.args)


def _literal(file: Path, node: ast.expr, line: int) -> dict[str, Any]:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        msg = (
            f"{file}:{line}: {SETTINGS_NAME} must be a literal JSON schema (a dict of strings, numbers, lists and "
            "dicts: no names, calls or comprehensions), as passhat reads it without running the module"
        )
        raise TaskError(msg) from None
    if not isinstance(value, dict):
        msg = f"{file}:{line}: {SETTINGS_NAME} is a {type(value).__name__}; make it a JSON schema dict, e.g. "
        raise TaskError(msg + '{"type": "object", "properties": {"max_kb": {"type": "number"}}}')
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(value)
    except jsonschema.SchemaError as error:
        where = "".join(f"[{part!r}]" for part in error.absolute_path)
        msg = f"{file}:{line}: {SETTINGS_NAME}{where} is not a valid JSON schema: {error.message}"
        raise TaskError(msg) from None
    return value


@functools.cache
def _read(file: Path, mtime_ns: int) -> TeamModule:
    source = file.read_bytes()
    try:
        tree = ast.parse(source, str(file))
    except SyntaxError as error:
        msg = f"{file}:{error.lineno}: syntax error: {error.msg}; the grader module must be valid Python"
        raise TaskError(msg) from None
    names: dict[str, tuple[int, int | None]] = {}
    settings, settings_line = None, 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names[node.name] = (node.lineno, _positional(node))
        elif isinstance(node, ast.AsyncFunctionDef):
            names[node.name] = (node.lineno, -1)  # said when it is the function asked for
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in (t for t in targets if isinstance(t, ast.Name)):
                names[target.id] = (node.lineno, None)
                if target.id == SETTINGS_NAME and node.value is not None:
                    settings, settings_line = _literal(file, node.value, node.lineno), node.lineno
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = (node.lineno, None)
    return TeamModule(file, names, settings, settings_line)


def read_module(file: Path, function: str) -> TeamModule:
    """The module at `file`, checked to define `function` at its top level as a grader can be called."""
    module = _read(file, file.stat().st_mtime_ns)
    if function not in module.names:
        defined = sorted(name for name, (_, params) in module.names.items() if params is not None and params >= 0)
        msg = (
            f"{file}: no top-level function {function!r} (functions there: {', '.join(defined) or 'none'}); "
            f"define it (`{SIGNATURE}`) or set `function:` to one of them"
        )
        raise TaskError(msg)
    line, params = module.names[function]
    if params == -1:
        msg = f"{file}:{line}: {function} is `async def`; a grader is a plain function (`{SIGNATURE}`)"
        raise TaskError(msg)
    if params == 0:
        msg = (
            f"{file}:{line}: {function}() takes no argument; it is called with the view and its settings: `{SIGNATURE}`"
        )
        raise TaskError(msg)
    return module


def check_settings(module: TeamModule, settings: object, field: str) -> None:
    """`settings` against the module's SETTINGS schema (nothing to check without one); TaskError naming the
    task.yaml field and the module's line that declares the schema."""
    if module.settings is None:
        return
    import jsonschema
    from jsonschema.exceptions import best_match

    error = best_match(jsonschema.Draft202012Validator(module.settings).iter_errors(settings))
    if error is None:
        return
    where = field + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
    msg = (
        f"field '{where}': {error.message}; the settings' schema is {SETTINGS_NAME} in "
        f"{module.file}:{module.settings_line}"
    )
    raise TaskError(msg)
