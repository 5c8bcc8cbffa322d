"""A team adopts passhat in its own repository, with nothing copied from this one: build passhat's wheel from
this checkout, install it into a fresh venv, `passhat init` in a git repository with a real history,
`passhat task from-commit` on the commit that fixed a bug, `promptfoo eval --repeat 3` against the scripted
model (oracle), `passhat report`: 3/3.

No network: the wheel is built with this venv's setuptools (--no-build-isolation) and installed --no-deps; its
dependencies come from this repo's .venv through a .pth file, which Python reads AFTER the new venv's own
site-packages — so `passhat` is the installed wheel's (checked), the dependencies this venv's. The editable
install's own .pth in .venv (pointing at src/) is not read: a path added by a .pth is not scanned for more."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

pytestmark = pytest.mark.e2e
REPEAT = 3

# The team's package, commit by commit: (message, files written). Commit 3 brings a bug in, commit 4 fixes it
# and adds the regression test.
_STATS = '''"""Small statistics helpers."""


def mean(xs):
    return sum(xs) / len(xs)
{variance}

def median(xs):
    s = sorted(xs)
    mid = len(s) // 2
    if len(s) % 2:
        return s[mid]
    return {even}
'''
_VARIANCE = """

def variance(xs):
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / len(xs)
"""
_TESTS = """from tinystats import mean, median{imports}


def test_mean():
    assert mean([1, 2, 3]) == 2


def test_median_odd():
    assert median([3, 1, 2]) == 2
{more}"""
_VARIANCE_TEST = """

def test_variance():
    assert variance([1, 2, 3, 4]) == 1.25
"""
_EVEN_TEST = """

def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5
"""
HISTORY = [
    ("tinystats: mean and median", {
        "pyproject.toml": '[project]\nname = "tinystats"\nversion = "0.1.0"\n',
        "tinystats/__init__.py": _STATS.format(variance="", even="(s[mid - 1] + s[mid]) / 2"),
        "tests/test_stats.py": _TESTS.format(imports="", more=""),
    }),
    ("Add variance", {
        "tinystats/__init__.py": _STATS.format(variance=_VARIANCE, even="(s[mid - 1] + s[mid]) / 2"),
        "tests/test_stats.py": _TESTS.format(imports=", variance", more=_VARIANCE_TEST),
    }),
    ("median: one return for both cases", {  # the bug: the even case returns the upper middle value
        "tinystats/__init__.py": _STATS.format(variance=_VARIANCE, even="s[mid]"),
    }),
    ("Fix median of an even number of values\n\nmedian([1, 2, 3, 4]) returned 3; it is 2.5.", {
        "tinystats/__init__.py": _STATS.format(variance=_VARIANCE, even="(s[mid - 1] + s[mid]) / 2"),
        "tests/test_stats.py": _TESTS.format(imports=", variance", more=_VARIANCE_TEST + _EVEN_TEST),
    }),
]  # fmt: skip


def _run(argv: list, cwd: Path, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel built from this checkout, a fresh venv with it installed)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"  # a copy, so the build leaves no build/ or *.egg-info in the checkout
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "rubrics", source / "rubrics")
    shutil.copytree(
        ROOT / "src", source / "src", symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    built = _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", work / "dist", source], work)
    assert built.returncode == 0, built.stdout + built.stderr
    [wheel] = (work / "dist").glob("passhat-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    installed = _run([*pip, "--python", venv / "bin" / "python", "install", "--no-deps", "--no-index", wheel], work)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    [site] = (venv / "lib").glob("python3*/site-packages")
    (site / "zz_passhat_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return wheel, venv


def test_the_wheel_carries_what_a_user_needs(wheel_venv, tmp_path):
    wheel, venv = wheel_venv
    names = zipfile.ZipFile(wheel).namelist()
    for data in ("schemas/task.schema.json", "schemas/rubric.schema.json", "promptfoo.py", "cli/init.py",
                 "rubrics/agent-output.yaml", "rubrics/code-change.yaml", "rubrics/code-readability.yaml"):  # fmt: skip
        assert f"passhat/{data}" in names, data
    probe = (
        "import json, passhat, passhat.promptfoo as p\n"
        "from pathlib import Path\n"
        "from passhat.judge import find_rubric\n"
        "from passhat.tasks._load import load_task\n"
        "print(json.dumps({'passhat': passhat.__file__, 'entries': [n for n in p.__all__ if callable(getattr(p, n))],\n"
        "  'rubric': find_rubric('agent-output', [Path.cwd()]).path}))\n"
    )  # a bare rubric name with no rubrics/ around: the one the wheel ships
    done = _run([venv / "bin" / "python", "-c", probe], tmp_path)  # from outside the checkout
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    package = venv.joinpath("lib").resolve()
    assert Path(found["passhat"]).resolve().is_relative_to(package), found["passhat"]
    assert not Path(found["passhat"]).resolve().is_relative_to(ROOT)
    assert Path(found["rubric"]).resolve().is_relative_to(package), found["rubric"]
    assert {"call_api", "tests_generator", "get_assert_graders", "get_assert_grader"} <= set(found["entries"])
    version = _run([venv / "bin" / "passhat", "--version"], tmp_path)
    assert version.stdout.strip() == "passhat 0.1.0", version.stderr


def _team_repository(folder: Path) -> Path:
    folder.mkdir()
    git = ["git", "-C", str(folder), "-c", "user.name=Team", "-c", "user.email=team@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    for message, files in HISTORY:
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", message], check=True)
    return folder


def _wait_for(file: Path, server: subprocess.Popen, log: Path) -> str:
    for _ in range(300):
        if file.is_file() and file.read_text().strip():
            return file.read_text().strip()
        if server.poll() is not None:
            pytest.fail(f"passhat fake-model exited: {log.read_text()}")
        time.sleep(0.05)
    pytest.fail(f"passhat fake-model wrote no {file} in 15 s: {log.read_text()}")


def test_a_team_adopts_passhat_in_its_own_repository(wheel_venv, tmp_path):
    _, venv = wheel_venv
    repo = _team_repository(tmp_path / "tinystats")
    dev_bin = str(Path(sys.executable).parent)  # this checkout's .venv/bin: not on the team's PATH
    path = [str(venv / "bin"), str(ROOT / "node_modules" / ".bin")]
    path += [p for p in os.environ["PATH"].split(os.pathsep) if p not in (dev_bin, *path)]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PASSHAT_", "PROMPTFOO_"))},
        "PATH": os.pathsep.join(path),  # as after `. venv/bin/activate`: promptfoo finds this python3 first
        "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo-home"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
    }
    passhat = venv / "bin" / "passhat"
    assert shutil.which("passhat", path=env["PATH"]) == str(passhat)

    init = _run([passhat, "init"], repo, env)
    assert init.returncode == 0, init.stderr
    assert "npx promptfoo eval --repeat 10 -o results.json && passhat report results.json" in init.stdout
    assert "PROMPTFOO_PYTHON" not in init.stdout  # the python3 promptfoo finds is the one passhat is in
    pins = json.loads((repo / "package.json").read_text())["dependencies"]
    ours = json.loads((ROOT / "package.json").read_text())["dependencies"]
    assert pins == {"node": ours["node"], "promptfoo": ours["promptfoo"]}  # so `npm install` there = our node_modules

    made = _run([passhat, "task", "from-commit", ".", "HEAD", "--id", "fix-median"], repo, env, timeout=600)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    [tests] = [g for g in yaml.safe_load((repo / "tasks/fix-median/task.yaml").read_text())["graders"]
               if g["type"] == "tests"]  # fmt: skip
    assert tests["fail_to_pass"] == ["tests.test_stats::test_median_even"]
    assert sorted(tests["pass_to_pass"]) == [
        f"tests.test_stats::test_{name}" for name in ("mean", "median_odd", "variance")
    ]

    log = tmp_path / "fake-model.log"
    with open(log, "w") as out:  # the rehearsal init printed: the scripted model, here replaying the fix (oracle)
        server = subprocess.Popen([passhat, "fake-model", "--url-file", ".passhat/model.url"], cwd=repo, env=env,
                                  stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        env["PASSHAT_FAKE_MODEL_URL"] = _wait_for(repo / ".passhat" / "model.url", server, log)
        promptfoo = ROOT / "node_modules" / ".bin" / "promptfoo"  # what `npm install` puts in the team's repo
        evaluated = _run([promptfoo, "eval", "--repeat", REPEAT, "--no-cache", "--no-progress-bar", "-o",
                          "results.json"], repo, env, timeout=900)  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert evaluated.returncode == 0, evaluated.stdout[-3000:] + evaluated.stderr[-3000:]
    rows = json.loads((repo / "results.json").read_text())["results"]["results"]
    components = [c for row in rows for c in row["gradingResult"]["componentResults"]]
    graded_by = {c["assertion"]["value"] for c in components if "value" in c["assertion"]}
    assert graded_by == {f"file://{repo / 'passhat_promptfoo.py'}:get_assert_graders"}  # the entry file init wrote
    assert {"tests", "health"} <= {c["assertion"].get("metric") for c in components}  # one component per grader

    report = _run([passhat, "report", "results.json", "--format", "json", "--k", "1,3"], repo, env)
    assert report.returncode == 0, report.stderr
    [task] = json.loads(report.stdout)["tasks"]
    assert (task["task"], task["n"], task["passes"], task["errors"]) == ("fix-median", REPEAT, REPEAT, 0)
