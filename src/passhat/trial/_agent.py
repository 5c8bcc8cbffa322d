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
import hashlib
import json
import os
import shlex
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

import claude_agent_sdk

from passhat.trial._config import ProviderConfig
from passhat.trial._isolation import write_arguments

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
AGENT_FAILURE_SUBTYPES = ("error_max_turns", "error_max_budget_usd")


@dataclass(frozen=True)
class AgentRun:
    """What the CLI reported, plus how the run ended (status)."""

    status: str  # ok | timeout | max_turns | max_budget | agent_error | infra_error
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


class _RunState(TypedDict):
    """What run_agent's consumer and watchdog record while the CLI runs."""

    timed_out: bool
    result: claude_agent_sdk.ResultMessage | None
    last_text: str
    crash: str | None


def bundled_cli() -> Path:
    return Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


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


def launcher(state_dir: Path, env_names: list[str], bwrap: str | None = None) -> Path:
    """The cli_path script for this set of variable names (values stay in memory, never on disk).

    With `bwrap`, the CLI runs under it; bwrap reads the trial's view from $PASSHAT_BWRAP_ARGS.
    """
    keep = sorted((set(env_names) | set(_SDK_VARS) | {"PASSHAT_PID_FILE"}) - {_BWRAP_ARGS_VAR})
    cli = shlex.quote(str(bundled_cli()))
    if bwrap:
        command = f'/usr/bin/setsid {shlex.quote(bwrap)} --args 3 -- {cli} "$@" 3< "${_BWRAP_ARGS_VAR}"'
    else:
        command = f'/usr/bin/setsid {cli} "$@"'
    lines = [
        "#!/bin/sh",
        "# passhat launcher: scrubbed environment, own session (so a deadline kills the whole group)"
        + (", bubblewrap" if bwrap else ""),
        'echo $$ >> "$PASSHAT_PID_FILE"',
        "exec /usr/bin/env -i \\",
        *[f'  ${{{name}+"{name}=${name}"}} \\' for name in keep],
        f"  {command}",
    ]
    text = "\n".join(lines) + "\n"
    path = state_dir / "launchers" / f"claude-{hashlib.sha256(text.encode()).hexdigest()[:12]}.sh"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.chmod(0o755)
        os.replace(tmp, path)
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


def _status(
    result: claude_agent_sdk.ResultMessage | None, timed_out: bool, crash: str | None
) -> tuple[str, str | None]:
    if timed_out:
        return "timeout", None
    if result is None:
        return "infra_error", crash or "the CLI ended without a result message"
    if result.subtype == "error_max_turns":
        return "max_turns", None
    if result.subtype == "error_max_budget_usd":
        return "max_budget", None
    if result.is_error:
        return "infra_error", f"Claude Code reported an error ({result.subtype}): {(result.result or '')[:500]}"
    return "ok", None


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
    bwrap: tuple[str, list[str]] | None = None,
) -> AgentRun:
    """One Claude Code session; transcript.jsonl and cli.pid land in trial_dir.

    bwrap = (path of bwrap, its options for this trial) confines the CLI; None runs it unconfined.
    """
    pid_file = trial_dir / "cli.pid"
    env = {**env, "PASSHAT_PID_FILE": str(pid_file)}
    if bwrap is not None:
        args_file = trial_dir / "bwrap.args"
        write_arguments(args_file, bwrap[1])
        env[_BWRAP_ARGS_VAR] = str(args_file)
    options = claude_agent_sdk.ClaudeAgentOptions(
        cwd=str(workdir),
        cli_path=str(launcher(config.state_dir, list(env), bwrap[0] if bwrap else None)),
        env=env,
        model=config.model,
        allowed_tools=list(config.allowed_tools),
        disallowed_tools=list(config.disallowed_tools),
        permission_mode=config.permission_mode,
        max_turns=config.max_turns,
        max_budget_usd=config.max_budget_usd,
        setting_sources=list(config.setting_sources) if config.setting_sources is not None else [],
        system_prompt=_system_prompt(config),
        stderr=lambda line: None,
    )
    state: _RunState = {"timed_out": False, "result": None, "last_text": "", "crash": None}
    started = time.monotonic()

    def on_deadline() -> None:
        state["timed_out"] = True
        kill_process_groups(pid_file)

    async def consume() -> None:
        loop = asyncio.get_running_loop()
        watchdog = loop.call_later(config.timeout_s, on_deadline)
        try:
            with open(trial_dir / "transcript.jsonl", "w") as transcript:
                async for message in claude_agent_sdk.query(prompt=prompt, options=options):
                    transcript.write(json.dumps(_jsonable(message), default=str) + "\n")
                    transcript.flush()
                    if isinstance(message, claude_agent_sdk.AssistantMessage):
                        texts = [b.text for b in message.content if isinstance(b, claude_agent_sdk.TextBlock)]
                        state["last_text"] = "\n".join(texts) or state["last_text"]
                    elif isinstance(message, claude_agent_sdk.ResultMessage):
                        state["result"] = message
        except Exception as error:
            state["crash"] = f"{type(error).__name__}: {error}"
        finally:
            watchdog.cancel()

    try:
        asyncio.run(asyncio.wait_for(consume(), config.timeout_s + _KILL_GRACE_S))
    except TimeoutError:
        state["timed_out"] = True
    finally:
        kill_process_groups(pid_file)  # nothing the trial started outlives it

    result: claude_agent_sdk.ResultMessage | None = state["result"]
    status, error = _status(result, state["timed_out"], state["crash"])
    return AgentRun(
        status=status,
        output=(result.result if result and result.result else state["last_text"]) or "",
        error=error,
        subtype=result.subtype if result else ("timeout" if state["timed_out"] else None),
        is_error=result.is_error if result else True,
        num_turns=result.num_turns if result else None,
        duration_ms=result.duration_ms if result else None,
        duration_api_ms=result.duration_api_ms if result else None,
        total_cost_usd=result.total_cost_usd if result else None,
        usage=result.usage if result else None,
        session_id=result.session_id if result else None,
        permission_denials=len(getattr(result, "permission_denials", None) or []),
        wall_s=round(time.monotonic() - started, 3),
    )
