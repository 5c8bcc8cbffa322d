"""A trial's transcript and diff one click away in `promptfoo view`: afterEach adds http links to its metadata (the
viewer makes a URL value a link), and `passhat view`'s read-only server on 127.0.0.1 answers them with the file
as text — only a trial's own files under an `artifacts` folder. tests/e2e/test_e2e_viewer.py clicks them in
Chromium."""

from __future__ import annotations

import os
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from passhat.extension import after_each
from passhat.extension._links import DEFAULT_PORT, PORT_ENV, links, port, servable, serve


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _trial(root: Path) -> dict[str, object]:
    trial = root / ".passhat" / "artifacts" / "eval-x" / "t" / "r000-abc"
    trial.mkdir(parents=True)
    (trial / "transcript.jsonl").write_text('{"type": "assistant", "text": "I fixed median"}\n')
    (trial / "patch.diff").write_text("diff --git a/m.py b/m.py\n-    return s[n // 2]\n+    return (a + b) / 2\n")
    (trial / "tests-output.txt").write_text("passhat canary: kept on disk\n1 failed\n")
    return {"task_id": "t", "repeat_index": 0, "eval_id": "eval-x",
            "transcript_path": str(trial / "transcript.jsonl"), "patch_path": str(trial / "patch.diff")}  # fmt: skip


def test_after_each_adds_a_link_per_artifact_to_the_rows_metadata(tmp_path):
    meta = _trial(tmp_path)
    env = {"PROMPTFOO_CONFIG_DIR": str(tmp_path / "home"), PORT_ENV: "15999"}
    added = after_each({"result": {"response": {"metadata": meta}, "success": True}}, env)
    assert added is not None
    shown = added["result"]["metadata"]
    base = "http://127.0.0.1:15999/artifact"
    assert shown == {"open_transcript": f"{base}{meta['transcript_path']}", "open_diff": f"{base}{meta['patch_path']}",
                     "open_tests_output": f"{base}{Path(str(meta['transcript_path'])).parent}/tests-output.txt"}  # fmt: skip
    assert port({}) == DEFAULT_PORT
    with pytest.raises(ValueError, match=PORT_ENV):
        port({PORT_ENV: "http"})


def test_no_link_to_a_file_that_is_not_a_trials_artifact(tmp_path):
    meta = _trial(tmp_path)
    assert links({"transcript_path": "relative/transcript.jsonl"}, {}) == {}
    assert links({}, {}) == {}
    secret = tmp_path / ".passhat" / "artifacts" / "eval-x" / "t" / "r000-abc" / "secret.txt"
    secret.write_text("no")
    outside = tmp_path / "elsewhere" / "x" / "y" / "patch.diff"
    outside.parent.mkdir(parents=True)
    outside.write_text("no")
    link = Path(str(meta["patch_path"])).parent / "link" / "patch.diff"
    link.parent.mkdir()
    link.symlink_to(outside)
    for path in (secret, outside, link, Path(f"{meta['patch_path']}/../../../../../../etc/passwd")):
        assert servable(str(path)) is None, path
    assert servable(str(meta["patch_path"])) == Path(str(meta["patch_path"])).resolve()


def test_the_server_shows_an_artifact_as_text_and_nothing_else(tmp_path):
    meta = _trial(tmp_path)
    number = _free_port()
    server = serve(number)
    try:
        url = links(meta, {PORT_ENV: str(number)})["open_diff"]
        with urllib.request.urlopen(url, timeout=10) as answer:
            assert answer.headers["Content-Type"] == "text/plain; charset=utf-8"
            assert answer.read().decode() == Path(str(meta["patch_path"])).read_text()
        for path in ("/artifact/etc/passwd", f"/artifact{os.path.dirname(str(meta['patch_path']))}", "/"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"http://127.0.0.1:{number}{path}", timeout=10)
            assert refused.value.code == 404
            refused.value.close()
    finally:
        server.shutdown()
        server.server_close()


def test_passhat_view_says_when_its_port_is_taken(tmp_path, monkeypatch, capsys):
    from passhat.cli import main

    number = _free_port()
    taken = serve(number)
    try:
        monkeypatch.setenv(PORT_ENV, str(number))
        assert main(["view", "--links-only"]) == 2
    finally:
        taken.shutdown()
        taken.server_close()
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"passhat: error: 127.0.0.1:{number} is taken") and PORT_ENV in line, line
