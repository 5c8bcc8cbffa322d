"""`passhat validate`: one tiny promptfooconfig.yaml per failure mode, each one clear line (exit 2) naming
the file, the key and the fix — never "ok: ready to run" when it checked nothing. Before, every failing
case below said "ok: ready to run" (and promptfoo then hung on the misspelt provider file)."""

from __future__ import annotations

import os
import shutil
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, TASKS

from passhat.cli import main
from passhat.fake_model import start_in_thread

SECRET = "0" * 64
FAKE = {"PASSHAT_FAKE_MODEL_URL": f"http://passhat:{SECRET}@127.0.0.1:9"}  # nothing listens on port 9
LIVE = {"PASSHAT_FAKE_MODEL_URL": f"http://passhat:{SECRET}@{{live}}"}  # {live}: a scripted model with SECRET
REAL = {"PASSHAT_REAL_CLAUDE": "1", "ANTHROPIC_API_KEY": "sk-ant-test"}
PASSHAT = "  - id: file://providers/claude_code.py\n    label: cc\n"


_LIVE: dict[str, str] = {}  # "at": 127.0.0.1:PORT of the module's scripted model


@pytest.fixture(scope="module", autouse=True)
def live() -> Iterator[None]:
    """A scripted model whose secret is SECRET, for the endpoint probe: `{live}` in a config or env is its address."""
    server = start_in_thread(TASKS, "oracle", secret=SECRET)
    _LIVE["at"] = server.origin.removeprefix("http://")
    yield
    server.stop()


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A folder with passhat's provider file; the environment without any model endpoint."""
    shutil.copytree(ROOT / "providers", tmp_path / "providers")
    for name in ("PASSHAT_FAKE_MODEL_URL", "PASSHAT_REAL_CLAUDE", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def run(project: Path, monkeypatch, capsys, config: str, env: dict[str, str], *argv: str) -> tuple[int, str, str]:
    where = _LIVE["at"]
    (project / "promptfooconfig.yaml").write_text(config.replace("{live}", where))
    for name, value in env.items():
        monkeypatch.setenv(name, value.replace("{live}", where))
    code = main(["validate", str(project / "promptfooconfig.yaml"), *argv])
    out, err = capsys.readouterr()
    return code, out, err


FAILS = [
    # (id, promptfooconfig.yaml, environment, fragments of the one error line)
    ("provider-file-typo", "providers:\n  - id: file://providers/claude-code.py\n", FAKE,
     ["'providers[0].id'", "'file://providers/claude-code.py'", "no such file", "promptfoo would hang",
      "did you mean file://providers/claude_code.py?"]),
    ("provider-file-typo-with-function", "providers: ['file://providers/claude-cod.py:call_api']\n", FAKE,
     ["'providers[0].id'", "did you mean file://providers/claude_code.py:call_api?"]),
    ("provider-folder-typo", "providers:\n  - id: file://provider/claude_code.py\n", FAKE,
     ["'providers[0].id'", "no such file", "give its path relative to", "file://providers/claude_code.py"]),
    ("confg-not-config", "providers:\n  - id: file://providers/claude_code.py\n    confg: {max_turns: 3}\n", FAKE,
     ["key 'providers[0].confg'", "promptfoo ignores it", "did you mean 'config'?"]),
    ("provider-not-providers", "provider:\n  - id: file://providers/claude_code.py\n", FAKE,
     ["key 'provider'", "promptfoo ignores it", "did you mean 'providers'?"]),
    ("no-passhat-provider", "providers: ['anthropic:messages:claude-sonnet-4-5']\n", FAKE,
     ["key 'providers'", "no passhat provider among anthropic:messages:claude-sonnet-4-5",
      "add - id: file://providers/claude_code.py"]),
    ("no-endpoint-no-key", f"providers:\n{PASSHAT}", {},
     ["provider 'cc'", "no model to run against", "neither PASSHAT_FAKE_MODEL_URL nor PASSHAT_REAL_CLAUDE=1",
      "set PASSHAT_FAKE_MODEL_URL (or `fake_model_url:` in its config)", "export PASSHAT_REAL_CLAUDE=1"]),
    ("opt-in-without-key", f"providers:\n{PASSHAT}", {"PASSHAT_REAL_CLAUDE": "1"},
     ["provider 'cc'", "PASSHAT_REAL_CLAUDE=1 but ANTHROPIC_API_KEY is not set"]),
    ("key-without-opt-in", f"providers:\n{PASSHAT}", {"ANTHROPIC_API_KEY": "sk-ant-test"},
     ["provider 'cc'", "ANTHROPIC_API_KEY is set but PASSHAT_REAL_CLAUDE is not 1"]),
    ("fake-model-url-without-secret", f"providers:\n{PASSHAT}", {"PASSHAT_FAKE_MODEL_URL": "http://127.0.0.1:9"},
     ["provider 'cc'", "'fake_model_url' (or $PASSHAT_FAKE_MODEL_URL)", "carries no secret", "--url-file"]),
    ("state-dir-under-a-file", f"providers:\n{PASSHAT}    config: {{state_dir: blocker/state}}\n", FAKE,
     ["provider 'cc'", "key 'state_dir'", "blocker is a file, not a folder", "point `state_dir:`"]),
    # the endpoint's one probe (issue 23: a closed port and a restarted scripted model both said "ready to run")
    ("endpoint-down", f"providers:\n{PASSHAT}", FAKE,
     ["provider 'cc'", "the model endpoint: http://127.0.0.1:9 is unreachable (ConnectionRefusedError",
      "start it (`passhat fake-model --url-file FILE`"]),
    ("scripted-model-with-another-secret", f"providers:\n{PASSHAT}",
     {"PASSHAT_FAKE_MODEL_URL": f"http://passhat:{'1' * 64}@{{live}}"},
     ["provider 'cc'", "refused the credential (HTTP 403: the token was not made for", "`--secret-file`"]),
    ("real-claude-credential-refused", f"providers:\n{PASSHAT}", {**REAL, "ANTHROPIC_BASE_URL": "http://{live}"},
     ["provider 'cc'", "refused the credential (HTTP 403", "renew the credential in $ANTHROPIC_API_KEY"]),
    # `timeout: 300` meant as passhat's deadline: promptfoo's per-call limit, 0.3 s, passed silently before
    ("promptfoo-timeout-for-timeout-s", f"providers:\n{PASSHAT}    config: {{timeout: 300}}\n", FAKE,
     ["provider 'cc'", "'timeout': 300: promptfoo's per-call limit in milliseconds, which cannot stop a trial",
      "rename it to timeout_s, or give at least 630000"]),
    # a deadline promptfoo's own per-call limit (300 s by default) would cut: an error row while the trial ran on
    ("timeout-s-past-promptfoos-limit", f"providers:\n{PASSHAT}    config: {{timeout_s: 600}}\n", FAKE,
     ["provider 'cc'", "'timeout_s': 600", "add `timeout: 630000`"]),
    ("unknown-provider-key", f"providers:\n{PASSHAT}    config: {{max_turn: 3}}\n", FAKE,
     ["provider 'cc'", "'max_turn': 3: unknown field", "max_turns"]),
    ("extension-file-typo", f"providers:\n{PASSHAT}extensions: ['file://providers/claude-code.py:afterAll']\n", FAKE,
     ["key 'extensions[0]'", "no such file", "promptfoo would fail after the last trial"]),
    ("report-setting-without-format", f"providers:\n{PASSHAT}metadata: {{passhat: {{report: report.pdf}}}}\n", FAKE,
     ["metadata.passhat.report: report.pdf has no report format", ".html, .md, .json, .csv or .txt"]),
]  # fmt: skip


@pytest.mark.parametrize(("config", "env", "fragments"), [pytest.param(*c[1:], id=c[0]) for c in FAILS])
def test_each_failure_mode_is_one_line_naming_file_key_and_fix(project, monkeypatch, capsys, config, env, fragments):
    (project / "blocker").write_text("a file where a folder should be\n")
    code, out, err = run(project, monkeypatch, capsys, config, env)
    assert code == 2, out + err
    assert "ok: ready to run" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"passhat: error: {project / 'promptfooconfig.yaml'}: "), err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert SECRET not in err and "1" * 64 not in err  # no secret in the message


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_state_dir_fails(project, monkeypatch, capsys):
    (project / "ro").mkdir(mode=0o555)
    code, _, err = run(project, monkeypatch, capsys, f"providers:\n{PASSHAT}    config: {{state_dir: ro/s}}\n", FAKE)
    assert code == 2 and "key 'state_dir'" in err and "Permission denied" in err, err


PASSES = [
    # (id, promptfooconfig.yaml, environment, fragments of stdout)
    ("scripted-model", f"providers:\n{PASSHAT}", LIVE,
     ["provider cc: config ok", "provider cc: model: the scripted model at http://passhat:***@{live}",
      "provider cc: state dir {project}/.passhat writable",
      "provider cc: endpoint probed: http://{live} answers; the credential is accepted"]),
    ("fake-model-url-in-config",
     f"providers:\n{PASSHAT}    config: {{fake_model_url: 'http://passhat:{SECRET}@{{live}}'}}\n", {},
     ["model: the scripted model at http://passhat:***@{live}"]),
    ("function-suffix", "providers: ['file://providers/claude_code.py:call_api']\n", LIVE,
     ["provider file://providers/claude_code.py:call_api: config ok"]),
    ("map-form", "providers:\n  - file://providers/claude_code.py: {label: m, config: {max_turns: 3}}\n", LIVE,
     ["provider m: config ok"]),
    ("state-dir-not-there-yet", f"providers:\n{PASSHAT}    config: {{state_dir: new/deeper/state}}\n", LIVE,
     ["state dir {project}/new/deeper/state writable"]),
    ("other-providers-beside", f"providers:\n{PASSHAT}  - anthropic:claude-agent-sdk\n", LIVE, ["provider cc"]),
]  # fmt: skip


@pytest.mark.parametrize(("config", "env", "fragments"), [pytest.param(*c[1:], id=c[0]) for c in PASSES])
def test_a_checked_config_is_ready(project, monkeypatch, capsys, config, env, fragments):
    code, out, err = run(project, monkeypatch, capsys, config, env)
    assert code == 0, out + err
    assert out.rstrip().endswith("ok: ready to run")
    for fragment in fragments:
        assert fragment.format(project=project, live=_LIVE["at"]) in out, out
    assert SECRET not in out  # the harness's secret is never printed
    assert not (project / "new").exists()  # the writability probe leaves nothing behind


def test_k_takes_the_same_list_as_report(project, monkeypatch, capsys):
    """`--k 1,3,5,10` is what `passhat report` takes; validate reads its largest k (before: invalid int)."""
    code, _, err = run(project, monkeypatch, capsys, f"providers:\n{PASSHAT}", FAKE, "--repeat", "5", "--k", "1,3,10")
    assert code == 2 and "--repeat 5 is less than the largest k (10)" in err, err


@pytest.mark.parametrize(
    ("config", "warned"),
    [
        pytest.param("{api_timeout_s: 5, timeout_s: 20}", True, id="default-retries-past-deadline"),
        pytest.param("{api_timeout_s: 5, max_retries: 1, timeout_s: 20}", False, id="two-tries-fit"),
        pytest.param("{timeout_s: 20}", False, id="no-api-timeout-set"),
    ],
)
def test_a_deadline_shorter_than_the_clis_retries_is_warned(project, monkeypatch, capsys, config, warned):
    # default retries 10: 5 s × 11 tries + backoff 0.5+1+2+4+8+16+32×4 = 159.5 → 214.5 s (shown 214) > 20 s
    code, out, _ = run(project, monkeypatch, capsys, f"providers:\n{PASSHAT}    config: {config}\n", LIVE)
    assert code == 0
    assert ("warning: provider cc: timeout_s 20 is below what the CLI's retries can take" in out) is warned
    if warned:
        assert "= 214 s); raise timeout_s to 214" in out


def test_real_claude_without_the_probe(project, monkeypatch, capsys):
    """`--no-probe` (e.g. an endpoint only the trial machines reach): checked as before, and said."""
    code, out, err = run(project, monkeypatch, capsys, f"providers:\n{PASSHAT}", REAL, "--no-probe")
    assert code == 0, out + err
    assert "model: real Claude (PASSHAT_REAL_CLAUDE=1" in out and "provider cc: endpoint not probed (--no-probe)" in out


def test_the_python_promptfoo_runs_must_import_passhat(project, monkeypatch, capsys, tmp_path):
    """It said "ok: ready to run" with the venv not active: promptfoo then ran a python3 without passhat, and every
    trial failed with a ModuleNotFoundError after it had started."""
    venv.create(tmp_path / "bare", with_pip=False)  # a real Python, without passhat
    bare = tmp_path / "bare" / "bin" / "python"
    monkeypatch.setenv("PROMPTFOO_PYTHON", str(bare))
    code, out, err = run(project, monkeypatch, capsys, f"providers:\n{PASSHAT}", FAKE)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1, err
    assert f"promptfoo will run {bare} (PROMPTFOO_PYTHON), which cannot import passhat (ModuleNotFoundError" in err
    assert f"export PROMPTFOO_PYTHON={sys.executable}" in err
    monkeypatch.setenv("PROMPTFOO_PYTHON", sys.executable)
    code, out, _ = run(project, monkeypatch, capsys, f"providers:\n{PASSHAT}", FAKE, "--no-probe")
    assert code == 0 and f"promptfoo's Python: {sys.executable} (PROMPTFOO_PYTHON) imports passhat" in out


def test_every_problem_is_listed_in_one_run(project, monkeypatch, capsys):
    """Three typos (a top-level key, a provider's config field, a field of one task.yaml) and a task.yaml that is
    not YAML: one run names all four, each on its own line with its file and fix; the good task still loads."""
    tasks = project / "tasks"
    for task in ("py-rename-var", "py-median", "bump-version"):
        shutil.copytree(TASKS / task, tasks / task)
    (tasks / "promptfoo_tests.py").write_text("")
    spec = tasks / "py-median" / "task.yaml"
    spec.write_text(spec.read_text().replace("tier:", "teir:", 1))
    (tasks / "bump-version" / "task.yaml").write_text("id: [unclosed\n")
    config = (f"providers:\n{PASSHAT}    config: {{max_turn: 3}}\n"
              "tests: file://tasks/promptfoo_tests.py:generate_tests\ndescrption: typo\n")  # fmt: skip
    code, out, err = run(project, monkeypatch, capsys, config, FAKE)
    assert code == 2 and "ok: ready to run" not in out, out + err
    lines = err.strip().splitlines()
    assert lines[0] == "passhat: error: 4 problems:", err
    found = lines[1:]
    assert len(found) == 4, err
    assert "key 'descrption': promptfoo ignores it; did you mean 'description'?" in found[0]
    assert "provider 'cc'" in found[1] and "'max_turn': 3" in found[1] and "max_turns" in found[1]
    assert str(tasks / "bump-version" / "task.yaml") in found[2]
    assert str(spec) in found[3] and "field 'tier'" in found[3]
