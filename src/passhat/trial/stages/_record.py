"""Stage outcome, last: the trial's record on disk (patch.diff, trial.json beside the transcript) and Promptfoo's
response — `output` (final text), `cost`, `tokenUsage`, `metadata` (the record, artifact paths), or `error` for an
infrastructure failure (never a failed output)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from passhat.trial._agent import AgentRun
from passhat.trial._sandbox import Base, Outcome
from passhat.trial.stages._trial import Trial
from passhat.trial.stages._workspace import Folders


@dataclass(frozen=True)
class TrialRecord:
    task_id: str
    task_version: str
    repeat_index: int
    status: str
    subtype: str | None
    is_error: bool
    num_turns: int | None
    duration_ms: int | None
    duration_api_ms: int | None
    wall_s: float
    cost_usd: float | None
    usage: dict | None
    session_id: str | None
    permission_denials: int
    changed_paths: tuple[str, ...]
    base_dir: str
    task_dir: str
    trial_dir: str
    patch_path: str
    transcript_path: str
    model: str | None
    error: str | None
    confinement: str = "none"  # "bwrap", or "none: <what an unconfined agent can reach>"
    model_requests: int | None = None  # model API requests answered, as passhat's proxy saw them
    model_spend: dict | None = None  # what the proxy counted against the spend caps (trial.spend), when confined
    scripted_model: bool = False  # run against passhat's scripted model: its cost is not real money
    # What ran (the report's header and the drift history name them): the CLI's and the SDK's versions, and the
    # model ids that answered (the result's per-model usage keys; `model` above is the one configured)
    claude_code_version: str | None = None
    agent_sdk_version: str | None = None
    models: tuple[str, ...] = ()
    model_usage: dict | None = None  # the result's per-model tokens and cost, as the CLI reported them
    terminal_reason: str | None = None  # why the CLI's loop ended (completed, max_turns, api_error, ...)
    api_error_status: int | None = None  # the HTTP status of the failing API call, when the CLI names one
    permission_denied: tuple[dict, ...] = ()  # the tool uses the CLI refused: tool_name, tool_use_id, input


@dataclass(frozen=True)
class Ran:
    """What the stages before left for the record: the base, the agent's run, its outcome, the confinement's
    label, the proxy's spend counts and whether the scripted model answered."""

    base: Base
    run: AgentRun
    outcome: Outcome
    confinement: str
    model_spend: dict | None
    scripted: bool


_BY_MODEL = {"prompt": "inputTokens", "completion": "outputTokens", "cached": "cacheReadInputTokens"}
_USAGE = {"prompt": "input_tokens", "completion": "output_tokens", "cached": "cache_read_input_tokens"}


def _token_usage(usage: dict | None, by_model: dict | None = None) -> dict:
    """Promptfoo's tokenUsage: the CLI's per-model usage summed when it reported one (its `usage` leaves out the
    reply that followed a retried request), else its `usage`."""
    if by_model:
        models = [m for m in by_model.values() if isinstance(m, dict)]
        counts = {name: sum(int(m.get(key) or 0) for m in models) for name, key in _BY_MODEL.items()}
    else:
        counts = {name: int((usage or {}).get(key) or 0) for name, key in _USAGE.items()}
    return {**counts, "total": counts["prompt"] + counts["completion"]}


def _write_json(path: Path, payload: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=str))
    os.replace(tmp, path)


def respond(trial: Trial, folders: Folders, ran: Ran) -> dict:
    """patch.diff and trial.json written; Promptfoo's response."""
    run, outcome, task = ran.run, ran.outcome, trial.task
    patch_path = folders.trial_dir / "patch.diff"
    patch_path.write_bytes(outcome.patch)
    record = TrialRecord(
        task_id=task.id,
        task_version=task.version,
        repeat_index=trial.repeat,
        status=run.status,
        subtype=run.subtype,
        is_error=run.is_error,
        num_turns=run.num_turns,
        duration_ms=run.duration_ms,
        duration_api_ms=run.duration_api_ms,
        wall_s=run.wall_s,
        cost_usd=run.total_cost_usd,
        usage=run.usage,
        session_id=run.session_id,
        permission_denials=run.permission_denials,
        changed_paths=outcome.changed_paths,
        base_dir=str(ran.base.path),
        task_dir=str(task.dir),
        trial_dir=str(folders.trial_dir),
        patch_path=str(patch_path),
        transcript_path=str(folders.trial_dir / "transcript.jsonl"),
        model=trial.config.model,
        error=run.error,
        confinement=ran.confinement,
        model_requests=run.model_requests,
        model_spend=ran.model_spend,
        scripted_model=ran.scripted,
        claude_code_version=run.claude_code_version,
        agent_sdk_version=run.agent_sdk_version,
        models=run.models,
        model_usage=run.model_usage,
        terminal_reason=run.terminal_reason,
        api_error_status=run.api_error_status,
        permission_denied=run.denied,
    )
    metadata = asdict(record)
    metadata["changed_paths"] = list(outcome.changed_paths)
    metadata["models"], metadata["permission_denied"] = list(run.models), list(run.denied)
    metadata["eval_id"] = trial.eval_id  # the viewer's running figures are kept per eval (passhat.extension)
    _write_json(folders.trial_dir / "trial.json", metadata)

    response: dict = {
        # The scripted model's dollars are the CLI pricing made-up tokens: Promptfoo's totals get $0, and the
        # figure stays in metadata cost_usd beside scripted_model: true (the report marks it).
        "cost": 0.0 if ran.scripted else run.total_cost_usd or 0.0,
        "tokenUsage": _token_usage(run.usage, run.model_usage),
        "metadata": metadata,
        "latencyMs": int(run.wall_s * 1000),
    }
    if run.session_id:
        response["sessionId"] = run.session_id
    if run.status == "infra_error":
        response["error"] = f"infrastructure error in task {task.id} trial {trial.repeat}: {run.error}"
    else:
        response["output"] = run.output
    return response
