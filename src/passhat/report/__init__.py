"""Reports: per-task summaries, gates, run-vs-run comparison, and the table / md / csv / json / html renderings.

May import: passhat.common._errors, results, stats, history (the html page's drift plot), judge (its summary).
Exports: run_report, run_compare, write_atomic.
"""

from __future__ import annotations

from passhat.report._compare import run_compare
from passhat.report._report import run_report, write_atomic

__all__ = ["run_compare", "run_report", "write_atomic"]
