"""Results: read Promptfoo `-o` files (JSON or JSONL, streamed) into typed Trial rows.

May import: passhat.common._errors, passhat.judge (which statuses mean "unscored").
Exports: Trial, iter_rows, iter_trials, load_trials, VIEWER_PREFIX, VIEWER_FIGURES.
"""

from __future__ import annotations

from passhat.results._rows import Trial, iter_rows, iter_trials, load_trials
from passhat.results._trial import VIEWER_FIGURES

# Named scores whose names start with this are the suite's running figures that passhat's afterEach hook adds for
# `promptfoo view` (passhat.extension): changes of a suite figure, not a grade of the trial. Nothing that reads
# grades (drift's history, the judge's table) takes them for one.
VIEWER_PREFIX = "Δ"

__all__ = ["VIEWER_FIGURES", "VIEWER_PREFIX", "Trial", "iter_rows", "iter_trials", "load_trials"]
