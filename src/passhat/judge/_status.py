"""Is a saved Promptfoo row unscored because its judge could not be read? (For `passhat report`.)

A judge that fails after its bounded retries returns pass false, score 0, a reason starting "UNSCORED"
and the named score `judge_unscored` = 1 (Promptfoo averages named scores over a row's assertions, so
the row's value is > 0 when any judge of the row was unscored). The row is unscored — neither passed
nor failed — when that is so and every other assertion of the row passed; if a deterministic grader
failed, the trial failed whatever the judge would have said.
"""

from __future__ import annotations

UNSCORED_PREFIX = "UNSCORED"


def unscored_by_judge(row: dict) -> bool:
    named = row.get("namedScores") or {}
    flag = named.get("judge_unscored") if isinstance(named, dict) else None
    if not isinstance(flag, (int, float)) or isinstance(flag, bool) or flag <= 0:
        return False
    components = (row.get("gradingResult") or {}).get("componentResults") or []
    others = [c for c in components if isinstance(c, dict) and not str(c.get("reason", "")).startswith(UNSCORED_PREFIX)]
    return all(c.get("pass") for c in others)
