"""Extension: passhat's Promptfoo extension hooks, so that `promptfoo eval` itself ends with the verdict and
`promptfoo view` shows the suite's pass^k and how many tasks got each verdict.

Promptfoo 0.123 runs a Python hook named in `extensions:` (`file://passhat_promptfoo.py:afterAll`) in a fresh
process, with the hook's context as JSON: `afterAll` gets every row of the eval (the rows `-o results.json` holds),
`afterEach` one finished row, whose named scores it may add to. `after_all` prints what `passhat report` prints
for those rows (and, when asked, writes report files and appends the eval to the drift history); `after_each` adds
the changes of the suite's running figures that derived metrics sum up in the viewer (`_viewer` says how).

May import: passhat.common._errors, report, history, results, stats (the top of the path, beside cli).
Exports: after_all, after_each, DERIVED_METRICS, VIEWER_K.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from passhat.extension._viewer import DERIVED_METRICS, VIEWER_K, after_each


def after_all(context: Mapping[str, Any], pid: int | None = None) -> str:
    """Promptfoo's afterAll (passhat.extension._verdict). Imported when called: afterEach's process, a fresh one
    per row, imports this package and needs none of the report."""
    from passhat.extension._verdict import after_all as run

    return run(context, pid)


__all__ = ["DERIVED_METRICS", "VIEWER_K", "after_all", "after_each"]
