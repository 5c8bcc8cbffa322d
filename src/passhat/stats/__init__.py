"""Statistics: pure estimators (pass@k, pass^k, Wilson, Fisher, Holm) and suite-level bootstrap / ICC.

May import: nothing of passhat's (no I/O, no formatting): numbers in, numbers out.
Exports: the estimators below.
"""

from __future__ import annotations

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
