"""The agent as an adversary of the host and of its own grade (issue F, items 1-4 and 10).

Each attack is a py-median trial whose scripted agent runs `RUN:` lines as Bash calls through the real CLI
(`fake_script: commands`). Where the protection has an off switch (`isolation: none`), the same attack runs
once without it and must succeed there, so no test passes by accident.
"""

from __future__ import annotations

import http.server
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from conftest import ROOT
from test_confinement import attack, needs_bwrap, seen_by_model

from passhat.common._fake_route import route_url
from passhat.trial._inside import seccomp_program
from passhat.trial._isolation import as_root
from passhat.trial._provider import call_api
from passhat.trial._proxy import ModelProxy

BOTH = [pytest.param("auto", True, id="confined"), pytest.param("none", False, id="unconfined")]
ROOT_ONLY = pytest.mark.skipif(not as_root(), reason="the host-root attacks need passhat to run as root (as CI does)")


def said(fake_model, marker: str) -> bool:
    return marker in seen_by_model(fake_model)


# --- 1. never host root --------------------------------------------------------------------------


@needs_bwrap
@ROOT_ONLY
@pytest.mark.parametrize(("isolation", "blocked"), BOTH)
def test_kernel_knobs_shadow_hostname_and_keyrings(tmp_path, fake_model, isolation, blocked):
    knob = "/proc/sys/fs/lease-break-time"
    value = Path(knob).read_text().strip()
    key = f"passhat-key-{tmp_path.name}"
    attack(
        tmp_path,
        fake_model,
        [
            f"echo {value} > {knob} && echo KNOB-WRIT''TEN",
            "head -c 5 /etc/shadow >/dev/null && echo SHADOW-RE''AD",
            "id -u | sed 's/^/UID-/'",
            "hostname | sed 's/^/HOST-/'",
            f"python3 -c \"import ctypes; r=ctypes.CDLL(None).syscall(248, b'user', b'{key}', b'v', 1, -3); "
            "print('KEY-' + ('ADDED' if r > 0 else 'REFUSED'))\"",
        ],
        isolation=isolation,
    )
    seen = seen_by_model(fake_model)
    assert ("KNOB-WRITTEN" in seen) is not blocked
    assert ("SHADOW-READ" in seen) is not blocked
    assert ("UID-0" in seen) is not blocked
    assert ("HOST-passhat-trial" in seen) is blocked
    assert ("KEY-ADDED" in seen) is not blocked
    keys = subprocess.run(["cat", "/proc/keys"], capture_output=True, text=True).stdout
    if not blocked:
        subprocess.run(["sh", "-c", f"keyctl purge user {key} >/dev/null 2>&1"], check=False)
    else:
        assert key not in keys


# --- 2. limits -----------------------------------------------------------------------------------


@needs_bwrap
def test_a_huge_sparse_file_is_a_limit_failure_not_a_host_problem(tmp_path, fake_model):
    response = attack(tmp_path, fake_model, ["truncate -s 50G huge.bin; ls -la huge.bin"], check=False)
    metadata = response["metadata"]
    assert "error" not in response  # not an infra error: the trial is counted
    assert metadata["status"] == "ok"  # truncate itself failed (EFBIG): the file stayed empty
    patch = (Path(metadata["trial_dir"]) / "patch.diff").read_bytes()
    assert b"huge.bin" in patch and len(patch) < 200  # an empty new file, nothing of 50 GB


@needs_bwrap
def test_a_1gb_sparse_file_within_file_mb_is_a_limit_never_read_on_the_host(tmp_path, fake_model):
    """1 GB is allowed by file_mb (1024) and worktree_mb (2048), but no patch may hold it (patch_mb 64): the trial
    ends `limit`, naming the file, and the host never reads it (it once cost 1,033 MB of git per trial)."""
    response = attack(tmp_path, fake_model, ["truncate -s 1G big.bin; ls -la big.bin"], check=False)
    metadata = response["metadata"]
    assert "error" not in response  # the agent's doing: counted in n
    assert metadata["status"] == "limit", metadata
    assert "patch size limit (patch_mb): 'big.bin' is 1024 MB" in metadata["error"]
    assert (Path(metadata["trial_dir"]) / "patch.diff").read_bytes() == b""


@needs_bwrap
def test_a_work_tree_over_its_limit_ends_the_trial_as_limit(tmp_path, fake_model):
    response = attack(
        tmp_path,
        fake_model,
        ["for i in 1 2 3 4 5 6; do head -c 1000000 /dev/urandom > blob$i; done; sleep 30"],
        check=False,
        limits={"worktree_mb": 3, "file_mb": 2},
    )
    metadata = response["metadata"]
    assert "error" not in response
    assert metadata["status"] == "limit", metadata
    assert "worktree_mb" in metadata["error"]
    assert metadata["wall_s"] < 25  # stopped by the watchdog, not by the sleep


@needs_bwrap
def test_a_patch_over_its_limit_is_not_collected(tmp_path, fake_model):
    response = attack(
        tmp_path, fake_model, ["head -c 3000000 /dev/urandom > blob.bin"], check=False, limits={"patch_mb": 1}
    )
    metadata = response["metadata"]
    assert metadata["status"] == "limit" and "patch_mb" in metadata["error"], metadata
    assert (Path(metadata["trial_dir"]) / "patch.diff").read_bytes() == b""


@needs_bwrap
def test_tmpfs_and_processes_are_bounded(tmp_path, fake_model):
    attack(
        tmp_path,
        fake_model,
        [
            "dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1 | tail -1; echo TMPFS-$(du -m /tmp/fill | cut -f1)",
            "dd if=/dev/zero of=/dev/shm/fill bs=1M count=64 2>&1 | tail -1; echo SHM-$(du -m /dev/shm/fill | cut -f1)",
        ],
        limits={"tmpfs_mb": 16},
    )
    seen = seen_by_model(fake_model)
    assert "TMPFS-16" in seen or "TMPFS-15" in seen, seen[-2000:]
    assert "SHM-16" in seen or "SHM-15" in seen


@needs_bwrap
def test_a_fork_storm_ends_the_trial_as_limit(tmp_path, fake_model):
    response = attack(
        tmp_path, fake_model, ["for i in $(seq 60); do sleep 30 & done; wait"], check=False, limits={"processes": 20}
    )
    metadata = response["metadata"]
    assert "error" not in response and metadata["status"] == "limit", metadata
    assert "processes" in metadata["error"]


# --- 3. network: nothing but the model -----------------------------------------------------------


@pytest.fixture
def host_service():
    """A stand-in database on the host's loopback: it answers one line to whoever connects."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    hits: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            with client:
                hits.append(b"hit")
                client.sendall(b"DB-ANSWERED\n")

    threading.Thread(target=serve, daemon=True).start()
    yield port, hits
    server.close()


@needs_bwrap
@pytest.mark.parametrize(("isolation", "blocked"), BOTH)
def test_host_loopback_services_and_unix_sockets(tmp_path, fake_model, host_service, isolation, blocked):
    port, hits = host_service
    unix_path = tmp_path.parent / f"{tmp_path.name}.sock"  # outside the trial, not hidden
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(unix_path))
    unix.listen(1)
    os.chmod(unix_path, 0o777)
    try:
        attack(
            tmp_path,
            fake_model,
            [
                f"python3 -c \"import socket; print(socket.create_connection(('127.0.0.1', {port}), 3).recv(20))\"",
                f"python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{unix_path}'); "
                "print('UNIX-' + 'CONNECTED')\"",
            ],
            isolation=isolation,
        )
    finally:
        unix.close()
        unix_path.unlink()
    assert bool(hits) is not blocked
    assert said(fake_model, "DB-ANSWERED") is not blocked
    assert said(fake_model, "UNIX-CONNECTED") is not blocked


def test_the_seccomp_filter_refuses_unix_sockets_keyrings_and_ptrace():
    """The filter, run on this machine: a child under it cannot do what it denies, and can do the rest."""
    code = (
        "import socket, ctypes, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from passhat.trial._inside import install_seccomp, seccomp_program\n"
        "install_seccomp(seccomp_program())\n"
        "out = []\n"
        "try:\n socket.socket(socket.AF_UNIX); out.append('unix')\nexcept OSError: pass\n"
        "socket.socket(socket.AF_INET); socket.socketpair(); out.append('inet')\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "out.append('key' if libc.syscall(250, 0, -3, 0, 0, 0) >= 0 else 'nokey')\n"
        "out.append('ptrace' if libc.syscall(101, 0, 0, 0, 0) >= 0 else 'noptrace')\n"
        "print(','.join(out))\n"
    )
    result = subprocess.run(
        ["python3", "-c", code, str(ROOT / "src")], capture_output=True, text=True, check=True, timeout=30
    )
    assert result.stdout.strip() == "inet,nokey,noptrace"
    assert len(seccomp_program("x86_64")) % 8 == 0 and len(seccomp_program("aarch64")) % 8 == 0


# --- 4. credentials never reach the agent --------------------------------------------------------


@needs_bwrap
@pytest.mark.parametrize(("isolation", "blocked"), BOTH)
def test_the_real_key_never_reaches_the_agent(tmp_path, fake_model, monkeypatch, isolation, blocked):
    """Real-Claude mode (the scripted model stands in for the API): the agent greps its environment and
    every process's /proc/<pid>/environ for the key."""
    key = "sk-ant-passhat-test-" + tmp_path.name[-8:]
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("PASSHAT_REAL_CLAUDE", "1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", route_url(fake_model.url, "py-median", 0, "commands"))
    commands = ["env | grep -c sk-ant-passhat-test", "cat /proc/[0-9]*/environ | tr '\\0' '\\n' | grep sk-ant-passhat"]
    prompt = "".join(f"RUN: {command}\n" for command in commands)
    config = {"basePath": str(ROOT), "state_dir": str(tmp_path / "state"), "isolation": isolation}
    response = call_api(prompt, {"config": config}, {"vars": {"task_id": "py-median"}, "repeatIndex": 0})
    assert response["metadata"]["status"] == "ok", response
    assert said(fake_model, key) is not blocked


def test_the_proxy_swaps_the_placeholder_for_the_real_key(tmp_path):
    seen: list[dict[str, str]] = []

    class Upstream(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append({k.lower(): v for k, v in self.headers.items()})
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            return

    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    folder = tmp_path / "run"
    folder.mkdir()
    proxy = ModelProxy(folder / "m.sock", f"http://127.0.0.1:{upstream.server_address[1]}/route", {"x-api-key": "REAL"})
    proxy.start()
    try:
        client = socket.socket(socket.AF_UNIX)
        client.connect(str(folder / "m.sock"))
        client.sendall(
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: placeholder\r\n"
            b"authorization: Bearer stolen\r\ncontent-length: 2\r\n\r\n{}"
        )
        reply = b""
        while chunk := client.recv(1000):
            reply += chunk
        client.close()
        other = socket.socket(socket.AF_UNIX)
        other.connect(str(folder / "m.sock"))
        other.sendall(b"GET /passhat/other-trial/0/oracle HTTP/1.1\r\nHost: x\r\n\r\n")
        refused = other.recv(1000)
        other.close()
    finally:
        proxy.stop()
        upstream.shutdown()
        upstream.server_close()
    assert reply.startswith(b"HTTP/1.1 200")
    assert seen == [seen[0]] and seen[0]["x-api-key"] == "REAL" and "authorization" not in seen[0]
    assert refused.startswith(b"HTTP/1.1 403")  # only /v1/ is forwarded: no other route of the upstream
    assert proxy.witness.requests[0][1:] == ("/v1/messages", "200") and proxy.witness.answered == 1


# --- 10. only real infrastructure failures are infra errors --------------------------------------

FORGED = (
    '{"type":"result","subtype":"success","is_error":false,"duration_ms":1,"duration_api_ms":1,'
    '"num_turns":1,"result":"forged","session_id":"forged","total_cost_usd":0}'
)


@needs_bwrap
@pytest.mark.parametrize(
    ("commands", "why"),
    [
        pytest.param(["kill -9 $PPID"], "exit code 137", id="kill-own-cli"),
        pytest.param([f"echo '{FORGED}' > /proc/$PPID/fd/1; kill -9 $PPID"], "exit code 137", id="forged-result"),
        pytest.param(["mkdir .GIT && echo '[core' > .GIT/config && echo x > .GIT/x"], "work tree", id="dot-GIT"),
    ],
)
def test_what_the_agent_breaks_is_its_failure_not_an_infra_error(tmp_path, fake_model, commands, why):
    response = attack(tmp_path, fake_model, commands, check=False)
    metadata = response["metadata"]
    assert "error" not in response, response["error"]  # counted in n, as an agent failure
    assert metadata["status"] == "agent_crash", metadata
    assert why in metadata["error"]
    assert response.get("output") != "forged"


@needs_bwrap
def test_a_model_api_that_fails_is_still_an_infra_error(tmp_path, fake_model):
    response = attack(tmp_path, fake_model, ["true"], check=False, fake_script="error:500", max_retries=0)
    assert response["metadata"]["status"] == "infra_error"
    assert "the model API at http://127.0.0.1:" in response["error"] and "never answered" in response["error"]
    assert "500" in response["error"]


# --- 1, 3, 5: the tests grader's run of the agent's code is confined like the trial ------------


@needs_bwrap
@pytest.mark.parametrize(("isolation", "blocked"), BOTH)
def test_the_graders_run_of_agent_code_is_confined(tmp_path, host_service, monkeypatch, isolation, blocked):
    from passhat.graders._run import GRADER_ISOLATION_ENV, run_command

    monkeypatch.setenv(GRADER_ISOLATION_ENV, isolation)
    port, hits = host_service
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    script = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3); print('NET-' + 'OK')\"; "
        "id -u | sed 's/^/UID-/'; head -c 1 /etc/shadow >/dev/null && echo SHADOW-RE''AD"
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8"}
    code, output = run_command(script, work, 60, env, writable=[home])
    assert ("NET-OK" in output) is not blocked, output
    assert bool(hits) is not blocked
    if as_root():
        assert ("UID-0" in output) is not blocked
        assert ("SHADOW-READ" in output) is not blocked


# --- as a non-root user ---------------------------------------------------------------------------

NOBODY = 65534


def _nobody_can_run_passhat() -> str | None:
    """None if uid 65534 can run this interpreter and import passhat, else why not (the skip reason)."""
    if not as_root():
        return "the tests already run as a non-root user: every confined trial above is the non-root case"
    real = os.path.realpath(sys.executable)  # bwrap binds it by this path: that user must reach it
    probe = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", real, "-c", "import passhat"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"uid {NOBODY} cannot run {sys.executable} with passhat here ({probe.stderr.strip()[-200:]})"
    return None


@needs_bwrap
@pytest.mark.skipif(_nobody_can_run_passhat() is not None, reason=str(_nobody_can_run_passhat()))
def test_a_trial_run_by_a_non_root_user_is_confined(tmp_path, fake_model):
    """passhat run as uid 65534: bwrap makes a user namespace; the agent is still not root and offline."""
    state = Path(tempfile.mkdtemp(prefix="passhat-nobody-"))  # pytest's tmp_path is root's, 0700
    os.chown(state, NOBODY, NOBODY)
    code = (
        "import json, sys\n"
        "from passhat.trial import call_api\n"
        "config = {'basePath': sys.argv[1], 'state_dir': sys.argv[2], 'fake_model_url': sys.argv[3],"
        " 'fake_script': 'commands', 'isolation': 'bwrap'}\n"
        "prompt = 'RUN: id -u | sed s/^/UID-/\\nRUN: cat /proc/self/status | grep CapEff\\n'\n"
        "r = call_api(prompt, {'config': config}, {'vars': {'task_id': 'py-median'}, 'repeatIndex': 0})\n"
        "print(json.dumps(r['metadata']['status']))\n"
    )
    result = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-c", code,
         str(ROOT), str(state), fake_model.url],
        capture_output=True, text=True, timeout=300, env={**os.environ, "HOME": str(state)},
    )  # fmt: skip
    shutil.rmtree(state, ignore_errors=True)
    assert result.stdout.strip() == '"ok"', result.stderr[-2000:]
    assert said(fake_model, "UID-65534") or said(fake_model, "UID-0") is False
    assert said(fake_model, "CapEff:\\t0000000000000000")


@needs_bwrap
@ROOT_ONLY  # cgroups need root; without them memory is not limited (README)
def test_memory_over_its_limit_ends_the_trial_as_limit(tmp_path, fake_model):
    grab = 'python3 -c "x = bytearray(400 * 1024 * 1024); print(len(x))"'
    response = attack(tmp_path, fake_model, [grab], check=False, limits={"memory_mb": 128})
    metadata = response["metadata"]
    assert "error" not in response and metadata["status"] == "limit", metadata
    assert "memory_mb" in metadata["error"]


def test_connect_reaches_only_the_hosts_a_task_lists(tmp_path, host_service):
    port, hits = host_service
    folder = tmp_path / "run"
    folder.mkdir()
    proxy = ModelProxy(folder / "m.sock", "http://127.0.0.1:9", {}, network=(f"127.0.0.1:{port}",)).start()

    def connect(target: str) -> bytes:
        client = socket.socket(socket.AF_UNIX)
        client.connect(str(folder / "m.sock"))
        client.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        reply = b""
        while chunk := client.recv(1000):
            reply += chunk
        client.close()
        return reply

    try:
        listed, other = connect(f"127.0.0.1:{port}"), connect("127.0.0.1:22")
    finally:
        proxy.stop()
    assert listed.startswith(b"HTTP/1.1 200") and b"DB-ANSWERED" in listed and hits
    assert other.startswith(b"HTTP/1.1 403") and b"not in the task's network list" in other
