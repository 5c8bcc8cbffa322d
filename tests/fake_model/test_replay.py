"""`passhat fake-model --replay DIR`: the recordings of tests/data/api_recordings are shaped as the API documents
them (checked here by a reader of this test's own, not passhat's), their manifest agrees with their bodies, and
the server sends each as the API would: status, headers, body compressed per accept-encoding, cut per chunking.
A bad folder or manifest is one error naming the file, the field, the value and the fix (exit 2)."""

from __future__ import annotations

import json
import re
import shutil
import socket
from pathlib import Path

import pytest
from conftest import ROOT, TASKS

from passhat.cli import main
from passhat.fake_model import Replay, load_recordings, start_in_thread
from passhat.fake_model._wire import ENCODINGS, SPLITS, choose_encoding, decode

RECORDINGS = ROOT / "tests" / "data" / "api_recordings"
ALL = load_recordings(RECORDINGS)
STREAMS = [r for r in ALL.values() if r.streams]
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def events(body: bytes) -> list[tuple[str, dict]]:
    """(event name, data) of a Messages event stream: blocks split on a blank line, one `event:` and one `data:`."""
    out = []
    for block in body.decode("utf-8").split("\n\n"):
        if not block.strip():
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        out.append((fields["event"], json.loads(fields["data"])))
    return out


def flat(usage: dict) -> dict[str, int]:
    """A usage object with its nested counts (cache_creation, server_tool_use) by their own names."""
    out = {k: v for k, v in usage.items() if isinstance(v, int)}
    for group in ("cache_creation", "server_tool_use"):
        out |= usage.get(group) or {}
    return out


def billed(recording_body: bytes, streams: bool) -> dict[str, int]:
    """What the API bills: message_start's usage, each field overridden by message_delta's (cumulative); a JSON
    message's top-level usage; an error reply nothing."""
    if not streams:
        reply = json.loads(recording_body)
        return flat(reply["usage"]) if reply["type"] == "message" else {}
    usage: dict[str, int] = {}
    for name, data in events(recording_body):
        if name == "message_start":
            usage = flat(data["message"]["usage"])
        elif name == "message_delta":
            usage |= flat(data["usage"])
    return usage


# --- the recordings, as documented ----------------------------------------------------------------------


@pytest.mark.parametrize("recording", STREAMS, ids=lambda r: r.name)
def test_every_stream_is_shaped_as_the_streaming_reference_says(recording):
    seen = events(recording.body)
    assert all(data["type"] == name for name, data in seen)  # the SSE event name is the data's type
    assert seen[0][0] == "message_start" and seen[0][1]["message"]["content"] == []
    open_blocks: set[int] = set()
    for name, data in seen:
        if name == "content_block_start":
            open_blocks.add(data["index"])
        elif name in ("content_block_delta", "content_block_stop"):
            assert data["index"] in open_blocks
            if name == "content_block_stop":
                open_blocks.discard(data["index"])
    last = seen[-1][0]
    if recording.name == "overloaded_midstream":
        assert last == "error" and seen[-1][1]["error"]["type"] == "overloaded_error"
        assert "message_delta" not in [n for n, _ in seen]
    else:
        assert [n for n, _ in seen[-2:]] == ["message_delta", "message_stop"] and not open_blocks


@pytest.mark.parametrize("recording", ALL.values(), ids=lambda r: r.name)
def test_the_manifest_agrees_with_each_body(recording):
    usage = billed(recording.body, recording.streams)
    assert {k: v for k, v in usage.items() if v} == {k: v for k, v in recording.usage.items() if v}
    assert recording.tokens == sum(usage.get(field, 0) for field in TOKEN_FIELDS)
    if recording.status != 200:
        error = json.loads(recording.body)
        assert error["type"] == "error" and set(error["error"]) == {"type", "message"} and error["request_id"]
        assert recording.outcome == str(recording.status) and recording.usd == 0


def test_the_traps_are_there():
    """What each recording is for: the shapes that broke a byte-matching reader."""
    tool = events(ALL["tool_use"].body)
    pieces = [d["delta"]["partial_json"] for n, d in tool if n == "content_block_delta" and d["index"] == 1]
    assert pieces[0] == "" and "input_tok" in pieces[2] and pieces[3].startswith("ens")  # cut inside the key
    assert json.loads("".join(pieces))["input_tokens"] > ALL["tool_use"].tokens  # a key, not usage
    thinking = [(n, d.get("delta", {}).get("type")) for n, d in events(ALL["thinking"].body)]
    assert thinking[thinking.index(("content_block_stop", None)) - 1] == ("content_block_delta", "signature_delta")
    redacted = events(ALL["redacted_thinking"].body)[1][1]["content_block"]
    assert redacted["type"] == "redacted_thinking" and redacted["data"]
    search = events(ALL["web_search"].body)
    kinds = [d["content_block"]["type"] for n, d in search if n == "content_block_start"]
    assert kinds == ["text", "server_tool_use", "web_search_tool_result", "text"]
    assert search[0][1]["message"]["usage"]["input_tokens"] < ALL["web_search"].usage["input_tokens"]  # overridden
    start = events(ALL["cache_in_delta"].body)[0][1]["message"]["usage"]
    assert "cache_read_input_tokens" not in start and ALL["cache_in_delta"].usage["cache_read_input_tokens"] > 0
    assert sum(1 for n, _ in events(ALL["text"].body) if n == "ping") >= 2
    assert max(ALL["text"].body) >= 0xF0  # a 4-byte UTF-8 character to cut inside
    body = ALL["tool_use_message"].body
    assert body.index(b'"input_tokens":123456') < body.index(b'"usage"')  # the trap comes first
    assert dict(ALL["rate_limit_429"].headers)["retry-after"].isdigit()


# --- the server ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def replay():
    server = start_in_thread(TASKS)
    server.front = front = Replay(ALL)
    yield server, front
    server.stop()


def raw_post(port: int, path: str, accept: str | None) -> tuple[int, dict[str, str], list[bytes]]:
    """POST over a raw socket: status, headers, and the body as its HTTP chunks (one piece if not chunked)."""
    request = f"POST {path} HTTP/1.1\r\nHost: x\r\ncontent-length: 2\r\n"
    request += f"accept-encoding: {accept}\r\n" if accept is not None else ""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(request.encode() + b"\r\n{}")
        data = b""
        while chunk := client.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    if headers.get("transfer-encoding") != "chunked":
        return int(lines[0].split()[1]), headers, [rest]
    pieces = []
    while True:
        size, _, rest = rest.partition(b"\r\n")
        if int(size, 16) == 0:
            break
        pieces.append(rest[: int(size, 16)])
        rest = rest[int(size, 16) + 2 :]
    return int(lines[0].split()[1]), headers, pieces


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("chunking", SPLITS)
def test_each_recording_is_sent_compressed_as_accepted_and_cut_as_asked(replay, encoding, chunking):
    server, front = replay
    accept = None if encoding == "identity" else f"{encoding}, identity;q=0.5"
    for recording in ALL.values():
        status, headers, pieces = raw_post(
            server.server_address[1], f"/{recording.name}/{chunking}/v1/messages", accept
        )
        wire = b"".join(pieces)
        assert status == recording.status and decode(wire, encoding) == recording.body, recording.name
        assert headers.get("content-encoding", "identity") == encoding == choose_encoding(accept)
        assert all(headers[k] == v for k, v in recording.headers), recording.name
        assert front.sent[-1] == (recording.name, chunking, encoding, wire)
        if recording.streams and chunking == "byte" and encoding == "identity":
            assert len(pieces) == len(recording.body)  # one HTTP chunk per byte
        if not recording.streams:
            assert int(headers["content-length"]) == len(wire)


def test_a_recording_is_picked_by_the_path_or_by_the_query(replay):
    server, front = replay
    port = server.server_address[1]
    assert raw_post(port, "/rate_limit_429/v1/messages?beta=true", None)[0] == 429
    assert raw_post(port, "/v1/messages?beta=true&recording=overloaded_529&chunking=data", None)[0] == 529
    assert front.sent[-1][:3] == ("overloaded_529", "data", "identity")
    status, _, pieces = raw_post(port, "/text/v1/messages/count_tokens", None)
    assert status == 200 and json.loads(pieces[0]) == {"input_tokens": ALL["text"].usage["input_tokens"]}
    for path in ("/nothing/v1/messages", "/text/sideways/v1/messages", "/v1/messages"):
        status, _, pieces = raw_post(port, path, None)
        message = json.loads(pieces[0])["error"]["message"]
        assert status == 404 and "api_error_500" in message and "byte" in message, path


# --- bad input: one error, through the CLI -------------------------------------------------------------


def _broken(tmp_path: Path, edit) -> Path:
    folder = tmp_path / "recordings"
    shutil.copytree(RECORDINGS, folder)
    manifest = folder / "manifest.json"
    doc = json.loads(manifest.read_text())
    edit(doc, folder)
    manifest.write_text(json.dumps(doc))
    return folder


def _set(field: str, value: object):
    def edit(doc: dict, folder: Path) -> None:
        doc["recordings"][1][field] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(_set("status", "529"), r"recordings\[1\] \('tool_use'\)\.status: '529': expected an HTTP status", id="status"),
        pytest.param(_set("body", "gone.sse"), r"\.body: 'gone.sse': expected the name of a file in .*recordings", id="body"),
        pytest.param(_set("name", "../up"), r"\.name: '\.\./up': expected a path segment", id="name"),
        pytest.param(_set("name", "text"), r"recordings\[1\]\.name: 'text': expected a name no other", id="duplicate"),
        pytest.param(_set("usage", {"input_tokens": -1}), r"\.usage: .*expected an object of usage fields", id="usage"),
        pytest.param(_set("usd", "cheap"), r"\.usd: 'cheap': expected dollars", id="usd"),
        pytest.param(_set("headers", {"content-length": "9"}), r"\.headers: \['content-length'\]: expected no framing", id="framing"),
        pytest.param(lambda d, f: d["recordings"][0].pop("outcome"), r"recordings\[0\]: .*add outcome", id="missing-field"),
        pytest.param(lambda d, f: d.pop("recordings"), r"manifest.json: recordings: None: expected a non-empty list", id="no-list"),
    ],
)  # fmt: skip
def test_a_bad_manifest_is_one_error_naming_file_field_value_and_fix(tmp_path, capsys, edit, expected):
    folder = _broken(tmp_path, edit)
    assert main(["fake-model", "--replay", str(folder), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("passhat: error: ") and str(folder / "manifest.json") in err
    assert re.search(expected, err), err


def test_a_bad_folder_is_one_error(tmp_path, capsys):
    assert main(["fake-model", "--replay", str(tmp_path / "none"), "--port", "0"]) == 2
    assert "--replay: '" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["fake-model", "--replay", str(tmp_path / "empty"), "--port", "0"]) == 2
    assert "holding manifest.json; none is there" in capsys.readouterr().err
    (tmp_path / "empty" / "manifest.json").write_text("{not json")
    assert main(["fake-model", "--replay", str(tmp_path / "empty"), "--port", "0"]) == 2
    assert "manifest.json: not JSON (" in capsys.readouterr().err


def test_replay_and_open_are_one_or_the_other(capsys):
    assert main(["fake-model", "--replay", str(RECORDINGS), "--open", "--port", "0"]) == 2
    assert "--replay and --open: " in capsys.readouterr().err
