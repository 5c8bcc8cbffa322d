"""Grader kinds: one module per grader `type` of task.yaml, found here by name — the one list of them.

May import: passhat.common._errors, passhat.graders' private modules, tasks, trial, judge (a judge kind's functions).
Exports: GraderKind, grader_kinds, kind_of.

A kind module (its file name is the type with `-` as `_`; a name starting with `_` is not a kind) holds the
grader's docstring, its function and its settings, and ends with `KIND = GraderKind(...)`:

    def grade_lint(view: OutcomeView, config: dict) -> Grade: ...    # graders.view: read-only, pathless
    KIND = GraderKind("lint", grade_lint, deterministic=True, settings={"required": ["command"], "properties": {...}})

Everything else that names grader types is derived from `grader_kinds()`: which graders join the one combined
Promptfoo assertion (deterministic) and which are assertions of their own (judges), the task schema's type list
and per-type rules (passhat.graders._settings), the entry functions Promptfoo calls (passhat.promptfoo), and
check-task, validate and regrade. Adding a grader = adding its module here (and its test).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passhat.graders._common import Grade
    from passhat.graders.view import OutcomeView

__all__ = ["GraderKind", "grader_kinds", "kind_of"]


@dataclass(frozen=True)
class GraderKind:
    """One grader type.

    name: its `type` in task.yaml. grade: (the outcome's view, the grader's item of task.yaml) -> Grade.
    deterministic: True = joins the task's one combined assertion (runs on the trial's files, no model);
    False = a judge: an assertion of its own, graded live by `live` (output, Promptfoo context) -> GradingResult.
    settings: the JSON-schema fragment of its task.yaml item — `properties` (besides `type` and `name`, which
    every grader has), `required`, and any other keyword of an object schema (`anyOf`, `dependentRequired`,
    `$defs` referenced as `#/$defs/...`). rules: (item) -> what is wrong with it beyond what a schema says, or
    None. preflight: (task dir, task id, item) -> a line for `passhat validate`, raising a PasshatError when the
    settings cannot work (a judge's rubric file, say). resolve: (task dir, item) -> the item as it is graded, made
    once when the task loads (a team grader's file found and made absolute), raising TaskError."""

    name: str
    grade: Callable[[OutcomeView, dict], Grade]
    deterministic: bool
    settings: Mapping[str, Any] = field(default_factory=dict)
    live: Callable[[Any, dict], dict] | None = None
    rules: Callable[[dict], str | None] | None = None
    preflight: Callable[[Path, str, dict], str] | None = None
    resolve: Callable[[Path, dict], dict] | None = None


@functools.cache
def grader_kinds() -> dict[str, GraderKind]:
    """Every grader kind, by name, in module-name order (imports each kind module once per process)."""
    found: dict[str, GraderKind] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        kind = getattr(module, "KIND", None)
        if not isinstance(kind, GraderKind):
            msg = f"{module.__file__}: a grader kind module must end with `KIND = GraderKind(...)`"
            raise TypeError(msg)
        if kind.name in found or kind.name.replace("-", "_") != module_info.name:
            msg = f"{module.__file__}: KIND.name {kind.name!r} must be the file name with '-' for '_', once"
            raise TypeError(msg)
        found[kind.name] = kind
    return found


def kind_of(name: str) -> GraderKind | None:
    """The kind called `name`, importing only its module when the registry is not loaded yet (an assertion's
    process grades with one to four kinds: the judges' modules and what they import stay out of it)."""
    if grader_kinds.cache_info().currsize:
        return grader_kinds().get(name)
    module_name = name.replace("-", "_")
    if not module_name.isidentifier() or module_name.startswith("_") or module_name != module_name.lower():
        return grader_kinds().get(name)
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{module_name}":
            raise
        return None
    kind = getattr(module, "KIND", None)
    if isinstance(kind, GraderKind) and kind.name == name:
        return kind
    return grader_kinds().get(name)  # the registry says why a module is not a kind (TypeError)
