"""`passhat fake-model --open`: the scripted model on the API's own path, `POST /v1/messages`, so a suite can run in
real-API mode against it (PASSHAT_REAL_CLAUDE=1, ANTHROPIC_BASE_URL at the server, a dummy ANTHROPIC_API_KEY):
a rehearsal of the path real Claude takes, spending nothing. The tokened routes keep working beside it.

As the API: no credential (`x-api-key`, or `authorization`) → 401 authentication_error; any credential is taken.
A request names no task and no trial, so the server works them out, then answers on the tokened route of that
(task, trial, script), made with its own secret: the same code plays the script, compresses, faults.

  * task: the one whose prompt (task.yaml `prompt:`, whitespace collapsed) the first user message holds; of
    several, the longest prompt. An impossible twin's prompt is its original's plus a line (`passhat task
    impossible`), so a twin's trial finds the twin and the original's the original. Tasks with the same prompt
    are taken in id order (the first): the server names them at start (a twin's reference fix is its
    original's, so the oracle plays the same either way). No prompt found: no task (the oracle has no plan and
    answers in words).
  * script: passhat's LLM judge forces one tool (`tool_choice` of type tool): the `judge` script; else the
    server's --script.
  * trial: a number drawn from the CLI's X-Claude-Code-Session-Id header (sha256), 0 without one. Draws
    (`flaky:P`, `+hack:Q`, `+outage:Q`) are then per CLI session, not per promptfoo repeat: only a script that
    draws nothing (oracle, noop, hack:KIND, ...) gives the verdicts of a run on the tokened routes.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from passhat.common._fake_route import PREFIX, route_path

if TYPE_CHECKING:
    from passhat.fake_model._server import _Handler

NO_TASK = "no-task-named"  # the task of a request whose prompt is no task's
JUDGE = "judge"
_MAX_BODY = 64 * 2**20
_SESSION = "x-claude-code-session-id"


def _collapse(text: str) -> str:
    return " ".join(text.split())


def first_user_text(body: dict) -> str:
    """The text of the request's first user message (a string, or its text blocks joined)."""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            blocks = content if isinstance(content, list) else []
            return "\n".join(
                b["text"]
                for b in blocks
                if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
            )
    return ""


def trial_of(session: str | None) -> int:
    """A trial number for a CLI session: the first 6 hex digits of sha256(session id), 0 without one."""
    return int(hashlib.sha256(session.encode()).hexdigest()[:6], 16) if session else 0


class OpenRoute:
    """The --open front of a FakeModelServer (`server.front = OpenRoute(...)`)."""

    def __init__(self, prompts: Iterable[tuple[str, str]]) -> None:
        """`prompts`: (task id, prompt) of every task."""
        collapsed = sorted(((_collapse(p), t) for t, p in prompts if p.strip()), key=lambda x: (-len(x[0]), x[1]))
        self.prompts = collapsed  # longest first, then by id: the first that the request holds is the task
        by_prompt: dict[str, list[str]] = {}
        for prompt, task_id in collapsed:
            by_prompt.setdefault(prompt, []).append(task_id)
        self.shared = [ids for ids in by_prompt.values() if len(ids) > 1]  # each group in id order

    @classmethod
    def from_tasks(cls, tasks_dir: Path) -> OpenRoute:
        from passhat.tasks import load_tasks

        return cls((task.id, task.prompt) for task in load_tasks(tasks_dir))

    def task_of(self, body: dict) -> str | None:
        text = _collapse(first_user_text(body))
        return next((task_id for prompt, task_id in self.prompts if prompt in text), None)

    def __call__(self, handler: _Handler) -> bool:
        parts = urlsplit(handler.path)
        if parts.path.startswith(f"/{PREFIX}/"):
            return False  # a tokened route: as ever
        if not (handler.headers.get("x-api-key") or handler.headers.get("authorization")):
            handler._refuse(401, "authentication_error", "x-api-key header is required")
            return True
        if not parts.path.startswith("/v1/"):
            handler._refuse(
                404, "not_found_error", f"passhat fake-model --open: no endpoint {parts.path}; POST /v1/messages"
            )
            return True
        try:
            length = int(handler.headers.get("content-length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= _MAX_BODY:
            handler._refuse(400, "invalid_request_error", f"content-length must be 0..{_MAX_BODY}")
            return True
        raw = handler.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        body = body if isinstance(body, dict) else {}
        choice = body.get("tool_choice")
        script = JUDGE if isinstance(choice, dict) and choice.get("type") == "tool" else None
        task_id = self.task_of(body) or NO_TASK
        route = route_path(handler.server.secret, task_id, trial_of(handler.headers.get(_SESSION)), script)
        handler.path = route + parts.path + (f"?{parts.query}" if parts.query else "")
        original, handler.rfile = handler.rfile, io.BytesIO(raw)  # do_POST reads the body we read
        try:
            handler.do_POST()
        finally:
            handler.rfile = original  # the connection's next request (keep-alive)
        return True
