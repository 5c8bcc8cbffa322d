"""Grading a live trial inside Promptfoo: the one assertion of a trial's deterministic graders
(`grade_all_promptfoo`), and an assertion of one grader of any kind (`grade_one_promptfoo`: a judge's live
function, or a deterministic grader on its own, as in a hand-written config).

A grader that cannot run fails with the reason; only GradingInfraError (the cluster lost a grader's run) is
raised into Promptfoo, which records the row's grading as an error (`Error running Python script`): an infra
error to passhat's reader, never the agent's failure.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from passhat.common import _cpu_roles as roles
from passhat.common._errors import GradingInfraError, PasshatError, SandboxError
from passhat.graders._common import Grade, combined_result, component
from passhat.graders.kinds import kind_of
from passhat.graders.view import view_of
from passhat.trial._outcome import TrialOutcome


def grade(outcome: TrialOutcome, config: dict) -> Grade:
    """Run one grader; an outcome that cannot be built (patch does not apply) is a failed grade with the reason."""
    kind = kind_of(config["type"])
    if kind is None:
        return Grade(False, 0.0, f"{config['type']} grader: no such grader kind (passhat.graders.kinds)")
    try:
        return kind.grade(view_of(outcome), config)  # every kind reads the outcome through its view
    except SandboxError as error:
        return Grade(False, 0.0, f"{config['type']} grader: {error}")


def _outcome(context: dict) -> TrialOutcome | PasshatError:
    response = context.get("providerResponse") or {}
    metadata = {**(context.get("metadata") or {}), **(response.get("metadata") or {})}
    if isinstance(response.get("output"), str):  # the agent's final text: the view's record.final_text
        metadata.setdefault("output", response["output"])
    try:
        return TrialOutcome.from_metadata(metadata)
    except PasshatError as error:
        return error


def _graded(outcome: TrialOutcome | PasshatError, grader: dict) -> Grade:
    problem = outcome
    if isinstance(outcome, TrialOutcome):
        try:
            return grade(outcome, grader)
        except GradingInfraError:
            raise
        except PasshatError as error:
            problem = error
    print(f"passhat grader {grader['type']}: {problem}", file=sys.stderr)
    return Grade(False, 0.0, f"{grader['type']} grader could not run: {problem}")


def grade_all_promptfoo(context: dict) -> dict:
    """Promptfoo's one assertion for a trial's deterministic graders (`config.graders`): one outcome, every
    grader on it in this process, one component and one named score per grader."""
    outcome = _outcome(context)
    graders = [dict(g) for g in (context.get("config") or {}).get("graders") or []]
    components = []
    for grader in graders:
        started = time.process_time()
        components.append(component(_graded(outcome, grader), grader))
        roles.stage(f"grader:{grader['type']}", time.process_time() - started)
    return combined_result(components)


def grade_one_promptfoo(output: Any, context: dict) -> dict:
    """Promptfoo's assertion of one grader, its kind named by `config.type`: a judge grades live (its kind's
    `live`, which sees the agent's final text), any other kind as in the combined assertion."""
    config = dict(context.get("config") or {})
    kind = kind_of(str(config.get("type")))
    if kind is None:
        reason = f"grader type {config.get('type')!r} is not a passhat grader kind; set the assertion's config.type"
        return {"pass": False, "score": 0.0, "reason": reason}
    if kind.live is not None:
        return kind.live(output, context)
    return _graded(_outcome(context), config).to_promptfoo()
