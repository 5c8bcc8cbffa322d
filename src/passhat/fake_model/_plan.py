"""What a script answers with (Script, Reply, ToolCall), and the oracle's plan: a task's solution.patch as
the tool calls an agent would make.

The oracle script does not touch files itself: it asks the real Claude Code CLI
to Read, Edit, Write and run Bash, so the patch lands through the CLI's own tools.
A plan is computed once per task version by applying the patch to a copy of repo/.
"""

from __future__ import annotations

import base64
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from passhat.common._errors import PasshatError


@dataclass(frozen=True)
class ToolCall:
    """One tool_use block; `path` is relative to the sandbox, made absolute at reply time."""

    name: str
    path: str
    args: dict


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def _text(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def _edit_region(old: str, new: str) -> tuple[str, str] | None:
    """The smallest whole-line region of `old` that, replaced, gives `new`; None if not unique."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    start = old.rfind("\n", 0, prefix) + 1  # back to the start of the line
    end = old.find("\n", len(old) - suffix)
    end = len(old) if end == -1 else end
    old_part = old[start:end]
    new_part = new[start : len(new) - (len(old) - end)]
    if not old_part.strip() or old.count(old_part) != 1 or old_part == new_part:
        return None
    return old_part, new_part


def plan_solution(repo: Path, patch: Path) -> list[ToolCall]:
    """Tool calls that turn repo/ into repo/ + patch, in path order."""
    with tempfile.TemporaryDirectory(prefix="passhat-plan-") as tmp:
        after = Path(tmp) / "after"
        shutil.copytree(repo, after, symlinks=True)
        proc = subprocess.run(
            ["git", "apply", "--binary", "--whitespace=nowarn", str(patch)],
            cwd=after,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            msg = f"{patch}: does not apply to {repo}: {proc.stderr.strip()}; regenerate it with git diff --binary"
            raise PasshatError(msg)
        before_files, after_files = _files(repo), _files(after)
    return plan_changes(before_files, after_files)


def plan_changes(before_files: dict[str, bytes], after_files: dict[str, bytes]) -> list[ToolCall]:
    """Tool calls that turn the files `before_files` (path → bytes) into `after_files`, in path order: a Read
    before every Edit or Write of an existing file (the CLI refuses a write to a file it has not read), an Edit
    when one region changed, else a Write; a Bash `rm` for a deletion, a base64 Bash write for a binary file."""
    calls: list[ToolCall] = []
    for path in sorted(set(before_files) | set(after_files)):
        old, new = before_files.get(path), after_files.get(path)
        if old == new:
            continue
        if new is None:
            calls.append(
                ToolCall("Bash", path, {"command": f"rm -f -- {shlex.quote(path)}", "description": f"Delete {path}"})
            )
            continue
        new_text = _text(new)
        if new_text is None:
            encoded = base64.b64encode(new).decode()
            command = f"mkdir -p -- $(dirname {shlex.quote(path)}) && echo {encoded} | base64 -d > {shlex.quote(path)}"
            calls.append(ToolCall("Bash", path, {"command": command, "description": f"Write binary {path}"}))
            continue
        old_text = _text(old) if old is not None else None
        if old is not None:
            calls.append(ToolCall("Read", path, {}))
        region = _edit_region(old_text, new_text) if old_text is not None else None
        if region is not None:
            calls.append(ToolCall("Edit", path, {"old_string": region[0], "new_string": region[1]}))
        else:
            calls.append(ToolCall("Write", path, {"content": new_text}))
    return calls


@dataclass(frozen=True)
class Script:
    name: str  # oracle | noop | flaky | commands | hack | error | rate-limit | cut | hang | slow
    p: float = 1.0
    seed: int = 0
    status: int = 0  # error
    count: int = 0  # rate-limit, cut
    seconds: float = 0.0  # slow
    outage: float = 0.0  # probability of a whole-trial 500 outage
    outage_seed: int = 0
    hack: float = 0.0  # probability of a trial that games the tests instead (`+hack:Q`, see _hacks.py)
    hack_seed: int = 0
    spec: str = ""  # judge: the whole judge script spec, e.g. judge:0.8 (see _judge.py); hack: its kind
    # the real API's ways (see _shape.py): `+encoding:CODING`, `+chunks:MODE`, `+thinking`, `+ping`, `+cache`,
    # `+web-search`, `+stream-error:N`, `+overloaded:N`
    encoding: str = ""  # the coding every reply is sent in; "" as the request's accept-encoding asks
    chunks: str = "whole"  # where the reply's bytes are cut on the wire (_wire.split)
    thinking: bool = False
    ping: bool = False
    cache: bool = False
    web_search: bool = False
    stream_errors: int = 0  # the first N agent replies of a trial end in an overloaded_error event
    overloads: int = 0  # the first N agent requests of a trial get 529 overloaded_error with retry-after


@dataclass(frozen=True)
class Reply:
    blocks: list[dict]
    stop_reason: str
