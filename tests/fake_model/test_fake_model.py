"""The scripted model: script parsing, routing, seeded flakiness, the solution plan, and the
Messages API as the real `anthropic` client sees it (JSON, SSE streaming, count_tokens)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import anthropic
import pytest
from conftest import SHIPPED_TASKS, TASKS

from passhat.common._errors import PasshatError
from passhat.common._fake_route import Route, route_url
from passhat.fake_model import acts_as_oracle, flaky_draw, parse_script, route
from passhat.fake_model._plan import plan_solution
from passhat.fake_model._scripts import NOOP_TEXT, Script
from passhat.tasks._load import load_task

TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("Read", "Write", "Edit", "Bash")]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param("oracle", Script("oracle"), id="oracle"),
        pytest.param("noop", Script("noop"), id="noop"),
        pytest.param("flaky:0.7", Script("flaky", 0.7, 0), id="flaky"),
        pytest.param("flaky:0.25:42", Script("flaky", 0.25, 42), id="flaky-seed"),
        pytest.param("error:503", Script("error", status=503), id="error"),
        pytest.param("rate-limit:2", Script("rate-limit", count=2), id="rate-limit"),
        pytest.param("cut:1", Script("cut", count=1), id="cut"),
        pytest.param("hang", Script("hang"), id="hang"),
        pytest.param("slow:2.5", Script("slow", seconds=2.5), id="slow"),
        pytest.param("commands", Script("commands"), id="commands"),
        pytest.param("flaky:0.7+outage:0.2:5", Script("flaky", p=0.7, outage=0.2, outage_seed=5), id="outage"),
        pytest.param("oracle+encoding:br", Script("oracle", encoding="br"), id="encoding"),
        pytest.param("oracle+encoding:identity", Script("oracle", encoding="identity"), id="encoding-identity"),
        pytest.param("noop+chunks:utf8", Script("noop", chunks="utf8"), id="chunks"),
        pytest.param(
            "oracle+thinking+ping+cache+web-search",
            Script("oracle", thinking=True, ping=True, cache=True, web_search=True),
            id="flags",
        ),
        pytest.param("oracle+stream-error:2+overloaded:3", Script("oracle", stream_errors=2, overloads=3), id="errors"),
        pytest.param(
            "oracle+real+encoding:zstd",
            Script(
                "oracle",
                thinking=True,
                ping=True,
                cache=True,
                web_search=True,
                chunks="utf8",
                stream_errors=1,
                overloads=1,
                encoding="zstd",
            ),
            id="real",
        ),
    ],
)
def test_parse_script(spec, expected):
    assert parse_script(spec) == expected


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "orcale",
        "flaky",
        "flaky:1.5",
        "flaky:x",
        "flaky:0.5:x",
        "noop:1",
        "error:200",
        "error:x",
        "hang:3",
        "slow:-1",
        "cut",
        "oracle+outage",
        "oracle+outage:2",
        "oracle+storm:0.1",
        "oracle+encoding:lzma",
        "oracle+encoding",
        "oracle+chunks:bits",
        "oracle+thinking:1",
        "oracle+real:1",
        "oracle+stream-error:x",
        "oracle+overloaded:-1",
        "oracle+overloaded",
    ],
)
def test_parse_script_rejects(spec):
    with pytest.raises(PasshatError, match=r"expected oracle, noop, flaky:P\[:SEED\] \(0 <= P <= 1\), commands"):
        parse_script(spec)


TOKEN = "0123456789abcdef" * 2


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("/v1/messages?beta=true", None, id="bare"),
        pytest.param("/passhat/py-median/x/v1/messages", None, id="trial-not-a-number"),
        pytest.param(
            f"/passhat/py-median/3/{TOKEN}/v1/messages?beta=true",
            Route("py-median", 3, TOKEN, None, "v1/messages"),
            id="trial",
        ),
        pytest.param(
            f"/passhat/a/0/{TOKEN}/noop/v1/messages/count_tokens",
            Route("a", 0, TOKEN, "noop", "v1/messages/count_tokens"),
            id="script",
        ),
        pytest.param("/passhat/a/0/noop/v1/messages", Route("a", 0, None, "noop", "v1/messages"), id="no-token"),
        pytest.param(f"/passhat/a/0/{TOKEN}/finished", Route("a", 0, TOKEN, None, "finished"), id="finished"),
        pytest.param(
            f"/passhat/a/0/{TOKEN}/rate-limit%3A2/finished", Route("a", 0, TOKEN, "rate-limit:2", "finished"), id="end"
        ),
        pytest.param(f"/passhat/a/0/{TOKEN}/noop/extra/v1/messages", None, id="two-scripts"),
    ],
)
def test_route(path, expected):
    assert route(path) == expected


def test_flaky_draw_is_sha256_of_seed_task_trial():
    # independent of the implementation: the first 16 hex digits of sha256("seed:task:trial") / 16**16
    digest = hashlib.sha256(b"0:bump-version:4").hexdigest()
    assert flaky_draw("bump-version", 4) == int(digest[:16], 16) / 16**16
    assert flaky_draw("bump-version", 4, seed=1) != flaky_draw("bump-version", 4)
    draws = [flaky_draw("t", i) for i in range(200)]
    assert all(0 <= d < 1 for d in draws) and len(set(draws)) == 200
    script = Script("flaky", 0.5)
    assert [acts_as_oracle(script, "t", i) for i in range(200)] == [d < 0.5 for d in draws]


def _apply_plan(task_id: str, workdir: Path) -> None:
    """Carry out the plan's tool calls the way the CLI's tools would."""
    for call in plan_solution(TASKS / task_id / "repo", TASKS / task_id / "solution.patch"):
        target = workdir / call.path
        if call.name == "Read":
            assert target.is_file()
        elif call.name == "Write":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(call.args["content"])
        elif call.name == "Edit":
            text = target.read_text()
            assert text.count(call.args["old_string"]) == 1
            target.write_text(text.replace(call.args["old_string"], call.args["new_string"]))
        else:
            subprocess.run(call.args["command"], shell=True, cwd=workdir, check=True)


@pytest.mark.parametrize("task_id", SHIPPED_TASKS)
def test_plan_reproduces_the_solution(task_id, tmp_path):
    planned, patched = tmp_path / "planned", tmp_path / "patched"
    shutil.copytree(TASKS / task_id / "repo", planned)
    shutil.copytree(TASKS / task_id / "repo", patched)
    _apply_plan(task_id, planned)
    subprocess.run(["git", "apply", str(TASKS / task_id / "solution.patch")], cwd=patched, check=True)
    files = lambda root: {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}  # noqa: E731
    assert files(planned) == files(patched)


def test_plan_handles_new_deleted_and_binary_files(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "keep.txt").write_text("one\ntwo\nthree\n")
    (repo / "gone.txt").write_text("bye\n")
    work = tmp_path / "work"
    shutil.copytree(repo, work)
    subprocess.run(
        "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base",
        shell=True,
        cwd=work,
        check=True,
    )
    (work / "src" / "keep.txt").write_text("one\n2\nthree\n")
    (work / "gone.txt").unlink()
    (work / "new.txt").write_text("hello\n")
    (work / "blob.bin").write_bytes(bytes(range(256)))
    patch = subprocess.run(
        "git add -A && git diff --cached --binary", shell=True, cwd=work, check=True, capture_output=True
    ).stdout
    (tmp_path / "p.patch").write_bytes(patch)
    calls = [(c.name, c.path) for c in plan_solution(repo, tmp_path / "p.patch")]
    assert calls == [
        ("Bash", "blob.bin"),
        ("Bash", "gone.txt"),
        ("Write", "new.txt"),
        ("Read", "src/keep.txt"),
        ("Edit", "src/keep.txt"),
    ]


def test_messages_json_and_stream_through_the_anthropic_client(fake_model):
    task = load_task(TASKS / "py-median")
    client = anthropic.Anthropic(base_url=route_url(fake_model.url, "py-median", 0), api_key="x", max_retries=0)
    messages = [{"role": "user", "content": "Primary working directory: /sandbox/work\nFix it."}]
    first = client.messages.create(model="m", max_tokens=100, messages=messages, tools=TOOLS)
    assert first.stop_reason == "tool_use"
    assert first.content[0].name == "Read"
    assert first.content[0].input["file_path"].startswith("/sandbox/work/")
    with client.messages.stream(model="m", max_tokens=100, messages=messages, tools=TOOLS) as stream:
        streamed = stream.get_final_message()
    assert streamed.content[0].input == first.content[0].input
    plan = plan_solution(task.repo, task.solution)
    # after every planned tool call has a result, the model ends the turn with a summary
    results = [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"} for i in range(len(plan))]
    done = client.messages.create(
        model="m", max_tokens=100, tools=TOOLS, messages=[*messages, {"role": "user", "content": results}]
    )
    assert done.stop_reason == "end_turn" and done.content[0].text.startswith("Done.")
    count = client.messages.count_tokens(model="m", messages=messages)
    assert count.input_tokens > 0


def test_noop_script_in_the_path_overrides_the_default(fake_model):
    client = anthropic.Anthropic(base_url=route_url(fake_model.url, "py-median", 0, "noop"), api_key="x", max_retries=0)
    reply = client.messages.create(
        model="m",
        max_tokens=10,
        tools=TOOLS,
        messages=[{"role": "user", "content": "Primary working directory: /w\nFix it."}],
    )
    assert reply.stop_reason == "end_turn" and reply.content[0].text == NOOP_TEXT


def test_serve_rejects_a_non_loopback_host():
    from passhat.fake_model import FakeModelServer

    with pytest.raises(ValueError, match="loopback only"):
        FakeModelServer("0.0.0.0", 0, TASKS, Script("oracle"))
