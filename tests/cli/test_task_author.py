"""`passhat task from-commit` and `passhat task new`, with real git, real test runners and check-task.

The repositories are made here, commit by commit: a small Python one (every way a commit can be unusable),
a Node one read through a file:// URL, and the issue's case — the PyPI sdist of inflection (the shipped
task's repo/, its injected bug undone) with one commit that injects a bug and one that fixes it and adds a
regression test.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, TASKS

from passhat.cli import main
from passhat.graders._junit import junit_id

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@localhost",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@localhost",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


def commit(repo: Path, message: str, files: dict[str, str | None], tag: str | None = None) -> str:
    """Write (None: delete) `files`, commit them all, tag the commit; its id."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)
    if tag:
        git(repo, "tag", tag)
    return git(repo, "rev-parse", "HEAD")


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
CALC_TESTS = "from calc import add, sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"
ADD_TEST = "\n\ndef test_add():\n    assert add(2, 2) == 4\n"


# The fix's message says how it fixes it, in every way the prompt rule leaves out (passhat.tasks._prompt).
LEAKY_FIX_MESSAGE = """Fix add, which subtracted its arguments, by returning a + b

add(2, 2) returned 0. The minus in calc.py is now a plus.
Return a + b instead.

- replace a - b with a + b in add

Signed-off-by: Dev <dev@localhost>
"""


@pytest.fixture(scope="module")
def calc(tmp_path_factory) -> Path:
    """A Python repo: root → fix (fix + test) → docs (no test) → tests-only → leaky message → merge."""
    repo = new_repo(tmp_path_factory.mktemp("calc") / "calc")
    pyproject = '[project]\nname = "calc"\nversion = "0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    files = {"pyproject.toml": pyproject, "calc.py": CALC, "tests/test_calc.py": CALC_TESTS}
    commit(repo, "calc 0.1", files, tag="root")
    commit(
        repo,
        LEAKY_FIX_MESSAGE,
        {"calc.py": CALC.replace("a - b", "a + b", 1), "tests/test_calc.py": CALC_TESTS + ADD_TEST},
        tag="fix",
    )
    commit(repo, "Document calc", {"README.md": "# calc\n", "calc.py": '"""calc."""\n' + CALC.replace("a - b", "a + b", 1)}, tag="docs")  # fmt: skip
    commit(repo, "Test sub more", {"tests/test_calc.py": CALC_TESTS + ADD_TEST + "\n\ndef test_sub0():\n    assert sub(1, 1) == 0\n"}, tag="tests-only")  # fmt: skip
    leaky = '"""calc."""\n' + CALC.replace("a - b", "a + b", 1) + "\n\ndef _clamp_value(x):\n    return x\n"
    commit(repo, "Add _clamp_value to calc.py", {"calc.py": leaky, "tests/test_clamp.py": "def test_one():\n    assert 1\n"}, tag="leaky")  # fmt: skip
    git(repo, "checkout", "-q", "-b", "side", "root")
    commit(repo, "Side work", {"NOTES": "n\n"})
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "side")
    git(repo, "tag", "merge")
    return repo


def test_from_commit_makes_a_valid_task(calc, tmp_path, capsys):
    tasks = tmp_path / "tasks"
    argv = ["task", "from-commit", str(calc), "fix", "--id", "fix-add", "--tasks-dir", str(tasks)]
    code, out, err = run([*argv, "--state-dir", str(tmp_path / "state")], capsys)
    assert (code, err) == (0, ""), out
    assert "review this prompt: it is what the agent sees" in out
    assert "  | Fix add, which subtracted its arguments\n  |\n  | add(2, 2) returned 0.\n  left out: " in out
    assert out.count("left out: ") == 5
    for piece in ("by returning a + b", "The minus in calc.py is now a plus.", "Return a + b instead.",
                  "- replace a - b with a + b in add"):  # fmt: skip
        assert f"left out: {piece!r}: says how the fix works" in out
    assert "left out: 'Signed-off-by: Dev <dev@localhost>': a trailer" in out
    assert "ok      fix-add: reference passes all 3 graders" in out
    assert "wrote " in out and "FAIL_TO_PASS 1, PASS_TO_PASS 1" in out

    folder = tasks / "fix-add"
    assert sorted(p.name for p in folder.iterdir()) == ["solution.patch", "task.yaml", "test.patch"]
    data = yaml.safe_load((folder / "task.yaml").read_text())
    assert data["base"] == {"git": str(calc), "commit": git(calc, "rev-parse", "root")}
    assert data["prompt"] == "Fix add, which subtracted its arguments\n\nadd(2, 2) returned 0.\n"
    assert (data["language"], data["tier"]) == ("python", "simple")
    tests = data["graders"][0]
    assert tests["fail_to_pass"] == ["tests.test_calc::test_add"]
    assert tests["pass_to_pass"] == ["tests.test_calc::test_sub"]
    assert tests["command"] == "python -m pytest -q -p no:cacheprovider --junitxml={junit}"
    assert b"calc.py" in (folder / "solution.patch").read_bytes()
    assert b"tests/test_calc.py" not in (folder / "solution.patch").read_bytes()
    assert b"def test_add" in (folder / "test.patch").read_bytes()

    code, out, _ = run(["check-task", str(folder), "--state-dir", str(tmp_path / "state")], capsys)
    assert code == 0 and "1 of 1 task(s) valid" in out
    assert "the integrity scan finds no gaming in it" in out  # the reference of a made task is no false alarm


def _base_files(folder: Path, state: Path) -> str:
    from passhat.tasks import load_task
    from passhat.trial._sandbox import prepare_base

    base = prepare_base(load_task(folder), state / "cache")
    return "\n".join(p.read_text() for p in sorted(base.path.rglob("*.py")) if ".git" not in p.parts)


@pytest.mark.parametrize("show", [False, True], ids=["held-out-by-default", "show-tests"])
def test_from_commit_holds_the_tests_out_unless_told_to_show_them(calc, tmp_path, capsys, show):
    """By default the fix's test (test_add) is only in test.patch: the base the agent starts from lacks it;
    --show-tests makes test.patch part of the base (show_tests: true), and the task is valid either way."""
    tasks, state = tmp_path / "tasks", tmp_path / "state"
    argv = ["task", "from-commit", str(calc), "fix", "--id", "fix-add", "--tasks-dir", str(tasks)]
    code, out, err = run([*argv, "--state-dir", str(state), *(["--show-tests"] if show else [])], capsys)
    assert (code, err) == (0, ""), out
    folder = tasks / "fix-add"
    data = yaml.safe_load((folder / "task.yaml").read_text())
    assert data.get("show_tests", False) is show
    assert b"def test_add" in (folder / "test.patch").read_bytes()
    assert ("def test_add" in _base_files(folder, state)) is show
    assert ("# agent sees these tests" in (folder / "task.yaml").read_text()) is show
    assert "ok      fix-add: reference passes all 3 graders" in out


def test_tasks_inside_the_repository_name_it_relative_to_the_task(calc, tmp_path, capsys, monkeypatch):
    """`passhat task from-commit . COMMIT` in the repository: base.git moves with it (../..)."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(calc), str(clone))
    monkeypatch.chdir(clone)
    code, out, _ = run(["task", "from-commit", ".", "fix", "--id", "fix-add"], capsys)
    assert code == 0, out
    data = yaml.safe_load((clone / "tasks" / "fix-add" / "task.yaml").read_text())
    assert data["base"]["git"] == "../.."
    assert (clone / ".passhat" / "cache").is_dir()  # --state-dir's default, like check-task's


@pytest.fixture
def plain(tmp_path) -> Path:
    """A repo with no pyproject.toml, setup.py, setup.cfg or package.json."""
    repo = new_repo(tmp_path / "plain")
    commit(repo, "start", {"main.sh": "echo 1\n", "tests/test.sh": "true\n"})
    commit(repo, "fix", {"main.sh": "echo 2\n", "tests/test.sh": "false\n"}, tag="fix")
    return repo


# (id, argv after `task from-commit` ({calc}, {plain}, {tmp}: paths), what stderr's one line says)
BAD = [
    ("no such folder", ["{tmp}/nowhere", "fix", "--id", "x"], "REPO '{tmp}/nowhere': no such folder"),
    ("not a git repository", ["{tmp}", "fix", "--id", "x"], "not a git repository"),
    ("no such commit", ["{calc}", "v9.9", "--id", "x"], "COMMIT 'v9.9': no such commit in {calc}"),
    ("root commit", ["{calc}", "root", "--id", "x"], "is the repository's first commit: there is no parent"),
    ("merge commit", ["{calc}", "merge", "--id", "x"], "is a merge of 2 parents"),
    ("bad id", ["{calc}", "fix", "--id", "Fix_Add"], "--id 'Fix_Add': a task id is lowercase letters"),
    ("id exists", ["{calc}", "fix", "--id", "taken"], "tasks/taken: already exists; choose another id"),
    ("bad glob", ["{calc}", "fix", "--id", "x", "--tests", "tests/"], "--tests 'tests/': a glob matches files"),
    ("absolute glob", ["{calc}", "fix", "--id", "x", "--tests", "/t/**"], "relative to the repository root"),
    ("command without {junit}", ["{calc}", "fix", "--id", "x", "--command", "pytest"],
     "--command 'pytest': the tests' results are read from a JUnit XML report: put {junit}"),
    ("no prompt file", ["{calc}", "fix", "--id", "x", "--prompt-file", "{tmp}/p.txt"], "--prompt-file '{tmp}/p.txt': cannot read"),
    ("empty prompt file", ["{calc}", "fix", "--id", "x", "--prompt-file", "{tmp}/empty.txt"], "the file is empty"),
    ("unknown language", ["{plain}", "fix", "--id", "x"], "passhat cannot tell how to run its tests: pass --command"),
    ("message gives it all away", ["{calc}", "leaky", "--id", "x"], "nothing of its message is left"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "says"), [pytest.param(*case[1:], id=case[0]) for case in BAD])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(calc, plain, tmp_path, capsys, argv, says):
    tasks = tmp_path / "tasks"
    (tasks / "taken").mkdir(parents=True)
    (tasks / "taken" / "task.yaml").write_text("mine\n")
    (tmp_path / "empty.txt").write_text("\n")
    fill = {"{calc}": str(calc), "{plain}": str(plain), "{tmp}": str(tmp_path)}
    argv = [re.sub("|".join(map(re.escape, fill)), lambda m: fill[m[0]], arg) for arg in argv]
    says = re.sub("|".join(map(re.escape, fill)), lambda m: fill[m[0]], says)
    state = tmp_path / "state"
    code, out, err = run(["task", "from-commit", *argv, "--tasks-dir", str(tasks), "--state-dir", str(state)], capsys)
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("passhat: error: "), err
    assert says in err
    assert sorted(p.name for p in tasks.iterdir()) == ["taken"]
    assert (tasks / "taken" / "task.yaml").read_text() == "mine\n"
    assert not state.exists()


def test_a_url_that_cannot_be_cloned_is_bad_input(tmp_path, capsys):
    tasks = tmp_path / "tasks"
    argv = ["task", "from-commit", f"file://{tmp_path}/gone", "HEAD", "--id", "x", "--tasks-dir", str(tasks)]
    code, _, err = run([*argv, "--state-dir", str(tmp_path / "state")], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert f"REPO 'file://{tmp_path}/gone': cannot clone it (fatal: " in err
    assert not tasks.exists()


def test_a_subfolder_means_its_repository(calc, tmp_path):
    from passhat.cli.task import _open_repo

    assert _open_repo(str(calc / "tests"), "fix", tmp_path) == (calc, str(calc))


@pytest.mark.parametrize(
    ("name", "why"),
    [
        pytest.param("docs", "changes no test file (none of its 2 changed files matches the test globs", id="no-test"),
        pytest.param(
            "tests-only", "changes only test files (1): there is no fix for the agent to make", id="only-tests"
        ),
    ],
)
def test_a_commit_without_both_halves_exits_1_and_writes_nothing(calc, tmp_path, capsys, name, why):
    tasks = tmp_path / "tasks"
    code, out, err = run(["task", "from-commit", str(calc), name, "--id", "x", "--tasks-dir", str(tasks)], capsys)
    assert (code, err) == (1, "")
    assert f"task x not written: commit {git(calc, 'rev-parse', name)[:12]} {why}" in out
    assert not tasks.exists()


def test_an_empty_fail_to_pass_exits_1_and_removes_the_folder(calc, tmp_path, capsys):
    """The leaky commit's new test passes before its change too: no test shows a bug."""
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Clamp values.\n")
    tasks = tmp_path / "tasks"
    argv = ["task", "from-commit", str(calc), "leaky", "--id", "clamp", "--tasks-dir", str(tasks)]
    code, out, err = run([*argv, "--prompt-file", str(prompt), "--state-dir", str(tmp_path / "st")], capsys)
    assert (code, err) == (1, ""), out
    assert "review this prompt: it is what the agent sees (from --prompt-file)\n  | Clamp values.\n" in out
    assert "task clamp not written: FAIL_TO_PASS is empty: no test failed at base + test.patch and passed" in out
    assert "(4 passed both times, 0 flaky, 0 broken)" in out  # test_sub, test_add, test_sub0, test_one
    assert not tasks.exists()


def test_task_new_scaffolds_and_its_recipe_makes_a_valid_task(tmp_path, capsys):
    """Scaffold; check-task names what is missing; fill repo/, run the README's commands for solution.patch,
    fill in the TODOs; check-task finds the task valid."""
    tasks = tmp_path / "tasks"
    code, out, err = run(["task", "new", "fix-add", "--tasks-dir", str(tasks)], capsys)
    assert (code, err) == (0, "")
    folder = tasks / "fix-add"
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "repo", "task.yaml"]
    assert not any((folder / "repo").iterdir())
    assert f"passhat check-task {folder}" in out

    state = ["--state-dir", str(tmp_path / "state")]
    code, _, err = run(["check-task", str(folder), *state], capsys)
    assert code == 2 and "field 'description' is missing" in err

    (folder / "repo" / "tests").mkdir()
    (folder / "repo" / "calc.py").write_text(CALC)
    (folder / "repo" / "tests" / "test_calc.py").write_text(CALC_TESTS + ADD_TEST)
    before, after = re.findall(r"```sh\n(.*?)```", (folder / "README.md").read_text(), re.S)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}  # no identity of the user's
    subprocess.run(["sh", "-ec", before], cwd=folder, env=env, check=True)
    (folder / "work" / "calc.py").write_text(CALC.replace("a - b", "a + b", 1))
    subprocess.run(["sh", "-ec", after], cwd=folder, env=env, check=True)
    assert not (folder / "work").exists()
    assert b"+    return a + b" in (folder / "solution.patch").read_bytes()

    text = (folder / "task.yaml").read_text()
    text = re.sub(r"# description: TODO.*", "description: Fix add", text)
    text = re.sub(r"# prompt: \|.*\n#   (.*)", r"prompt: |\n  \1", text)
    text = re.sub(r"# command: (python -m pytest -q).*", r"command: \1", text)
    (folder / "task.yaml").write_text(text)
    code, out, err = run(["check-task", str(folder), *state], capsys)
    assert (code, err) == (0, ""), out
    assert "ok      fix-add: reference passes all 3 graders; empty patch fails tests#0" in out


def test_task_new_offers_held_out_tests_and_its_recipe_makes_a_valid_task(tmp_path, capsys):
    """--held-out-tests: task.yaml names test.patch (check-task says it is missing), README.md says how to make
    it; the recipe run as written gives a valid task whose base lacks the held-out test."""
    tasks, state = tmp_path / "tasks", tmp_path / "state"
    code, _, err = run(["task", "new", "fix-add", "--tasks-dir", str(tasks), "--held-out-tests"], capsys)
    assert (code, err) == (0, "")
    folder = tasks / "fix-add"
    (folder / "repo" / "tests").mkdir()
    (folder / "repo" / "calc.py").write_text(CALC)
    (folder / "repo" / "tests" / "test_calc.py").write_text(CALC_TESTS)
    before, tests, after = re.findall(r"```sh\n(.*?)```", (folder / "README.md").read_text(), re.S)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["sh", "-ec", before], cwd=folder, env=env, check=True)
    (folder / "work" / "tests" / "test_calc.py").write_text(CALC_TESTS + ADD_TEST)
    subprocess.run(["sh", "-ec", tests], cwd=folder, env=env, check=True)
    (folder / "work" / "calc.py").write_text(CALC.replace("a - b", "a + b", 1))
    subprocess.run(["sh", "-ec", after], cwd=folder, env=env, check=True)
    assert b"def test_add" in (folder / "test.patch").read_bytes()
    assert b"test_calc" not in (folder / "solution.patch").read_bytes()

    text = (folder / "task.yaml").read_text()
    text = re.sub(r"# description: TODO.*", "description: Fix add", text)
    text = re.sub(r"# prompt: \|.*\n#   (.*)", "prompt: |\n  add(a, b) must return the sum of a and b.", text)
    text = re.sub(r"# command: (python -m pytest -q).*", r"command: \1", text)
    (folder / "task.yaml").write_text(text)
    code, out, err = run(["check-task", str(folder), "--state-dir", str(state)], capsys)
    assert (code, err) == (0, ""), out
    assert "ok      fix-add: reference passes all 3 graders; empty patch fails tests#0" in out
    assert "def test_add" not in _base_files(folder, state)

    (folder / "test.patch").unlink()  # what check-task says when it is missing
    code, _, err = run(["check-task", str(folder), "--state-dir", str(state)], capsys)
    assert code == 2 and "field 'test_patch': 'test.patch' is not a file inside the task folder" in err


def test_task_new_refuses_a_taken_or_bad_id(tmp_path, capsys):
    (tmp_path / "tasks" / "taken").mkdir(parents=True)
    for task_id, says in [("taken", "already exists"), ("Bad Id", "ID 'Bad Id': a task id is lowercase")]:
        code, _, err = run(["task", "new", task_id, "--tasks-dir", str(tmp_path / "tasks")], capsys)
        assert code == 2 and len(err.splitlines()) == 1 and says in err
    assert [p.name for p in (tmp_path / "tasks").iterdir()] == ["taken"]


SLUG = (
    "function slug(text) {\n  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');\n}\nmodule.exports = { slug };\n"
)
SLUG_TESTS = """const test = require('node:test');
const assert = require('node:assert');
const { slug } = require('../slug');

test('lowercases and joins words with dashes', () => assert.strictEqual(slug('Hello World'), 'hello-world'));
"""


def test_node_repository_through_a_url(tmp_path, capsys):
    """node's own test runner, its JUnit ids (`test::<title>`), and REPO given as a URL (mirrored in the cache)."""
    repo = new_repo(tmp_path / "slug")
    package = '{"name": "slug", "version": "1.0.0", "scripts": {"test": "node --test"}}\n'
    commit(repo, "slug 1.0.0", {"package.json": package, "slug.js": SLUG, "test/slug.test.js": SLUG_TESTS})
    fixed = SLUG.replace("'-');", "'-').replace(/^-+|-+$/g, '');")
    more = "test('never starts or ends with a dash', () => assert.strictEqual(slug('Hello, World!'), 'hello-world'));\n"
    commit(repo, "Trim dashes at both ends\n\nslug('Hello, World!') gave 'hello-world-'.\n", {"slug.js": fixed, "test/slug.test.js": SLUG_TESTS + more})  # fmt: skip
    url = f"file://{repo}"
    tasks = tmp_path / "tasks"
    argv = ["task", "from-commit", url, "HEAD", "--id", "slug-dashes", "--tasks-dir", str(tasks)]
    code, out, err = run([*argv, "--state-dir", str(tmp_path / "state")], capsys)
    assert (code, err) == (0, ""), out
    assert "  | Trim dashes at both ends\n  |\n  | slug('Hello, World!') gave 'hello-world-'.\n" in out
    data = yaml.safe_load((tasks / "slug-dashes" / "task.yaml").read_text())
    assert data["base"] == {"git": url, "commit": git(repo, "rev-parse", "HEAD~1")}
    assert data["language"] == "node"
    tests = data["graders"][0]
    assert tests["fail_to_pass"] == ["test::never starts or ends with a dash"]
    assert tests["pass_to_pass"] == ["test::lowercases and joins words with dashes"]
    assert "--test-reporter-destination={junit}" in tests["command"]
    assert data["graders"][1] == {"type": "diff-scope", "deny": tests["protected"]}
    assert "**/*.test.*" in tests["protected"]
    assert "the integrity scan finds no gaming in it" in out  # the made task's reference: no false alarm


APOSTROPHE_ROWS = re.compile(r"^    \(\"[dD]avid's [cC]ode\",.*\n", re.M)
REGRESSION_TEST = """

def test_titleize_keeps_the_letter_after_an_apostrophe_lowercase():
    assert inflection.titleize("david's code") == "David's Code"
"""
FIX_MESSAGE = """Fix titleize: keep the letter after an apostrophe lowercase

titleize("david's code") returns "David'S Code" since the word pattern was
simplified in the previous commit; it should return "David's Code". The
pattern is r"\\b('?\\w)" again, so an apostrophe stays with the word it
precedes.

Signed-off-by: Dev <dev@localhost>
"""


@pytest.fixture(scope="module")
def inflection(tmp_path_factory) -> Path:
    return inflection_history(tmp_path_factory.mktemp("inflection") / "inflection")


def inflection_history(folder: Path) -> Path:
    """The issue's history: 1 = the sdist of inflection 0.5.1 (the shipped task's repo/ with its injected bug
    undone), 2 = a bug injected (and the test rows that would catch it dropped), 3 = the fix and a regression
    test. (scripts/readme_samples.py runs the README's worked example in it too.)"""
    repo = new_repo(folder)
    shutil.copytree(TASKS / "inflection-titleize" / "repo", repo, dirs_exist_ok=True)
    solution = str(TASKS / "inflection-titleize" / "solution.patch")
    git(repo, "apply", solution)
    commit(repo, "inflection 0.5.1, the sdist from PyPI", {})
    git(repo, "apply", "-R", solution)
    tests = (repo / "test_inflection.py").read_text()
    assert len(APOSTROPHE_ROWS.findall(tests)) == 3
    commit(repo, "Simplify the word pattern of titleize", {"test_inflection.py": APOSTROPHE_ROWS.sub("", tests)})
    git(repo, "apply", solution)
    commit(repo, FIX_MESSAGE, {"test_inflection.py": APOSTROPHE_ROWS.sub("", tests) + REGRESSION_TEST})
    return repo


def collected(repo: Path, commit: str) -> list[str]:
    """The JUnit ids of the tests pytest collects at `commit`, in a throwaway worktree."""
    tree = repo.parent / f"at-{commit[:12]}"
    git(repo, "worktree", "add", "-q", "--detach", str(tree), commit)
    try:
        argv = ["python", "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        listing = subprocess.run(argv, cwd=tree, capture_output=True, text=True, check=True).stdout
    finally:
        git(repo, "worktree", "remove", "--force", str(tree))
    return sorted(junit_id(line) for line in listing.splitlines() if "::" in line)


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split(f"\n### {title}", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]


@pytest.mark.e2e  # ~40 s: the 452-test suite of inflection, four times, then check-task
def test_inflection_fix_commit_becomes_a_valid_task(inflection, tmp_path, capsys, monkeypatch):
    """The issue's "what must be true": check-task validates the task, the regression test is FAIL_TO_PASS,
    the rest of the suite PASS_TO_PASS. The commands are the README's worked example, and what they print is
    what the README shows (`…`: the commit id, which differs per run)."""
    message, commands, shown = re.findall(r"```(?:text|sh)\n(.*?)```", readme_section("From a commit"), re.S)[:3]
    assert message == FIX_MESSAGE
    monkeypatch.chdir(inflection)
    out = ""
    for line in commands.splitlines():
        argv = shlex.split(line, comments=True)
        if argv[0] == "cd":
            continue
        assert argv[0] == "passhat"
        code, printed, err = run([*argv[1:], "--state-dir", str(tmp_path / "state")], capsys)
        assert (code, err) == (0, ""), printed
        out += printed
    expected = [re.escape(line).replace("…", ".*") for line in shown.splitlines()]
    assert [bool(re.fullmatch(pattern, line)) for pattern, line in zip(expected, out.splitlines(), strict=True)] == [
        True
    ] * len(expected), out

    data = yaml.safe_load((inflection / "tasks" / "titleize-apostrophe" / "task.yaml").read_text())
    tests = data["graders"][0]
    regression = "test_inflection::test_titleize_keeps_the_letter_after_an_apostrophe_lowercase"
    assert tests["fail_to_pass"] == [regression]
    suite = collected(inflection, git(inflection, "rev-parse", "HEAD~1"))
    assert len(suite) == 452
    assert sorted(tests["pass_to_pass"]) == suite
    assert data["base"] == {"git": "../..", "commit": git(inflection, "rev-parse", "HEAD~1")}


def test_readme_recipe_for_solution_patch_is_the_scaffolds(tmp_path):
    """The README shows the commands the scaffold's README gives (the test above runs those)."""
    from passhat.tasks._scaffold import scaffold

    [readme] = re.findall(r"```sh\n(.*?)```", readme_section("By hand"), re.S)[1:]
    before, after = re.findall(r"```sh\n(.*?)```", scaffold("x", "tasks/x")["README.md"], re.S)
    lines = [line for line in readme.splitlines() if not line.startswith("#")]
    assert lines == (before + after).splitlines()


def test_readme_task_yaml_example_is_a_valid_task(tmp_path):
    from passhat.tasks import load_task

    [example] = re.findall(r"```yaml\n(.*?)```", readme_section("task.yaml"), re.S)
    folder = tmp_path / "bump-version"
    shutil.copytree(TASKS / "bump-version", folder)
    (folder / "task.yaml").write_text(example)
    task = load_task(folder)
    assert [g["type"] for g in task.graders] == ["tests", "files", "diff-scope", "health"]


def test_a_command_that_writes_no_report_exits_1_and_removes_the_folder(calc, tmp_path, capsys):
    tasks = tmp_path / "tasks"
    argv = [
        "task",
        "from-commit",
        str(calc),
        "fix",
        "--id",
        "x",
        "--tasks-dir",
        str(tasks),
        "--command",
        "true {junit}",
    ]
    code, out, err = run([*argv, "--state-dir", str(tmp_path / "state")], capsys)
    assert (code, err) == (1, "")
    assert "task x not written: the tests could not be run as the grader runs them: " in out
    assert "no JUnit report" in out
    assert not tasks.exists()
