"""The Promptfoo provider: one Claude Code trial in a fresh sandbox per call.

promptfooconfig.yaml:  providers: [{id: file://providers/claude_code.py, config: {...}}]
Each call: base (cached) → sandbox (an overlay on the base, or a copy) → Claude Code → patch + transcript
on disk → `output` (final text), `cost`, `tokenUsage`, `metadata` (the trial record, artifact paths).
An infrastructure failure returns Promptfoo's `error`, never a failed output.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
import uuid
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from passhat._errors import PasshatError, SandboxError

if TYPE_CHECKING:
    from passhat._endpoint import Endpoint
    from passhat.tasks._load import Task
    from passhat.trial._config import ProviderConfig

_TASKS: dict[Path, Task] = {}


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


def _task(task_dir: Path) -> Task:
    from passhat.tasks._load import load_task

    if task_dir not in _TASKS:
        _TASKS[task_dir] = load_task(task_dir)
    return _TASKS[task_dir]


def _inject_claude_md(source: Path, workdir: Path) -> bytes:
    content = source.read_bytes()
    (workdir / "CLAUDE.md").write_bytes(content)
    if os.geteuid() == 0:  # the agent's, like the rest of the tree (owned by the base's uid)
        owner = os.lstat(workdir)
        os.lchown(workdir / "CLAUDE.md", owner.st_uid, owner.st_gid)
    return content


def _restore_claude_md(workdir: Path, base_path: Path, injected: bytes) -> None:
    """The injected context file is ours, not the agent's: keep it out of the patch unless edited."""
    from passhat.trial._paths import UnsafePathError, lstat_within, read_within, remove_within, write_within

    if lstat_within(workdir, "CLAUDE.md").kind != "file":  # a link, FIFO or folder the agent left: its own
        return
    try:
        if read_within(workdir, "CLAUDE.md", limit=len(injected)) != injected:
            return  # edited: part of the patch
    except UnsafePathError:
        return
    original = base_path / "CLAUDE.md"
    if original.is_file():
        write_within(workdir, "CLAUDE.md", original.read_bytes())
    else:
        remove_within(workdir, "CLAUDE.md")


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


_RETRY = "then `promptfoo eval --retry-errors --repeat N` runs the refused trials again"


def model_check(config: ProviderConfig, endpoint: dict[str, str], task_id: str, trial: int) -> Endpoint:
    """How passhat probes a trial's model endpoint itself (passhat/_endpoint.py), and the fix to give when it
    refuses the credential: the variable that holds it, or the scripted model's secret."""
    from passhat._endpoint import CHECK_PATH, Endpoint
    from passhat.trial._config import FAKE_MODEL_ENV
    from passhat.trial._proxy import credential_headers, upstream_url

    if config.fake_model_url:  # its own route: a 403 there means the URL's secret is not the server's
        from passhat._fake_route import route_url

        fix = ("the scripted model refuses a token its secret did not make (restarted with another secret?): start "
               "it with `--secret-file` holding the secret of the URL passhat was given, or give passhat the new URL "
               f"(${FAKE_MODEL_ENV} or `fake_model_url:`); {_RETRY}")  # fmt: skip
        return Endpoint(route_url(config.fake_model_url, task_id, trial, config.fake_script), {}, CHECK_PATH, fix)
    headers, auth = credential_headers(endpoint), config.auth
    if auth is None:
        where = "$ANTHROPIC_API_KEY"
    elif auth.token_env:
        where = f"${auth.token_env} (provider config `{auth.field}`)"
    else:
        where = "the gateway's own configuration (`auth:` names no credential variable)"
    if auth is not None and auth.kind == "oauth_token":
        headers["anthropic-beta"] = "oauth-2025-04-20"
        where += "; `claude setup-token` prints a new OAuth token"
    fix = f"renew the credential in {where} and export it, {_RETRY}"
    cloud = auth is not None and auth.kind in ("bedrock", "vertex")  # no free request there: the connection only
    return Endpoint(upstream_url(endpoint), headers, None if cloud else CHECK_PATH, fix)


def run_trial(prompt: str, raw_config: dict, context: dict) -> dict:
    from passhat._endpoint import EndpointHealth
    from passhat.trial._agent import bundled_cli, cli_environment, run_agent
    from passhat.trial._config import model_endpoint, parse_config
    from passhat.trial._isolation import confinement, open_jail, warn_if_unconfined
    from passhat.trial._sandbox import (
        AgentTreeError,
        Outcome,
        close_sandbox,
        collect_outcome,
        open_sandbox,
        prepare_base,
    )

    config = parse_config(raw_config)
    variables = context.get("vars") or {}
    task_id = str(variables.get("task_id") or "")
    if not task_id:
        msg = "test vars: 'task_id' is missing; generate tests with tasks/tests.py or set vars.task_id"
        raise PasshatError(msg)
    task_dir = Path(variables.get("task_dir") or config.tasks_dir / task_id).resolve()
    task = _task(task_dir)
    repeat_index = int(context.get("repeatIndex") or 0)
    eval_id = str(context.get("evaluationId") or "adhoc")
    name = f"r{repeat_index:03d}-{uuid.uuid4().hex[:8]}"
    trial_dir = config.artifacts_dir / eval_id / task.id / name
    sandbox = config.state_dir / "sandboxes" / f"{task.id}-{name}"
    workdir, home, tmp = sandbox / "work", sandbox / "home", sandbox / "tmp"
    scripted = bool(config.fake_model_url)  # the scripted model's dollars are not real money: reports say so
    where = {"task_id": task.id, "repeat_index": repeat_index, "status": "infra_error", "scripted_model": scripted}
    if config.executor.kind == "ray":  # the whole trial as a Ray task on a cluster node (passhat.cluster)
        from passhat.cluster import run_on_ray

        raw = raw_config | ({"fake_model_url": config.fake_model_url} if config.fake_model_url else {})
        return run_on_ray(run_trial, prompt, raw, context, config.executor, task, config.state_dir, where)
    confined = confinement(config.isolation)
    warn_if_unconfined(confined)
    try:
        for folder in (trial_dir, home, tmp):
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        msg = (
            f"infrastructure error in task {task.id} trial {repeat_index}: cannot create {error.filename} "
            f"({error.strerror}); make the state dir {config.state_dir} writable or set `state_dir:` in the "
            "provider config to a folder that is"
        )
        return {"error": msg, "metadata": where}

    limits = config.limits.merged(task.limits, f"{task.dir / 'task.yaml'}")
    proxy = jail = None
    try:
        base = prepare_base(task, config.state_dir / "cache")
        opened = open_sandbox(base.path, sandbox, base_git=base.path / ".git")  # an overlay on the base, or a copy
        injected = _inject_claude_md(config.claude_md, workdir) if config.claude_md else None
        endpoint = model_endpoint(config, task.id, repeat_index)
        check = model_check(config, endpoint, task.id, repeat_index)
        health = EndpointHealth(config.state_dir, config.unreachable_after)
        if (refused := health.refuse(check)) is not None:
            return {
                "error": f"infrastructure error in task {task.id} trial {repeat_index}: {refused}",
                "metadata": where,
            }
        if confined.bwrap:  # writable: this trial's folders; hidden: the state dir (all else in it), the tasks
            hidden = (config.state_dir, config.tasks_dir, task.dir)
            jail, proxy, env = open_jail(
                confined.bwrap, sandbox, hidden, limits, endpoint, task.network,
                lambda variables: cli_environment(config, home, tmp, workdir, variables), bundled_cli(),
                config.visible, config.model, check,
            )  # fmt: skip
        else:
            env = cli_environment(config, home, tmp, workdir, endpoint)
        run = run_agent(prompt, config, workdir, env, trial_dir, jail)
        if jail is not None and jail.witness is not None:
            health.record(jail.witness.gave_up or jail.witness.unreachable())
            scripted = scripted or jail.witness.scripted  # real mode pointed at the scripted model (a rehearsal)
        if injected is not None:
            _restore_claude_md(workdir, base.path, injected)
        try:  # with the base's .git, never the agent's: its git config and hooks never run outside the sandbox
            outcome = collect_outcome(workdir, base, limits, opened.upper, opened.git_dir)
        except AgentTreeError as error:
            outcome = Outcome(b"", ())
            status = "limit" if error.limit else "agent_crash"
            run = replace(run, status=status, error=str(error), is_error=True)
    except SandboxError as error:
        return {
            "error": f"infrastructure error (sandbox) in task {task.id}: {error}",
            "metadata": where,
        }
    finally:
        if proxy is not None:
            proxy.stop()
        if jail is not None:
            jail.cgroups.remove()
        close_sandbox(sandbox, keep=config.keep_sandbox)  # unmounted; removed unless kept
    patch_path = trial_dir / "patch.diff"
    patch_path.write_bytes(outcome.patch)
    record = TrialRecord(
        task_id=task.id,
        task_version=task.version,
        repeat_index=repeat_index,
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
        base_dir=str(base.path),
        task_dir=str(task.dir),
        trial_dir=str(trial_dir),
        patch_path=str(patch_path),
        transcript_path=str(trial_dir / "transcript.jsonl"),
        model=config.model,
        error=run.error,
        confinement=confined.label,
        model_requests=run.model_requests,
        model_spend=jail.spend.totals() if jail is not None and jail.spend is not None else None,
        scripted_model=scripted,
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
    metadata["eval_id"] = eval_id  # the viewer's running figures are kept per eval (passhat.extension)
    _write_json(trial_dir / "trial.json", metadata)

    response: dict = {
        # The scripted model's dollars are the CLI pricing made-up tokens: Promptfoo's totals get $0, and the
        # figure stays in metadata cost_usd beside scripted_model: true (the report marks it).
        "cost": 0.0 if scripted else run.total_cost_usd or 0.0,
        "tokenUsage": _token_usage(run.usage, run.model_usage),
        "metadata": metadata,
        "latencyMs": int(run.wall_s * 1000),
    }
    if run.session_id:
        response["sessionId"] = run.session_id
    if run.status == "infra_error":
        response["error"] = f"infrastructure error in task {task.id} trial {repeat_index}: {run.error}"
    else:
        response["output"] = run.output
    return response


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


def _guarded(prompt: str, raw: dict, context: dict) -> dict:
    """run_trial behind the budget guard (passhat._budget) when a budget is set."""
    from passhat._budget import Ledger, budget_of

    budget = budget_of(raw)
    if budget is None:
        return run_trial(prompt, raw, context)
    from passhat.trial._config import parse_config

    config = parse_config(raw)
    ledger = Ledger(config.state_dir, str(context.get("evaluationId") or "adhoc"))
    admission = ledger.admit(budget, config.max_budget_usd)
    if admission.token is None:
        variables = context.get("vars") or {}
        task, repeat = str(variables.get("task_id") or "?"), int(context.get("repeatIndex") or 0)
        where = {"task_id": task, "repeat_index": repeat, "status": "infra_error", "budget_reached": True}
        return {"error": f"infrastructure error in task {task} trial {repeat}: {admission.refusal}", "metadata": where}
    cost: float | None = None
    try:
        response = run_trial(prompt, raw, context)
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
        response = _guarded(prompt, (options or {}).get("config") or {}, context)
    except PasshatError as error:
        print(f"passhat: error: {error}", file=sys.stderr)
        response = {"error": f"passhat: {error}"}
    except Exception as error:  # a bug of ours: say so once, and still never let Promptfoo rerun the trial
        traceback.print_exc(file=sys.stderr)
        response = {"error": f"passhat: internal error ({type(error).__name__}: {error}); traceback on stderr"}
    if "error" in response:
        response["metadata"] = {**(response.get("metadata") or {}), **NOT_RETRYABLE}
    return response
