"""The provider's `config:` block in promptfooconfig.yaml, checked and typed."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from passhat._errors import PasshatError
from passhat.trial._isolation import ISOLATIONS, Isolation
from passhat.trial._limits import Limits

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
_PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
FAKE_MODEL_ENV = "PASSHAT_FAKE_MODEL_URL"
REAL_CLAUDE_ENV = "PASSHAT_REAL_CLAUDE"


@dataclass(frozen=True)
class ProviderConfig:
    base_path: Path
    tasks_dir: Path
    state_dir: Path  # .passhat: base cache, sandboxes, artifacts
    model: str | None = None
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    permission_mode: PermissionMode = "bypassPermissions"
    max_turns: int | None = None
    max_budget_usd: float | None = None
    append_system_prompt: str | None = None
    claude_md: Path | None = None
    setting_sources: tuple[str, ...] | None = None
    timeout_s: float = 600.0
    fake_model_url: str | None = None
    fake_script: str | None = None
    keep_sandbox: bool = False
    max_retries: int | None = None  # the CLI's API retries (CLAUDE_CODE_MAX_RETRIES); None = its default
    api_timeout_s: float | None = None  # per API request (API_TIMEOUT_MS); None = the CLI's default
    env: dict[str, str] = field(default_factory=dict)
    isolation: Isolation = "auto"  # auto = bwrap where it works, else none (with a warning)
    limits: Limits = field(default_factory=Limits)  # per trial and grader run; a task's `limits:` overrides them
    unreachable_after: int = 3  # trials in a row that could not reach the model before later ones fail fast

    @property
    def artifacts_dir(self) -> Path:
        return self.state_dir / "artifacts"


_FIELDS: dict[str, type | tuple[type, ...]] = {
    "model": str,
    "allowed_tools": list,
    "disallowed_tools": list,
    "permission_mode": str,
    "max_turns": int,
    "max_budget_usd": (int, float),
    "append_system_prompt": str,
    "claude_md": str,
    "setting_sources": list,
    "timeout_s": (int, float),
    "fake_model_url": str,
    "fake_script": str,
    "tasks_dir": str,
    "state_dir": str,
    "keep_sandbox": bool,
    "env": dict,
    "max_retries": int,
    "api_timeout_s": (int, float),
    "isolation": str,
    "limits": dict,
    "unreachable_after": int,
}
_PROMPTFOO_KEYS = {"basePath", "workers", "timeout", "pythonExecutable"}


def _bad(field_name: str, value: object, fix: str) -> PasshatError:
    return PasshatError(f"provider config field {field_name!r}: {value!r}: {fix}")


def _positive(name: str, value: int) -> int:
    if value < 1:
        raise _bad(name, value, "use a positive whole number")
    return value


def parse_config(raw: dict) -> ProviderConfig:
    """Check every key before the first trial; one clear error otherwise."""
    for key, value in raw.items():
        if key in _PROMPTFOO_KEYS:
            continue
        if key not in _FIELDS:
            raise _bad(key, value, f"unknown field; known fields: {', '.join(sorted(_FIELDS))}")
        expected = _FIELDS[key]
        if not isinstance(value, expected) or (isinstance(value, bool) and expected is not bool):
            names = expected.__name__ if isinstance(expected, type) else "number"
            raise _bad(key, value, f"expected a {names}")
    base_path = Path(raw.get("basePath") or os.getcwd()).resolve()

    def path(key: str, default: str) -> Path:
        return (base_path / cast(str, raw.get(key, default))).resolve()  # a str: checked against _FIELDS above

    mode = raw.get("permission_mode", "bypassPermissions")
    if mode not in _PERMISSION_MODES:
        raise _bad("permission_mode", mode, f"use one of {', '.join(_PERMISSION_MODES)}")
    isolation = raw.get("isolation", "auto")
    if isolation not in ISOLATIONS:
        raise _bad(
            "isolation",
            isolation,
            "use bwrap (confine each trial with bubblewrap), none (run unconfined) "
            "or auto (bwrap where it works, the default)",
        )
    timeout_s = float(raw.get("timeout_s", 600))
    if timeout_s <= 0:
        raise _bad("timeout_s", timeout_s, "use a positive number of seconds")
    claude_md = path("claude_md", "") if "claude_md" in raw else None
    if claude_md is not None and not claude_md.is_file():
        raise _bad("claude_md", raw["claude_md"], f"no such file {claude_md}; give a path relative to the config")
    sources = raw.get("setting_sources")
    if claude_md is not None and sources is None:
        sources = ["project"]  # a CLAUDE.md variant is read only with project settings on
    return ProviderConfig(
        base_path=base_path,
        tasks_dir=path("tasks_dir", "tasks"),
        state_dir=path("state_dir", ".passhat"),
        model=raw.get("model"),
        allowed_tools=tuple(raw.get("allowed_tools", ())),
        disallowed_tools=tuple(raw.get("disallowed_tools", ())),
        permission_mode=mode,
        max_turns=raw.get("max_turns"),
        max_budget_usd=raw.get("max_budget_usd"),
        append_system_prompt=raw.get("append_system_prompt"),
        claude_md=claude_md,
        setting_sources=tuple(sources) if sources is not None else None,
        timeout_s=timeout_s,
        fake_model_url=raw.get("fake_model_url") or os.environ.get(FAKE_MODEL_ENV) or None,
        fake_script=raw.get("fake_script"),
        keep_sandbox=bool(raw.get("keep_sandbox", False)),
        max_retries=raw.get("max_retries"),
        api_timeout_s=raw.get("api_timeout_s"),
        env={str(k): str(v) for k, v in raw.get("env", {}).items()},
        isolation=isolation,
        limits=Limits().merged(raw.get("limits"), "promptfooconfig.yaml: provider config"),
        unreachable_after=_positive("unreachable_after", raw.get("unreachable_after", 3)),
    )


def model_endpoint(config: ProviderConfig, task_id: str, trial: int) -> dict[str, str]:
    """ANTHROPIC_* variables for the CLI: the scripted model, or real Claude on explicit opt-in.

    The scripted model's URL carries the server's secret (http://passhat:<secret>@127.0.0.1:PORT); the CLI gets
    only this trial's route and token, never the secret (see passhat/_fake_route.py).
    """
    if config.fake_model_url:
        from passhat._fake_route import route_url

        try:
            url = route_url(config.fake_model_url, task_id, trial, config.fake_script)
        except ValueError as error:
            raise PasshatError(f"provider config 'fake_model_url' (or ${FAKE_MODEL_ENV}): {error}") from None
        return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "passhat-scripted-model"}
    key = os.environ.get("ANTHROPIC_API_KEY")
    if os.environ.get(REAL_CLAUDE_ENV) == "1" and key:
        base = os.environ.get("ANTHROPIC_BASE_URL")  # e.g. a gateway; confined trials reach it via the proxy
        return {"ANTHROPIC_API_KEY": key, **({"ANTHROPIC_BASE_URL": base} if base else {})}
    msg = (
        f"no model to run against: set {FAKE_MODEL_ENV} to a `passhat fake-model` URL (make demo does), "
        f"or opt in to real Claude with {REAL_CLAUDE_ENV}=1 and ANTHROPIC_API_KEY"
    )
    raise PasshatError(msg)
