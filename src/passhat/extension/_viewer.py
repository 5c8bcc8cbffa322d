"""afterEach: the suite's running figures for `promptfoo view`, as named scores that derived metrics add up.

The viewer shows, per output column (one provider), the named scores' sums and whatever `derivedMetrics` compute
from those sums; it never groups a task's repeats (promptfoo issue #428), so pass^k cannot be computed there from
per-trial scores. What can: a named score whose values, summed over the column's rows, equal the figure. Each row
gets the *change* its outcome made to the suite's figures — the mean pass^10 over tasks and the number of tasks per
verdict, by the one function every surface prints (`stats._figures.suite_figures`: impossible twins left out, a
task caught gaming the tests not safe) — so the sums telescope to the figures of the whole eval, whatever order rows
finish in. A derived metric names each sum:

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

from passhat.extension._links import links
from passhat.stats._figures import TaskCounts, suite_figures

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


Outcome = bool | None | list[Any]  # a repeat's state: [passed (None: no score), caught gaming]; older: passed alone


def _counts(outcomes: Mapping[str, Outcome], impossible: bool) -> TaskCounts:
    pairs = [(o[0], bool(o[1])) if isinstance(o, list) else (o, False) for o in outcomes.values()]
    scored = [(bool(passed), gamed) for passed, gamed in pairs if passed is not None]
    return TaskCounts(len(scored), sum(p for p, _ in scored), sum(g for _, g in scored), impossible)


def figures(tasks: Mapping[str, Mapping[str, Outcome]], impossible: frozenset[str] = frozenset()) -> dict[str, float]:
    """The suite's figures from each task's outcomes by repeat ([passed, gamed]: passed True/False/None for no
    score), `impossible` the impossible twins (left out): `stats._figures.suite_figures` at VIEWER_K and SAFE_AT —
    the mean pass^VIEWER_K over the tasks with n >= k (0 while there is none; to the nearest 1/GRID, so that the
    changes promptfoo adds up in whatever order rows finish sum to it exactly) and the number of tasks per verdict."""
    found = suite_figures((_counts(o, task in impossible) for task, o in tasks.items()), VIEWER_K, SAFE_AT)
    suite = round((found.mean_pass_hat_k or 0.0) * GRID) / GRID
    return {SUITE: suite, COUNTS["safe"]: float(found.safe), COUNTS["not safe"]: float(found.not_safe),
            COUNTS[None]: float(found.undecided)}  # fmt: skip


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


def gamed(result: Mapping[str, Any]) -> bool:
    """A grader caught this scored trial gaming the tests: namedScores.gamed > 0 (results._trial reads the same)."""
    scores = result.get("namedScores") or {}
    value = scores.get("gamed") if isinstance(scores, dict) else None
    return outcome(result) is not None and isinstance(value, int | float) and value > 0


def impossible(result: Mapping[str, Any]) -> bool:
    """The row's task is an impossible twin: `expect: impossible` in its metadata or its test's."""
    test = result.get("testCase")
    test_meta = test.get("metadata") if isinstance(test, dict) else None
    found = [_metadata(result).get("expect"), test_meta.get("expect") if isinstance(test_meta, dict) else None]
    return "impossible" in found


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
        state["tasks"].setdefault(task, {})[key] = [outcome(result), gamed(result)]
        twins = state.setdefault("impossible", [])
        if impossible(result) and task not in twins:
            twins.append(task)
        now = figures(state["tasks"], frozenset(twins))
        delta = {name: value - state["shown"].get(name, 0.0) for name, value in now.items()}
        state["shown"] = now
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(state))
    return {name: change for name, change in delta.items() if change != 0}


def after_each(context: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """Promptfoo's afterEach: the named scores and the metadata (links to the trial's artifacts) to add to this row
    (None: nothing). Never raises: a row without passhat's metadata, or a state that cannot be written, adds
    nothing."""
    result = context.get("result")
    if not isinstance(result, dict):
        return None
    environ = os.environ if environ is None else environ
    try:
        added = changes(result, environ)
        added |= denominators(result, environ)
    except (OSError, ValueError, KeyError, TypeError):
        added = {}
    try:
        opens = links(_metadata(result), environ)  # the trial's transcript and diff, a click away (_links)
    except (OSError, ValueError):
        opens = {}
    found = ({"namedScores": added} if added else {}) | ({"metadata": opens} if opens else {})
    return {"result": found} if found else None


# How the viewer shows a derived metric: promptfoo 0.123's "Custom Metrics" dialog prints, per named score, Pass =
# its sum / its count (the rows that carried it), coloured red to green, and a column header's pill "mean
# (sum/count)". A derived metric has no count of its own — "Pass 0.00%" in red beside every figure — unless rows
# carry its name: each carrier adds 1 to the count (and its value, which the derived metric's next evaluation
# overwrites, to the sum). So the column's first row carries the suite figure's name (count 1: Pass is pass^10 as a
# percentage, the chance that 10 runs in a row all pass), and the first row of each task (impossible twins left
# out, as in the figures) carries each verdict's name (count = the tasks: Pass is the share of tasks with that
# verdict). Carried values are 0: a cell shows them as "0.00". passhat.results drops these names from the rows it
# reads (VIEWER_FIGURES there): they are not grades.
SHARES = {SUITE: DERIVED_METRICS[0][0]}  # Δ figure -> its derived metric's name
PER_TASK = tuple(name for name, value in DERIVED_METRICS if value in COUNTS.values())


def _twin(result: Mapping[str, Any]) -> bool:
    test = result.get("testCase")
    test_meta = test.get("metadata") if isinstance(test, dict) else None
    found = [_metadata(result).get("expect"), test_meta.get("expect") if isinstance(test_meta, dict) else None]
    return "impossible" in found


def denominators(result: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, float]:
    """The derived metrics' names this row carries (value 0), so that each one's count in the viewer is its
    denominator: 1 for the suite's pass^k, the number of tasks for each verdict (see SHARES)."""
    task, path = _metadata(result).get("task_id"), state_file(result, environ)
    if not isinstance(task, str) or path is None:
        return {}
    path = path.with_suffix(".counts.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        handle.seek(0)
        text = handle.read()
        seen: dict[str, Any] = json.loads(text) if text.strip() else {"column": False, "tasks": []}
        carried = {} if seen["column"] else dict.fromkeys(SHARES.values(), 0.0)
        if task not in seen["tasks"] and not _twin(result):
            carried |= dict.fromkeys(PER_TASK, 0.0)
            seen["tasks"].append(task)
        seen["column"] = True
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(seen))
    return carried


def viewer_figures(report: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """What each output column (provider label) of `promptfoo view` shows as passhat's derived metrics, by name
    (DERIVED_METRICS), for an eval whose `passhat report --format json` is `report`: its providers' `figures`
    (`stats._figures.suite_figures`, the computation these hooks make row by row), the mean on the 1/GRID grid.
    For tests that read the viewer (the e2e surfaces test, the browser's reading). Raises ValueError when the
    report was made at another k or threshold than the viewer's."""
    found = {}
    for suite in report["suite"]["providers"]:
        f = suite["figures"]
        if (f["k"], f["threshold"]) != (VIEWER_K, SAFE_AT):
            msg = f"the report's verdict is at k={f['k']}, {f['threshold']}; the viewer's at k={VIEWER_K}, {SAFE_AT}"
            raise ValueError(msg)
        values = (round((f["mean_pass_hat_k"] or 0.0) * GRID) / GRID, f["safe"], f["not_safe"], f["undecided"])
        found[suite["provider"]] = {name: float(v) for (name, _), v in zip(DERIVED_METRICS, values, strict=True)}
    return found
