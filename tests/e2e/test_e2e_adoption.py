"""A team adopts passhat in its own repository, with nothing copied from this one, by following the README.

`test_the_readme_adoption_section_ends_with_the_verdict` runs the README's adoption block — the lines read from
README.md, not copied here — as a bash script in a git repository with a real history: `pip install` of passhat's
wheel built from this checkout (and pytest), `passhat init`, `passhat task from-commit` on the commit that fixed a
bug, the scripted model, `npx promptfoo eval --repeat 10`. It ends with the verdict that `promptfoo eval` itself
printed (passhat's afterAll hook), no `passhat report` run. The only changes to the lines: the wheel for
`/path/to/passhat`, the repository for `your-repo`, HEAD for `COMMIT`; this checkout's node_modules linked for
`npm install` (the same pins: checked); "in another terminal" run in the background until its URL file is there.

`test_what_init_prints_and_the_ci_recipe_run_on_when_a_trial_fails` then makes every trial fail (the provider
asks the scripted model for `noop`) and runs the commands `passhat init` printed, and the README's CI recipe step by
step as GitHub Actions would (`bash -e`, each step's env): the report and the gates run after the failing eval.

No network: the wheel is built with this venv's setuptools (--no-build-isolation) and pip runs with
PIP_NO_INDEX; the dependencies come from this repo's .venv through a .pth file, which Python reads AFTER the new
venv's own site-packages, pointing at a folder of links to every distribution there but passhat itself — so
`pip install` finds them installed and installs passhat from the wheel (checked). A path added by a .pth is not
scanned for more .pth files, so the editable install's own never applies."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

pytestmark = pytest.mark.e2e
ANSI = re.compile(r"\x1b\[[0-9;]*m")

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
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)  # with pip (ensurepip: offline)
    ours = Path(sysconfig.get_paths()["purelib"])
    farm = work / "dependencies"  # every distribution of this venv but passhat, which the wheel brings
    farm.mkdir()
    for entry in ours.iterdir():
        if not entry.name.lower().startswith(("passhat", "__editable__", "_passhat")) and entry.suffix != ".pth":
            (farm / entry.name).symlink_to(entry)
    [site] = (venv / "lib").glob("python3*/site-packages")
    (site / "zz_passhat_dependencies.pth").write_text(f"{farm}\n")
    return wheel, venv


def test_the_wheel_carries_what_a_user_needs(adopted, wheel_venv, tmp_path):
    """What the README's `pip install` put in the team's venv: the wheel's passhat, not this checkout's."""
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


README_BLOCK = re.compile(r"^<!-- adoption:.*?-->\n```sh\n(.*?)^```$", re.M | re.S)
CI_BLOCK = re.compile(r"^<!-- ci-recipe:.*?-->\n```yaml\n(.*?)^```$", re.M | re.S)


def readme_block(pattern: re.Pattern[str]) -> str:
    [block] = pattern.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    return block


@dataclass(frozen=True)
class Adopted:
    repo: Path
    env: dict[str, str]
    steps: dict[str, subprocess.CompletedProcess]  # each README line -> what it printed (in one bash session)


def _script(lines: list[str], wheel: Path, repo: Path) -> str:
    """The README's lines as one bash script, each announced by a marker line so its output can be told apart."""
    out = ["set -euo pipefail", "cleanup=:", "trap 'eval \"$cleanup\"' EXIT"]
    for index, line in enumerate(lines):
        command = line.replace("/path/to/passhat", shlex.quote(str(wheel))).replace("your-repo", shlex.quote(str(repo)))
        command = re.sub(r"\bCOMMIT\b", "HEAD", command)
        out.append(f"echo '@@@ {index}'")
        if shlex.split(line, comments=True) == ["npm", "install"]:  # no network: this checkout's install, same pins
            out.append(f"ln -s {shlex.quote(str(ROOT / 'node_modules'))} node_modules")
        elif "in another terminal" in line:  # started in the background; the next line reads the file it writes
            url_file = shlex.split(line, comments=True)[shlex.split(line, comments=True).index("--url-file") + 1]
            out += [f"{command.split('#')[0].strip()} > fake-model.log 2>&1 &",
                    'cleanup="kill $! 2>/dev/null || true"',
                    f"for _ in $(seq 300); do [[ -s {url_file} ]] && break; sleep 0.1; done"]  # fmt: skip
        else:
            out.append(command)
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def adopted(wheel_venv, tmp_path_factory) -> Adopted:
    """The README's adoption block, run as written (see the module docstring for the three stand-ins)."""
    wheel, venv = wheel_venv
    work = tmp_path_factory.mktemp("team")
    repo = _team_repository(work / "tinystats")
    lines = [line for line in readme_block(README_BLOCK).splitlines() if line.strip()]
    dev_bin = str(Path(sys.executable).parent)  # this checkout's .venv/bin: not on the team's PATH
    path = [str(venv / "bin")] + [p for p in os.environ["PATH"].split(os.pathsep) if p not in (dev_bin,)]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PASSHAT_", "PROMPTFOO_", "PIP_", "VIRTUAL_ENV"))},
        "PATH": os.pathsep.join(path),  # as after `. venv/bin/activate`: pip, passhat, python3 of the team's venv
        "VIRTUAL_ENV": str(venv),
        "PIP_NO_INDEX": "1",  # no network: every requirement is installed already, but passhat (from the wheel)
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PROMPTFOO_CONFIG_DIR": str(work / "promptfoo-home"),  # telemetry: off by the .env init writes
    }
    script = work / "adoption.sh"
    script.write_text(_script(lines, wheel, repo))
    done = subprocess.run(["bash", str(script)], cwd=work, env=env, capture_output=True, text=True, timeout=1500)
    parts = re.split(r"^@@@ (\d+)\n", done.stdout, flags=re.M)
    printed = {lines[int(index)]: text for index, text in zip(parts[1::2], parts[2::2], strict=True)}
    assert done.returncode == 0 and len(printed) == len(lines), (done.stdout[-4000:], done.stderr[-4000:])
    steps = {line: subprocess.CompletedProcess(line, 0, printed[line], "") for line in lines}
    return Adopted(repo, env, steps)


def _step(adopted: Adopted, starts: str) -> str:
    [line] = [line for line in adopted.steps if line.startswith(starts)]
    return adopted.steps[line].stdout


def test_the_readme_adoption_section_ends_with_the_verdict(adopted):
    repo = adopted.repo
    pins = json.loads((repo / "package.json").read_text())["dependencies"]
    ours = json.loads((ROOT / "package.json").read_text())["dependencies"]
    assert pins == {"node": ours["node"], "promptfoo": ours["promptfoo"]}  # so `npm install` there = our node_modules
    assert "PROMPTFOO_PYTHON" not in _step(adopted, "cd your-repo")  # the python3 promptfoo finds has passhat
    [tests] = [g for g in yaml.safe_load((repo / "tasks/fix-something/task.yaml").read_text())["graders"]
               if g["type"] == "tests"]  # fmt: skip
    assert tests["fail_to_pass"] == ["tests.test_stats::test_median_even"]
    assert sorted(tests["pass_to_pass"]) == [f"tests.test_stats::test_{n}" for n in ("mean", "median_odd", "variance")]

    rows = json.loads((repo / "results.json").read_text())["results"]["results"]
    components = [c for row in rows for c in row["gradingResult"]["componentResults"]]
    graded_by = {c["assertion"]["value"] for c in components if "value" in c["assertion"]}
    assert graded_by == {f"file://{repo / 'passhat_promptfoo.py'}:get_assert_graders"}  # the entry file init wrote

    # The last line of the block is `npx promptfoo eval`: what it printed ends with passhat's verdict.
    last = list(adopted.steps)[-1]
    assert last.startswith("npx promptfoo eval") and "passhat report" not in last
    printed = ANSI.sub("", adopted.steps[last].stdout)
    assert "telemetry.shutdown() timed out" not in printed  # init's .env turned telemetry off
    verdict = printed[printed.index("passhat report of promptfoo eval ") :]
    assert "Safe for 10 unattended runs in a row?" in verdict
    said = " ".join(verdict.split())
    # oracle: the scripted model replays the fix, 10 of 10 pass; 10/10 is too few to call pass^10 >= 0.9 safe
    # (Clopper-Pearson: the lower end of 10/10 is 0.025^(1/10) = 0.692, to the 10th 0.025)
    assert "fix-something: not enough trials to say: pass^10 = (10/10)^10 = 1.000 (95% CI 0.025-1.000)" in said
    [row] = [line.split() for line in verdict.splitlines() if line.startswith("fix-something ")]
    assert row[:6] == ["fix-something", "10", "10", "0", "0", "1.000"]  # task, n, passes, gamed, errors, pass@1
    # ... and it is what `passhat report` says of the file promptfoo wrote after it (the rows are the same)
    report = _run([adopted.env["VIRTUAL_ENV"] + "/bin/passhat", "report", "results.json"], repo, adopted.env)
    assert verdict.split("\n\n", 1)[1].startswith(report.stdout.split("\n\n", 1)[1].split("\n\n", 1)[0])


def _noop(repo: Path) -> None:
    """Every trial fails: the provider asks the scripted model for noop (an answer that changes no file)."""
    config = yaml.safe_load((repo / "promptfooconfig.yaml").read_text())
    config["providers"][0]["config"]["fake_script"] = "noop"
    (repo / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def test_what_init_prints_and_the_ci_recipe_run_on_when_a_trial_fails(adopted, tmp_path):
    """`npx promptfoo eval ... && passhat report ...` never printed the report when a trial failed (promptfoo exits
    100): the commands `passhat init` prints, and the CI recipe, go on to the report and the gates."""
    repo, env = adopted.repo, dict(adopted.env)
    _noop(repo)
    server = subprocess.Popen([Path(env["VIRTUAL_ENV"]) / "bin" / "passhat", "fake-model", "--url-file",
                               ".passhat/noop.url"], cwd=repo, env=env, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        env["PASSHAT_FAKE_MODEL_URL"] = _wait_for(repo / ".passhat" / "noop.url", server)
        init = _step(adopted, "cd your-repo")
        printed = [line.split("  #")[0].strip() for line in init.split("Next:\n")[1].splitlines()[:4]]
        assert printed[2:] == ["npx promptfoo eval --repeat 10 -o results.json",
                               "passhat report results.json --format html -o report.html"]  # fmt: skip
        evaluated = subprocess.run(["bash", "-ec", printed[2]], cwd=repo, env=env, capture_output=True, text=True,
                                   timeout=900)  # fmt: skip
        assert evaluated.returncode == 0, evaluated.stdout[-3000:]  # init's .env: a failed trial is not exit 100
        said = " ".join(ANSI.sub("", evaluated.stdout).split())
        assert "fix-something: not safe: pass^10 = (0/10)^10 = 0.000" in said and "✗ 10 failed" in said
        reported = subprocess.run(["bash", "-ec", printed[3]], cwd=repo, env=env, capture_output=True, text=True)
        assert reported.returncode == 0 and (repo / "report.html").read_text().startswith("<!doctype html>")

        # The CI recipe, step by step as GitHub Actions runs them: `bash -e`, the step's env; without init's .env.
        (repo / ".env").rename(repo / "env.kept")
        summary = tmp_path / "summary.md"
        codes = []
        for step in yaml.safe_load(readme_block(CI_BLOCK)):
            step_env = {
                **env,
                "GITHUB_STEP_SUMMARY": str(summary),
                **{k: str(v) for k, v in step.get("env", {}).items()},
            }
            done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=step_env, capture_output=True,
                                  text=True, timeout=900)  # fmt: skip
            codes.append(done.returncode)
            if done.returncode:
                break  # as GitHub stops a job at a failed step
    finally:
        server.terminate()
        server.wait(timeout=30)
    # The eval step passes although every trial failed; the gate step ran, wrote the summary, and failed the job
    # on its gates (exit 1), not on promptfoo's exit status.
    assert codes == [0, 1], codes
    md = summary.read_text()
    assert md.startswith("## passhat report") and "**FAILS**: `pass^7>=0.9`" in md


def _wait_for(file: Path, server: subprocess.Popen) -> str:
    for _ in range(300):
        if file.is_file() and file.read_text().strip():
            return file.read_text().strip()
        if server.poll() is not None:
            pytest.fail("passhat fake-model exited")
        time.sleep(0.05)
    pytest.fail(f"passhat fake-model wrote no {file} in 15 s")


API_GRADER = '''\
"""tinystats keeps its public API: every function named in the settings is still defined."""

SETTINGS = {"type": "object", "required": ["names"],
            "properties": {"names": {"type": "array", "items": {"type": "string"}, "minItems": 1}}}


def grade(view, settings):
    source = view.text("tinystats/__init__.py") or ""
    missing = [name for name in settings["names"] if f"def {name}(" not in source]
    kept = len(settings["names"]) - len(missing)
    return not missing, kept / len(settings["names"]), f"missing: {', '.join(missing)}" if missing else "API kept"
'''


def test_a_team_grader_in_the_repository_is_a_named_score_in_the_report(adopted):
    """The team checks a property of its own: the example grader `passhat init` wrote (graders/leftovers.py) and
    one it writes in evals/graders/, both `type: python` in the task from-commit made. check-task runs them, and a
    rehearsal eval (the installed wheel's passhat inside promptfoo's assertion) gives each its named score, which
    `passhat report` shows."""
    repo, env = adopted.repo, dict(adopted.env)
    task_yaml, config = repo / "tasks/fix-something/task.yaml", repo / "promptfooconfig.yaml"
    kept = {task_yaml: task_yaml.read_text(), config: config.read_text()}
    (repo / "evals" / "graders").mkdir(parents=True, exist_ok=True)
    (repo / "evals" / "graders" / "api.py").write_text(API_GRADER)
    spec = yaml.safe_load(kept[task_yaml])
    spec["graders"] += [
        {"type": "python", "file": "graders/leftovers.py"},  # as its docstring says to name it
        {"type": "python", "file": "evals/graders/api.py", "settings": {"names": ["mean", "median", "variance"]}},
    ]
    task_yaml.write_text(yaml.safe_dump(spec, sort_keys=False))
    settings = yaml.safe_load(kept[config])
    settings["providers"][0]["config"]["fake_script"] = "oracle"  # whatever an earlier test set
    config.write_text(yaml.safe_dump(settings, sort_keys=False))
    passhat = Path(env["VIRTUAL_ENV"]) / "bin" / "passhat"
    server = subprocess.Popen([passhat, "fake-model", "--url-file", ".passhat/team.url"], cwd=repo, env=env,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        env["PASSHAT_FAKE_MODEL_URL"] = _wait_for(repo / ".passhat" / "team.url", server)
        checked = _run([passhat, "check-task", "tasks/fix-something"], repo, env)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "ok      fix-something: reference passes all" in checked.stdout
        evaluated = _run(["npx", "promptfoo", "eval", "--repeat", "2", "-o", "team.json"], repo, env, timeout=900)
        assert evaluated.returncode == 0, evaluated.stdout[-3000:] + evaluated.stderr[-3000:]
        report = _run([passhat, "report", "team.json", "--format", "json"], repo, env)
        assert report.returncode == 0, report.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)
        for file, text in kept.items():
            file.write_text(text)
    [summary] = json.loads(report.stdout)["tasks"]
    assert (summary["n"], summary["passes"]) == (2, 2)
    assert summary["named_scores"]["leftovers"] == 1 and summary["named_scores"]["api"] == 1
    rows = json.loads((repo / "team.json").read_text())["results"]["results"]
    reasons = {c["assertion"]["metric"]: c["reason"] for row in rows for c in row["gradingResult"]["componentResults"]
               if "metric" in c["assertion"]}  # fmt: skip
    assert reasons["api"] == "API kept" and reasons["leftovers"] == "no leftovers in 1 changed file(s)"


def test_the_next_commands_after_the_block_work_as_written(adopted, tmp_path):
    """After the block, the README's next commands in the team's shell: `passhat eval --until-decided` finds the
    promptfoo `npm install` put in node_modules/.bin (it is not on PATH: the block runs it through npx), its round
    says its trials, and `passhat drift` takes the rounds' combined results."""
    repo, env = adopted.repo, dict(adopted.env)
    # the team's shell: no node_modules/.bin on PATH (this checkout's is, for the tests): only npx finds promptfoo
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if "node_modules" not in p)
    assert shutil.which("promptfoo", path=env["PATH"]) is None
    config = repo / "promptfooconfig.yaml"
    kept = config.read_text()
    settings = yaml.safe_load(kept)
    settings["providers"][0]["config"]["fake_script"] = "oracle"  # whatever an earlier test set
    config.write_text(yaml.safe_dump(settings, sort_keys=False))
    passhat = Path(env["VIRTUAL_ENV"]) / "bin" / "passhat"
    server = subprocess.Popen([passhat, "fake-model", "--url-file", ".passhat/rounds.url"], cwd=repo, env=env,
                              stderr=subprocess.DEVNULL)  # fmt: skip
    out = tmp_path / "runs"
    try:
        env["PASSHAT_FAKE_MODEL_URL"] = _wait_for(repo / ".passhat" / "rounds.url", server)
        rounds = _run([passhat, "eval", "--until-decided", "--round", "2", "--max-trials", "2", "--out", out, "--",
                       "--no-progress-bar"], repo, env, timeout=900)  # fmt: skip
        drift = _run([passhat, "drift", out / "results.json", "--db", tmp_path / "history.db"], repo, env)
    finally:
        server.terminate()
        server.wait(timeout=30)
        config.write_text(kept)
    assert rounds.returncode == 0, rounds.stdout[-3000:] + rounds.stderr[-3000:]
    assert "passhat: round 1: every task x 2 trial(s), repeats 0-1" in rounds.stdout
    assert "passhat: stopped after round 1:" in rounds.stdout
    assert len(json.loads((out / "results.json").read_text())["results"]["results"]) == 2
    assert drift.returncode == 0, drift.stdout + drift.stderr
