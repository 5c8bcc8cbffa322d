"""Scripts of the scripted model: what it answers, given the request and the trial.

A script is stateless: the conversation so far (the count of tool results in the
request) says which step comes next, so any number of trials can run at once.

    oracle          apply the task's solution.patch through Read/Edit/Write/Bash, then summarize
    noop            answer in words, touch nothing
    flaky:P[:SEED]  oracle with probability P, else noop; decided by flaky_draw(task, trial, SEED)
    error:STATUS    answer every agent request with HTTP STATUS (4xx/5xx) and `x-should-retry: false`,
                    so the client gives up at once: an API outage as the CLI sees it after its retries
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from passhat._errors import PasshatError
from passhat.fake_model._plan import ToolCall

NOOP_TEXT = "I looked at the request and decided not to change any files."
_CWD = re.compile(r"Primary working directory: (.+)")


@dataclass(frozen=True)
class Script:
    name: str  # oracle | noop | flaky | error
    p: float = 1.0
    seed: int = 0
    status: int = 0  # for error


@dataclass(frozen=True)
class Reply:
    blocks: list[dict]
    stop_reason: str


def parse_script(spec: str) -> Script:
    """`oracle`, `noop`, `flaky:P[:SEED]` or `error:STATUS` → Script; anything else is one clear error."""
    parts = spec.split(":")
    name = parts[0]
    if name in ("oracle", "noop") and len(parts) == 1:
        return Script(name)
    if name == "error" and len(parts) == 2 and parts[1].isdigit() and 400 <= int(parts[1]) <= 599:
        return Script("error", status=int(parts[1]))
    if name == "flaky" and len(parts) in (2, 3):
        try:
            p = float(parts[1])
            seed = int(parts[2]) if len(parts) == 3 else 0
        except ValueError:
            p, seed = -1.0, 0
        if 0.0 <= p <= 1.0:
            return Script("flaky", p, seed)
    msg = (
        f"script {spec!r}: expected oracle, noop, flaky:P[:SEED] with 0 <= P <= 1 (e.g. flaky:0.7) "
        "or error:STATUS with a 4xx/5xx status"
    )
    raise PasshatError(msg)


def flaky_draw(task_id: str, trial: int, seed: int = 0) -> float:
    """A uniform number in [0, 1) fixed by (seed, task id, trial): sha256 of "seed:task:trial"."""
    digest = hashlib.sha256(f"{seed}:{task_id}:{trial}".encode()).hexdigest()
    return int(digest[:16], 16) / 16**16


def acts_as_oracle(script: Script, task_id: str, trial: int) -> bool:
    if script.name == "flaky":
        return flaky_draw(task_id, trial, script.seed) < script.p
    return script.name == "oracle"


def working_directory(body: dict) -> str | None:
    """The sandbox path, as the CLI states it in its system context."""
    match = _CWD.search(json.dumps(body, ensure_ascii=False).replace("\\n", "\n"))
    return match.group(1).strip() if match else None


def tool_results_so_far(body: dict) -> int:
    count = 0
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            count += sum(1 for block in content if isinstance(block, dict) and block.get("type") == "tool_result")
    return count


def _tool_use(call: ToolCall, cwd: str, step: int) -> dict:
    path = f"{cwd.rstrip('/')}/{call.path}"
    if call.name == "Bash":
        arguments = dict(call.args)
        arguments["command"] = f"cd {json.dumps(cwd)} && {arguments['command']}"
    else:
        arguments = {"file_path": path, **call.args}
    return {"type": "tool_use", "id": f"toolu_passhat_{step:04d}", "name": call.name, "input": arguments}


def agent_reply(body: dict, plan: list[ToolCall] | None, oracle: bool) -> Reply:
    """The next assistant turn of a coding-agent conversation."""
    if not oracle or plan is None:
        return Reply([{"type": "text", "text": NOOP_TEXT}], "end_turn")
    step = tool_results_so_far(body)
    cwd = working_directory(body)
    if cwd is None:
        text = "passhat fake-model: the request does not state a working directory; cannot apply the solution."
        return Reply([{"type": "text", "text": text}], "end_turn")
    if step < len(plan):
        return Reply([_tool_use(plan[step], cwd, step)], "tool_use")
    changed = sorted({call.path for call in plan})
    text = f"Done. I changed {len(changed)} file(s): {', '.join(changed)}."
    return Reply([{"type": "text", "text": text}], "end_turn")
