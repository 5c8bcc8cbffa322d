"""Results: read Promptfoo `-o` files (JSON or JSONL, streamed) into typed Trial rows.

May import: passhat._errors, passhat.judge (which statuses mean "unscored").
Exports: Trial, iter_rows, iter_trials, load_trials.
"""

from __future__ import annotations

from passhat.results._rows import Trial, iter_rows, iter_trials, load_trials

__all__ = ["Trial", "iter_rows", "iter_trials", "load_trials"]
