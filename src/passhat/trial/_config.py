"""The provider's `config:` block in promptfooconfig.yaml, checked and typed."""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast
from urllib.parse import urlsplit

from passhat.cluster import EXECUTOR_KEYS, Executor, parse_executor
from passhat.common._budget import BUDGET_KEY, budget_of
from passhat.common._errors import PasshatError
from passhat.trial._isolation import ISOLATIONS, Isolation
from passhat.trial._limits import Limits, deadline
from passhat.trial._proxy import CREDENTIAL_VARS, DEFAULT_API, URL_VARS

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
_PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
FAKE_MODEL_ENV, REAL_CLAUDE_ENV = "PASSHAT_FAKE_MODEL_URL", "PASSHAT_REAL_CLAUDE"
SCRIPTED_CREDENTIAL = "passhat-scripted-model"  # what the scripted model gets instead of a real credential
AuthKind = Literal["api_key", "auth_token", "oauth_token", "bedrock", "vertex"]
_TOKEN_KINDS: dict[str, tuple[AuthKind, str]] = {  # auth: key → (kind, the CLI's variable)
    "api_key_env": ("api_key", "ANTHROPIC_API_KEY"),
    "auth_token_env": ("auth_token", "ANTHROPIC_AUTH_TOKEN"),
    "oauth_token_env": ("oauth_token", "CLAUDE_CODE_OAUTH_TOKEN"),
}
_AUTH_HELP = (
    "give exactly one of api_key_env, auth_token_env or oauth_token_env (each naming the variable that holds "
    "the credential, with an optional base_url), bedrock: {region, token_env, base_url} or "
    "vertex: {region, project_id, token_env, base_url}"
)
_CLOUD_KEYS = {"bedrock": ("region", "token_env", "base_url"), "vertex": ("region", "project_id", "token_env", "base_url")}  # fmt: skip
# set only through `auth:` (the proxy keeps credentials out of the sandbox); a value in `env:` reaches the agent
_MANAGED_ENV = (
    *CREDENTIAL_VARS, *URL_VARS, "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
    "CLAUDE_CODE_SKIP_VERTEX_AUTH", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
)  # fmt: skip
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REGION = re.compile(r"[a-z][a-z0-9-]*[a-z0-9]")
_PROJECT = re.compile(r"[a-z][a-z0-9.:-]*[a-z0-9]")
_MCP_NAME = re.compile(r"[A-Za-z0-9_-]+")
_MCP_KEYS = {"stdio": ("type", "command", "args", "env"), "http": ("type", "url", "headers"), "sse": ("type", "url", "headers")}  # fmt: skip


@dataclass(frozen=True)
class Auth:
    """How the real job reaches Claude (the provider config's `auth:`). The credential is read from the named
    variable of passhat's environment when a trial starts; confined, it stays with the model proxy outside the
    sandbox and the CLI holds a placeholder of the same kind."""

    kind: AuthKind
    token_env: str | None  # the variable that holds the credential; None: a gateway that needs none
    base_url: str | None = None  # None: the provider's own endpoint (default_url)
    region: str | None = None  # bedrock, vertex
    project_id: str | None = None  # vertex

    @property
    def field(self) -> str:
        """Where token_env is written in the config, for error messages."""
        return f"auth.{self.kind}.token_env" if self.kind in _CLOUD_KEYS else f"auth.{self.kind}_env"

    def default_url(self) -> str:
        if self.kind == "bedrock":
            return f"https://bedrock-runtime.{self.region}.amazonaws.com"
        if self.kind == "vertex":
            return f"https://{'' if self.region == 'global' else f'{self.region}-'}aiplatform.googleapis.com/v1"
        return DEFAULT_API

    def variables(self, base_url: str, credential: str | None) -> dict[str, str]:
        """The model variables of the real job: what the CLI gets unconfined (confined: see inside_variables).
        Vertex skips Google sign-in: its credential is a bearer token (a gateway's, or an access token)."""
        if self.kind == "bedrock":
            env = {
                "CLAUDE_CODE_USE_BEDROCK": "1",
                "AWS_REGION": str(self.region),
                "ANTHROPIC_BEDROCK_BASE_URL": base_url,
            }
            return env | ({"AWS_BEARER_TOKEN_BEDROCK": credential} if credential else {"CLAUDE_CODE_SKIP_BEDROCK_AUTH": "1"})  # fmt: skip
        if self.kind == "vertex":
            env = {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": str(self.region), "ANTHROPIC_VERTEX_BASE_URL": base_url,
                   "ANTHROPIC_VERTEX_PROJECT_ID": str(self.project_id), "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1"}  # fmt: skip
            return env | ({"ANTHROPIC_AUTH_TOKEN": credential} if credential else {})
        name = next(variable for kind, variable in _TOKEN_KINDS.values() if kind == self.kind)
        return {"ANTHROPIC_BASE_URL": base_url, name: str(credential)}

    def describe(self) -> str:
        label = {"api_key": "API key", "auth_token": "bearer token", "oauth_token": "OAuth token"}.get(self.kind)
        what = " ".join(filter(None, (label or self.kind.capitalize(), self.region, self.project_id)))
        source = f"from ${self.token_env}" if self.token_env else "no credential"
        return f"{what}, {source}, at {self.base_url or self.default_url()}"


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
    bare: bool = False  # `claude --bare`: Bash, Read and Edit only, a short system prompt, no CLAUDE.md discovery
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
    auth: Auth | None = None  # the real job's endpoint and credential; None: PASSHAT_REAL_CLAUDE + ANTHROPIC_API_KEY
    settings: Path | None = None  # a settings file for the CLI (--settings), visible read-only in the sandbox
    mcp_servers: dict[str, dict] = field(default_factory=dict)  # the only MCP servers the CLI starts
    visible: tuple[Path, ...] = ()  # host paths the CLI needs, made visible read-only in the sandbox
    executor: Executor = field(default_factory=Executor)  # local, or each trial a Ray task (passhat.cluster)

    @property
    def artifacts_dir(self) -> Path:
        return self.state_dir / "artifacts"


_FIELDS: dict[str, type | tuple[type, ...]] = {  # the provider config's fields and their YAML types
    "model": str, "allowed_tools": list, "disallowed_tools": list, "permission_mode": str, "max_turns": int,
    "max_budget_usd": (int, float), "append_system_prompt": str, "claude_md": str, "setting_sources": list,
    "bare": bool, "timeout_s": (int, float), "fake_model_url": str, "fake_script": str, "tasks_dir": str,
    "state_dir": str, "keep_sandbox": bool, "env": dict, "max_retries": int, "api_timeout_s": (int, float),
    "isolation": str, "limits": dict, "unreachable_after": int, "auth": dict, "settings": str, "mcp_servers": dict,
}  # fmt: skip
_PROMPTFOO_KEYS = {"basePath", "workers", "timeout", "pythonExecutable"}


def _bad(field_name: str, value: object, fix: str) -> PasshatError:
    return PasshatError(f"provider config field {field_name!r}: {value!r}: {fix}")


def _variable(field_name: str, value: object) -> str:
    if not isinstance(value, str) or not _VARIABLE.fullmatch(value):
        raise _bad(field_name, value, "name an environment variable of passhat's, e.g. CLAUDE_CODE_OAUTH_TOKEN")
    return value


def _url(field_name: str, value: object) -> str:
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise _bad(field_name, value, "give an http(s)://HOST[:PORT][/PATH] URL, e.g. your LLM gateway's")
    return cast(str, value).rstrip("/")


def _known(field_name: str, raw: dict, known: tuple[str, ...], fix: str) -> None:
    for key, value in raw.items():
        if key not in known:
            raise _bad(f"{field_name}.{key}", value, f"unknown field; {fix}")


def _auth(raw: dict) -> Auth:
    """The `auth:` block: one way in, each value explicit (never a variable picked up from the host)."""
    _known("auth", raw, (*_TOKEN_KINDS, "base_url", *_CLOUD_KEYS), _AUTH_HELP)
    chosen = [key for key in (*_TOKEN_KINDS, *_CLOUD_KEYS) if key in raw]
    if len(chosen) != 1:
        raise _bad("auth", raw, _AUTH_HELP)
    [key] = chosen
    if key in _TOKEN_KINDS:
        base_url = _url("auth.base_url", raw["base_url"]) if "base_url" in raw else None
        return Auth(_TOKEN_KINDS[key][0], _variable(f"auth.{key}", raw[key]), base_url)
    if "base_url" in raw:
        raise _bad("auth.base_url", raw["base_url"], f"put base_url inside auth.{key}")
    cloud = raw[key]
    if not isinstance(cloud, dict):
        raise _bad(f"auth.{key}", cloud, f"expected a mapping of {', '.join(_CLOUD_KEYS[key])}")
    _known(f"auth.{key}", cloud, _CLOUD_KEYS[key], f"auth.{key} takes {', '.join(_CLOUD_KEYS[key])}")
    region = cloud.get("region")
    if not isinstance(region, str) or not _REGION.fullmatch(region):
        example = "us-east-1" if key == "bedrock" else "us-east5 (or global)"
        raise _bad(f"auth.{key}.region", region, f"give the region, e.g. {example}")
    project = cloud.get("project_id")
    if key == "vertex" and (not isinstance(project, str) or not _PROJECT.fullmatch(project)):
        raise _bad("auth.vertex.project_id", project, "give your Google Cloud project id, e.g. my-project-123")
    base_url = _url(f"auth.{key}.base_url", cloud["base_url"]) if "base_url" in cloud else None
    token_env = _variable(f"auth.{key}.token_env", cloud["token_env"]) if "token_env" in cloud else None
    if token_env is None and base_url is None:
        fix = ("name the variable holding a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK); passhat does not sign "
               "requests with AWS access keys (SigV4): use an API key or an LLM gateway (base_url)") if key == "bedrock" else (
               "name the variable holding an access token (`gcloud auth print-access-token`) or your gateway's "
               "token; passhat does not run Google sign-in itself: use a token or an LLM gateway (base_url)")  # fmt: skip
        raise _bad(f"auth.{key}.token_env", None, fix)
    return Auth(cast(AuthKind, key), token_env, base_url, region, project if key == "vertex" else None)


def _settings(base_path: Path, value: str) -> Path:
    path = (base_path / value).resolve()
    if not path.is_file():
        raise _bad("settings", value, f"no such file {path}; give a settings JSON file relative to the config")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise _bad("settings", value, f"{path} is not readable JSON ({error}); fix the file") from None
    if not isinstance(data, dict):
        raise _bad("settings", value, f"{path} holds a JSON {type(data).__name__}; a settings file is a JSON object")
    env = data["env"] if isinstance(data.get("env"), dict) else {}
    leaks = [*sorted(set(env) & set(_MANAGED_ENV)), *(["apiKeyHelper"] if "apiKeyHelper" in data else [])]
    if leaks:  # the CLI runs in the sandbox: its settings' env and key helper are the agent's to read
        raise _bad("settings", value, f"{path} sets {', '.join(leaks)}, which the agent could read; name the "
                   "model endpoint and its credential in `auth:` (the proxy adds it outside the sandbox)")  # fmt: skip
    return path


def _strings(field_name: str, value: object, kind: type) -> None:
    ok = isinstance(value, list) and all(isinstance(v, str) for v in value) if kind is list else (
        isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()))  # fmt: skip
    if not ok:
        raise _bad(field_name, value, f"expected a {'list' if kind is list else 'mapping'} of strings")


def _host_path(base_path: Path, field_name: str, value: str) -> Path:
    path = Path(os.path.normpath(base_path / value))  # links kept: a venv's python must stay in its venv
    if not path.exists():
        raise _bad(field_name, value, f"no such file {path}; give a path relative to the config (or absolute)")
    return path


def _mcp_servers(base_path: Path, raw: dict) -> tuple[dict[str, dict], tuple[Path, ...]]:
    """`mcp_servers:` as the CLI's mcpServers, and the host files its stdio servers need (made visible
    read-only): a command given as a path, and each argument that starts with /, ./ or ../ (a path; relative
    ones are resolved against the config's folder). A bare command must be on PATH."""
    servers: dict[str, dict] = {}
    visible: list[Path] = []
    for name, server in raw.items():
        where = f"mcp_servers.{name}"
        if not isinstance(name, str) or not _MCP_NAME.fullmatch(name):
            raise _bad("mcp_servers", name, "name each server with letters, digits, - and _")
        if not isinstance(server, dict):
            raise _bad(where, server, "give a mapping: {command: ..., args: [...]} or {type: http, url: ...}")
        kind = server.get("type", "stdio")
        if kind not in _MCP_KEYS:
            raise _bad(f"{where}.type", kind, "use stdio (the default), http or sse")
        _known(where, server, _MCP_KEYS[kind], f"a {kind} server takes {', '.join(_MCP_KEYS[kind])}")
        if kind != "stdio":
            entry = {"type": kind, "url": _url(f"{where}.url", server.get("url"))}
            if "headers" in server:
                _strings(f"{where}.headers", server["headers"], dict)
                entry["headers"] = server["headers"]
            servers[name] = entry
            continue
        command = server.get("command")
        if not isinstance(command, str) or not command:
            raise _bad(f"{where}.command", command, "give the program that starts the server, e.g. python3")
        if "/" in command:
            found = _host_path(base_path, f"{where}.command", command)
            visible.append(found)
            command = str(found)
        elif shutil.which(command) is None:
            raise _bad(f"{where}.command", command, "not found on PATH; give a path or put it on passhat's PATH")
        args = server.get("args", [])
        _strings(f"{where}.args", args, list)
        resolved = []
        for index, arg in enumerate(args):
            if arg.startswith(("/", "./", "../")):
                found = _host_path(base_path, f"{where}.args[{index}]", arg)
                visible.append(found)
                arg = str(found)
            resolved.append(arg)
        entry = {"type": "stdio", "command": command, "args": resolved}
        if "env" in server:
            _strings(f"{where}.env", server["env"], dict)
            _unmanaged(f"{where}.env", server["env"])
            entry["env"] = server["env"]
        servers[name] = entry
    return servers, tuple(visible)


def _unmanaged(field_name: str, env: dict) -> None:
    for name in env:
        if name in _MANAGED_ENV:
            raise _bad(f"{field_name}.{name}", "***", "set the model endpoint and its credential with `auth:` "
                       "(outside the sandbox, behind passhat's proxy); a value here reaches the agent")  # fmt: skip


def _positive(name: str, value: int) -> int:
    if value < 1:
        raise _bad(name, value, "use a positive whole number")
    return value


def parse_config(raw: dict) -> ProviderConfig:
    """Check every key before the first trial; one clear error otherwise."""
    for key, value in raw.items():
        if key in _PROMPTFOO_KEYS or key in EXECUTOR_KEYS or key == BUDGET_KEY:  # checked by their own parsers
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

    budget_of(raw, {})  # budget_usd: the guard (passhat.common._budget) reads it per trial
    mode = raw.get("permission_mode", "bypassPermissions")
    if mode not in _PERMISSION_MODES:
        raise _bad("permission_mode", mode, f"use one of {', '.join(_PERMISSION_MODES)}")
    isolation = raw.get("isolation", "auto")
    if isolation not in ISOLATIONS:
        raise _bad("isolation", isolation, "use bwrap (confine each trial with bubblewrap), none (run "
                   "unconfined) or auto (bwrap where it works, the default)")  # fmt: skip
    timeout_s = deadline(raw)
    claude_md = path("claude_md", "") if "claude_md" in raw else None
    if claude_md is not None and not claude_md.is_file():
        raise _bad("claude_md", raw["claude_md"], f"no such file {claude_md}; give a path relative to the config")
    sources = raw.get("setting_sources")
    if claude_md is not None and sources is None:
        sources = ["project"]  # a CLAUDE.md variant is read only with project settings on
    bare = raw.get("bare", False)
    auth = _auth(raw["auth"]) if "auth" in raw else None
    if bare and auth is not None and auth.kind == "oauth_token":
        raise _bad("bare", bare, "`claude --bare` never reads an OAuth token (auth: oauth_token_env): use an API key (auth: api_key_env), or drop bare")  # fmt: skip
    if bare and sources:
        what = "claude_md" if claude_md is not None else "setting_sources"
        raise _bad("bare", bare, f"`claude --bare` reads no CLAUDE.md and no settings, and {what} asks for them: drop one of the two (bare: append_system_prompt and settings still apply)")  # fmt: skip
    _unmanaged("env", raw.get("env", {}))
    settings = _settings(base_path, raw["settings"]) if "settings" in raw else None
    servers, server_files = _mcp_servers(base_path, raw.get("mcp_servers", {}))
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
        bare=bare,
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
        auth=auth,
        settings=settings,
        mcp_servers=servers,
        visible=(*((settings,) if settings else ()), *server_files),
        executor=parse_executor(raw),
    )


def model_endpoint(config: ProviderConfig, task_id: str, trial: int) -> dict[str, str]:
    """The model variables of the job (what the CLI would get unconfined): the scripted model, the endpoint and
    credential named in `auth:`, or real Claude on explicit opt-in (PASSHAT_REAL_CLAUDE=1 + ANTHROPIC_API_KEY).

    The scripted model's URL carries the server's secret (http://passhat:<secret>@127.0.0.1:PORT); the CLI gets
    only this trial's route and token, never the secret (see passhat/common/_fake_route.py). With `auth:` as well, the
    CLI speaks the API of the real job (Bedrock, Vertex, OAuth-style requests) to the scripted model, with a
    placeholder credential: the named variable is not read.
    """
    if config.fake_model_url:
        from passhat.common._fake_route import route_url

        try:
            url = route_url(config.fake_model_url, task_id, trial, config.fake_script)
        except ValueError as error:
            raise PasshatError(f"provider config 'fake_model_url' (or ${FAKE_MODEL_ENV}): {error}") from None
        if config.auth is not None:  # the real job's API and request style, with no real credential
            base = f"{url}/v1" if config.auth.kind in _CLOUD_KEYS else url  # the scripted model's Bedrock/Vertex
            return config.auth.variables(base, SCRIPTED_CREDENTIAL if config.auth.token_env else None)
        return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": SCRIPTED_CREDENTIAL}
    if config.auth is not None:  # the provider config names the endpoint and the variable: that is the opt-in
        auth = config.auth
        credential = os.environ.get(auth.token_env) if auth.token_env else None
        if auth.token_env and not credential:
            hint = " (`claude setup-token` prints one for a subscription)" if auth.kind == "oauth_token" else ""
            raise _bad(auth.field, auth.token_env, f"the variable is not set in passhat's environment; export it{hint}")
        return auth.variables(auth.base_url or auth.default_url(), credential)
    key = os.environ.get("ANTHROPIC_API_KEY")
    if os.environ.get(REAL_CLAUDE_ENV) == "1" and key:
        gateway = os.environ.get("ANTHROPIC_BASE_URL")  # e.g. a gateway; confined trials reach it via the proxy
        return {"ANTHROPIC_API_KEY": key, **({"ANTHROPIC_BASE_URL": gateway} if gateway else {})}
    msg = (
        f"no model to run against: set {FAKE_MODEL_ENV} to a `passhat fake-model` URL (make demo does), "
        f"or opt in to real Claude with {REAL_CLAUDE_ENV}=1 and ANTHROPIC_API_KEY (or name your endpoint and "
        "credential in the provider config's `auth:`)"
    )
    raise PasshatError(msg)
