"""Statistics: pure estimators (pass@k, pass^k, Wilson, Fisher, Holm) and suite-level bootstrap / ICC.

May import: nothing of passhat's (no I/O, no formatting): numbers in, numbers out.
Exports: the estimators below.
"""

from __future__ import annotations

from passhat.stats._estimators import (
    fisher_exact,
    holm,
    nearest_rank,
    pass_at_k,
    pass_hat_k,
    runs_needed,
    wilson_interval,
)

__all__ = ["fisher_exact", "holm", "nearest_rank", "pass_at_k", "pass_hat_k", "runs_needed", "wilson_interval"]
