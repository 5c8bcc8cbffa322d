"""The pure parts of `passhat task from-commit` (passhat.tasks._author) and `task new`'s files: language, test
globs, the diff split (checked with real git: the two parts apply and add up to the commit), the tier and the
task.yaml text. The prompt rule: test_prompt.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from passhat.common._errors import PasshatError
from passhat.graders._globs import matches
from passhat.tasks._author import (
    COMMANDS,
    TEST_GLOBS,
    Draft,
    changed_lines,
    check_glob,
    default_test_globs,
    detect_language,
    split_patch,
    task_data,
    task_yaml,
    tier_for,
)
from passhat.tasks._scaffold import scaffold

GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@localhost",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@localhost",
}


def git(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, input=input, capture_output=True, check=True).stdout


@pytest.mark.parametrize(
    ("top", "changed", "expected"),
    [
        pytest.param(["pyproject.toml", "src"], [], "python", id="pyproject"),
        pytest.param(["setup.py"], [], "python", id="setup.py"),
        pytest.param(["setup.cfg", "README"], [], "python", id="setup.cfg"),
        pytest.param(["package.json", "index.js"], [], "node", id="package.json"),
        pytest.param(["package.json", "pyproject.toml"], ["web/app.js", "web/util.ts"], "node", id="both-js-change"),
        pytest.param(["package.json", "pyproject.toml"], ["lib/x.py", "web/app.js"], "python", id="both-tie"),
        pytest.param(["Makefile", "main.go"], ["main.go"], None, id="neither"),
    ],
)
def test_detect_language(top, changed, expected):
    assert detect_language(top, changed) == expected


@pytest.mark.parametrize(
    ("path", "language", "is_test"),
    [
        ("test_calc.py", "python", True),
        ("pkg/sub/test_calc.py", "python", True),
        ("pkg/calc_test.py", "python", True),
        ("tests/data/fixture.json", "python", True),
        ("src/test/helpers.py", "python", True),
        ("conftest.py", "python", True),
        ("pkg/conftest.py", "python", True),
        ("pkg/calc.py", "python", False),
        ("pkg/testing.py", "python", False),
        ("slugify.test.js", "node", True),
        ("src/a/b.spec.ts", "node", True),
        ("__tests__/x.js", "node", True),
        ("lib/__tests__/x.js", "node", True),
        ("test/slugify.test.js", "node", True),
        ("lib/slugify.js", "node", False),
        ("lib/contest.js", "node", False),
    ],
)
def test_default_globs_pick_test_files(path, language, is_test):
    """The globs are read with the graders' semantics (passhat.graders._globs), as diff-scope reads them."""
    assert matches(path, TEST_GLOBS[language]) is is_test


def test_unknown_language_takes_both_sets_of_globs():
    both = default_test_globs(None)
    assert set(both) == set(TEST_GLOBS["python"]) | set(TEST_GLOBS["node"])
    assert len(both) == len(set(both))


def test_default_commands_write_the_report_to_the_placeholder():
    assert all("{junit}" in command for command in COMMANDS.values())


@pytest.mark.parametrize(
    ("glob", "message"),
    [
        pytest.param("", "give a path pattern", id="empty"),
        pytest.param("/abs/tests/**", "relative to the repository root: write 'abs/tests/**'", id="absolute"),
        pytest.param("tests/", "write 'tests/**'", id="folder"),
        pytest.param("./tests/**", "without '.' or '..' parts", id="dot"),
        pytest.param("../x/**", "without '.' or '..' parts", id="dotdot"),
        pytest.param("tests\\unit\\*.py", "separate folders with '/'", id="backslash"),
    ],
)
def test_bad_globs_are_refused_with_the_fix(glob, message):
    with pytest.raises(PasshatError, match=r"^--tests ") as caught:
        check_glob(glob)
    assert message in str(caught.value)


@pytest.mark.parametrize("glob", ["tests/**", "**/test_*.py", "spec/*.rb", "a?c/**"])
def test_good_globs_pass(glob):
    check_glob(glob)


def _commit_repo(root: Path) -> tuple[Path, str, str]:
    """A repository whose last commit changes source and tests: text, binary, a new file, a deletion, a mode
    change, a name with a space and one with non-ASCII letters."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "tests").mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "old name.py").write_text("x = 1\n")
    (repo / "gone.txt").write_text("bye\n")
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "logo.bin").write_bytes(bytes(range(256)))
    (repo / "tests" / "test_calc.py").write_text("from calc import add\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "old name.py").write_text("x = 2\n")
    (repo / "gone.txt").unlink()
    (repo / "run.sh").chmod(0o755)
    (repo / "logo.bin").write_bytes(bytes(range(255, -1, -1)) + b"\0more")
    (repo / "tests" / "test_calc.py").write_text("from calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n")
    (repo / "tests" / "données.bin").write_bytes(b"\0\1\2")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fix add")
    return repo, git(repo, "rev-parse", "HEAD~1").decode().strip(), git(repo, "rev-parse", "HEAD").decode().strip()


def test_split_parts_apply_and_add_up_to_the_commit(tmp_path):
    repo, parent, commit = _commit_repo(tmp_path)
    args = ["-c", "core.quotePath=true", "diff", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color"]
    names = git(repo, *args, "--name-only", "-z", parent, commit).decode().split("\0")[:-1]
    diff = git(repo, *args, "--binary", parent, commit)
    split = split_patch(diff, names, lambda p: matches(p, TEST_GLOBS["python"]))

    assert split.test_paths == ("tests/données.bin", "tests/test_calc.py")
    assert set(split.solution_paths) == {"calc.py", "gone.txt", "logo.bin", "old name.py", "run.sh"}
    assert sorted(split.solution.split(b"diff --git ") + split.tests.split(b"diff --git ")) == sorted(
        diff.split(b"diff --git ") + [b""]
    )
    git(repo, "checkout", "-q", parent)
    git(repo, "apply", "--index", "-", input=split.solution)
    git(repo, "apply", "--index", "-", input=split.tests)
    assert git(repo, "write-tree") == git(repo, "rev-parse", f"{commit}^{{tree}}")


def test_split_refuses_a_diff_that_does_not_match_the_names():
    diff = b"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    with pytest.raises(ValueError, match="1 file sections but git named 2"):
        split_patch(diff, ["x.py", "y.py"], lambda p: False)
    with pytest.raises(ValueError, match=r"is not the one for 'y\.py'"):
        split_patch(diff, ["y.py"], lambda p: False)


@pytest.mark.parametrize(
    ("files", "lines", "tier"),
    [
        (1, 2, "simple"),
        (1, 10, "simple"),
        (1, 11, "medium"),
        (3, 60, "medium"),
        (4, 10, "complex"),
        (11, 5, "very-complex"),
    ],
)
def test_tier_from_the_size_of_the_fix(files, lines, tier):
    assert tier_for(files, lines) == tier


def test_changed_lines_counts_hunk_lines_only():
    patch = (
        b"diff --git a/pkg/text.py b/pkg/text.py\n--- a/pkg/text.py\n+++ b/pkg/text.py\n@@ -1,2 +1,4 @@\n"
        b"+def _keep(match):\n+    return match\n def titleize(word):\n-    return up(word)\n+    return _keep(word)\n"
    )
    assert changed_lines(patch) == 4  # +2 new function lines, -1 +1 on the return line; headers, context not


DRAFT = Draft(
    id="fix-titleize",
    description="Fix titleize (commit abc)",
    tier="simple",
    language="python",
    repo="../..",
    commit="c" * 40,
    base="b" * 40,
    prompt='Fix titleize: "david\'s code" gives "David\'S Code".  \nSecond line: with a colon\n',
    command=COMMANDS["python"],
    tests=TEST_GLOBS["python"],
)


def test_task_yaml_round_trips_and_says_where_it_came_from():
    text = task_yaml(DRAFT, (["m::t_fail"], ["m::t_a", "m::t_b"]), {"flaky": ["m::t\nodd"], "broken": []})
    data = yaml.safe_load(text)
    assert data["prompt"] == DRAFT.prompt  # trailing spaces and colons survive
    assert data["base"] == {"git": "../..", "commit": "b" * 40}
    tests, scope, health = data["graders"]
    assert tests["fail_to_pass"] == ["m::t_fail"] and tests["pass_to_pass"] == ["m::t_a", "m::t_b"]
    assert tests["command"] == COMMANDS["python"] and tests["protected"] == list(TEST_GLOBS["python"])
    assert scope == {"type": "diff-scope", "deny": list(TEST_GLOBS["python"])}
    assert health == {"type": "health"}
    assert f"#   from commit {'c' * 40}\n#   of ../.. (relative" in text
    assert "# Left out, flaky: 'm::t\\nodd'" in text  # a name with a newline cannot end the comment early
    assert "broken" not in text


def test_the_first_draft_asks_for_auto_lists():
    tests = task_data(DRAFT, "auto", "auto")["graders"][0]
    assert tests["fail_to_pass"] == "auto" and tests["pass_to_pass"] == "auto"


def test_scaffold_is_yaml_with_the_id_and_every_field_named():
    files = scaffold("my-task", "tasks/my-task")
    data = yaml.safe_load(files["task.yaml"])
    assert data["id"] == "my-task" and "prompt" not in data and "description" not in data
    for field in ("prompt", "base", "setup", "solution", "timeout_s", "tags", "language", "network", "limits"):
        assert f"# {field}:" in files["task.yaml"], field
    for grader in ("tests", "diff-scope", "health", "files", "rubric", "pairwise"):
        assert f"type: {grader}" in files["task.yaml"], grader
    assert "passhat check-task tasks/my-task" in files["README.md"]
