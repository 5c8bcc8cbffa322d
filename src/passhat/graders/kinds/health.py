"""The `health` grader: how the run ended, scored apart from the outcome.

A clean exit (status ok, no error, few permission denials, within turn and cost limits) is
tracked as its own named score — never mistaken for success at the task.
"""

from __future__ import annotations

from passhat.graders._common import Grade
from passhat.graders.kinds import GraderKind
from passhat.trial._outcome import TrialOutcome


def grade_health(outcome: TrialOutcome, config: dict) -> Grade:
    run = outcome.run
    problems = []
    status = run.get("status")
    if status not in (None, "ok"):
        problems.append(f"status {status} (subtype {run.get('subtype')})")
    if run.get("is_error"):
        problems.append("the CLI reported is_error")
    denials = int(run.get("permission_denials") or 0)
    if denials > config.get("max_permission_denials", 0):
        problems.append(f"{denials} permission denial(s)")
    turns = run.get("num_turns")
    if "max_turns" in config and turns is not None and turns > config["max_turns"]:
        problems.append(f"{turns} turns > {config['max_turns']}")
    cost = run.get("cost_usd")
    if "max_cost_usd" in config and cost is not None and cost > config["max_cost_usd"]:
        problems.append(f"cost ${cost:.4f} > ${config['max_cost_usd']}")
    if problems:
        return Grade(False, 0.0, "unhealthy run: " + "; ".join(problems))
    return Grade(True, 1.0, f"clean exit ({run.get('num_turns')} turns, subtype {run.get('subtype')})")


SETTINGS = {
    "properties": {
        "max_permission_denials": {"type": "integer", "minimum": 0, "default": 0},
        "max_turns": {"type": "integer", "minimum": 1},
        "max_cost_usd": {"type": "number", "exclusiveMinimum": 0},
    },
}

KIND = GraderKind("health", grade_health, deterministic=True, settings=SETTINGS)
