"""Run Claude Code once, in a sandbox, under a wall-clock deadline that passhat enforces.

The CLI is started through a tiny launcher script (cli_path) that
  * drops every environment variable we did not choose (`env -i`),
  * puts the CLI in its own session (`setsid`), recording its pid, and
  * when confined, runs it under bubblewrap (`bwrap --args 3`, the trial's view read from a file
    passhat writes per trial: see _isolation.py),
so on the deadline we kill the whole process group, Bash-tool children included. Under bwrap the
group is bwrap itself (outer process and the PID namespace's init): killing it ends the namespace,
so the kernel kills the CLI and whatever it detached (`setsid`, double forks) as well.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

import claude_agent_sdk

from passhat.trial._config import ProviderConfig
from passhat.trial._isolation import Jail, sandbox_command, write_arguments
from passhat.trial._limits import tree_usage
from passhat.trial._outcome import Session, trial_end

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# Variables the SDK itself sets for the CLI; the launcher keeps them beside ours.
_SDK_VARS = (
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_AGENT_SDK_VERSION",
    "CLAUDE_AGENT_SDK_CLIENT_APP",
    "CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP",
    "CLAUDE_CODE_SDK_READS_SESSION_STATE",
    "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING",
)
_BWRAP_ARGS_VAR = "PASSHAT_BWRAP_ARGS"  # for the launcher only; never passed on to the CLI
_KILL_GRACE_S = 15.0
_MB = 1024 * 1024
_SYNTHETIC = "<synthetic>"  # the model of an assistant message the CLI wrote itself (an API error's text)
_DENIED_INPUT_CHARS = 200


@dataclass(frozen=True)
class AgentRun:
    """What the CLI reported, plus how the run ended (status)."""

    status: str  # ok | timeout | limit | max_turns | max_budget | agent_crash | infra_error
    output: str
    error: str | None
    subtype: str | None
    is_error: bool
    num_turns: int | None
    duration_ms: int | None
    duration_api_ms: int | None
    total_cost_usd: float | None
    usage: dict | None
    session_id: str | None
    permission_denials: int
    wall_s: float
    model_requests: int | None = None  # answered by the model API, as the proxy saw them (confined trials)
    claude_code_version: str | None = None  # of the CLI that ran (its init message, else `claude --version`)
    agent_sdk_version: str = claude_agent_sdk.__version__
    models: tuple[str, ...] = ()  # the model ids that answered: the result's per-model usage keys
    model_usage: dict | None = None  # the result's per-model usage (tokens, cost) as the CLI reported it
    terminal_reason: str | None = None  # the result's: completed, max_turns, api_error, prompt_too_long, ...
    api_error_status: int | None = None  # the result's HTTP status of the failing API call
    api_error: str | None = None  # the SDK's kind of the last failed API call (rate_limit, server_error, ...)
    denied: tuple[dict, ...] = ()  # the tool uses the CLI refused: {"tool_name", "tool_use_id", "input"}


class _RunState(TypedDict):
    """What run_agent's consumer and watchdog record while the CLI runs."""

    timed_out: bool
    result: claude_agent_sdk.ResultMessage | None
    last_text: str
    crash: str | None
    limit: str | None
    init: dict | None  # the CLI's first system/init message (claude_code_version, model, tools)
    api_error: str | None  # the last AssistantMessage.error
    models: list[str]  # the models of the assistant messages, in order (the CLI's own `<synthetic>` left out)


def bundled_cli() -> Path:
    return Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


@functools.cache
def cli_version() -> str | None:
    """`claude --version` of the bundled CLI ("2.1.332 (Claude Code)" → "2.1.332"), run once per process: the
    version of a trial whose CLI sent no init message. None when it does not answer."""
    try:
        done = subprocess.run(
            [str(bundled_cli()), "--version"], capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"}
        )
    except (OSError, subprocess.SubprocessError):
        return None
    words = done.stdout.split()
    return words[0] if done.returncode == 0 and words else None


def _denied(result: claude_agent_sdk.ResultMessage | None) -> tuple[dict, ...]:
    """The result's permission denials, each with its input cut short (a Write's input holds the whole file)."""
    found = []
    for denial in (result.permission_denials or []) if result is not None else []:
        denial = denial if isinstance(denial, dict) else {}
        shown = json.dumps(denial.get("tool_input"), sort_keys=True, default=str)
        found.append({"tool_name": denial.get("tool_name"), "tool_use_id": denial.get("tool_use_id"),
                      "input": shown[:_DENIED_INPUT_CHARS]})  # fmt: skip
    return tuple(found)


def cli_environment(
    config: ProviderConfig, home: Path, tmp: Path, workdir: Path, endpoint: dict[str, str]
) -> dict[str, str]:
    """The whole environment the CLI sees: nothing else from the host leaks in."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "PWD": str(workdir),
        "USER": os.environ.get("USER", "passhat"),
        "SHELL": "/bin/bash",
        "TERM": "dumb",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "IS_SANDBOX": "1",  # the trial runs in a throwaway sandbox; lets bypassPermissions run as root
        **endpoint,
        **config.env,
    }
    if config.max_retries is not None:
        env["CLAUDE_CODE_MAX_RETRIES"] = str(config.max_retries)
    if config.api_timeout_s is not None:
        env["API_TIMEOUT_MS"] = str(int(config.api_timeout_s * 1000))
    return env


def launcher(trial_dir: Path, env_names: list[str], jail: Jail | None = None) -> Path:
    """The cli_path script of this trial (values of the environment stay in memory, never on disk).

    It records its pid (so a deadline kills the whole group), joins the trial's cgroups, scrubs the
    environment (`env -i`), starts a session, and under a jail runs the CLI through sandbox_command."""
    keep = sorted((set(env_names) | set(_SDK_VARS)) - {_BWRAP_ARGS_VAR, "PASSHAT_PID_FILE"})
    cli = shlex.quote(str(bundled_cli()))
    if jail is not None:
        prefix = sandbox_command(jail.bwrap, 3, jail.uid, jail.limits.file_mb, jail.limits.processes, jail.model_socket)
        command = f'/usr/bin/setsid {shlex.join(prefix)} {cli} "$@" 3< "${_BWRAP_ARGS_VAR}"'
    else:
        command = f'/usr/bin/setsid {cli} "$@"'
    cgroups = jail.cgroups.folders if jail else []
    lines = [
        "#!/bin/sh",
        "# passhat launcher: scrubbed environment, own session (so a deadline kills the whole group)"
        + (", bubblewrap" if jail else ""),
        'echo $$ >> "$PASSHAT_PID_FILE"',
        *[f"echo $$ > {shlex.quote(str(folder / 'cgroup.procs'))}" for folder in cgroups],
        "exec /usr/bin/env -i \\",
        *[f'  ${{{name}+"{name}=${name}"}} \\' for name in keep],
        f"  {command}",
    ]
    path = trial_dir / "launcher.sh"
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)
    return path


def kill_process_groups(pid_file: Path, wait_s: float = 5.0) -> None:
    """SIGKILL every process group the launcher recorded, then wait (bounded) until they are gone."""
    if not pid_file.is_file():
        return
    groups = {int(line) for line in pid_file.read_text().split() if line.isdigit()}
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + wait_s
    while groups and time.monotonic() < deadline:
        for group in list(groups):
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                groups.discard(group)
        if groups:
            time.sleep(0.02)


def _jsonable(message: object) -> dict:
    # is_dataclass is also true of a dataclass type; the SDK's messages are instances
    record = (
        dataclasses.asdict(cast("DataclassInstance", message))
        if dataclasses.is_dataclass(message)
        else {"repr": repr(message)}
    )
    return {"type": type(message).__name__, **record}


def _system_prompt(config: ProviderConfig) -> dict:
    """Claude Code's own system prompt (the SDK would otherwise send an empty one), plus any append."""
    prompt = {"type": "preset", "preset": "claude_code"}
    if config.append_system_prompt:
        prompt["append"] = config.append_system_prompt
    return prompt


def run_agent(
    prompt: str,
    config: ProviderConfig,
    workdir: Path,
    env: dict[str, str],
    trial_dir: Path,
    jail: Jail | None = None,
) -> AgentRun:
    """One Claude Code session; transcript.jsonl and cli.pid land in trial_dir. `jail` confines the CLI."""
    pid_file = trial_dir / "cli.pid"
    env = {**env, "PASSHAT_PID_FILE": str(pid_file)}
    if jail is not None:
        args_file = trial_dir / "bwrap.args"
        write_arguments(args_file, jail.view)
        env[_BWRAP_ARGS_VAR] = str(args_file)
    options = claude_agent_sdk.ClaudeAgentOptions(
        cwd=str(workdir),
        cli_path=str(launcher(trial_dir, list(env), jail)),
        env=env,
        model=config.model,
        allowed_tools=list(config.allowed_tools),
        disallowed_tools=list(config.disallowed_tools),
        permission_mode=config.permission_mode,
        max_turns=config.max_turns,
        max_budget_usd=config.max_budget_usd,
        setting_sources=list(config.setting_sources) if config.setting_sources is not None else [],
        settings=str(config.settings) if config.settings else None,  # visible read-only in the sandbox
        mcp_servers=dict(config.mcp_servers),
        strict_mcp_config=True,  # only the servers the provider config names: never a repo's .mcp.json
        system_prompt=_system_prompt(config),
        extra_args={"bare": None} if config.bare else {},  # the mode of `claude --bare -p` in a team's cron job
        stderr=lambda line: None,
    )
    state: _RunState = {"timed_out": False, "result": None, "last_text": "", "crash": None, "limit": None,
                        "init": None, "api_error": None, "models": []}  # fmt: skip
    started = time.monotonic()

    def on_deadline() -> None:
        state["timed_out"] = True
        kill_process_groups(pid_file)

    def over_limit() -> str | None:
        if jail is None:
            return None
        limits, spent = jail.limits, jail.spend.breached if jail.spend is not None else None
        return spent or jail.cgroups.breach() or tree_usage(workdir, limits.worktree_mb * _MB, limits.worktree_files)

    async def watch_limits() -> None:
        while jail is not None:
            await asyncio.sleep(1.0)
            reason = await asyncio.to_thread(over_limit)
            if reason is not None:
                state["limit"] = reason
                kill_process_groups(pid_file)
                return

    async def watch_upstream() -> None:
        """The proxy gave up on the upstream (passhat/common/_endpoint.py): end the session now, not after the CLI's
        retries."""
        witness = jail.witness if jail is not None else None
        while witness is not None and not witness.ended.is_set():
            await asyncio.sleep(0.1)
        if witness is not None:
            kill_process_groups(pid_file)

    async def consume() -> None:
        loop = asyncio.get_running_loop()
        watchdog = loop.call_later(config.timeout_s, on_deadline)
        limits = asyncio.create_task(watch_limits())
        upstream = asyncio.create_task(watch_upstream())
        try:
            with open(trial_dir / "transcript.jsonl", "w") as transcript:
                async for message in claude_agent_sdk.query(prompt=prompt, options=options):
                    transcript.write(json.dumps(_jsonable(message), default=str) + "\n")
                    transcript.flush()
                    if isinstance(message, claude_agent_sdk.AssistantMessage):
                        texts = [b.text for b in message.content if isinstance(b, claude_agent_sdk.TextBlock)]
                        state["last_text"] = "\n".join(texts) or state["last_text"]
                        state["api_error"] = message.error
                        if message.model and message.model != _SYNTHETIC:
                            state["models"].append(message.model)
                    elif isinstance(message, claude_agent_sdk.SystemMessage) and message.subtype == "init":
                        state["init"] = state["init"] or message.data  # the first: the CLI's, before any tool ran
                    elif isinstance(message, claude_agent_sdk.ResultMessage):
                        state["result"] = message
        except Exception as error:
            state["crash"] = f"{type(error).__name__}: {error}"
        finally:
            watchdog.cancel()
            limits.cancel()
            upstream.cancel()

    try:
        asyncio.run(asyncio.wait_for(consume(), config.timeout_s + _KILL_GRACE_S))
    except TimeoutError:
        state["timed_out"] = True
    finally:
        kill_process_groups(pid_file)  # nothing the trial started outlives it
    if jail is not None and state["limit"] is None:
        state["limit"] = over_limit()

    result: claude_agent_sdk.ResultMessage | None = state["result"]
    session = Session(state["timed_out"], state["crash"], state["limit"], state["api_error"])
    status, error = trial_end(result, session, jail.witness if jail else None)
    trusted = result if status in ("ok", "max_turns", "max_budget", "infra_error") else None
    usage_by_model = trusted.model_usage if trusted is not None and isinstance(trusted.model_usage, dict) else None
    version = (state["init"] or {}).get("claude_code_version")
    return AgentRun(
        status=status,
        output=(result.result if result and result.result else state["last_text"]) or "",
        error=error,
        subtype=result.subtype if result else ("timeout" if state["timed_out"] else None),
        is_error=trusted.is_error if trusted else True,
        num_turns=result.num_turns if result else None,
        duration_ms=result.duration_ms if result else None,
        duration_api_ms=result.duration_api_ms if result else None,
        total_cost_usd=result.total_cost_usd if result else None,
        usage=result.usage if result else None,
        session_id=result.session_id if result else None,
        permission_denials=len(getattr(result, "permission_denials", None) or []),
        wall_s=round(time.monotonic() - started, 3),
        model_requests=jail.witness.answered if jail and jail.witness else None,
        claude_code_version=version if isinstance(version, str) and version else cli_version(),
        models=tuple(sorted(usage_by_model)) if usage_by_model else tuple(sorted(set(state["models"]))),
        model_usage=usage_by_model,
        terminal_reason=result.terminal_reason if result else None,
        api_error_status=result.api_error_status if result else None,
        api_error=state["api_error"],
        denied=_denied(result),
    )
