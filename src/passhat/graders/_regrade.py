"""`passhat regrade RESULTS.json -o NEW.json`: rerun the graders on the saved outcomes of an
earlier eval — no agent, no cost — and write a Promptfoo-shaped file `passhat report` reads.

Graders come from each task's task.yaml as it is now (or from `--tasks-dir`), so a changed
grader can be tried on old trials. Rows with infrastructure errors are kept as they were.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path
from typing import TypedDict

from passhat._errors import ResultsError

# One graded assertion of a row's gradingResult.componentResults ("pass" is a keyword: the functional form).
_Component = TypedDict("_Component", {"pass": bool, "score": float, "reason": str, "assertion": dict})


def _load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file; pass the file written by promptfoo eval -o") from None
    except json.JSONDecodeError as error:
        msg = f"{path}: not JSON (line {error.lineno}, column {error.colno}: {error.msg}); pass promptfoo's -o JSON"
        raise ResultsError(msg) from None
    rows = data.get("results", {}).get("results") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(rows, list):  # data not a dict: rows is None
        raise ResultsError(
            f"{path}: field 'results.results' is missing or not a list; pass promptfoo's -o JSON"
        ) from None
    return data


def _assertion(grader: dict, metric: str) -> dict:
    from passhat.tasks._suite import ASSERTION_FILES

    return {
        "type": "python",
        "value": f"file://assertions/{ASSERTION_FILES[grader['type']]}",
        "metric": metric,
        "config": grader,
    }


def regrade_row(row: dict, tasks_dir: Path | None) -> dict | None:
    """The row with fresh grading, or None when it cannot be regraded (infra error, no outcome)."""
    from passhat.graders import TrialOutcome, grade
    from passhat.tasks._load import load_task

    metadata = (row.get("response") or {}).get("metadata") or {}
    if row.get("failureReason") == 2 or not metadata.get("patch_path"):
        return None
    task_dir = tasks_dir / metadata["task_id"] if tasks_dir else Path(metadata["task_dir"])
    task = load_task(task_dir)
    final_text = (row.get("response") or {}).get("output")
    outcome = TrialOutcome.from_metadata({**metadata, "task_dir": str(task.dir), "output": final_text})
    components: list[_Component] = []
    named: dict[str, float] = {}
    for grader in task.graders:
        metric = grader.get("name", grader["type"])
        result = grade(outcome, grader)
        named[metric] = result.score
        components.append(
            {
                "pass": result.passed,
                "score": result.score,
                "reason": result.reason,
                "assertion": _assertion(grader, metric),
            }
        )
    passed = all(c["pass"] for c in components)
    score = sum(c["score"] for c in components) / len(components)
    reason = "All assertions passed" if passed else "\n".join(c["reason"] for c in components if not c["pass"])
    new = copy.deepcopy(row)
    new.update(
        success=passed,
        score=score,
        namedScores=named,
        failureReason=0 if passed else 1,
        error=None if passed else reason,
        gradingResult={
            "pass": passed,
            "score": score,
            "reason": reason,
            "namedScores": named,
            "componentResults": components,
        },
    )
    return new


def _key(row: dict) -> str:
    metadata = (row.get("response") or {}).get("metadata") or {}
    provider = row.get("provider") or {}
    label = provider.get("label") or provider.get("id") if isinstance(provider, dict) else provider
    return f"{metadata.get('task_id', '?')} r{metadata.get('repeat_index', '?')} [{label}]"


def _write_atomically(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle)
    os.replace(tmp, path)
