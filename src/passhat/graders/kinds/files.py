"""The `files` grader: checks on the files of base + patch.

Each check names a `path` and any of: exists (true/false), contains, not_contains, regex,
key + equals (a dotted path into JSON, YAML or TOML), unchanged (same bytes as the base).
score = fraction of checks that hold; pass = all hold.

Files are read through the outcome's view (graders.view), which never follows the agent's symlinks out of the
tree: a check on `notes.txt -> /…/tasks/<id>/solution.patch` fails, saying it is a symlink to that path outside
the tree.
"""

from __future__ import annotations

import json
import re
import tomllib

from passhat.graders._common import Grade
from passhat.graders.kinds import GraderKind
from passhat.graders.view import OutcomeView, UnsafePathError

_MISSING = object()


def _load_structured(data: bytes, rel: str) -> object:
    """A structured file's data; raises ValueError (a YAML error as one) when it does not parse."""
    text = data.decode("utf-8")
    if rel.endswith(".toml"):
        return tomllib.loads(text)
    if rel.endswith((".yaml", ".yml")):
        import yaml  # only for a YAML file's key: a fresh interpreter per trial grades package.json more often

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ValueError(str(error)) from None
    return json.loads(text)


def _lookup(data: object, key: str) -> object:
    for part in key.split("."):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return _MISSING
    return data


def _same(view: OutcomeView, rel: str) -> bool:
    """Same entry as in the base: both missing, the same bytes, or symlinks with the same target."""
    mine, original = view.entry(rel), view.base.entry(rel)
    if mine != original:
        return False
    return mine.kind != "file" or view.read(rel) == view.base.read(rel)


def _check(view: OutcomeView, check: dict) -> str | None:
    """None when the check holds, else why not (a symlink leaving the tree is never followed: it fails)."""
    try:
        return _check_file(view, check)
    except UnsafePathError as error:
        return str(error)


def _check_file(view: OutcomeView, check: dict) -> str | None:
    rel = check["path"]
    data = view.read(rel)
    exists = data is not None
    if "exists" in check and exists != check["exists"]:
        return f"{rel} {'is missing' if check['exists'] else 'exists but should not'}"
    if check.get("unchanged") and not _same(view, rel):
        return f"{rel} changed but must stay as in the base"
    needs_content = any(k in check for k in ("contains", "not_contains", "regex", "key"))
    if not needs_content:
        return None
    if data is None:
        return f"{rel} is missing"
    text = data.decode("utf-8", errors="replace")
    if "contains" in check and check["contains"] not in text:
        return f"{rel} does not contain {check['contains']!r}"
    if "not_contains" in check and check["not_contains"] in text:
        return f"{rel} contains {check['not_contains']!r}"
    if "regex" in check and not re.search(check["regex"], text, re.MULTILINE):
        return f"{rel} has no match for /{check['regex']}/"
    if "key" in check:
        try:
            value = _lookup(_load_structured(data, rel), check["key"])
        except (ValueError, tomllib.TOMLDecodeError) as error:
            return f"{rel} cannot be parsed: {str(error).splitlines()[0]}"
        if value is _MISSING:
            return f"{rel} has no key {check['key']!r}"
        if value != check["equals"]:
            return f"{rel} {check['key']} is {value!r}, expected {check['equals']!r}"
    return None


def grade_files(view: OutcomeView, config: dict) -> Grade:
    checks = config["checks"]
    problems = [problem for check in checks if (problem := _check(view, check)) is not None]
    held = len(checks) - len(problems)
    if not problems:
        return Grade(True, 1.0, f"all {len(checks)} file checks hold")
    return Grade(False, held / len(checks), f"{held}/{len(checks)} file checks hold; " + "; ".join(problems))


SETTINGS = {
    "required": ["checks"],
    "properties": {"checks": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/file_check"}}},
    "$defs": {
        "file_check": {
            "type": "object",
            "required": ["path"],
            "additionalProperties": False,
            "minProperties": 2,
            "properties": {
                "path": {"type": "string", "minLength": 1},
                "exists": {"type": "boolean"},
                "contains": {"type": "string"},
                "not_contains": {"type": "string"},
                "regex": {"type": "string"},
                "key": {
                    "description": "Dotted path into a JSON/YAML/TOML file, e.g. version or tool.poetry.version",
                    "type": "string",
                    "minLength": 1,
                },
                "equals": {},
                "unchanged": {"type": "boolean"},
            },
            "dependentRequired": {"key": ["equals"], "equals": ["key"]},
        }
    },
}

KIND = GraderKind("files", grade_files, deterministic=True, settings=SETTINGS)
