"""`passhat fake-model --open`: the API's own `POST /v1/messages` answered as the API does — 401 without a
credential, the task found by its prompt (an impossible twin by its longer prompt), passhat's judge by its forced
tool, the trial by the CLI's session — on the tokened route of that (task, trial, script), so the tokened routes'
code answers it. The tokened routes work beside it as before."""

from __future__ import annotations

import hashlib
import http.client
import json

import pytest
from conftest import TASKS

from passhat.fake_model import OpenRoute, start_in_thread
from passhat.fake_model._open import NO_TASK, first_user_text, trial_of
from passhat.tasks import load_task

MEDIAN = load_task(TASKS / "py-median").prompt
TWIN = load_task(TASKS / "py-median-impossible").prompt
TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("Read", "Write", "Edit", "Bash")]


def agent(prompt: str) -> dict:
    """A request shaped as the CLI's first: the prompt in a text block after a system reminder."""
    blocks = [{"type": "text", "text": "<system-reminder>\nAs you answer, use the tools.\n</system-reminder>"}]
    blocks.append({"type": "text", "text": prompt})
    return {
        "model": "claude-opus-5-5",
        "max_tokens": 64,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": blocks}],
    }


@pytest.fixture(scope="module")
def server():
    running = start_in_thread(TASKS, "oracle")
    running.front = OpenRoute.from_tasks(TASKS)
    yield running
    running.stop()


def post(server, path: str, body: dict, headers: dict[str, str] | None = None, connection=None):
    """(status, JSON reply); on `connection` when given (left open), else on a connection of its own."""
    own = connection is None
    connection = connection or http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        connection.request(
            "POST", path, body=json.dumps(body), headers={"content-type": "application/json", **(headers or {})}
        )
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        if own:
            connection.close()


KEY = {"x-api-key": "sk-ant-dummy"}


def test_without_a_credential_the_api_says_401(server):
    status, reply = post(server, "/v1/messages", agent(MEDIAN))
    assert status == 401 and reply["error"] == {
        "type": "authentication_error",
        "message": "x-api-key header is required",
    }
    assert post(server, "/v1/messages", agent(MEDIAN), {"authorization": "Bearer gateway-token"})[0] == 200


def test_the_task_is_the_one_whose_prompt_the_first_user_message_holds():
    route = OpenRoute.from_tasks(TASKS)
    assert TWIN.startswith(MEDIAN.rstrip()) and len(TWIN) > len(MEDIAN)  # the twin's prompt holds its original's
    assert route.task_of(agent(MEDIAN)) == "py-median"
    assert route.task_of(agent(TWIN)) == "py-median-impossible"  # the longest prompt held wins
    rewrapped = agent(" ".join(TWIN.split()).replace(". ", ".\n  "))  # whitespace does not matter
    assert route.task_of(rewrapped) == "py-median-impossible"
    assert route.task_of(agent("Something else entirely.")) is None
    later = agent("Something else entirely.")
    later["messages"] += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": MEDIAN}]
    assert route.task_of(later) is None  # only the first user message states the task
    assert first_user_text({"messages": [{"role": "user", "content": MEDIAN}]}) == MEDIAN


def test_tasks_sharing_a_prompt_are_taken_in_id_order_and_named():
    route = OpenRoute([("b-twin", "Fix it."), ("a-task", "Fix it."), ("c", "Fix it.\n\nAnd more.")])
    assert route.shared == [["a-task", "b-twin"]]
    assert route.task_of(agent("Fix it.")) == "a-task" and route.task_of(agent("Fix it. And more.")) == "c"


def test_the_trial_is_drawn_from_the_clis_session():
    session = "4d55ffa8-ff43-405b-a8ab-400147719029"
    assert trial_of(session) == int(hashlib.sha256(session.encode()).hexdigest()[:6], 16) and trial_of(None) == 0


def test_a_request_plays_the_script_on_its_tasks_tokened_route(server):
    headers = {**KEY, "x-claude-code-session-id": "session-1"}
    status, reply = post(server, "/v1/messages?beta=true", agent(f"Primary working directory: /w\n{MEDIAN}"), headers)
    assert status == 200 and reply["content"][0]["type"] == "tool_use"  # the oracle's first edit of py-median
    seen = server.requests[-1]
    assert (seen["task_id"], seen["trial"], seen["script"]) == ("py-median", trial_of("session-1"), "oracle")
    post(server, "/v1/messages", agent(f"Primary working directory: /w\n{TWIN}"), headers)
    assert server.requests[-1]["task_id"] == "py-median-impossible"
    status, reply = post(server, "/v1/messages", agent("Primary working directory: /w\nHello."), KEY)
    assert status == 200 and reply["content"][0]["type"] == "text" and server.requests[-1]["task_id"] == NO_TASK


def test_passhats_judge_plays_the_judge_script(server):
    tool = {"name": "grade", "description": "grade", "input_schema": {"type": "object", "properties": {}}}
    judge = {**agent("Grade this."), "tools": [tool], "tool_choice": {"type": "tool", "name": "grade"}}
    status, reply = post(server, "/v1/messages", judge, KEY)
    assert status == 200 and reply["type"] == "message" and server.requests[-1]["script"] == "judge"
    assert post(server, "/v1/messages", {**judge, "tool_choice": {"type": "auto"}}, KEY)[0] == 200
    assert server.requests[-1]["script"] == "oracle"  # the CLI lets the model choose: an agent request


def test_count_tokens_keep_alive_and_the_tokened_routes_beside(server):
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        status, counted = post(server, "/v1/messages/count_tokens", agent(MEDIAN), KEY, connection)
        assert status == 200 and counted["input_tokens"] > 0
        assert post(server, "/v1/messages", agent(MEDIAN), KEY, connection)[0] == 200  # the same connection, again
    finally:
        connection.close()
    assert post(server, "/v1/models", {}, KEY)[0] == 404
    assert post(server, "/passhat/py-median/0/" + "0" * 32 + "/v1/messages", agent(MEDIAN), KEY)[0] == 403
