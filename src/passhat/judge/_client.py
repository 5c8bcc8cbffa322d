"""One judge call: the anthropic SDK, temperature 0 where the model takes it (Claude 3 and 4.0-4.6; later
models reject sampling parameters), a forced tool, the reply validated with jsonschema.

Which endpoint: offline (`PASSHAT_FAKE_MODEL_URL` set, as `make demo` and the tests do) the scripted
model at `http://127.0.0.1:PORT/passhat/<task_id>/<trial>/<token>/<judge script>`; otherwise real Claude through
`ANTHROPIC_BASE_URL` / `ANTHROPIC_API_KEY`, on explicit opt-in (`PASSHAT_REAL_CLAUDE=1`), as for the agent.
The judge's route is tokened like the agent's (passhat/common/_fake_route.py): the token is made from the secret in
the URL's userinfo (`http://passhat:<secret>@127.0.0.1:PORT`) over (task, trial, judge script), so it differs
from the trial's own token and stays open after the trial's route is finished. A tokenless judge route would let
the agent pick any script, `oracle` included; the secret itself is never sent.

A malformed reply (no call of the tool, or input that fails the tool's schema) is answered with the
problem and asked again, at most `max_attempts` times in all; then the trial is unscored, never passed.
The SDK itself retries API errors (429, 5xx, connection) twice; an API error after that is unscored too.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

FAKE_MODEL_ENV = "PASSHAT_FAKE_MODEL_URL"
REAL_CLAUDE_ENV = "PASSHAT_REAL_CLAUDE"
DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_FAKE_SCRIPT = "judge"
MAX_TOKENS = 4096
TIMEOUT_S = 180.0


@dataclass(frozen=True)
class Endpoint:
    base_url: str | None  # None: the SDK's default (or ANTHROPIC_BASE_URL)
    api_key: str
    offline: bool


@dataclass(frozen=True)
class ToolReply:
    """The validated tool input, or why there is none (`problem`); `attempts` calls were made."""

    data: dict | None
    attempts: int
    problem: str | None = None


def endpoint(task_id: str, trial: int, fake_script: str | None) -> Endpoint | str:
    """Where to send the judge's request, or (a string) why there is nowhere to send it."""
    fake = os.environ.get(FAKE_MODEL_ENV)
    if fake:
        from passhat.common._fake_route import route_url

        try:
            url = route_url(fake, task_id, trial, fake_script or DEFAULT_FAKE_SCRIPT)
        except ValueError as error:
            return f"no judge endpoint: ${FAKE_MODEL_ENV} {error}"
        return Endpoint(url, "passhat-scripted-model", offline=True)
    key = os.environ.get("ANTHROPIC_API_KEY")
    if os.environ.get(REAL_CLAUDE_ENV) == "1" and key:
        return Endpoint(os.environ.get("ANTHROPIC_BASE_URL") or None, key, offline=False)
    return (f"no judge endpoint: set {FAKE_MODEL_ENV} to a `passhat fake-model` URL (make demo does), or opt in "
            f"to real Claude with {REAL_CLAUDE_ENV}=1 and ANTHROPIC_API_KEY")  # fmt: skip


def _blocks(content: list[Any]) -> list[dict]:
    """The reply's blocks as request content (for the retry's conversation)."""
    out = []
    for block in content:
        if block.type == "text" and block.text:
            out.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            out.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
    return out or [{"type": "text", "text": "(empty reply)"}]


def _feedback(tool: str, problem: str, calls: list[Any]) -> dict:
    ask = f"Your reply was not usable: {problem}. Call {tool} again, once, with input that matches its schema."
    content: list[dict] = [
        {"type": "tool_result", "tool_use_id": call.id, "is_error": True, "content": problem} for call in calls
    ]
    content.append({"type": "text", "text": ask})
    return {"role": "user", "content": content}


def _problem(tool: dict, validator: Any, content: list[Any], stop_reason: str | None) -> tuple[dict | None, str]:
    from jsonschema.exceptions import best_match

    calls = [b for b in content if b.type == "tool_use" and b.name == tool["name"]]
    if not calls:
        return None, f"no call of {tool['name']} (stop_reason {stop_reason})"
    data = calls[-1].input  # the last verdict counts
    if not isinstance(data, dict):
        return None, f"{tool['name']} input is {type(data).__name__}, not an object"
    error = best_match(validator.iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        return None, f"{tool['name']} input at {where}: {error.message}"
    return data, ""


_NO_TEMPERATURE: set[str] = set()  # models that rejected `temperature` in this process
_SAMPLING_MODELS = re.compile(r"^claude-(3|(opus|sonnet|haiku)-4(-[0-6])?)(-|$)")


def takes_temperature(model: str) -> bool:
    """Claude 3 and 4.0-4.6 take sampling parameters; later models reject them (400) and sample their own way."""
    return bool(_SAMPLING_MODELS.match(model)) and model not in _NO_TEMPERATURE


def _create(client: Any, request: dict, bad_request: type[Exception]) -> Any:
    """temperature 0, for a repeatable verdict, where the model takes it. anthropic>=1 takes it only through
    extra_body; a model that still rejects it (400) is asked again without it, and remembered."""
    if not takes_temperature(request["model"]):
        return client.messages.create(**request)
    try:
        return client.messages.create(**request, extra_body={"temperature": 0})
    except bad_request as error:
        if "temperature" not in str(error):
            raise
        _NO_TEMPERATURE.add(request["model"])
        return client.messages.create(**request)


def call_tool(where: Endpoint, *, model: str, system: str, user: str, tool: dict, max_attempts: int) -> ToolReply:
    """Ask once, validate, ask again with the problem stated; at most `max_attempts` calls."""
    import anthropic
    import jsonschema

    validator = jsonschema.Draft202012Validator(tool["input_schema"])
    messages: list[dict] = [{"role": "user", "content": user}]
    problem = ""
    with anthropic.Anthropic(
        base_url=where.base_url, api_key=where.api_key, timeout=TIMEOUT_S, max_retries=2
    ) as client:
        for attempt in range(1, max_attempts + 1):
            request = {"model": model, "max_tokens": MAX_TOKENS, "system": system, "messages": messages,
                       "tools": [tool], "tool_choice": {"type": "tool", "name": tool["name"]}}  # fmt: skip
            try:
                reply = _create(client, request, anthropic.BadRequestError)
            except anthropic.APIError as error:
                return ToolReply(
                    None, attempt, f"judge API error after the SDK's retries: {type(error).__name__}: {error}"
                )
            data, problem = _problem(tool, validator, reply.content, reply.stop_reason)
            if data is not None:
                return ToolReply(data, attempt)
            calls = [b for b in reply.content if b.type == "tool_use"]
            messages += [
                {"role": "assistant", "content": _blocks(reply.content)},
                _feedback(tool["name"], problem, calls),
            ]
    return ToolReply(None, max_attempts, f"judge reply malformed after {max_attempts} attempt(s); last: {problem}")
