"""What each of Promptfoo's fresh interpreters imports (issue #33): an assertion, an afterEach hook and the lazy
package exports they go through import only what they run, and the role markers bench/where_cpu_goes.py reads
are written only when asked for. Module sets, not times: the bench measures the CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import passhat.graders
from passhat.common import _cpu_roles
from passhat.extension import _viewer
from passhat.report._words import NOT_SAFE, SAFE, SAFE_AT, UNSURE, verdict_for


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def _under(modules: list[str], *packages: str) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)]


def test_the_after_each_hook_imports_no_report_results_or_graders():
    loaded = _loaded_after("from passhat.promptfoo import afterEach\nfrom passhat.extension import after_each")
    assert (
        _under(loaded, "passhat.report", "passhat.results", "passhat.judge", "passhat.graders", "passhat.trial") == []
    )
    assert "passhat.extension._viewer" in loaded and "passhat.extension._verdict" not in loaded
    assert _under(loaded, "http") == []  # the links' server is `passhat view`'s, not the hook's


def test_an_assertion_of_the_deterministic_graders_imports_no_judge_and_no_ray_side():
    kinds = ["tests", "files", "diff-scope", "health", "integrity"]
    loaded = _loaded_after(
        "from passhat.graders._live import grade_all_promptfoo\n"
        "from passhat.graders.kinds import kind_of\n"
        f"assert all(kind_of(k) for k in {kinds!r})"
    )
    assert _under(loaded, "passhat.judge", "passhat.graders._settings", "passhat.graders._suite") == []
    assert _under(loaded, "passhat.cluster._driver", "passhat.cluster._grading") == []
    # the grader's sandbox is bwrap without a model: no proxy, no spend readers, no HTTP client
    assert _under(loaded, "passhat.trial._proxy", "passhat.trial.spend", "passhat.common._endpoint", "http") == []
    # task.yaml is the provider's and check-task's to parse: the tests grader keeps the one answer it needs
    assert _under(loaded, "yaml") == []


def test_kind_of_finds_the_registrys_kinds_and_nothing_else():
    registry = passhat.graders.grader_kinds()
    from passhat.graders.kinds import kind_of

    for name, kind in registry.items():
        assert kind_of(name) is kind
    for name in ("diff_scope", "Tests", "nope", "_common", "kinds", "../tests", ""):
        assert kind_of(name) is None


def test_the_graders_package_exports_each_name_on_first_use():
    for name in passhat.graders.__all__:
        assert getattr(passhat.graders, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'grade_all'"):
        passhat.graders.grade_all  # noqa: B018


def test_the_viewer_counts_verdicts_as_the_report_decides_them():
    assert (_viewer.SAFE_AT, _viewer.VIEWER_PREFIX) == (SAFE_AT, __import__("passhat.results").results.VIEWER_PREFIX)
    names = {SAFE: "safe", NOT_SAFE: "not safe", UNSURE: "undecided"}
    for n in range(25):
        for c in range(n + 1):
            figures = _viewer.figures({"t": {f"r{i}": i < c for i in range(n)}})
            counted = [name for name, value in figures.items() if value and "tasks_" in name]
            expected = names[verdict_for(n, c, _viewer.VIEWER_K, SAFE_AT)["verdict"]].replace(" ", "_")
            assert counted == [f"{_viewer.VIEWER_PREFIX}tasks_{expected}"], (n, c)


def test_role_markers_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.delenv(_cpu_roles.VAR, raising=False)
    monkeypatch.setattr(_cpu_roles, "_marked", set())
    monkeypatch.chdir(tmp_path)
    _cpu_roles.mark("hook:afterEach")
    _cpu_roles.stage("import", 0.5)
    assert _cpu_roles._marked == set() and list(tmp_path.iterdir()) == []
    marks = tmp_path / "marks"
    marks.mkdir()
    code = "import os; from passhat.promptfoo import afterEach; afterEach({}); print(os.getpid())"
    env = {**os.environ, _cpu_roles.VAR: str(marks)}
    proc = subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True, text=True)
    lines = (marks / proc.stdout.split()[-1]).read_text().splitlines()
    assert lines[0] == "role hook:afterEach"
    assert [line.split()[:2] for line in lines[1:]] == [["stage", "start"], ["stage", "import"]]
    assert all(float(line.split()[2]) >= 0 for line in lines[1:])


def test_an_assertion_marks_each_graders_cpu(tmp_path, monkeypatch):
    monkeypatch.setenv(_cpu_roles.VAR, str(tmp_path))
    monkeypatch.setattr(_cpu_roles, "_marked", set())
    monkeypatch.setattr(_cpu_roles, "_adopt_orphans", lambda: None)  # not in pytest's own process
    from passhat.promptfoo import get_assert_graders

    config = {"graders": [{"type": "health"}, {"type": "files", "checks": []}]}
    result = get_assert_graders("", {"config": config, "providerResponse": {"metadata": {}}})
    assert result["pass"] is False  # no trial to grade: each grader fails saying so
    lines = next(tmp_path.iterdir()).read_text().splitlines()
    assert lines[0] == "role assertion"
    assert [line.split()[1] for line in lines[1:]] == ["start", "import", "grader:health", "grader:files"]


def test_the_reaper_leaves_a_fork_to_the_code_that_waits_for_it(tmp_path):
    """A child this process forked, waited for soon after it exits (here 0.1 s, under one reaper period), is the
    waiter's: the reaper takes only zombies still there a period later (before, about two of five waits failed)."""
    code = """
import os, time
from passhat.common import _cpu_roles
_cpu_roles.mark("assertion")
for _ in range(6):
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    time.sleep(0.1)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""
    env = {**os.environ, _cpu_roles.VAR: str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.split() == ["7"] * 6, out.stderr[-800:]


def test_a_marked_process_adopts_and_reaps_orphans_that_never_execd(tmp_path):
    """bubblewrap's inner half outlives its outer half: it must stay in the marked process's tree (subreaper) and
    not linger as a zombie (which would keep a trial's process group alive); exec'd children are left alone."""
    code = """
import os, subprocess, time
from passhat.common import _cpu_roles
def children():
    return sorted(int(p) for t in os.listdir("/proc/self/task") for p in open(f"/proc/self/task/{t}/children").read().split())
_cpu_roles.mark("assertion")
middle = os.fork()
if middle == 0:  # an outer half: forks an inner half, exits first
    if os.fork() == 0:
        time.sleep(1.0)
        os._exit(0)
    os._exit(0)
os.waitpid(middle, 0)
time.sleep(0.3)
adopted = children()
child = subprocess.Popen(["true"])
time.sleep(2.0)
print(len(adopted) == 1 and middle not in adopted, children() == [child.pid], child.wait())
"""
    env = {**os.environ, _cpu_roles.VAR: str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "0"]
