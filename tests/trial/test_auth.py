"""The same auth and setup as the team's cron job (issue #12 item 6): the provider config's `auth:` (an API key,
a bearer or OAuth token, Bedrock, Vertex), `settings:` and `mcp_servers:`, each explicit.

Every trial here runs the real CLI against the scripted model, which records each request's headers
(`calls`). A gateway's URL (`base_url`) is a route of the scripted model, so the real credential, read from the
variable `auth:` names, travels the whole way: passhat's proxy adds it outside the sandbox.
"""

from __future__ import annotations

import http.server
import json
import shutil
import socket
import threading
from pathlib import Path

import pytest
from conftest import ROOT
from test_confinement import needs_bwrap, seen_by_model

from passhat.cli import main
from passhat.common._errors import PasshatError
from passhat.common._fake_route import route_url
from passhat.trial._config import model_endpoint, parse_config
from passhat.trial._provider import call_api
from passhat.trial._proxy import (
    PLACEHOLDER_KEY,
    api_paths,
    credential_headers,
    inside_variables,
    model_proxy,
    upstream_url,
)

BOTH = [pytest.param("auto", True, id="confined"), pytest.param("none", False, id="unconfined")]
TOKEN = "sk-ant-oat01-passhat-real-token"  # what `claude setup-token` would print (a made-up one)
LOCAL = "http://127.0.0.1:8787"

# A stdio MCP server (newline-delimited JSON-RPC): one tool, `probe_marker`.
MCP_PROBE = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "probe", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "probe_marker", "description": "a probe",
                             "inputSchema": {"type": "object", "properties": {}}}]}
    else:
        result = {"content": [{"type": "text", "text": "probed"}]}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def trial(tmp_path: Path, config: dict, prompt: str = "fix it", task_id: str = "py-median") -> dict:
    options = {"config": {"basePath": str(ROOT), "state_dir": str(tmp_path / "state"), "timeout_s": 120, **config}}
    return call_api(prompt, options, {"vars": {"task_id": task_id}, "repeatIndex": 0, "evaluationId": "auth"})


def gateway(fake_model, script: str | None = None, suffix: str = "") -> str:
    """The scripted model standing in for a gateway (or the API itself) at a URL the config names."""
    return route_url(fake_model.url, "py-median", 0, script) + suffix


# --- the auth: block, checked before the first trial --------------------------------------------------

BAD = [
    ({"auth": {}}, "'auth': {}: give exactly one of api_key_env, auth_token_env or oauth_token_env"),
    ({"auth": {"api_key_env": "A", "oauth_token_env": "B"}}, "give exactly one of"),
    ({"auth": {"oauth_token_env": "not a name"}}, "'auth.oauth_token_env': 'not a name': name an environment"),
    ({"auth": {"oauth_token_env": "T", "base_url": "api.example.com"}}, "'auth.base_url': 'api.example.com': give an"),
    ({"auth": {"oauth_token": "sk-ant-pasted"}}, "'auth.oauth_token': 'sk-ant-pasted': unknown field"),
    ({"auth": {"bedrock": {"token_env": "T"}}}, "'auth.bedrock.region': None: give the region, e.g. us-east-1"),
    ({"auth": {"bedrock": {"region": "us-east-1"}}}, "'auth.bedrock.token_env': None: name the variable holding"),
    ({"auth": {"bedrock": {"region": "us-east-1"}}}, "passhat does not sign requests with AWS access keys (SigV4)"),
    ({"auth": {"bedrock": {"region": "us-east-1", "profile": "ci"}}}, "'auth.bedrock.profile': 'ci': unknown field"),
    ({"auth": {"base_url": "https://gw", "bedrock": {"region": "eu-west-1", "token_env": "T"}}},
     "'auth.base_url': 'https://gw': put base_url inside auth.bedrock"),
    ({"auth": {"vertex": {"region": "us-east5", "token_env": "T"}}}, "'auth.vertex.project_id': None: give your"),
    ({"auth": {"vertex": {"region": "us-east5", "project_id": "p-1"}}}, "does not run Google sign-in itself"),
    ({"auth": "CLAUDE_CODE_OAUTH_TOKEN"}, "'auth': 'CLAUDE_CODE_OAUTH_TOKEN': expected a dict"),
    ({"env": {"CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-secret"}}, "'env.CLAUDE_CODE_OAUTH_TOKEN': '***': set the model"),
    ({"env": {"AWS_SECRET_ACCESS_KEY": "sk-ant-secret"}}, "a value here reaches the agent"),
    ({"mcp_servers": {"probe": {"command": "python3", "env": {"ANTHROPIC_API_KEY": "sk-ant-secret"}}}},
     "'mcp_servers.probe.env.ANTHROPIC_API_KEY': '***': set the model endpoint"),
    ({"settings": "missing.json"}, "'settings': 'missing.json': no such file"),
    ({"mcp_servers": {"probe": {"command": "no-such-program-passhat"}}}, "'mcp_servers.probe.command'"),
    ({"mcp_servers": {"probe": {"command": "python3", "args": ["./missing.py"]}}},
     "'mcp_servers.probe.args[0]': './missing.py': no such file"),
    ({"mcp_servers": {"probe": {"command": "python3", "cwd": "/"}}}, "'mcp_servers.probe.cwd': '/': unknown field"),
    ({"mcp_servers": {"probe": {"type": "ws", "url": "ws://x"}}}, "'mcp_servers.probe.type': 'ws': use stdio"),
    ({"mcp_servers": {"probe": {"type": "http"}}}, "'mcp_servers.probe.url': None: give an http(s)"),
    ({"mcp_servers": {"two words": {"command": "python3"}}}, "'mcp_servers': 'two words': name each server"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "fragment"), [pytest.param(r, f, id=f"{i}-{next(iter(r))}") for i, (r, f) in enumerate(BAD)]
)
def test_each_bad_auth_settings_or_mcp_field_is_one_line_naming_it(raw, fragment):
    with pytest.raises(PasshatError) as caught:
        parse_config({"basePath": str(ROOT), **raw})
    message = str(caught.value)
    assert fragment in message and "\n" not in message, message
    assert "sk-ant-secret" not in message  # a value put in env: is never echoed


@pytest.mark.parametrize(
    ("content", "fragment"),
    [pytest.param("[1]", "holds a JSON list; a settings file is a JSON object", id="list"),
     pytest.param("{model: x}", "is not readable JSON", id="not-json"),
     pytest.param('{"env": {"ANTHROPIC_AUTH_TOKEN": "sk-ant-secret", "AWS_PROFILE": "ci", "MY_FLAG": "1"}}',
                  "sets ANTHROPIC_AUTH_TOKEN, AWS_PROFILE, which the agent could read; name the model", id="env"),
     pytest.param('{"apiKeyHelper": "~/bin/key.sh"}', "sets apiKeyHelper, which the agent could read", id="helper")],
)  # fmt: skip
def test_a_settings_file_must_be_a_json_object_without_credentials(tmp_path, content, fragment):
    (tmp_path / "settings.json").write_text(content)
    with pytest.raises(PasshatError) as caught:
        parse_config({"basePath": str(tmp_path), "settings": "settings.json"})
    assert fragment in str(caught.value) and "sk-ant-secret" not in str(caught.value)


def test_the_named_variable_is_read_at_trial_time_and_never_for_the_scripted_model(monkeypatch):
    monkeypatch.delenv("PASSHAT_FAKE_MODEL_URL", raising=False)
    monkeypatch.delenv("MY_OAUTH", raising=False)
    config = parse_config({"basePath": str(ROOT), "auth": {"oauth_token_env": "MY_OAUTH"}})  # parses unset
    with pytest.raises(PasshatError) as caught:
        model_endpoint(config, "py-median", 0)
    assert str(caught.value) == (
        "provider config field 'auth.oauth_token_env': 'MY_OAUTH': the variable is not set in passhat's "
        "environment; export it (`claude setup-token` prints one for a subscription)"
    )
    monkeypatch.setenv("MY_OAUTH", TOKEN)
    assert model_endpoint(config, "py-median", 0) == {
        "ANTHROPIC_BASE_URL": "https://api.anthropic.com",
        "CLAUDE_CODE_OAUTH_TOKEN": TOKEN,
    }
    fake = parse_config({"basePath": str(ROOT), "auth": {"oauth_token_env": "MY_OAUTH"},
                         "fake_model_url": f"http://passhat:{'0' * 64}@127.0.0.1:9"})  # fmt: skip
    assert TOKEN not in json.dumps(model_endpoint(fake, "py-median", 0))  # a rehearsal never reads the credential


# --- what the CLI gets inside, what the proxy adds outside ---------------------------------------------

BEARER, KEY = {"authorization": "Bearer c"}, {"x-api-key": "c"}
MODES = [
    # (auth:, the real job's variables, the proxy's upstream, the API paths it forwards, the header it adds)
    pytest.param({"api_key_env": "CRED"},
                 {"ANTHROPIC_BASE_URL": "https://api.anthropic.com", "ANTHROPIC_API_KEY": "c"},
                 "https://api.anthropic.com", ("/v1/",), KEY, id="api-key"),
    pytest.param({"auth_token_env": "CRED", "base_url": "https://gw.example/anthropic/"},
                 {"ANTHROPIC_BASE_URL": "https://gw.example/anthropic", "ANTHROPIC_AUTH_TOKEN": "c"},
                 "https://gw.example/anthropic", ("/v1/",), BEARER, id="gateway-token"),
    pytest.param({"oauth_token_env": "CRED"},
                 {"ANTHROPIC_BASE_URL": "https://api.anthropic.com", "CLAUDE_CODE_OAUTH_TOKEN": "c"},
                 "https://api.anthropic.com", ("/v1/",), BEARER, id="oauth"),
    pytest.param({"bedrock": {"region": "us-east-1", "token_env": "CRED"}},
                 {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "us-east-1", "AWS_BEARER_TOKEN_BEDROCK": "c",
                  "ANTHROPIC_BEDROCK_BASE_URL": "https://bedrock-runtime.us-east-1.amazonaws.com"},
                 "https://bedrock-runtime.us-east-1.amazonaws.com", ("/model/",), BEARER, id="bedrock-api-key"),
    pytest.param({"vertex": {"region": "us-east5", "project_id": "p-1", "token_env": "CRED"}},
                 {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "p-1",
                  "ANTHROPIC_VERTEX_BASE_URL": "https://us-east5-aiplatform.googleapis.com/v1",
                  "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1", "ANTHROPIC_AUTH_TOKEN": "c"},
                 "https://us-east5-aiplatform.googleapis.com/v1",
                 ("/projects/p-1/locations/us-east5/publishers/anthropic/models/",), BEARER, id="vertex-token"),
    pytest.param({"vertex": {"region": "global", "project_id": "p-1", "base_url": "https://gw.example/vertex/v1"}},
                 {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "global", "ANTHROPIC_VERTEX_PROJECT_ID": "p-1",
                  "ANTHROPIC_VERTEX_BASE_URL": "https://gw.example/vertex/v1", "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1"},
                 "https://gw.example/vertex/v1", ("/projects/p-1/locations/global/publishers/anthropic/models/",), {},
                 id="vertex-gateway-without-credential"),
]  # fmt: skip
CREDENTIALS = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"}


@pytest.mark.parametrize(("auth", "job", "upstream", "paths", "header"), MODES)
def test_each_mode_keeps_the_credential_outside_and_the_request_style_inside(
    monkeypatch, auth, job, upstream, paths, header
):
    monkeypatch.setenv("CRED", "c")
    monkeypatch.delenv("PASSHAT_FAKE_MODEL_URL", raising=False)
    endpoint = model_endpoint(parse_config({"basePath": str(ROOT), "auth": auth}), "t", 0)
    assert endpoint == job
    assert (upstream_url(endpoint), api_paths(endpoint), credential_headers(endpoint)) == (upstream, paths, header)
    inside = inside_variables(endpoint, LOCAL)
    assert "c" not in inside.values()  # the credential stays with the proxy
    # the same kind of credential, as a placeholder: the CLI sends the same style of request (OAuth: its beta flag)
    assert {name for name, value in inside.items() if value == PLACEHOLDER_KEY} == set(job) & CREDENTIALS
    assert all(inside[name] == LOCAL for name in [*job, "ANTHROPIC_BASE_URL"] if name.endswith("BASE_URL"))


def test_the_proxy_forwards_only_the_paths_of_the_api_the_job_speaks(tmp_path):
    """Bedrock: only /model/... (its control plane's /inference-profiles and the Anthropic API are refused)."""
    seen: list[tuple[str, str | None]] = []

    class Upstream(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append((self.path, self.headers.get("authorization")))
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_GET = do_POST  # noqa: N815

        def log_message(self, *args: object) -> None:
            return

    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    folder = tmp_path / "run"
    folder.mkdir()
    base = f"http://127.0.0.1:{upstream.server_address[1]}/gw"
    env = {"CLAUDE_CODE_USE_BEDROCK": "1", "ANTHROPIC_BEDROCK_BASE_URL": base, "AWS_BEARER_TOKEN_BEDROCK": "REAL"}
    proxy = model_proxy(folder / "m.sock", env)

    def send(request: bytes) -> bytes:
        client = socket.socket(socket.AF_UNIX)
        client.connect(str(folder / "m.sock"))
        client.sendall(request)
        reply = b""
        while chunk := client.recv(1000):
            reply += chunk
        client.close()
        return reply

    try:
        invoke = send(b"POST /model/m1/invoke HTTP/1.1\r\nHost: x\r\nauthorization: Bearer placeholder\r\n"
                      b"content-length: 2\r\n\r\n{}")  # fmt: skip
        profiles = send(b"GET /inference-profiles?type=SYSTEM_DEFINED HTTP/1.1\r\nHost: x\r\n\r\n")
        anthropic = send(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-length: 2\r\n\r\n{}")
    finally:
        proxy.stop()
        upstream.shutdown()
        upstream.server_close()
    assert invoke.startswith(b"HTTP/1.1 200") and seen == [("/gw/model/m1/invoke", "Bearer REAL")]
    assert profiles.startswith(b"HTTP/1.1 403") and anthropic.startswith(b"HTTP/1.1 403")


# --- against the real CLI ---------------------------------------------------------------------------


@needs_bwrap
@pytest.mark.parametrize(("isolation", "blocked"), BOTH)
def test_the_oauth_token_reaches_the_api_and_not_the_agent(tmp_path, fake_model, monkeypatch, isolation, blocked):
    """The CLI holds a placeholder OAuth token, so it sends OAuth-style requests (`authorization: Bearer`,
    the oauth beta flag); the proxy puts the real token in. Unconfined, the agent reads it: the attack is real."""
    monkeypatch.setenv("CI_OAUTH", TOKEN)
    commands = ["env | grep -c passhat-real-token", "cat /proc/[0-9]*/environ | tr '\\0' '\\n' | grep passhat-real"]
    config = {"auth": {"oauth_token_env": "CI_OAUTH", "base_url": gateway(fake_model, "commands")}}
    response = trial(tmp_path, {**config, "isolation": isolation}, "".join(f"RUN: {c}\n" for c in commands))
    assert response["metadata"]["status"] == "ok", response
    calls = [call for call in fake_model.calls if call["endpoint"].startswith("v1/messages")]
    assert calls and all(call["headers"]["authorization"] == f"Bearer {TOKEN}" for call in calls)
    assert all("oauth-2025-04-20" in call["headers"]["anthropic-beta"] for call in calls)
    assert not any("x-api-key" in call["headers"] for call in calls)  # not an API key request
    assert (TOKEN in seen_by_model(fake_model)) is not blocked


@needs_bwrap
@pytest.mark.parametrize(
    ("cloud", "endpoint"),
    [pytest.param({"bedrock": {"region": "us-east-1"}}, "v1/model/us.anthropic.", id="bedrock"),
     pytest.param({"vertex": {"region": "us-east5", "project_id": "proj-1"}},
                  "v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/", id="vertex")],
)  # fmt: skip
def test_bedrock_and_vertex_through_a_gateway_fix_the_task(tmp_path, fake_model, monkeypatch, cloud, endpoint):
    """The CLI speaks Bedrock (AWS event-stream replies) or Vertex to the proxy; the proxy forwards to the gateway
    URL with the real token; the scripted oracle's fix arrives through that API."""
    monkeypatch.setenv("GATEWAY_TOKEN", TOKEN)
    [(kind, settings)] = cloud.items()
    auth = {kind: {**settings, "token_env": "GATEWAY_TOKEN", "base_url": gateway(fake_model, suffix="/v1")}}
    response = trial(tmp_path, {"auth": auth})
    metadata = response["metadata"]
    assert metadata["status"] == "ok" and metadata["changed_paths"] == ["stats_utils/median.py"], response
    calls = list(fake_model.calls)
    assert calls and all(call["endpoint"].startswith(endpoint) for call in calls), [c["endpoint"] for c in calls]
    streamed = "/invoke-with-response-stream" if kind == "bedrock" else ":streamRawPredict"
    assert any(call["endpoint"].endswith(streamed) for call in calls)
    assert all(call["headers"].get("authorization") == f"Bearer {TOKEN}" for call in calls)


@needs_bwrap
@pytest.mark.parametrize("isolation", ["auto", "none"])
def test_a_host_variable_the_config_does_not_name_never_reaches_the_cli(tmp_path, fake_model, monkeypatch, isolation):
    host = {
        "CLAUDE_CODE_OAUTH_TOKEN": "passhat-host-1", "ANTHROPIC_AUTH_TOKEN": "passhat-host-2",
        "AWS_BEARER_TOKEN_BEDROCK": "passhat-host-3", "AWS_SECRET_ACCESS_KEY": "passhat-host-4",
        "CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_USE_VERTEX": "1", "ANTHROPIC_VERTEX_PROJECT_ID": "passhat-host-5",
        "CLAUDE_CONFIG_DIR": str(tmp_path / "passhat-host-6"),
    }  # fmt: skip
    for name, value in host.items():
        monkeypatch.setenv(name, value)
    config = {"fake_model_url": fake_model.url, "fake_script": "commands", "isolation": isolation}
    response = trial(tmp_path, config, "RUN: env\n")
    assert response["metadata"]["status"] == "ok", response
    seen = seen_by_model(fake_model)
    assert "TMPDIR=" in seen  # the agent's `env` did reach the model
    assert not [name for name in host if f"{name}=" in seen] and "passhat-host-" not in seen
    calls = list(fake_model.calls)
    assert calls and all(call["endpoint"].startswith("v1/messages") for call in calls)  # not Bedrock, not Vertex
    assert not any("passhat-host-" in json.dumps(call["headers"]) for call in calls)


@needs_bwrap
@pytest.mark.parametrize("isolation", ["auto", "none"])
def test_host_claude_settings_are_read_only_when_named(tmp_path, fake_model, monkeypatch, isolation):
    """A host ~/.claude/settings.json (and $CLAUDE_CONFIG_DIR) is never read, even with every setting source
    on; named in `settings:`, the file is used, and visible read-only inside the sandbox (it lives under
    the hidden HOME)."""
    home = tmp_path / "host-home"
    (home / ".claude").mkdir(parents=True)
    settings = home / ".claude" / "settings.json"
    settings.write_text(json.dumps({"model": "passhat-host-settings-marker"}))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    base = {"fake_model_url": fake_model.url, "fake_script": "noop", "isolation": isolation}
    trial(tmp_path / "a", {**base, "setting_sources": ["user", "project", "local"]})
    models = {request["body"].get("model") for request in fake_model.requests}
    assert models and "passhat-host-settings-marker" not in models
    fake_model.requests.clear()
    response = trial(tmp_path / "b", {**base, "settings": str(settings)})
    assert response["metadata"]["status"] == "ok", response
    assert {request["body"].get("model") for request in fake_model.requests} == {"passhat-host-settings-marker"}


@needs_bwrap
@pytest.mark.parametrize(
    ("env", "listed_as_tool"),
    [pytest.param({}, False, id="tool-search-default"), pytest.param({"ENABLE_TOOL_SEARCH": "false"}, True, id="tools")],
)  # fmt: skip
def test_a_named_mcp_server_runs_in_the_sandbox_and_a_repos_own_does_not(
    tmp_path, task_copy, fake_model, env, listed_as_tool
):
    """`mcp_servers:` starts the probe inside the sandbox (its script, under /tmp, made visible read-only) and the
    model sees its tool: in `tools`, or by name in the deferred-tools list when tool search is on (the CLI's
    default). The task repo's own .mcp.json is not loaded, even with project settings on."""
    probe = tmp_path / "probe_server.py"
    probe.write_text(MCP_PROBE)
    repo = task_copy("py-median") / "repo"
    (repo / "repo_probe.py").write_text(MCP_PROBE)
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"repo-probe": {"command": "python3", "args": ["repo_probe.py"]}}})
    )
    config = {
        "fake_model_url": fake_model.url, "fake_script": "noop", "tasks_dir": str(tmp_path / "tasks"),
        "setting_sources": ["project"], "env": env, "mcp_servers": {"probe": {"command": "python3", "args": [str(probe)]}},
    }  # fmt: skip
    response = trial(tmp_path, config)
    assert response["metadata"]["status"] == "ok", response
    bodies = [request["body"] for request in fake_model.requests]
    tools = {tool["name"] for body in bodies for tool in body["tools"]}
    assert ("mcp__probe__probe_marker" in tools) is listed_as_tool
    assert "mcp__probe__probe_marker" in json.dumps(bodies)
    assert "repo-probe" not in json.dumps(bodies)


def test_validate_names_the_auth_endpoint_and_checks_its_variable(tmp_path, monkeypatch, capsys, fake_model):
    shutil.copytree(ROOT / "providers", tmp_path / "providers")
    for name in ("PASSHAT_FAKE_MODEL_URL", "PASSHAT_REAL_CLAUDE", "ANTHROPIC_API_KEY", "CI_OAUTH"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("providers:\n  - id: file://providers/claude_code.py\n    label: cc\n"
                      "    config: {auth: {oauth_token_env: CI_OAUTH}}\n")  # fmt: skip
    assert main(["validate", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"passhat: error: {config}: provider 'cc': provider config field 'auth.oauth_token_env': 'CI_OAUTH': the "
        "variable is not set in passhat's environment; export it (`claude setup-token` prints one for a subscription)"
    )
    monkeypatch.setenv("CI_OAUTH", TOKEN)
    assert main(["validate", str(config), "--no-probe"]) == 0  # offline: api.anthropic.com is out of reach
    out = capsys.readouterr().out
    assert "model: the endpoint of `auth:`: OAuth token, from $CI_OAUTH, at https://api.anthropic.com" in out
    assert TOKEN not in out
    # the probe sends the API's free count_tokens the way the CLI would: the real token, the OAuth beta flag
    config.write_text("providers:\n  - id: file://providers/claude_code.py\n    label: cc\n"
                      f"    config: {{auth: {{oauth_token_env: CI_OAUTH, base_url: '{gateway(fake_model)}'}}}}\n")  # fmt: skip
    assert main(["validate", str(config)]) == 0
    assert "provider cc: endpoint probed: " in capsys.readouterr().out
    [probe] = [call for call in fake_model.calls if call["endpoint"] == "v1/messages/count_tokens"]
    assert (
        probe["headers"]["authorization"] == f"Bearer {TOKEN}"
        and "oauth-2025-04-20" in probe["headers"]["anthropic-beta"]
    )
