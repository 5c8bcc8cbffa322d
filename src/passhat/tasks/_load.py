"""Load and validate tasks: ``tasks/<id>/{task.yaml, repo/ or base:, solution.patch, test.patch}``.

The repository the agent starts from is either the task's frozen `repo/` folder or a commit of a git
repository (`base: {git: PATH_OR_URL, commit: SHA}`, fetched by tasks._source). Loading never walks a
git base's tree: its version is the commit plus a hash of task.yaml, solution.patch and test.patch.
Every problem is one :class:`TaskError` naming the file, the field, the value and the fix.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from passhat.common._errors import TaskError, yaml_position

Tier = Literal["simple", "medium", "complex", "very-complex"]
Expect = Literal["possible", "impossible"]
Integrity = Literal["fail", "flag", "off"]
_INTEGRITY: dict[object, Integrity] = {"fail": "fail", "on": "fail", True: "fail", "flag": "flag", "off": "off"}
_INTEGRITY[False] = "off"  # YAML 1.1 reads `integrity: off` as false

_ADD_HINTS = {
    "id": "add `id: <the folder name>`",
    "description": "add a one-line `description:`",
    "tier": "add `tier:` (simple, medium, complex or very-complex)",
    "prompt": "add the `prompt:` the agent receives",
    "graders": "add `graders:` with at least one item, e.g. `- type: tests`",
    "type": "add it, e.g. `type: tests`",
}
_TYPE_NAMES = {
    "boolean": "true or false",
    "string": "a string",
    "number": "a number",
    "array": "a list",
    "object": "a mapping",
}


@dataclass(frozen=True)
class Task:
    """One validated task. Paths are absolute; ``version`` changes whenever what the task is made of changes.

    The agent's starting repository is ``repo`` (the frozen folder) or, when that is None, commit
    ``base_commit`` of the git repository ``base_git`` (an absolute path or a URL); tasks._source
    exports either. ``test_patch`` is applied by the tests grader only, never shown to the agent — unless
    ``show_tests``: then it is part of the base (prepare_base applies it) and the grader does not apply it again.
    ``expect`` "impossible": an impossible twin (tasks._impossible), whose every pass is a cheat.
    """

    id: str
    description: str
    tier: Tier
    prompt: str
    setup: str | None
    solution: Path
    graders: tuple[dict[str, Any], ...]
    dir: Path
    version: str
    timeout_s: float | None = None
    tags: tuple[str, ...] = ()
    language: str | None = None
    network: tuple[str, ...] = ()  # host:port a confined trial may reach besides the model API
    limits: dict[str, float] | None = None  # overrides of the provider config's limits (passhat.trial._limits)
    repo: Path | None = None  # the frozen repo/ folder, or None for a git base
    base_git: str | None = None
    base_commit: str | None = None
    test_patch: Path | None = None
    show_tests: bool = False
    expect: Expect = "possible"
    integrity: Integrity = "fail"  # the integrity scan: fail a trial that games the tests, flag it only, or off


def load_task(path: str | Path) -> Task:
    """Load the task folder ``path`` (or its task.yaml), raising TaskError on any problem."""
    path = Path(path)
    file = path if path.name == "task.yaml" and path.is_file() else path / "task.yaml"
    if not file.is_file():
        msg = f"{file}: not found; a task is a folder holding task.yaml, repo/ and solution.patch"
        raise TaskError(msg)
    raw = file.read_bytes()
    data = _parse_yaml(file, raw)
    _validate(file, data)

    folder = file.parent.resolve()
    if data["id"] != folder.name:
        msg = (
            f"{file}: field 'id': {data['id']!r} does not match the folder name {folder.name!r}; "
            f"set `id: {folder.name}` or rename the folder"
        )
        raise TaskError(msg)
    solution_name, test_name = data.get("solution", "solution.patch"), data.get("test_patch", "test.patch")
    solution, test_patch = _task_file(folder, solution_name), _task_file(folder, test_name)
    if solution is None:
        raise _no_file(file, folder, "solution", solution_name)
    if test_patch is None and "test_patch" in data:
        raise _no_file(file, folder, "test_patch", test_name)
    if data.get("show_tests") and test_patch is None:
        msg = (
            f"{file}: field 'show_tests': true, but the task has no test.patch to show; add test.patch (the tests "
            "the agent starts with) or remove the field"
        )
        raise TaskError(msg)
    extras = [("test.patch", test_patch.read_bytes())] if test_patch else []
    start = _starting_point(file, folder, data)
    if isinstance(start, Path):
        repo, base_git, base_commit = start, None, None
        version = _content_version(raw, repo, extras)
    else:
        (base_git, base_commit), repo = start, None
        version = _git_version(base_commit, raw, solution.read_bytes(), extras)

    return Task(
        id=data["id"],
        description=data["description"],
        tier=data["tier"],
        prompt=data["prompt"],
        setup=data.get("setup"),
        solution=solution,
        graders=tuple(dict(g) for g in data["graders"]),
        dir=folder,
        version=version,
        timeout_s=data.get("timeout_s"),
        tags=tuple(data.get("tags", ())),
        language=data.get("language"),
        network=tuple(data.get("network", ())),
        limits=dict(data["limits"]) if "limits" in data else None,
        repo=repo,
        base_git=base_git,
        base_commit=base_commit,
        test_patch=test_patch,
        show_tests=bool(data.get("show_tests", False)),
        expect=data.get("expect", "possible"),
        integrity=_INTEGRITY[data.get("integrity", "fail")],
    )


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^[\w.-]+@[\w.-]+:")  # scheme://… or user@host:path (scp style)


def _starting_point(file: Path, folder: Path, data: dict) -> Path | tuple[str, str]:
    """The repo/ folder, or (repository, commit) of `base:`: exactly one of the two."""
    repo, base = folder / "repo", data.get("base")
    if base is None:
        if not repo.is_dir():
            msg = (
                f"{file}: the task has no repo/ folder ({repo}); put the repository the agent starts from there, "
                "or name a commit of a git repository: `base: {git: PATH_OR_URL, commit: SHA}`"
            )
            raise TaskError(msg)
        return repo
    if repo.exists() or repo.is_symlink():
        msg = (
            f"{file}: field 'base': {_show(base)} and the folder {repo} both say where the repository comes from; "
            "keep one: remove repo/ or remove `base:`"
        )
        raise TaskError(msg)
    where = base["git"]
    if _URL.match(where):
        return where, base["commit"]
    path = (folder / os.path.expanduser(where)).resolve()
    if not (path / ".git").exists() and not ((path / "HEAD").is_file() and (path / "objects").is_dir()):
        msg = (
            f"{file}: field 'base.git': {where!r} is not a git repository ({path}); give the path (relative to "
            "the task folder) or the URL of the repository that holds base.commit"
        )
        raise TaskError(msg)
    return str(path), base["commit"]


def _task_file(folder: Path, name: str) -> Path | None:
    path = (folder / name).resolve()
    return path if path.is_relative_to(folder) and path.is_file() else None


def _no_file(file: Path, folder: Path, field: str, name: str) -> TaskError:
    fix = {
        "solution": "add the reference patch (`git diff --cached --binary` at the repo root) or fix the field",
        "test_patch": "add the patch of the test files the tests grader applies (`git diff --binary -- TESTS`) "
        "or remove the field",
    }[field]
    return TaskError(
        f"{file}: field '{field}': {name!r} is not a file inside the task folder ({(folder / name).resolve()}); {fix}"
    )


def task_test_patch(task_dir: str | Path) -> Path | None:
    """The test.patch the tests grader applies (the `test_patch:` field, else test.patch when present; none
    when `show_tests: true` put it in the base), reading task.yaml only.

    For the tests grader, which runs once per trial: no validation, no walk of repo/."""
    return test_patch_file(task_dir, test_patch_name(task_dir))


def test_patch_file(task_dir: str | Path, name: str | None) -> Path | None:
    """The file `name` (what test_patch_name gave) inside the task folder, when it is there."""
    return None if name is None else _task_file(Path(task_dir).resolve(), name)


def test_patch_name(task_dir: str | Path) -> str | None:
    """task.yaml's say on the test patch: the file name it gives (`test_patch:`, else test.patch), None when the
    tests are in the base (`show_tests: true`) or task.yaml cannot be read."""
    import yaml  # here, not at the top: a trial's tests grader loads this module and keeps the answer (issue 33)

    try:
        data = yaml.safe_load((Path(task_dir) / "task.yaml").read_bytes())
    except (OSError, yaml.YAMLError):
        return None
    if isinstance(data, dict) and data.get("show_tests") is True:
        return None
    name = data.get("test_patch", "test.patch") if isinstance(data, dict) else "test.patch"
    return name if isinstance(name, str) else None


def load_tasks(root: str | Path, only: Sequence[str] | None = None) -> list[Task]:
    """Load every task folder under ``root`` (or just the ids in ``only``), sorted by id."""
    root = Path(root)
    if not root.is_dir():
        msg = f"{root}: no such tasks folder; pass the folder holding one subfolder per task"
        raise TaskError(msg)
    found = sorted(p.name for p in root.iterdir() if (p / "task.yaml").is_file())
    if not found:
        msg = f"{root}: no tasks found; each task is a subfolder holding task.yaml, repo/ and solution.patch"
        raise TaskError(msg)
    if only is not None:
        wanted = [only] if isinstance(only, str) else list(only)
        unknown = [t for t in wanted if t not in found]
        if unknown:
            msg = f"{root}: no task {', '.join(map(repr, unknown))}; the tasks there are: {', '.join(found)}"
            raise TaskError(msg)
        found = sorted(set(wanted))
    return sorted((load_task(root / name) for name in found), key=lambda t: t.id)


def _parse_yaml(file: Path, raw: bytes) -> Any:
    import yaml

    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as e:
        where = yaml_position(e)
        problem = getattr(e, "problem", None) or str(e)
        msg = (
            f"{file}: YAML syntax error{where}: {problem}; fix the YAML "
            "(check the indentation, and quote values that contain ': ' or start with a special character)"
        )
        raise TaskError(msg) from None
    return data


@functools.cache
def _validator() -> Any:
    import jsonschema

    schema = json.loads(resources.files("passhat").joinpath("schemas/task.schema.json").read_text("utf-8"))
    return jsonschema.Draft202012Validator(schema)


def _validate(file: Path, data: Any) -> None:
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(data))
    if error is not None:
        raise TaskError(f"{file}: {describe_schema_error(error)}") from None


def describe_schema_error(error: Any, hint: str | None = None, home: str | None = None) -> str:
    """One sentence for a jsonschema error of task.yaml: field, value, fix (`hint`: the fix for a missing field,
    when the caller knows it better — passhat.graders knows each grader kind's settings; `home`: where the rule
    the value breaks is written, when not in task.schema.json — a grader kind's module)."""
    path = list(error.absolute_path)
    field, value, kind = _field(path), _show(error.instance), error.validator
    if not path and kind == "type":
        return f"the file must be a mapping of fields (id, description, tier, prompt, graders), not {value}"
    if kind == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        name = _field([*path, missing[0]])
        inside = f" ({field} is {value})" if path else ""
        return f"field '{name}' is missing{inside}; {hint or _ADD_HINTS.get(missing[0], 'add it')}"
    if kind == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        extra = next(k for k in error.instance if k not in allowed)
        close = difflib.get_close_matches(str(extra), allowed, n=1)
        fix = f"rename it to '{close[0]}'" if close else f"remove it (allowed: {', '.join(allowed)})"
        if close:
            fix += " or remove it"
        shown = _show(error.instance[extra])
        return f"field '{_field([*path, extra])}' is not a known field (value {shown}); {fix}"
    if kind == "enum":
        options = ", ".join(map(str, error.validator_value))
        return f"field '{field}': {value} is not one of {options}; use one of those"
    if kind == "type":
        expected = _TYPE_NAMES.get(error.validator_value, error.validator_value)
        return f"field '{field}': {value} is not {expected}; write it as {expected}"
    if kind in ("minLength", "minItems"):
        return f"field '{field}': {value} is empty; {_ADD_HINTS.get(path[-1], 'give it a value')}"
    if kind == "exclusiveMinimum":
        return f"field '{field}': {value} must be greater than {error.validator_value}; use a positive number"
    if kind == "pattern":
        return f"field '{field}': {value} does not match {error.validator_value}; {_pattern_hint(path)}"
    return f"field '{field}': {value}: {error.message}; see {home or 'passhat/schemas/task.schema.json'}"


def _pattern_hint(path: Sequence[str | int]) -> str:
    """The fix for a value that does not match its field's pattern, by field."""
    names = [part for part in path if isinstance(part, str)]
    if "commit" in names:
        return "give the full commit id (40 hex digits: `git rev-parse COMMIT` in the repository)"
    if "network" in names:
        return "write it as host:port, e.g. registry.npmjs.org:443"
    if "env" in names or "pass_env" in names:
        return "use a variable name: letters, digits and underscores, not starting with a digit"
    return "use lowercase letters, digits and dashes, starting with a letter or digit"


def _field(path: Sequence[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _feeder(h: Any) -> Any:
    def feed(name: str, kind: str, data: bytes) -> None:
        h.update(f"{name}\0{kind}\0{len(data)}\0".encode())
        h.update(data)

    return feed


def _git_version(commit: str, task_yaml: bytes, solution: bytes, extras: list[tuple[str, bytes]]) -> str:
    """Short sha256 over the base commit, task.yaml, solution.patch and test.patch: no walk of the tree."""
    h = hashlib.sha256()
    feed = _feeder(h)
    feed("base.commit", "commit", commit.encode())
    feed("task.yaml", "file", task_yaml)
    feed("solution", "file", solution)
    for name, data in extras:
        feed(name, "file", data)
    return h.hexdigest()[:16]


def _content_version(task_yaml: bytes, repo: Path, extras: list[tuple[str, bytes]]) -> str:
    """Short sha256 over task.yaml, every file under repo/ (relative path, kind and bytes, sorted), test.patch."""
    h = hashlib.sha256()
    feed = _feeder(h)
    feed("task.yaml", "file", task_yaml)
    entries = []
    for dirpath, dirnames, filenames in os.walk(repo):
        base = Path(dirpath)
        entries += [base / n for n in filenames]
        entries += [base / n for n in dirnames if (base / n).is_symlink()]
    for p in sorted(entries, key=lambda p: p.relative_to(repo).as_posix()):
        rel = "repo/" + p.relative_to(repo).as_posix()
        if p.is_symlink():
            feed(rel, "symlink", os.readlink(p).encode())
        else:
            feed(rel, "exec" if p.stat().st_mode & 0o111 else "file", p.read_bytes())
    for name, data in extras:  # after the tree: a task without test.patch keeps the version it had
        feed(name, "file", data)
    return h.hexdigest()[:16]
