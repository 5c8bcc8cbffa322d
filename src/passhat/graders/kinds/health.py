"""The `health` grader: how the run ended, scored apart from the outcome.

A clean exit (status ok, no error, few permission denials, within turn and cost limits) is
tracked as its own named score — never mistaken for success at the task.
"""

from __future__ import annotations

from passhat.graders._common import Grade
from passhat.graders.kinds import GraderKind
from passhat.graders.view import OutcomeView


def grade_health(view: OutcomeView, config: dict) -> Grade:
    run = view.record
    problems = []
    if run.status not in (None, "ok"):
        problems.append(f"status {run.status} (subtype {run.subtype})")
    if run.is_error:
        problems.append("the CLI reported is_error")
    if run.permission_denials > config.get("max_permission_denials", 0):
        problems.append(f"{run.permission_denials} permission denial(s)")
    if "max_turns" in config and run.turns is not None and run.turns > config["max_turns"]:
        problems.append(f"{run.turns} turns > {config['max_turns']}")
    if "max_cost_usd" in config and run.cost_usd is not None and run.cost_usd > config["max_cost_usd"]:
        problems.append(f"cost ${run.cost_usd:.4f} > ${config['max_cost_usd']}")
    if problems:
        return Grade(False, 0.0, "unhealthy run: " + "; ".join(problems))
    return Grade(True, 1.0, f"clean exit ({run.turns} turns, subtype {run.subtype})")


SETTINGS = {
    "properties": {
        "max_permission_denials": {"type": "integer", "minimum": 0, "default": 0},
        "max_turns": {"type": "integer", "minimum": 1},
        "max_cost_usd": {"type": "number", "exclusiveMinimum": 0},
    },
}

KIND = GraderKind("health", grade_health, deterministic=True, settings=SETTINGS)
