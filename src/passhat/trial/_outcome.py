"""What every grader gets: the trial's outcome (base + patch) and its run record; and how the trial ended.

Graders grade what the agent produced — its patch on the pinned base — never the transcript's claims.
The tree they read (base + patch) is built once per outcome and shared; a grader that runs commands gets
a writable view of it of its own (an overlay where passhat can mount one, else a copy).

How the session ended (`trial_end`) is read from the Agent SDK's own result fields, with passhat's model proxy
(its `Witness`) as the second opinion: see `trial_end`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from passhat.common._errors import PasshatError, SandboxError

if TYPE_CHECKING:
    from claude_agent_sdk import ResultMessage

    from passhat.trial._proxy import Witness
    from passhat.trial._sandbox import Base


@dataclass(frozen=True)
class TrialOutcome:
    """A trial's patch on its task's base, plus the run's metadata (for the health grader)."""

    task_dir: Path
    base_dir: Path
    patch: bytes
    run: dict = field(default_factory=dict)

    @classmethod
    def from_metadata(cls, metadata: dict) -> TrialOutcome:
        missing = [key for key in ("task_dir", "base_dir", "patch_path") if not metadata.get(key)]
        if missing:
            msg = (
                f"provider metadata lacks {', '.join(missing)}: this grader needs a trial run by "
                "file://providers/claude_code.py (or a regrade of one)"
            )
            raise PasshatError(msg)
        patch_path = Path(metadata["patch_path"])
        if not patch_path.is_file():
            msg = f"the trial's patch {patch_path} is gone; regrade needs the artifacts folder of the eval"
            raise PasshatError(msg)
        return cls(Path(metadata["task_dir"]), Path(metadata["base_dir"]), patch_path.read_bytes(), dict(metadata))

    @property
    def cache_root(self) -> Path:
        return self.base_dir.parent.parent  # <state>/cache/bases/<id>-<version> → <state>/cache

    def tree(self) -> Path:
        """base + patch, shared by every grader of this outcome; read it, never write to it."""
        from passhat.trial._sandbox import base_for

        base = base_for(self.task_dir, self.base_dir)
        return materialize_cached(base, self.patch, self.cache_root, self.task_dir.name)

    def base_tree(self) -> Path:
        from passhat.trial._sandbox import base_for

        return base_for(self.task_dir, self.base_dir).path

    @contextmanager
    def private_copy(self) -> Iterator[Path]:
        """A writable view of tree() for graders that run commands: an overlay on it (what the command
        writes lands beside it), or a copy where no overlay mounts; unmounted and removed on exit."""
        from passhat.trial._sandbox import close_sandbox, open_sandbox

        tree = self.tree()
        scratch = self.cache_root / "scratch"
        scratch.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="grade-", dir=scratch))
        try:
            yield open_sandbox(tree, root).work
        finally:
            close_sandbox(root)


def _applied_paths(dest: Path, patch: bytes) -> list[bytes]:
    """The paths `git apply` writes for `patch` (new names), as git reads them."""
    from passhat.trial._git import git

    fields = git(dest, "apply", "--numstat", "-z", "-", input=patch).split(b"\0")
    paths, i = [], 0
    while i < len(fields) - 1:
        path = fields[i].split(b"\t", 2)[-1]
        if path:
            paths.append(path)
            i += 1
        else:  # a rename or copy: "+\t-\t\0old\0new\0"
            paths.append(fields[i + 2])
            i += 3
    return paths


def materialize(base: Base, patch: bytes, dest_root: Path) -> Path:
    """A fresh copy of the base with the patch applied; raises SandboxError if it does not apply.
    As root, what the patch wrote is given to the base's uid, like the rest of the copy."""
    from passhat.trial._git import GitError, git
    from passhat.trial._limits import chown_paths
    from passhat.trial._sandbox import copy_tree

    dest = dest_root / f"m-{uuid.uuid4().hex[:12]}"
    copy_tree(base.path, dest)
    if patch.strip():
        try:
            git(dest, "apply", "--binary", "--whitespace=nowarn", "-", input=patch)
            if base.uid is not None:
                chown_paths(dest, _applied_paths(dest, patch), base.uid)
        except GitError as error:
            shutil.rmtree(dest, ignore_errors=True)
            msg = f"the patch does not apply to the base: {error}"
            raise SandboxError(msg) from None
    return dest


def materialize_cached(base: Base, patch: bytes, cache_root: Path, name: str) -> Path:
    """base + patch, built once per (base, patch) across processes; treat the result as read-only.

    Every assertion of one trial runs in its own Promptfoo process; they share this tree.
    A patch that does not apply raises SandboxError, every time, with the same reason.
    """
    from passhat.common._lock import locked

    digest = hashlib.sha256(patch).hexdigest()[:16]
    path = cache_root / "outcomes" / f"{name}-{base.commit[:12]}-{digest}"
    failure = path.with_name(path.name + ".failed")
    ready = path / ".git" / "passhat-outcome"
    with locked(path):
        if failure.is_file():
            raise SandboxError(failure.read_text())
        if not ready.is_file():
            building = path.with_name(f"{path.name}.building-{os.getpid()}")
            shutil.rmtree(building, ignore_errors=True)
            try:
                built = materialize(base, patch, building)
            except SandboxError as error:
                failure.write_text(str(error))
                raise
            shutil.rmtree(path, ignore_errors=True)
            os.replace(built, path)
            shutil.rmtree(building, ignore_errors=True)
            ready.write_text(digest + "\n")
            if base.uid is not None:  # the whole tree is the base's uid's, as a grader command will see it
                os.lchown(ready, base.uid, base.uid)
            with open(path.parent / "builds.log", "a") as journal:  # one line per build: shows sharing works
                journal.write(f"{path.name}\n")
    return path


# --- how the trial ended ----------------------------------------------------------------------------------------

AGAIN = "then `promptfoo eval --retry-errors --repeat N` runs these trials again"
# AssistantMessage.error kinds (the SDK's AssistantMessageError) that say the model API failed the request
API_KINDS = ("rate_limit", "server_error", "authentication_failed", "billing_error")
# terminal_reason values (Claude Code 2.1.332) that are the session's own end, not the API's, and what they mean
SESSION_ENDS = {
    "prompt_too_long": "the conversation outgrew the model's context",
    "blocking_limit": "the conversation reached the context limit",
    "rapid_refill_breaker": "the context refilled right after every compaction",
    "malformed_tool_use_exhausted": "the model's tool calls stayed malformed after the CLI's retries",
    "structured_output_retry_exhausted": "the model's structured output stayed invalid after the CLI's retries",
    "image_error": "an image in the conversation was refused",
    "stop_hook_prevented": "a stop hook ended the session",
    "hook_stopped": "a hook ended the session",
}


@dataclass(frozen=True)
class Session:
    """How the CLI's session went beside its result message, as run_agent saw it."""

    timed_out: bool = False  # passhat's wall-clock deadline ended it
    crash: str | None = None  # the SDK's exception (e.g. the CLI's exit code), when it raised one
    limit: str | None = None  # a limit passhat enforces (cgroups, work tree, spend) ended it
    api_error: str | None = None  # the last AssistantMessage.error (the SDK's kind: rate_limit, server_error, ...)


def cli_says_api_failed(result: ResultMessage | None, api_error: str | None = None) -> str | None:
    """The CLI's own word that the model API failed the session, in one phrase; None when it says no such thing.

    Its word: the result's `terminal_reason` "api_error", its `api_error_status` (the HTTP status of the failing
    call, CLI >= 2.1.110), or its last assistant message flagged with an API error kind (`API_KINDS`)."""
    status = result.api_error_status if result is not None else None
    reason = result.terminal_reason if result is not None else None
    if reason != "api_error" and status is None and api_error not in API_KINDS:
        return None
    facts = [
        f"HTTP {status}" if status is not None else "",
        api_error or "",
        f"terminal_reason {reason}" if reason else "",
    ]
    text = " ".join(((result.result if result is not None else None) or "").split())[:300]
    return f"the CLI reports an API error ({', '.join(f for f in facts if f)})" + (f": {text}" if text else "")


def api_failure(status: int | None, words: str) -> tuple[str, str]:
    """What failed and what to do about it: by the API error status, else by what the CLI and the proxy said
    (`words`: an overloaded_error seen mid-stream has no status, only its type; a cut stream, a timeout)."""
    low = words.lower() if status is None else ""
    shown = f" (HTTP {status})" if status is not None else ""
    if status == 529 or "overloaded" in low:
        return f"the model API was overloaded{shown or ' (overloaded_error)'}", (
            f"the API's capacity, not the agent: wait, {AGAIN}; `max_retries:` gives the CLI more tries before it "
            "gives up"
        )
    if status == 429 or "rate_limit" in low:
        return "the model API rate-limited the trial (HTTP 429)", (
            f"run fewer trials at once (`promptfoo eval -j`) or ask for a higher rate limit, {AGAIN}"
        )
    if status in (401, 403) or "authentication_failed" in low:
        return f"the model API refused the credential{shown}", f"renew the credential and export it, {AGAIN}"
    if status == 402 or "billing_error" in low:
        return f"the model API refused the account's billing{shown}", f"check the account's credit, {AGAIN}"
    if status is not None and status >= 500:
        return f"the model API failed (HTTP {status}, a server error)", f"an outage of the API: wait, {AGAIN}"
    if "cut:" in low or "stream_truncated" in low:
        return "the model API's replies broke off mid-stream", (
            f"the connection to the API broke before message_stop (a network or gateway problem): {AGAIN}"
        )
    if "timed out" in low or "no answer" in low or "did not answer" in low:
        return "the model API did not answer in time", f"raise `api_timeout_s:` if the API is slow, {AGAIN}"
    return f"the model API failed{shown}", AGAIN


_SEEN_STATUS = re.compile(r"\b(?:first|last): (\d{3})\b")  # the status the proxy recorded, in its evidence


def _infra(said: str | None, seen: str | None, result: ResultMessage | None) -> str:
    """An infra error's reason: what failed (the CLI's status, else the proxy's), both opinions, the fix."""
    status = result.api_error_status if result is not None else None
    if status is None and (found := _SEEN_STATUS.search(seen or "")):
        status = int(found.group(1))
    what, fix = api_failure(status, f"{said or ''} {seen or ''}")
    return "; ".join(part for part in (what, seen, said, fix) if part)


def trial_end(result: ResultMessage | None, session: Session, witness: Witness | None) -> tuple[str, str | None]:
    """How the trial ended (status, reason): ok | timeout | limit | max_turns | max_budget | agent_crash | infra_error.

    Two opinions decide "the API failed" (infra_error, not counted) against "the agent's session broke"
    (agent_crash, counted as a failure). The CLI's own result says which (`cli_says_api_failed`: terminal_reason
    api_error, an API error status such as 429/500/529) and words the reason; passhat's model proxy outside the
    sandbox (`witness`) says what the API really answered. The CLI runs inside the agent's sandbox: the agent's
    tools can kill it, or try to put a result line of their own on its stdout (tests/trial/test_hostile_agent.py),
    so when confined the CLI's word counts only with the proxy's agreement — the last request failed or was left
    unanswered, or none reached the proxy at all (before any answer the agent has run nothing). A CLI that says
    the API failed while the proxy saw its requests answered and none fail is not an outage: agent_crash, saying
    both. Unconfined there is no proxy, and the CLI's word is all there is."""
    if session.limit:
        return "limit", session.limit
    if witness is not None and witness.gave_up is not None:  # the proxy ended the trial: the upstream refused
        return "infra_error", witness.gave_up
    if witness is not None and witness.config_problem and not witness.answered and (result is None or result.is_error):
        return "infra_error", witness.config_problem  # e.g. the CLI only ever asked for a model not the trial's
    said = cli_says_api_failed(result, session.api_error)
    ended_by_cli = result is not None and result.is_error  # the CLI itself gave up: a pending request counts
    pending_counts = session.timed_out or ended_by_cli
    if witness is not None and (dead := witness.unreachable(pending_counts)) is not None:
        # every model request failed or never answered: the API's fault, whatever fired first
        seen = f"the model API at {witness.upstream} never answered: {dead}" + (
            " (passhat's deadline ended the session)" if session.timed_out else ""
        )
        return "infra_error", _infra(said, seen, result)
    if session.timed_out:
        return "timeout", None
    reason = result.terminal_reason if result is not None else None
    if result is not None and (result.subtype == "error_max_turns" or reason == "max_turns"):
        return "max_turns", None
    if result is not None and (result.subtype == "error_max_budget_usd" or reason == "budget_exhausted"):
        return "max_budget", None
    # exit code -N: the process passhat started (bwrap, root's) died by a signal from outside the sandbox; the
    # agent cannot signal it (another uid, another pid namespace). The CLI killed inside ends bwrap with 128+N.
    outside = bool(session.crash and re.search(r"exit code -\d+", session.crash))
    if result is None or result.is_error:
        return _failed_session(result, session, witness, said, outside, ended_by_cli)
    if session.crash:  # a result line, then the CLI died: not a result the CLI finished cleanly
        return "agent_crash", f"a result line arrived but the CLI then failed ({session.crash}); not trusted"
    if witness is not None and (result.num_turns or 0) > witness.answered:
        return "agent_crash", (
            f"the result line claims {result.num_turns} turn(s) but the model answered {witness.answered} "
            "request(s): a result the CLI did not produce"
        )
    return "ok", None


def _failed_session(
    result: ResultMessage | None, session: Session, witness: Witness | None, said: str | None, outside: bool,
    ended_by_cli: bool,
) -> tuple[str, str]:  # fmt: skip
    """A session without a result, or flagged as an error: the API's fault (infra_error) or the agent's."""
    evidence = witness.infra_evidence(pending_counts=ended_by_cli) if witness is not None else None
    if said is not None:
        if witness is None:
            return "infra_error", _infra(said, "not confined: no proxy of passhat's saw the traffic", result)
        if evidence is not None:
            return "infra_error", _infra(said, evidence, result)
        if not witness.requests:
            seen = "no request reached passhat's model proxy: the sandbox's way to the model failed"
            return "infra_error", _infra(said, seen, result)
    ended = result.terminal_reason if result is not None else None
    if result is None:
        what = "; ".join(filter(None, (session.crash or "the CLI ended without a result message", said)))
    else:
        why = (
            f", terminal_reason {ended}" + (f": {SESSION_ENDS[ended]}" if ended in SESSION_ENDS else "")
            if ended
            else ""
        )
        what = (
            said
            or f"the CLI ended the session flagged as an error (subtype {result.subtype}{why}): "
            + (result.result or "")[:500]
        )
    if outside:
        return "infra_error", f"{what}; the CLI was killed from outside the trial's sandbox"
    if evidence is not None:  # the proxy saw the API fail: worded by what it saw
        return "infra_error", _infra(what, evidence, result)
    if witness is None and result is not None:
        return "infra_error", what
    if said is not None:
        return "agent_crash", (
            f"{what}; but passhat's model proxy saw no outage ({witness.answered if witness else 0} request(s) "
            "answered, none failed upstream): the CLI's word alone does not count (it runs in the agent's sandbox), "
            "so the agent's session ended it"
        )
    return "agent_crash", f"{what}; the model API answered every request, so the agent's session broke it"
