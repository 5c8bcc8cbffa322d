"""History: graded scores of every eval in SQLite, and drift of a series against its baseline.

May import: passhat.common._errors, passhat.results.
Exports: run_drift, open_history, batch_from_results.
"""

from __future__ import annotations

from passhat.history._drift import run_drift
from passhat.history._store import batch_from_results, open_history

__all__ = ["batch_from_results", "open_history", "run_drift"]
