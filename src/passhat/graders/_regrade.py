"""`passhat regrade RESULTS.json -o NEW.json`: rerun the graders on the saved outcomes of an
earlier eval — no agent, no cost — and write a Promptfoo-shaped file `passhat report` reads, in the shape
live grading (graders._live) gives a row (`graded_components`).

Graders come from each task's task.yaml as it is now (or from `--tasks-dir`), so a changed
grader can be tried on old trials. Rows with infrastructure errors are kept as they were.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path

from passhat.common._errors import ResultsError
from passhat.graders._common import Grade, combined_result, component
from passhat.graders._live import grade
from passhat.graders._settings import graders_of, load_graded_task
from passhat.graders._suite import ALL_FILE, ONE_FILE, deterministic, graders_assertion, judges
from passhat.trial._outcome import TrialOutcome


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


def _judge_component(grade: Grade, grader: dict) -> dict:
    part = component(grade, grader)
    part["assertion"]["value"] = f"file://assertions/{ONE_FILE}"
    return part


def graded_components(outcome: TrialOutcome, graders: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the row's componentResults as Promptfoo saves them, one component per grader): the deterministic graders'
    one assertion (its component, then flattened copies of its graders' components) and one per judge."""
    combined = deterministic(graders)
    parts = [component(grade(outcome, g), g) for g in combined]
    saved: list[dict] = []
    if combined:
        assertion = graders_assertion(combined, f"file://assertions/{ALL_FILE}")
        saved += [{**combined_result(parts), "assertion": assertion}, *(dict(part) for part in parts)]
    graded_judges = [_judge_component(grade(outcome, g), g) for g in judges(graders)]
    return saved + graded_judges, parts + graded_judges


def regrade_row(row: dict, tasks_dir: Path | None) -> dict | None:
    """The row with fresh grading, in the shape `promptfoo eval` gives it today, or None when it cannot be
    regraded (infra error, no outcome)."""
    metadata = (row.get("response") or {}).get("metadata") or {}
    if row.get("failureReason") == 2 or not metadata.get("patch_path"):
        return None
    task_dir = tasks_dir / metadata["task_id"] if tasks_dir else Path(metadata["task_dir"])
    task = load_graded_task(task_dir)
    final_text = (row.get("response") or {}).get("output")
    outcome = TrialOutcome.from_metadata({**metadata, "task_dir": str(task.dir), "output": final_text})
    saved, per_grader = graded_components(outcome, list(graders_of(task)))
    summary = combined_result(per_grader)
    passed, score, reason, named = summary["pass"], summary["score"], summary["reason"], summary["namedScores"]
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
            "componentResults": saved,
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
