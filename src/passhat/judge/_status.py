"""Is a saved Promptfoo row unscored because its judge could not be read? (For `passhat report`.) And the one
way to read a saved row's graders, whichever shape the row has: `grader_components`.

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
    others = [c for c in grader_components(row) if not str(c.get("reason", "")).startswith(UNSCORED_PREFIX)]
    return all(c.get("pass") for c in others)


def _same(one: dict, other: dict) -> bool:
    """Promptfoo's flattened copy of a component: same verdict, same grader."""
    return all(one.get(k) == other.get(k) for k in ("pass", "score", "reason", "assertion"))


def grader_components(row: dict) -> list[dict]:
    """One component per grader of a saved Promptfoo row, in order, whichever shape the row has:
    one assertion per grader (older evals), or the one deterministic assertion whose own component holds its
    graders' components (Promptfoo also lists flattened copies right after it: skipped, not counted twice)."""
    grading = row.get("gradingResult")
    listed = grading.get("componentResults") if isinstance(grading, dict) else None
    found: list[dict] = []
    copies: list[dict] = []  # the flattened copies still expected after a combined component
    for component in listed if isinstance(listed, list) else ():
        if not isinstance(component, dict):
            continue
        if copies and _same(component, copies[0]):
            copies.pop(0)
            continue
        nested = component.get("componentResults")
        if isinstance(nested, list) and nested:
            parts = [c for c in nested if isinstance(c, dict)]
            found.extend(parts)
            copies = list(parts)
        else:
            found.append(component)
    return found
