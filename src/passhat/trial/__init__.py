"""One trial: base workspace, sandbox, confinement, the Claude Code agent, and its outcome (patch + record).

The provider's edge is _provider.py (call_api: parse once, budget guard, here or on Ray); the pipeline of one
trial is stages/ (its docstring draws it); the mechanics each stage calls are this folder's modules.

May import: passhat.common._errors, passhat.tasks.
Exports: call_api (the Promptfoo provider), TrialOutcome (base + patch, what graders read). Each loads on first
use: a grader that reads a TrialOutcome does not import the provider.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passhat.trial._outcome import TrialOutcome
    from passhat.trial._provider import call_api

_ON_USE = {"TrialOutcome": "_outcome", "call_api": "_provider"}


def __getattr__(name: str) -> Any:
    if name not in _ON_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_ON_USE[name]}"), name)


__all__ = ["TrialOutcome", "call_api"]
