"""afterEach: the suite's running figures for `promptfoo view`, as named scores that derived metrics add up.

The viewer shows, per output column (one provider), the named scores' sums and whatever `derivedMetrics` compute
from those sums; it never groups a task's repeats (promptfoo issue #428), so pass^k cannot be computed there from
per-trial scores. What can: a named score whose values, summed over the column's rows, equal the figure. Each row
gets the *change* its outcome made to the suite's figures — the mean pass^10 over tasks and the number of tasks per
verdict, exactly as `passhat report` computes them (`stats._verdict.decide`, which `report._words.verdict_for`
wraps, and `stats._suite`) — so the sums telescope
to the figures of the whole eval, whatever order rows finish in. A derived metric names each sum:

    derivedMetrics:
      - {name: "pass^10 (suite mean)", value: "Δsuite_pass_hat_10"}
      - {name: "tasks safe (k=10)", value: "Δtasks_safe"}  ...

Each result cell then carries the change it made (a cell that made its task safe shows `Δtasks_safe 1.00`); a
figure that did not change is not added. The hook keeps each eval's outcomes so far, per column, in
`$PROMPTFOO_CONFIG_DIR/passhat-viewer/<evalId>/` (beside promptfoo's own database: `--resume` continues it), under
a file lock: promptfoo runs up to -j of these hooks at once, each a fresh process. A row's repeat seen again (a
resumed step run twice) replaces its outcome, so every figure stays the report's.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from passhat.stats._suite import mean_pass_hat_k
from passhat.stats._verdict import decide

# This hook is a fresh interpreter per row: it imports the statistics it computes with, not the report (nor the
# results reader) whose figures it repeats; tests/extension holds these three to theirs.
VIEWER_PREFIX = "Δ"  # passhat.results.VIEWER_PREFIX: what readers of the rows skip as not a grade
SAFE_AT = 0.9  # passhat.report._words.SAFE_AT: `passhat report`'s default --safe-at
VIEWER_K = 10  # the verdict's k under `passhat report`'s default --k (1,3,5,10)
SUITE = f"{VIEWER_PREFIX}suite_pass_hat_{VIEWER_K}"
# stats' decision (safe, not safe, or None: not enough trials to say) -> its count's named score
COUNTS = {"safe": f"{VIEWER_PREFIX}tasks_safe", "not safe": f"{VIEWER_PREFIX}tasks_not_safe",
          None: f"{VIEWER_PREFIX}tasks_undecided"}  # fmt: skip
# What promptfooconfig.yaml's derivedMetrics name them (passhat init writes these).
DERIVED_METRICS = (
    (f"pass^{VIEWER_K} (suite mean)", SUITE),
    (f"tasks safe (k={VIEWER_K})", COUNTS["safe"]),
    (f"tasks not safe (k={VIEWER_K})", COUNTS["not safe"]),
    (f"tasks undecided (k={VIEWER_K})", COUNTS[None]),
)
ERROR = 2  # promptfoo's failureReason of an error row
GRID = 2**24  # figures are kept as multiples of 1/GRID: their differences then sum exactly, in any order


def figures(tasks: Mapping[str, Mapping[str, bool | None]]) -> dict[str, float]:
    """The suite's figures from each task's outcomes by repeat (True passed, False failed, None no score): the mean
    pass^VIEWER_K over the tasks with n >= k (0 while there is none; to the nearest 1/GRID, so that the changes
    promptfoo adds up in whatever order rows finish sum to it exactly) and the number of tasks per verdict."""
    counts = []
    verdicts = dict.fromkeys(COUNTS.values(), 0.0)
    for outcomes in tasks.values():
        scored = [passed for passed in outcomes.values() if passed is not None]
        n, c = len(scored), sum(scored)
        counts.append((n, c))
        verdicts[COUNTS[decide(n, c, VIEWER_K, SAFE_AT)]] += 1  # verdict_for's default interval
    suite = round((mean_pass_hat_k(counts, VIEWER_K) or 0.0) * GRID) / GRID
    return {SUITE: suite, **verdicts}


def _metadata(result: Mapping[str, Any]) -> dict[str, Any]:
    response = result.get("response")
    merged = dict(result.get("metadata") or {})
    if isinstance(response, dict) and isinstance(response.get("metadata"), dict):
        merged.update(response["metadata"])
    return merged


def outcome(result: Mapping[str, Any]) -> bool | None:
    """True passed, False failed, None neither (an infra error, a judge that could not be read)."""
    if result.get("failureReason") == ERROR:
        return None
    scores = result.get("namedScores") or {}
    if isinstance(scores, dict) and scores.get("judge_unscored"):
        return None
    return bool(result.get("success"))


def state_file(result: Mapping[str, Any], environ: Mapping[str, str]) -> Path | None:
    """This row's column's state: per eval and (provider, prompt); None when the row does not name its eval."""
    meta = _metadata(result)
    eval_id = meta.get("eval_id")
    if not isinstance(eval_id, str) or not eval_id or "/" in eval_id or eval_id.startswith("."):
        return None
    provider = result.get("provider")
    provider = provider if isinstance(provider, dict) else {}
    column = json.dumps([provider.get("label") or provider.get("id"), result.get("promptIdx")])
    home = Path(environ.get("PROMPTFOO_CONFIG_DIR") or Path.home() / ".promptfoo")
    return home / "passhat-viewer" / eval_id / f"{hashlib.sha256(column.encode()).hexdigest()[:16]}.json"


def changes(result: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, float]:
    """Record this row's outcome in its column's state; the suite figures it changed, by how much."""
    meta = _metadata(result)
    task, path = meta.get("task_id"), state_file(result, environ)
    if not isinstance(task, str) or path is None:
        return {}
    repeat = meta.get("repeat_index")
    key = f"r{repeat}" if isinstance(repeat, int) else f"t{result.get('testIdx')}"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        handle.seek(0)
        text = handle.read()
        state = json.loads(text) if text.strip() else {"tasks": {}, "shown": {}}
        state["tasks"].setdefault(task, {})[key] = outcome(result)
        now = figures(state["tasks"])
        delta = {name: value - state["shown"].get(name, 0.0) for name, value in now.items()}
        state["shown"] = now
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(state))
    return {name: change for name, change in delta.items() if change != 0}


def after_each(context: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """Promptfoo's afterEach: the named scores to add to this row (None: nothing). Never raises: a row without
    passhat's metadata, or a state that cannot be written, adds nothing."""
    result = context.get("result")
    if not isinstance(result, dict):
        return None
    try:
        added = changes(result, os.environ if environ is None else environ)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {"result": {"namedScores": added}} if added else None
