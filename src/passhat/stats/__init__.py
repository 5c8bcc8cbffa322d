"""Statistics: pure estimators (pass@k, pass^k, Wilson, Fisher, Holm) and suite-level bootstrap / ICC.

May import: nothing of passhat's (no I/O, no formatting): numbers in, numbers out.
Exports: the estimators below.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passhat.stats._bootstrap import mean_pass_hat_k_bootstrap
    from passhat.stats._estimators import (
        fisher_exact,
        holm,
        nearest_rank,
        pass_at_k,
        pass_at_k_exact,
        pass_hat_k,
        pass_hat_k_exact,
        pass_hat_k_interval,
        pass_hat_k_plug_in,
        runs_needed,
        runs_to_decide,
        wilson_interval,
    )

# Each name is imported on first use: afterEach, a fresh interpreter per row, needs the suite figures alone and not
# the bootstrap (tests/test_entry_imports.py).
_HOMES = {"mean_pass_hat_k_bootstrap": "passhat.stats._bootstrap"} | dict.fromkeys(
    ("fisher_exact", "holm", "nearest_rank", "pass_at_k", "pass_at_k_exact", "pass_hat_k", "pass_hat_k_exact",
     "pass_hat_k_interval", "pass_hat_k_plug_in", "runs_needed", "runs_to_decide", "wilson_interval"),
    "passhat.stats._estimators",
)  # fmt: skip


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "fisher_exact",
    "holm",
    "mean_pass_hat_k_bootstrap",
    "nearest_rank",
    "pass_at_k",
    "pass_at_k_exact",
    "pass_hat_k",
    "pass_hat_k_exact",
    "pass_hat_k_interval",
    "pass_hat_k_plug_in",
    "runs_needed",
    "runs_to_decide",
    "wilson_interval",
]
