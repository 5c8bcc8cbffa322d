"""The trial's pipeline: one parsed trial through its stages, each a small object that sets up on entry and
cleans up on exit, so run_trial (_run.py) reads top to bottom:

    call_api (../_provider.py)   options + context ──parse_trial──▶ Trial (_trial.py: frozen, read by name)
      │                          budget guard (passhat.common._budget); `executor: ray` ships the raw config to a node,
      │                          which parses it again with parse_trial (passhat.cluster)
      ▼
    run_trial (_run.py)
      make_folders     _workspace.py   artifacts folder, sandbox folders
      with Workspace   _workspace.py   base (cached) → sandbox (overlay or copy) + CLAUDE.md   exit: sandbox removed
        with JailStage _jail.py        endpoint, its health → proxy + uid + cgroups + bwrap view  exit: proxy stopped
          run_agent    ../_agent.py    Claude Code through the Agent SDK, confined
        outcome        _workspace.py   the patch against the base (collect_outcome)
      respond          _record.py      patch.diff, trial.json, Promptfoo's response

The mechanics stay in trial/'s modules (_sandbox, _isolation, _proxy, _agent, _outcome); a stage only calls them.
Importing this package is cheap: run_trial (and with it the Agent SDK) loads on first use.

May import: passhat.common._errors, passhat.common._budget, passhat.common._endpoint, passhat.common._fake_route, passhat.tasks,
passhat.cluster, passhat.trial's modules.
Exports: run_trial, Trial, parse_trial, model_check.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passhat.trial.stages._run import run_trial
    from passhat.trial.stages._trial import Trial, model_check, parse_trial

_ON_USE = {"run_trial": "_run", "Trial": "_trial", "parse_trial": "_trial", "model_check": "_trial"}


def __getattr__(name: str) -> Any:
    if name not in _ON_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_ON_USE[name]}"), name)


__all__ = ["Trial", "model_check", "parse_trial", "run_trial"]
