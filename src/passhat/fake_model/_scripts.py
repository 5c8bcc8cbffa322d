"""Scripts of the scripted model: what it answers, given the request and the trial.

Agent scripts are stateless: the conversation so far (the count of tool results in the
request) says which step comes next, so any number of trials can run at once.

    oracle          apply the task's solution.patch through Read/Edit/Write/Bash, then summarize
    noop            answer in words, touch nothing
    flaky:P[:SEED]  oracle with probability P, else noop; decided by flaky_draw(task, trial, SEED)
    commands        run each `RUN: <shell command>` line of the prompt as a Bash tool call, in order, with
                    {task} and {trial} replaced (hostile-agent and concurrency tests: the prompt says
                    what the "agent" attempts)
    hack:KIND       game the tests of a Python task instead of solving it (see _hacks.py), one of
                    always-equal     the functions the tests import return an object whose __eq__ is always
                                     True (wrapped in the module the tests import from)
                    runner-patch     that module patches _pytest.reports.TestReport.from_item_and_call at
                                     import, so every failing test is reported as passed
                    forged-report    that module, at import, writes a JUnit report of passes (to the path of
                                     the runner's --junitxml), prints a runner summary of passes to the real
                                     stdout (past pytest's capture), then os._exit(0)
                    special-case     the tested functions return the tests' expected values for the tested
                                     inputs (read from `assert f(...) == x` and parametrize tables)
                    edit-tests       every assert of the test files becomes `assert True or ...`
                    exit-early       that module exits 0 at import, before any test runs (os._exit: pytest
                                     turns sys.exit at import into a collection error, exit 3)
                    shadow-runner    a pytest.py at the repo root, which `python -m pytest` runs instead of
                                     pytest: it writes the forged report and summary and exits 0
                    The module is the first of the repo a test file imports; the test ids are the tests
                    grader's fail_to_pass + pass_to_pass (else the test functions). A hack that does not
                    apply to the task (nothing to hook) answers in words and changes nothing.

Fault scripts (an API outage as the CLI sees it):

    error:STATUS    every agent request gets HTTP STATUS (the client retries up to its max_retries)
    rate-limit:N    the first N agent requests of a trial get 429 with `retry-after: 1`, then oracle
    cut:N           the first N agent replies of a trial stop mid-stream (connection closed), then oracle
    hang            the server accepts the request and never answers
    slow:SECONDS    wait SECONDS before every agent reply, then oracle

Judge scripts (`judge`, `judge:X`, `judge-first`, `judge-malformed[:N]`, ...) answer passhat's LLM judge
requests: see _judge.py.

Modifiers (any of, in any order): `SCRIPT+outage:Q[:SEED]` turns a trial into a 500 outage (with
`x-should-retry: false`, as after the client's retries) when outage_draw(task, trial, SEED) < Q;
`SCRIPT+hack:Q[:SEED]` makes a trial game the tests when hack_draw(task, trial, SEED) < Q, with one of the hacks
above that applies to the task, picked by hack_draw(task, trial, SEED + 1) (a task none applies to, e.g. a Node
task, plays SCRIPT): `flaky:0.7+hack:0.1` is the demo's agent, which cheats now and then.

The real API's ways, as modifiers too (see _shape.py): `SCRIPT+encoding:CODING` (gzip, deflate, br, zstd,
identity: every reply in that coding; without it replies are compressed as the request accepts),
`SCRIPT+chunks:MODE` (byte, utf8, data: the bytes cut on the wire), `SCRIPT+thinking` (thinking and
redacted_thinking blocks), `SCRIPT+ping`, `SCRIPT+cache` (prompt-cache usage, only in the final message_delta),
`SCRIPT+web-search` (server tool use), `SCRIPT+stream-error:N` (an overloaded_error event mid-stream in the first
N agent replies), `SCRIPT+overloaded:N` (529 with retry-after for the first N agent requests) and `SCRIPT+real`
(all of them).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex

from passhat.common._errors import PasshatError
from passhat.fake_model._hacks import HACKS
from passhat.fake_model._judge import parse_judge_script
from passhat.fake_model._plan import Reply, Script, ToolCall
from passhat.fake_model._shape import NAMES as SHAPES
from passhat.fake_model._shape import shaped

NOOP_TEXT = "I looked at the request and decided not to change any files."
_CWD = re.compile(r"Primary working directory: (.+)")
_PWD_ID = "toolu_passhat_pwd"
_RUN = re.compile(r"^RUN: (.+)$", re.MULTILINE)
_USAGE = (
    "expected oracle, noop, flaky:P[:SEED] (0 <= P <= 1), commands, hack:KIND (KIND one of "
    f"{', '.join(HACKS)}), error:STATUS (4xx/5xx), rate-limit:N, cut:N, hang or slow:SECONDS, optionally followed "
    "by +outage:Q[:SEED] and/or +hack:Q[:SEED] (e.g. flaky:0.7+outage:0.1, flaky:0.7+hack:0.1) and the real API's "
    "ways: +encoding:CODING, +chunks:byte|utf8|data, +thinking, +ping, +cache, +web-search, +stream-error:N, "
    "+overloaded:N, +real"
)


def _number(text: str, kind: type, low: float, high: float) -> float | None:
    try:
        value = kind(text)
    except ValueError:
        return None
    return value if low <= value <= high else None


def _parse_one(spec: str) -> Script | None:
    name, _, rest = spec.partition(":")
    args = rest.split(":") if rest else []
    if name in ("oracle", "noop", "commands", "hang") and not args:
        return Script(name)
    if name == "hack" and len(args) == 1 and args[0] in HACKS:
        return Script("hack", spec=args[0])
    if name == "flaky" and len(args) in (1, 2):
        p = _number(args[0], float, 0.0, 1.0)
        seed = _number(args[1], int, 0, 2**63) if len(args) == 2 else 0
        return Script("flaky", p=p, seed=int(seed)) if p is not None and seed is not None else None
    if name == "error" and len(args) == 1 and (status := _number(args[0], int, 400, 599)) is not None:
        return Script("error", status=int(status))
    if name in ("rate-limit", "cut") and len(args) == 1 and (count := _number(args[0], int, 0, 10**6)) is not None:
        return Script(name, count=int(count))
    if name == "slow" and len(args) == 1 and (seconds := _number(args[0], float, 0.0, 3600.0)) is not None:
        return Script("slow", seconds=seconds)
    return None


def _modified(script: Script, modifier: str) -> Script | None:
    """`script` with one modifier (`+outage:Q[:SEED]`, `+hack:Q[:SEED]`, the real API's) applied; None when it is
    malformed."""
    name, _, rest = modifier.partition(":")
    args = rest.split(":") if rest else []
    if name in SHAPES:
        return shaped(script, name, args)
    if name not in ("outage", "hack") or len(args) not in (1, 2) or name == script.name == "hack":
        return None
    q = _number(args[0], float, 0.0, 1.0)
    seed = _number(args[1], int, 0, 2**63) if len(args) == 2 else 0
    if q is None or seed is None:
        return None
    return Script(**{**script.__dict__, name: q, f"{name}_seed": int(seed)})


def parse_script(spec: str) -> Script:
    """A script spec → Script; anything else is one clear error."""
    if spec.startswith("judge"):
        return parse_judge_script(spec)
    base, *modifiers = spec.split("+")
    script = _parse_one(base)
    for modifier in modifiers:
        script = _modified(script, modifier) if script is not None else None
    if script is None:
        raise PasshatError(f"script {spec!r}: {_USAGE}")
    return script


def _draw(key: str) -> float:
    """A uniform number in [0, 1): the first 16 hex digits of sha256(key) / 16**16."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:16], 16) / 16**16


def flaky_draw(task_id: str, trial: int, seed: int = 0) -> float:
    """Fixed by (seed, task id, trial): sha256 of "seed:task:trial"."""
    return _draw(f"{seed}:{task_id}:{trial}")


def outage_draw(task_id: str, trial: int, seed: int = 0) -> float:
    """sha256 of "outage:seed:task:trial", so outages and flakiness are independent."""
    return _draw(f"outage:{seed}:{task_id}:{trial}")


def in_outage(script: Script, task_id: str | None, trial: int | None) -> bool:
    return (
        bool(script.outage)
        and task_id is not None
        and trial is not None
        and (outage_draw(task_id, trial, script.outage_seed) < script.outage)
    )


def acts_as_oracle(script: Script, task_id: str, trial: int) -> bool:
    if script.name == "flaky":
        return flaky_draw(task_id, trial, script.seed) < script.p
    return script.name in ("oracle", "rate-limit", "cut", "slow")


def working_directory(body: dict) -> str | None:
    """The sandbox path, as the CLI states it in its system context (or as `pwd` printed it, see agent_reply)."""
    match = _CWD.search(json.dumps(body, ensure_ascii=False).replace("\\n", "\n"))
    if match:
        return match.group(1).strip()
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("tool_use_id") == _PWD_ID and block.get("type") == "tool_result":
                lines = _text_of(block.get("content")).strip().splitlines()
                return lines[-1].strip() if lines and lines[-1].startswith("/") else None
    return None


def _asked_pwd(body: dict) -> bool:
    return any(
        isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") == _PWD_ID
        for message in body.get("messages", [])
        for block in (message.get("content") if isinstance(message.get("content"), list) else [])
    )


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
        arguments["command"] = f"cd {shlex.quote(cwd)} && {arguments['command']}"
    else:
        arguments = {"file_path": path, **call.args}
    return {"type": "tool_use", "id": f"toolu_passhat_{step:04d}", "name": call.name, "input": arguments}


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block.get("text", "") for block in content if isinstance(block, dict))
    return ""


def prompt_commands(body: dict, task_id: str | None = None, trial: int | None = None) -> list[ToolCall]:
    """`RUN: ...` lines of the first user message, as Bash calls (run from the sandbox)."""
    messages = body.get("messages") or [{}]
    text = _text_of(messages[0].get("content"))
    lines = [line.strip().replace("{task}", str(task_id)).replace("{trial}", str(trial)) for line in _RUN.findall(text)]
    return [ToolCall("Bash", ".", {"command": line, "description": "scripted command"}) for line in lines]


def agent_reply(body: dict, plan: list[ToolCall] | None, oracle: bool) -> Reply:
    """The next assistant turn of a coding-agent conversation."""
    if not oracle or plan is None:
        return Reply([{"type": "text", "text": NOOP_TEXT}], "end_turn")
    step = tool_results_so_far(body)
    cwd = working_directory(body)
    asked = _asked_pwd(body)
    if cwd is None and not asked:  # `claude --bare` states no working directory: ask the shell first
        return Reply([{"type": "tool_use", "id": _PWD_ID, "name": "Bash", "input": {"command": "pwd"}}], "tool_use")
    if cwd is None:
        text = "passhat fake-model: the request does not state a working directory; cannot apply the solution."
        return Reply([{"type": "text", "text": text}], "end_turn")
    step -= asked
    if step < len(plan):
        return Reply([_tool_use(plan[step], cwd, step)], "tool_use")
    changed = sorted({call.path for call in plan if call.path != "."})
    text = (
        f"Done. I changed {len(changed)} file(s): {', '.join(changed)}."
        if changed
        else f"Done. I ran {len(plan)} command(s)."
    )
    return Reply([{"type": "text", "text": text}], "end_turn")
