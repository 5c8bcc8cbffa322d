"""The scripted judge (fake_model/_judge.py) as the real anthropic client sees it: replies follow the
request's own tool schema; scripts are validated like the agent scripts."""

from __future__ import annotations

import anthropic
import jsonschema
import pytest
from conftest import ROOT

from passhat.common._errors import PasshatError
from passhat.common._fake_route import Route, route_url
from passhat.fake_model import parse_script, route
from passhat.fake_model._scripts import Script
from passhat.judge._prompt import (
    pairwise_answer,
    pairwise_tool,
    pairwise_user,
    rubric_tool,
    rubric_user,
)
from passhat.judge._rubric import load_rubric

READABILITY = load_rubric(ROOT / "rubrics" / "code-readability.yaml")


@pytest.mark.parametrize("spec", ["judge", "judge:0.8", "judge:1", "judge-first", "judge-longer", "judge-shorter",
                                  "judge-malformed", "judge-malformed:2", "judge-noisy", "judge-points:5,4,3"])  # fmt: skip
def test_judge_scripts_parse(spec):
    assert parse_script(spec) == Script("judge", spec=spec)


@pytest.mark.parametrize("spec", ["judge:2", "judge:x", "judge-last", "judge-malformed:x", "judge-points:a"])
def test_bad_judge_scripts_say_what_is_expected(spec):
    with pytest.raises(PasshatError, match=r"expected a judge script: judge, judge:X with 0 <= X <= 1, judge-first"):
        parse_script(spec)


def test_a_judge_script_travels_in_the_url():
    token = "0123456789abcdef" * 2
    assert route(f"/passhat/write-changelog/4/{token}/judge-points%3A5%2C4/v1/messages") == Route(
        "write-changelog", 4, token, "judge-points:5,4", "v1/messages")  # fmt: skip


def _client(server, script: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=route_url(server.url, "t", 0, script), api_key="x", max_retries=0)


def _ask(server, script: str, tool: dict, user: str, stream: bool = False):
    with _client(server, script) as client:
        request = {"model": "claude-sonnet-5-5", "max_tokens": 100, "messages": [{"role": "user", "content": user}],
                   "tools": [tool], "tool_choice": {"type": "tool", "name": tool["name"]}}  # fmt: skip
        if stream:
            with client.messages.stream(**request) as events:
                return events.get_final_message()
        return client.messages.create(**request)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_rubric_reply_matches_the_requests_tool_schema(fake_model, stream):
    tool = rubric_tool(READABILITY)  # a 3-point scale: 3 good 1.0, 2 acceptable 0.5, 1 poor 0.0
    reply = _ask(fake_model, "judge:0.5", tool, rubric_user("p", "o", "d", None, None), stream)
    call = reply.content[-1]
    assert reply.stop_reason == "tool_use" and call.type == "tool_use" and call.name == "record_grades"
    jsonschema.validate(call.input, tool["input_schema"])
    assert {name: c["score"] for name, c in call.input["criteria"].items()} == {
        "naming": 2, "structure": 2, "comments": 2, "simplicity": 2}  # fmt: skip


def test_the_default_judge_scores_by_coverage_of_the_reference(fake_model):
    tool = rubric_tool(READABILITY)
    reference = "+one\n+two\n+three\n+four\n"
    # the diff adds 2 of the reference's 4 lines: 0.5 → acceptable (2); all 4 → good (3); none → poor (1)
    for diff, points in [("+one\n+two\n", 2), (reference, 3), ("", 1)]:
        reply = _ask(fake_model, "judge", tool, rubric_user("p", "o", diff, reference, None))
        assert {c["score"] for c in reply.content[-1].input["criteria"].values()} == {points}


def test_the_noisy_judge_disagrees_with_itself_on_the_same_request(fake_model):
    tool = rubric_tool(load_rubric(ROOT / "rubrics" / "agent-output.yaml"))
    user = rubric_user("noisy", "o", "d", None, None)
    rounds = [tuple(c["score"] for c in _ask(fake_model, "judge-noisy", tool, user).content[-1].input["criteria"].values())
              for _ in range(4)]  # fmt: skip
    assert len(set(rounds)) > 1
    assert all(3 <= s <= 5 for r in rounds for s in r)  # good (4), one level up or down at most


def test_pairwise_scripts(fake_model):
    tool = pairwise_tool()
    long, short = pairwise_answer("a long careful answer", "+x\n+y\n"), pairwise_answer("ok", "")
    user = pairwise_user("p", long, short)
    winners = {script: _ask(fake_model, script, tool, user).content[-1].input["winner"]
               for script in ("judge", "judge-first", "judge-longer", "judge-shorter")}  # fmt: skip
    assert winners == {"judge": "A", "judge-first": "A", "judge-longer": "A", "judge-shorter": "B"}
    swapped = pairwise_user("p", short, long)
    assert _ask(fake_model, "judge-first", tool, swapped).content[-1].input["winner"] == "A"  # biased
    assert _ask(fake_model, "judge", tool, swapped).content[-1].input["winner"] == "B"  # consistent


def test_malformed_replies_vary_by_attempt(fake_model):
    tool = rubric_tool(READABILITY)
    first = _ask(fake_model, "judge-malformed", tool, "x")
    assert [b.type for b in first.content] == ["text"]  # attempt 0: no tool call at all
    with _client(fake_model, "judge-malformed") as client:
        messages = [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": "hm"},
            {"role": "user", "content": "again"},
        ]
        second = client.messages.create(model="m", max_tokens=10, messages=messages, tools=[tool],
                                        tool_choice={"type": "tool", "name": "record_grades"})  # fmt: skip
    assert {c["score"] for c in second.content[-1].input["criteria"].values()} == {99}  # attempt 1: off the scale
