"""The Promptfoo provider's edge: one Claude Code trial in a fresh sandbox per call.

promptfooconfig.yaml:  providers: [{id: file://providers/claude_code.py, config: {...}}]
Each call: `options` and `context` parsed once into a Trial (stages/_trial.py: the only reader of the raw dicts),
then the budget guard (passhat.common._budget), then the trial here (stages/: base → sandbox → jail → agent → outcome)
or, with `executor: ray`, on a cluster node (passhat.cluster ships the raw config; the node parses it again with
the same parse_trial). An infrastructure failure returns Promptfoo's `error`, never a failed output.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Mapping

from passhat.common._budget import Ledger
from passhat.common._errors import PasshatError
from passhat.trial.stages._trial import Trial, model_check, parse_trial

__all__ = ["NOT_RETRYABLE", "OFFSET_ENV", "call_api", "model_check", "on_node", "repeat_offset"]

# Promptfoo's adaptive scheduler reruns a call whose `error` holds "429" or "rate limit" (up to 4 times, then puts
# its own RateLimitExhaustedError in the row, metadata gone) unless the response says the limit is not retryable.
# A passhat trial already had the CLI's own retries, and its error may hold "429" anywhere (the proxy's evidence,
# a folder name): no error row of passhat's is ever rerun behind the user's back (issue 23).
NOT_RETRYABLE = {"rateLimitKind": "quota"}


OFFSET_ENV = "PASSHAT_REPEAT_OFFSET"  # `passhat eval --until-decided`: round r's repeats start where r - 1's ended


def repeat_offset() -> int:
    """$PASSHAT_REPEAT_OFFSET, added to Promptfoo's repeatIndex: 0 when unset."""
    value = os.environ.get(OFFSET_ENV, "").strip()
    if not value:
        return 0
    if not value.isdigit():
        msg = f"${OFFSET_ENV}={value!r}: expected a whole number >= 0 (the first repeat index of this round)"
        raise PasshatError(msg)
    return int(value)


def _here(trial: Trial) -> dict:
    from passhat.trial.stages import run_trial  # the stages (the Agent SDK, sandbox, proxy) load with the first trial

    return run_trial(trial)


def on_node(prompt: str, raw: Mapping, context: Mapping) -> dict:
    """A trial on a Ray node (passhat.cluster runs it there): the shipped config with the node's own folders put
    over it, parsed again by parse_trial, then run as here."""
    return _here(parse_trial(prompt, raw, context, on_node=True))


def _run(trial: Trial) -> dict:
    if trial.config.executor.kind == "local":
        return _here(trial)
    from passhat.cluster import run_on_ray

    raw, context = trial.shipped()
    executor, state_dir = trial.config.executor, trial.config.state_dir
    return run_on_ray(on_node, trial.prompt, raw, context, executor, trial.task, state_dir, trial.where())


def _guarded(trial: Trial) -> dict:
    """The trial behind the budget guard (passhat.common._budget) when a budget is set."""
    if trial.budget is None:
        return _run(trial)
    ledger = Ledger(trial.config.state_dir, trial.eval_id)
    admission = ledger.admit(trial.budget, trial.config.max_budget_usd)
    if admission.token is None:
        task, repeat = trial.task.id, trial.repeat
        where = {"task_id": task, "repeat_index": repeat, "status": "infra_error", "budget_reached": True}
        return {"error": f"infrastructure error in task {task} trial {repeat}: {admission.refusal}", "metadata": where}
    cost: float | None = None
    try:
        response = _run(trial)
        known = (response.get("metadata") or {}).get("cost_usd")
        cost = float(known) if isinstance(known, int | float) else None
        return response
    finally:
        ledger.settle(admission.token, cost)


def call_api(prompt: str, options: dict, context: dict) -> dict:
    """Promptfoo's entry point. Bad configuration is a one-line `error`, never a traceback; every error row is
    marked so that Promptfoo never reruns it (NOT_RETRYABLE): each (task, repeat) runs once unless the user asks."""
    try:
        context = dict(context or {})
        if offset := repeat_offset():
            context["repeatIndex"] = int(context.get("repeatIndex") or 0) + offset
        response = _guarded(parse_trial(prompt, (options or {}).get("config") or {}, context))
    except PasshatError as error:
        print(f"passhat: error: {error}", file=sys.stderr)
        response = {"error": f"passhat: {error}"}
    except Exception as error:  # a bug of ours: say so once, and still never let Promptfoo rerun the trial
        traceback.print_exc(file=sys.stderr)
        response = {"error": f"passhat: internal error ({type(error).__name__}: {error}); traceback on stderr"}
    if "error" in response:
        response["metadata"] = {**(response.get("metadata") or {}), **NOT_RETRYABLE}
    return response
