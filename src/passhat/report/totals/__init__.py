"""Totals: a results file read once into running totals per (task, provider), what the report's figures come from;
a big file in two processes.

May import: results, passhat.common._errors.
Exports: fold_file, fold, fold_fields, merge, Groups.
"""

from __future__ import annotations

from passhat.report.totals._parallel import fold_file
from passhat.report.totals._tally import Groups, fold, fold_fields, merge

__all__ = ["Groups", "fold", "fold_fields", "fold_file", "merge"]
