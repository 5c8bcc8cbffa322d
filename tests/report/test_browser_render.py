"""tests/browser/render_html.mjs: a local HTML file as headless Chromium shows it, and every request it tries.

The pages are hand-made here, small enough to read; passhat's own HTML report is checked with the same script.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time

import pytest
from browser_helpers import BrowserScriptError, run_browser_script

pytestmark = pytest.mark.e2e

SELF_CONTAINED = """<!doctype html>
<html><head><meta charset="utf-8"><title>passhat report</title>
<style>body { font-family: sans-serif }</style></head>
<body>
  <h1>Suite</h1>
  <p>pass^3 <span data-figure="pass_hat_3" data-value="0.167">0.17</span></p>
  <p data-figure="verdict">  flaky:
     bump-version </p>
  <ul><li data-figure="task">py-median</li><li data-figure="task">bump-version</li></ul>
  <svg width="20" height="10"><rect width="10" height="10"/></svg>
  <svg width="20" height="10"><circle r="4" cx="5" cy="5"/></svg>
  <img alt="dot" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
  <div id="chart"></div>
  <script>
    setTimeout(() => { document.getElementById("chart").innerHTML = '<p class="drawn">drawn</p>'; }, 300);
  </script>
</body></html>
"""

REACHES_OUT = """<!doctype html>
<html><head><title>leaky</title>
<link rel="stylesheet" href="https://cdn.example.com/style.css"></head>
<body>
  <img alt="missing" src="missing.png">
  <script>
    console.error("chart failed");
    fetch("http://127.0.0.1:9/beacon").catch(() => {});
  </script>
  <p id="done">done</p>
</body></html>
"""


def _page(tmp_path, html: str, name: str = "page.html"):
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    return path


def test_a_self_contained_page_is_read_as_shown(tmp_path):
    shot = tmp_path / "shot.png"
    seen = run_browser_script("render_html", _page(tmp_path, SELF_CONTAINED), "#chart .drawn", "--screenshot", shot)
    assert seen["title"] == "passhat report"
    assert seen["text"] == "Suite pass^3 0.17 flaky: bump-version py-median bump-version drawn"  # waited for #chart
    assert seen["svgCount"] == 2
    assert seen["dataset"] == {
        "pass_hat_3": "0.167",  # data-value wins over the text shown
        "verdict": "flaky: bump-version",  # whitespace collapsed
        "task": ["py-median", "bump-version"],  # one name, two elements: a list, in document order
    }
    assert seen["consoleErrors"] == []
    assert seen["failedRequests"] == []  # data: URLs are local
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_request_off_the_file_is_blocked_and_listed(tmp_path):
    page = _page(tmp_path, REACHES_OUT)
    seen = run_browser_script("render_html", page, "#done")
    by_url = {r["url"]: r["reason"] for r in seen["failedRequests"]}
    assert by_url == {
        "https://cdn.example.com/style.css": "blocked: not file:// or data:",
        "http://127.0.0.1:9/beacon": "blocked: not file:// or data:",  # loopback too: a report makes no request
        (tmp_path / "missing.png").as_uri(): "net::ERR_FILE_NOT_FOUND",
    }
    assert "chart failed" in seen["consoleErrors"]
    assert seen["dataset"] == {} and seen["svgCount"] == 0


def test_a_selector_that_never_appears_fails_with_a_screenshot(tmp_path, monkeypatch):
    monkeypatch.setenv("PASSHAT_BROWSER_TIMEOUT_MS", "1500")
    shot = tmp_path / "failed.png"
    with pytest.raises(BrowserScriptError, match=r"render_html\.mjs .* failed \(exit 1\): .*#never") as info:
        run_browser_script("render_html", _page(tmp_path, SELF_CONTAINED), "#never", "--screenshot", shot)
    assert info.value.result["screenshot"] == str(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def short_tmpdir(monkeypatch):
    """A TMPDIR of our own, short enough for Chromium's singleton socket; the script's profile goes there."""
    folder = tempfile.mkdtemp(prefix="passhat-t-", dir="/tmp")
    monkeypatch.setenv("TMPDIR", folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_script_past_its_deadline_is_stopped_with_its_browser(tmp_path, monkeypatch, short_tmpdir):
    monkeypatch.setenv("PASSHAT_BROWSER_TIMEOUT_MS", "600000")  # the page would wait 10 minutes; pytest waits 8 s
    with pytest.raises(BrowserScriptError, match=r"render_html\.mjs did not finish in 8 s"):
        run_browser_script("render_html", _page(tmp_path, SELF_CONTAINED), "#never", timeout=8)
    # Chromium runs in a process group of its own (Playwright starts it detached); it quits once the pipe from
    # the killed node closes.
    deadline = time.monotonic() + 15
    while left := subprocess.run(["pgrep", "-f", short_tmpdir], capture_output=True, text=True).stdout.split():
        assert time.monotonic() < deadline, f"Chromium processes left running: {left}"
        time.sleep(0.2)


def test_a_long_tmpdir_does_not_break_chromium(tmp_path, monkeypatch):
    deep = tmp_path / ("d" * 60)  # Chromium's singleton socket path would pass the 108-byte unix socket limit
    deep.mkdir()
    monkeypatch.setenv("TMPDIR", str(deep))
    assert run_browser_script("render_html", _page(tmp_path, SELF_CONTAINED))["title"] == "passhat report"


def test_a_missing_chromium_is_named_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("PASSHAT_CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(BrowserScriptError, match=r"Chromium not found at .*no-chromium: install the Debian package"):
        run_browser_script("render_html", _page(tmp_path, SELF_CONTAINED))


def test_an_unknown_script_lists_the_known_ones():
    with pytest.raises(
        BrowserScriptError, match=r"no browser script .*render_htm\.mjs; the scripts are: .*'render_html'"
    ):
        run_browser_script("render_htm")
