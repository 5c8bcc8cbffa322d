"""The oracle with a CLI that states no working directory (`claude --bare`): it asks the shell first.

The seed's bash loop (bench/seed_loop.sh) runs `claude --bare -p`, which leaves the environment block out
of its system prompt; the oracle must still apply the solution there, or that benchmark would compare
passhat with a loop whose trials do nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from conftest import TASKS

from passhat.common._fake_route import route_url
from passhat.fake_model import start_in_thread
from passhat.fake_model._plan import ToolCall
from passhat.fake_model._scripts import agent_reply
from passhat.trial._agent import bundled_cli

PLAN = [ToolCall("Write", "a.txt", {"content": "x\n"})]


def _user(*blocks: dict) -> dict:
    return {"role": "user", "content": list(blocks)}


def test_without_a_stated_directory_the_oracle_asks_pwd_then_follows_its_plan_there():
    first = agent_reply({"messages": [_user({"type": "text", "text": "fix it"})]}, PLAN, oracle=True)
    assert first.blocks[0]["input"] == {"command": "pwd"}
    asked = {"role": "assistant", "content": first.blocks}
    answer = _user({"type": "tool_result", "tool_use_id": first.blocks[0]["id"], "content": "/tmp/wt\n"})
    second = agent_reply({"messages": [_user({"type": "text", "text": "fix it"}), asked, answer]}, PLAN, oracle=True)
    assert second.blocks[0]["name"] == "Write"
    assert second.blocks[0]["input"]["file_path"] == "/tmp/wt/a.txt"


def test_a_pwd_answer_that_is_no_path_ends_the_turn_without_edits():
    first = agent_reply({"messages": [_user({"type": "text", "text": "fix it"})]}, PLAN, oracle=True)
    asked = {"role": "assistant", "content": first.blocks}
    answer = _user({"type": "tool_result", "tool_use_id": first.blocks[0]["id"], "content": "no shell"})
    reply = agent_reply({"messages": [_user({"type": "text", "text": "x"}), asked, answer]}, PLAN, oracle=True)
    assert reply.stop_reason == "end_turn"
    assert "does not state a working directory" in reply.blocks[0]["text"]


def test_bare_cli_applies_the_solution(tmp_path: Path):
    repo = tmp_path / "repo"
    shutil.copytree(TASKS / "py-median" / "repo", repo)
    server = start_in_thread(TASKS, "oracle")
    try:
        env = {
            "PATH": os.environ["PATH"], "HOME": str(tmp_path), "IS_SANDBOX": "1", "ANTHROPIC_API_KEY": "x",
            "ANTHROPIC_BASE_URL": route_url(server.url, "py-median", 0), "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }  # fmt: skip
        command = [str(bundled_cli()), "--bare", "-p", "fix it", "--dangerously-skip-permissions"]
        subprocess.run(command, cwd=repo, env=env, check=True, capture_output=True, timeout=120)
    finally:
        server.stop()
    expected = tmp_path / "expected"
    shutil.copytree(TASKS / "py-median" / "repo", expected)
    subprocess.run(["git", "apply", str(TASKS / "py-median" / "solution.patch")], cwd=expected, check=True)
    name = "stats_utils/median.py"
    assert (
        (repo / name).read_text() == (expected / name).read_text() != (TASKS / "py-median" / "repo" / name).read_text()
    )
