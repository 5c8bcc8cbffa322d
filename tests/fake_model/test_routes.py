"""The scripted model against an agent that attacks it from inside its trial (it can run curl on loopback):
a token opens only its own (task, trial, script) route, `hang` never pins the server, finished routes stay shut.

Each attack here worked before the defence it checks; the report of the change says how each was confirmed.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import pytest
from conftest import ROOT, TASKS

from passhat.common._errors import PasshatError
from passhat.common._fake_route import finish_trial, redact, route_url, split_url, token
from passhat.fake_model import start_in_thread
from passhat.trial._config import model_endpoint, parse_config

TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("Read", "Write", "Edit", "Bash")]
AGENT = {
    "model": "m",
    "max_tokens": 10,
    "tools": TOOLS,
    "messages": [{"role": "user", "content": "Primary working directory: /w\nFix it."}],
}
SECRET = "ab" * 32


def post(server, path: str, body: dict | None = None) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        connection.request("POST", path, body=json.dumps(AGENT if body is None else body))
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


def path_of(server, task_id: str, trial: int, script: str | None = None) -> str:
    return urlsplit(route_url(server.url, task_id, trial, script)).path


def test_the_token_is_the_hmac_of_task_trial_and_script():
    # independent of the implementation: HMAC-SHA256(secret, "task\0trial\0script"), first 32 hex digits
    expected = hmac.new(bytes.fromhex(SECRET), b"py-median\x003\x00noop", hashlib.sha256).hexdigest()[:32]
    assert token(SECRET, "py-median", 3, "noop") == expected
    no_script = hmac.new(bytes.fromhex(SECRET), b"py-median\x003\x00", hashlib.sha256).hexdigest()[:32]
    assert token(SECRET, "py-median", 3, None) == no_script
    url = f"http://passhat:{SECRET}@127.0.0.1:8123"
    assert route_url(url, "py-median", 3, "noop") == f"http://127.0.0.1:8123/passhat/py-median/3/{expected}/noop"
    assert split_url(url) == ("http://127.0.0.1:8123", SECRET)
    assert redact(url) == "http://passhat:***@127.0.0.1:8123"


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("http://127.0.0.1:8123", id="no-userinfo"),
        pytest.param("http://passhat:not-hex@127.0.0.1:8123", id="not-hex"),
        pytest.param("http://passhat:abcd@127.0.0.1:8123", id="too-short"),
    ],
)
def test_a_url_without_a_usable_secret_is_refused_with_the_fix(url):
    with pytest.raises(ValueError, match=r"(carries no secret|at least 32 hex digits)") as caught:
        route_url(url, "t", 0)
    assert "not-hex" not in str(caught.value)  # whatever stood where the secret goes is not repeated


@pytest.mark.parametrize(
    ("attack", "why"),
    [
        pytest.param(lambda s: path_of(s, "py-median", 0).replace("/0/", "/1/", 1), "not made for", id="other-trial"),
        pytest.param(
            lambda s: path_of(s, "py-median", 0, "noop")[: -len("noop")] + "oracle",
            "not made for",
            id="oracle-on-a-noop-token",
        ),
        pytest.param(
            lambda s: path_of(s, "bump-version", 0).replace("bump-version", "py-median"),
            "not made for",
            id="other-task",
        ),
        pytest.param(lambda s: "/passhat/py-median/0/oracle", "no token", id="no-token"),
        pytest.param(lambda s: "/passhat/py-median/0", "no token", id="no-token-no-script"),
        pytest.param(lambda s: "", "not a passhat route", id="bare"),
    ],
)
def test_a_token_opens_only_its_own_route(fake_model, attack, why):
    # the attacker holds the token of (py-median, trial 0[, noop]) and aims at (py-median, trial 1) etc.
    path = attack(fake_model)
    status, reply = post(fake_model, f"{path}/v1/messages")
    assert status == 403
    assert reply["error"]["type"] == "permission_error" and why in reply["error"]["message"]
    assert "content" not in reply and not fake_model.requests  # never the script's reply
    # the same request on the right route gets the oracle's first step
    status, reply = post(fake_model, f"{path_of(fake_model, 'py-median', 1, 'oracle')}/v1/messages")
    assert status == 200 and reply["content"][0]["name"] == "Read"


def test_another_trials_rate_limit_budget_is_out_of_reach(fake_model):
    mine, theirs = (
        path_of(fake_model, "py-median", 0, "rate-limit:2"),
        path_of(fake_model, "py-median", 1, "rate-limit:2"),
    )
    stolen = theirs.rsplit("/", 2)[0] + "/" + mine.rsplit("/", 2)[1] + "/rate-limit:2"  # their route, my token
    for _ in range(3):
        assert post(fake_model, f"{stolen}/v1/messages")[0] == 403
    assert fake_model.requests_seen(("py-median", 1, "rate-limit:2")) == 0
    assert [post(fake_model, f"{theirs}/v1/messages")[0] for _ in range(3)] == [429, 429, 200]  # their 2 whole


def _hang(server, path: str) -> socket.socket:
    data = json.dumps(AGENT).encode()
    sock = socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10)
    head = f"POST {path}/v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
    sock.sendall(head.encode() + data)
    return sock


def _until(condition, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def _request_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "passhat-fake-model-request"]


def test_fifty_hanging_requests_do_not_keep_the_server_from_stopping():
    server = start_in_thread(TASKS, "oracle")
    path = path_of(server, "py-median", 0, "hang")
    sockets = [_hang(server, path) for _ in range(50)]
    try:
        assert _until(lambda: server.requests_seen(("py-median", 0, "hang")) == 50)
        assert len(server.handler_threads()) == 50
        stopper = threading.Thread(target=server.stop, daemon=True)
        started = time.monotonic()
        stopper.start()
        stopper.join(10)
        assert not stopper.is_alive(), "stop() still waiting after 10 s"
        assert time.monotonic() - started < 8.0  # seconds, not the hangs' own length: loose for a loaded 2-CPU CI
        assert _until(lambda: _request_threads() == [], 5.0)  # woken and gone (a loaded CPU may take a moment)
    finally:
        for sock in sockets:
            sock.close()


def test_a_hanging_request_ends_when_its_client_hangs_up(fake_model):
    path = path_of(fake_model, "py-median", 0, "hang")
    sockets = [_hang(fake_model, path) for _ in range(5)]
    assert _until(lambda: fake_model.requests_seen(("py-median", 0, "hang")) == 5)
    for sock in sockets:
        sock.close()
    assert _until(lambda: fake_model.handler_threads() == [], 3.0), "threads still pinned after the client left"


def test_a_finished_route_is_refused_and_its_counters_freed(fake_model):
    base = route_url(fake_model.url, "py-median", 0, "rate-limit:2")
    path, key = urlsplit(base).path, ("py-median", 0, "rate-limit:2")
    assert post(fake_model, f"{path}/v1/messages")[0] == 429
    assert fake_model.requests_seen(key) == 1
    other = path_of(fake_model, "py-median", 0, "oracle")  # the same trial's other route: stays open
    assert post(fake_model, f"{other[: -len('oracle')]}rate-limit:2/finished")[0] == 403  # not with its token
    assert post(fake_model, f"{path}/v1/messages")[0] == 429  # still open

    finish_trial(base)

    assert fake_model.requests_seen(key) == 0
    for endpoint in ("v1/messages", "v1/messages/count_tokens", "finished"):
        status, reply = post(fake_model, f"{path}/{endpoint}")
        assert status == 410 and "is finished" in reply["error"]["message"], endpoint
    assert fake_model.requests_seen(key) == 0
    assert post(fake_model, f"{other}/v1/messages")[0] == 200


def test_finishing_a_route_ends_its_hanging_requests(fake_model):
    base = route_url(fake_model.url, "py-median", 2, "hang")
    sock = _hang(fake_model, urlsplit(base).path)
    try:
        assert _until(lambda: fake_model.requests_seen(("py-median", 2, "hang")) == 1)
        finish_trial(base)
        assert _until(lambda: fake_model.handler_threads() == [], 3.0)
    finally:
        sock.close()


def test_finish_trial_ignores_a_server_that_is_gone():
    started = time.monotonic()
    finish_trial("http://127.0.0.1:9/passhat/t/0/" + "0" * 32)  # port 9: nothing listens
    finish_trial("not a url")
    assert time.monotonic() - started < 3.0


def test_model_endpoint_gives_the_cli_a_token_not_the_secret(fake_model):
    config = parse_config({"basePath": str(ROOT), "fake_model_url": fake_model.url, "fake_script": "noop"})
    env = model_endpoint(config, "py-median", 4)
    base = env["ANTHROPIC_BASE_URL"]
    assert base == f"{fake_model.origin}/passhat/py-median/4/{token(fake_model.secret, 'py-median', 4, 'noop')}/noop"
    assert not any(fake_model.secret in value for value in env.values())
    assert post(fake_model, f"{urlsplit(base).path}/v1/messages")[0] == 200  # and the server takes it


def test_model_endpoint_refuses_a_url_without_the_secret(fake_model):
    config = parse_config({"basePath": str(ROOT), "fake_model_url": fake_model.origin})
    with pytest.raises(PasshatError, match=r"fake_model_url.*carries no secret; use the URL `passhat fake-model"):
        model_endpoint(config, "py-median", 0)


def test_the_cli_writes_the_url_file_0600_redacts_stderr_and_exits_on_sigterm(tmp_path):
    secret_file, url_file, port_file = tmp_path / "secret", tmp_path / "url", tmp_path / "port"
    secret_file.write_text(SECRET + "\n")
    command = [sys.executable, "-m", "passhat.cli", "fake-model", "--tasks-dir", str(TASKS), "--port-file",
               str(port_file), "--url-file", str(url_file), "--secret-file", str(secret_file)]  # fmt: skip
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    sockets: list[socket.socket] = []
    try:
        assert _until(lambda: port_file.is_file() and url_file.is_file(), 20.0), "no url file"
        port = int(port_file.read_text())
        assert url_file.read_text() == f"http://passhat:{SECRET}@127.0.0.1:{port}\n"
        assert stat.S_IMODE(os.stat(url_file).st_mode) == 0o600
        path = urlsplit(route_url(url_file.read_text(), "py-median", 0, "hang")).path
        for _ in range(20):
            sock = socket.create_connection(("127.0.0.1", port))
            data = json.dumps(AGENT).encode()
            sock.sendall(f"POST {path}/v1/messages HTTP/1.1\r\ncontent-length: {len(data)}\r\n\r\n".encode() + data)
            sockets.append(sock)
        time.sleep(0.5)
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=5) == 0
    finally:
        if server.poll() is None:
            server.kill()
        stderr = server.communicate()[1]
        for sock in sockets:
            sock.close()
    assert f"http://passhat:***@127.0.0.1:{port}" in stderr and SECRET not in stderr


def test_the_cli_refuses_a_secret_that_is_not_hex(tmp_path, capsys):
    from passhat.cli import main

    (tmp_path / "secret").write_text("correct horse battery staple")
    code = main(["fake-model", "--tasks-dir", str(TASKS), "--secret-file", str(tmp_path / "secret")])
    assert code == 2
    err = capsys.readouterr().err
    assert "at least 32 hex digits" in err and "horse" not in err
