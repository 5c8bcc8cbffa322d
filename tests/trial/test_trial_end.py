"""How a trial ended, from the Agent SDK's own result fields (terminal_reason, api_error_status, the assistant
message's error kind) with passhat's model proxy as the second opinion (trial._outcome.trial_end).

The ResultMessages below are shaped as Claude Code 2.1.332 (Agent SDK 0.2.189) emits them against the scripted
model: `error:529` → subtype "success", is_error true, api_error_status 529, terminal_reason "api_error", result
"API Error: 529 ..."; a request timed out → api_error_status null, assistant error "server_error", result "Request
timed out. ...". The real runs are in test_provider.py. A result line the CLI did not write cannot be made in a
real run here (the agent's shell is refused the CLI's /proc/PID/fd/1): the case is a unit test below.
"""

from __future__ import annotations

import pytest
from claude_agent_sdk import ResultMessage

from passhat.trial._outcome import Session, cli_says_api_failed, trial_end
from passhat.trial._proxy import Witness

UPSTREAM = "http://127.0.0.1:9"
OVERLOADED_529 = "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment."
TIMED_OUT = (
    "Request timed out. If the API is slow to answer, or a proxy or gateway holds responses, set API_TIMEOUT_MS."
)


def result(**fields: object) -> ResultMessage:
    base: dict = {"subtype": "success", "duration_ms": 1, "duration_api_ms": 1, "is_error": True, "num_turns": 1,
                  "session_id": "s"}  # fmt: skip
    return ResultMessage(**{**base, **fields})


def api_error(status: int | None, text: str) -> ResultMessage:
    return result(api_error_status=status, terminal_reason="api_error", result=text)


def witness(*outcomes: str | None) -> Witness:
    """A proxy that saw these outcomes, in order (None: still waiting for the answer)."""
    seen = Witness(upstream=UPSTREAM)
    for outcome in outcomes:
        index = seen.start("/v1/messages")
        if outcome is not None:
            seen.finish(index, outcome)
    return seen


@pytest.mark.parametrize(
    ("message", "session", "seen", "status", "words"),
    [
        pytest.param(
            api_error(529, OVERLOADED_529), Session(api_error="server_error"), witness("529"), "infra_error",
            ["the model API was overloaded (HTTP 529)", f"the model API at {UPSTREAM} never answered",
             "terminal_reason api_error", "max_retries:", "--retry-errors"],
            id="529-every-request",
        ),
        pytest.param(
            api_error(529, OVERLOADED_529), Session(api_error="server_error"), witness("200", "200", "529"),
            "infra_error", ["the model API was overloaded (HTTP 529)", "failed 1 time(s); last: 529", "HTTP 529"],
            id="529-after-answers-witness-agrees",
        ),
        pytest.param(
            api_error(429, "API Error: Request rejected (429)"), Session(api_error="rate_limit"),
            witness("200", "429"), "infra_error",
            ["the model API rate-limited the trial (HTTP 429)", "`promptfoo eval -j`"], id="429-witness-agrees",
        ),
        pytest.param(
            api_error(500, "API Error: 500 Internal server error"), Session(api_error="server_error"),
            witness("200", "500"), "infra_error", ["the model API failed (HTTP 500, a server error)"], id="500",
        ),
        pytest.param(
            api_error(None, TIMED_OUT), Session(api_error="server_error"), witness("200", None), "infra_error",
            ["the model API did not answer in time", "did not answer its last request", "api_timeout_s:"],
            id="timed-out-request-pending",
        ),
        pytest.param(
            api_error(None, "API Error: Overloaded"), Session(api_error="server_error"),
            witness("200", "overloaded: overloaded_error: Overloaded"), "infra_error",
            ["the model API was overloaded (overloaded_error)", "last: overloaded: overloaded_error"],
            id="overloaded-mid-stream",
        ),
        pytest.param(
            None, Session(crash="ProcessError: Command failed with exit code 1"), witness("200", "429"), "infra_error",
            ["the model API rate-limited the trial (HTTP 429)", "exit code 1", "the model API failed 1 time(s); last: 429"],
            id="no-result-the-proxy-saw-a-429",
        ),
        pytest.param(
            api_error(429, "API Error: Request rejected (429)"), Session(api_error="rate_limit"),
            witness("200", "overloaded: overloaded_error", "429"), "infra_error",
            ["the model API rate-limited the trial (HTTP 429)"], id="the-status-before-the-words",
        ),
        pytest.param(
            api_error(529, OVERLOADED_529), Session(api_error="server_error"), witness("200", "200"), "agent_crash",
            ["the CLI reports an API error (HTTP 529", "2 request(s) answered, none failed upstream",
             "the CLI's word alone does not count"],
            id="cli-alone-says-529-proxy-saw-answers",
        ),
        pytest.param(
            api_error(None, "API Error: Connection error."), Session(api_error="unknown"), witness(), "infra_error",
            ["no request reached passhat's model proxy"], id="nothing-reached-the-proxy",
        ),
        pytest.param(
            api_error(500, "API Error: 500"), Session(api_error="server_error"), None, "infra_error",
            ["the model API failed (HTTP 500, a server error)", "not confined"], id="unconfined-cli-only",
        ),
        pytest.param(
            result(api_error_status=400, terminal_reason="prompt_too_long", result="Prompt is too long"),
            Session(api_error="invalid_request"), witness("200", "400"), "agent_crash",
            ["HTTP 400", "none failed upstream"], id="400-the-sessions-own-request",
        ),
        pytest.param(
            result(subtype="error_during_execution", terminal_reason="malformed_tool_use_exhausted", result=""),
            Session(), witness("200", "200"), "agent_crash",
            ["terminal_reason malformed_tool_use_exhausted: the model's tool calls stayed malformed",
             "answered every request"],
            id="the-session-gave-up",
        ),
        pytest.param(
            result(subtype="error_max_turns", terminal_reason="max_turns"), Session(), witness("200"), "max_turns",
            [], id="max-turns",
        ),
        pytest.param(
            result(is_error=False, terminal_reason="completed", result="Done."), Session(), witness("200"), "ok", [],
            id="completed",
        ),
    ],
)  # fmt: skip
def test_the_cli_word_and_the_proxy_decide_together(message, session, seen, status, words):
    found, reason = trial_end(message, session, seen)
    assert found == status, reason
    for word in words:
        assert word in (reason or ""), reason


def test_an_infra_reason_names_what_failed_first():
    """The report groups infra errors by their first words (results._causes): the status leads."""
    _, reason = trial_end(api_error(529, OVERLOADED_529), Session(api_error="server_error"), witness("529"))
    assert reason is not None and reason.startswith("the model API was overloaded (HTTP 529); ")


@pytest.mark.parametrize(
    ("message", "kind", "said"),
    [
        pytest.param(api_error(529, "x"), None, True, id="status"),
        pytest.param(result(terminal_reason="api_error"), None, True, id="terminal-reason"),
        pytest.param(None, "rate_limit", True, id="assistant-error-without-result"),
        pytest.param(result(terminal_reason="completed", is_error=False), None, False, id="completed"),
        pytest.param(result(terminal_reason="max_turns"), "invalid_request", False, id="not-an-api-kind"),
    ],
)
def test_the_clis_word(message, kind, said):
    assert (cli_says_api_failed(message, kind) is not None) is said
