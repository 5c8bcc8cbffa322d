"""Git-based task bases (`base: {git, commit}`): loading, the one bare mirror per repository, exporting a
commit's files, the task version, and every bad base as one TaskError naming file, field, value and fix.
All with real git on a repository made in the test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from passhat.common._errors import TaskError
from passhat.tasks import export_source, load_task, source_tree, task_test_patch
from passhat.tasks._source import mirror_path
from passhat.trial._sandbox import prepare_base

FIX = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n"
TEST_PATCH = "diff --git a/t.txt b/t.txt\nnew file mode 100644\n--- /dev/null\n+++ b/t.txt\n@@ -0,0 +1 @@\n+t\n"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def origin(tmp_path) -> tuple[Path, str]:
    """A repository with one commit: a.txt, an executable script and a symlink."""
    repo = tmp_path / "origin"
    (repo / "bin").mkdir(parents=True)
    (repo / "a.txt").write_text("old\n")
    (repo / "bin" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "bin" / "run.sh").chmod(0o755)
    (repo / "link.txt").symlink_to("a.txt")
    git(repo, "init", "-q", "-b", "main")
    return repo, commit_all(repo, "first")


def make_task(tmp_path: Path, git_value: str, commit: str, extra: str = "", test_patch: str | None = None) -> Path:
    folder = tmp_path / "tasks" / "t"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "solution.patch").write_text(FIX)
    if test_patch is not None:
        (folder / "test.patch").write_text(test_patch)
    (folder / "task.yaml").write_text(
        "id: t\ndescription: d\ntier: simple\nprompt: p\n"
        f"base: {{git: {git_value}, commit: '{commit}'}}\n{extra}"
        "graders:\n  - type: files\n    checks: [{path: a.txt, contains: new}]\n"
    )
    return folder


def test_a_git_base_loads_without_a_repo_folder_and_resolves_a_relative_path(tmp_path, origin):
    repo, commit = origin
    task = load_task(make_task(tmp_path, "../../origin", commit, test_patch=TEST_PATCH))
    assert task.repo is None
    assert (task.base_git, task.base_commit) == (str(repo), commit)
    assert task.test_patch == task.dir / "test.patch"
    assert task_test_patch(task.dir) == task.test_patch


def test_export_keeps_symlinks_and_exec_bits_and_writes_no_git_folder(tmp_path, origin):
    _, commit = origin
    task = load_task(make_task(tmp_path, "../../origin", commit))
    dest = tmp_path / "out"
    export_source(task, dest, tmp_path / "cache")
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == [
        "a.txt",
        "bin",
        "bin/run.sh",
        "link.txt",
    ]
    assert os.readlink(dest / "link.txt") == "a.txt"
    assert os.stat(dest / "bin" / "run.sh").st_mode & 0o111
    assert not os.stat(dest / "a.txt").st_mode & 0o111


def test_the_mirror_is_cloned_once_and_reused_without_the_origin(tmp_path, origin):
    repo, commit = origin
    task = load_task(make_task(tmp_path, "../../origin", commit))
    cache = tmp_path / "cache"
    export_source(task, tmp_path / "one", cache)
    mirror = mirror_path(str(repo), cache)
    assert (mirror / "HEAD").is_file() and list(cache.glob("mirrors/*.git")) == [mirror]
    inode = mirror.stat().st_ino
    repo.rename(tmp_path / "origin-gone")  # a second clone or fetch would fail now
    export_source(task, tmp_path / "two", cache)
    assert (tmp_path / "two" / "a.txt").read_text() == "old\n"
    assert mirror.stat().st_ino == inode


def test_a_commit_missing_from_the_mirror_is_fetched(tmp_path, origin):
    repo, first = origin
    cache = tmp_path / "cache"
    export_source(load_task(make_task(tmp_path, "../../origin", first)), tmp_path / "one", cache)
    (repo / "a.txt").write_text("second\n")
    second = commit_all(repo, "second")
    export_source(load_task(make_task(tmp_path, "../../origin", second)), tmp_path / "two", cache)
    assert (tmp_path / "two" / "a.txt").read_text() == "second\n"
    assert list(cache.glob("mirrors/*.git")) == [mirror_path(str(repo), cache)]


def test_concurrent_processes_share_one_mirror(tmp_path, origin):
    _, commit = origin
    folder = make_task(tmp_path, "../../origin", commit)
    code = (
        "import sys; from pathlib import Path; from passhat.tasks import export_source, load_task\n"
        "export_source(load_task(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(folder), str(tmp_path / f"out{i}"), str(tmp_path / "cache")])
        for i in range(3)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    assert all((tmp_path / f"out{i}" / "a.txt").read_text() == "old\n" for i in range(3))
    assert [p.name for p in (tmp_path / "cache" / "mirrors").iterdir() if p.suffix == ".git"] == [
        mirror_path(str(tmp_path / "origin"), tmp_path / "cache").name
    ]


def test_prepare_base_and_source_tree_of_a_git_base(tmp_path, origin):
    _, commit = origin
    task = load_task(make_task(tmp_path, "../../origin", commit))
    base = prepare_base(task, tmp_path / "state" / "cache")
    assert (base.path / "a.txt").read_text() == "old\n" and (base.path / ".git").is_dir()
    tree = source_tree(task, tmp_path / "fake-model-cache")
    assert tree == source_tree(task, tmp_path / "fake-model-cache")  # exported once
    assert (tree / "a.txt").read_text() == "old\n" and not (tree / ".git").exists()


def test_the_version_follows_test_patch_and_not_unrelated_commits(tmp_path, origin):
    repo, commit = origin
    folder = make_task(tmp_path, "../../origin", commit, test_patch=TEST_PATCH)
    first = load_task(folder).version
    (repo / "other.txt").write_text("unrelated\n")
    commit_all(repo, "unrelated")  # the repository moves on; the task still names its commit
    assert load_task(folder).version == first
    (folder / "test.patch").write_text(TEST_PATCH.replace("+t\n", "+u\n"))
    assert load_task(folder).version != first
    (folder / "test.patch").unlink()
    without = load_task(folder).version
    (folder / "solution.patch").write_text(FIX.replace("+new", "+newer"))
    assert load_task(folder).version != without


def test_a_repo_folder_task_version_includes_test_patch(tmp_path):
    folder = tmp_path / "tasks" / "r"
    (folder / "repo").mkdir(parents=True)
    (folder / "repo" / "a.txt").write_text("old\n")
    (folder / "solution.patch").write_text(FIX)
    (folder / "task.yaml").write_text(
        "id: r\ndescription: d\ntier: simple\nprompt: p\ngraders: [{type: files, checks: [{path: a.txt, exists: true}]}]\n"
    )
    before = load_task(folder)
    assert before.repo == folder / "repo" and before.test_patch is None
    (folder / "test.patch").write_text(TEST_PATCH)
    assert load_task(folder).version != before.version


@pytest.mark.parametrize(
    ("git_value", "commit", "message"),
    [
        pytest.param(
            "../../origin",
            "0" * 40,
            r"task.yaml: field 'base.commit': '0{40}' is not a commit of .*/origin .*; give a commit the "
            r"repository holds \(`git log --format=%H` there\), or fix base.git",
            id="commit-not-in-repository",
        ),
        pytest.param(
            "../../nowhere",
            None,
            r"task.yaml: field 'base.git': '../../nowhere' is not a git repository \(.*/nowhere\); give the path "
            r"\(relative to the task folder\) or the URL of the repository that holds base.commit",
            id="path-is-not-a-repository",
        ),
        pytest.param(
            "../../origin",
            "abc123",
            r"task.yaml: field 'base.commit': 'abc123' does not match .*; give the full commit id \(40 hex digits",
            id="short-commit",
        ),
        pytest.param(
            "file:///nonexistent/repo.git",
            None,
            r"task.yaml: field 'base.git': 'file:///nonexistent/repo.git': git clone failed: .*; give the path or "
            r"URL of a git repository you can read",
            id="url-that-cannot-be-cloned",
        ),
    ],
)
def test_a_bad_base_is_one_task_error(tmp_path, origin, git_value, commit, message):
    folder = make_task(tmp_path, git_value, commit or origin[1])
    with pytest.raises(TaskError, match=message) as caught:
        export_source(load_task(folder), tmp_path / "out", tmp_path / "cache")
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_both_repo_folder_and_base_is_one_task_error(tmp_path, origin):
    folder = make_task(tmp_path, "../../origin", origin[1])
    (folder / "repo").mkdir()
    with pytest.raises(TaskError, match=r"field 'base': .* and the folder .*/repo both say where the repository"):
        load_task(folder)


def test_neither_repo_folder_nor_base_says_both_fixes(tmp_path):
    folder = tmp_path / "tasks" / "n"
    folder.mkdir(parents=True)
    (folder / "solution.patch").write_text(FIX)
    (folder / "task.yaml").write_text("id: n\ndescription: d\ntier: simple\nprompt: p\ngraders: [{type: health}]\n")
    with pytest.raises(TaskError, match=r"has no repo/ folder .*or name a commit of a git repository: `base: "):
        load_task(folder)


def test_a_named_test_patch_that_is_missing_is_one_task_error(tmp_path, origin):
    folder = make_task(tmp_path, "../../origin", origin[1], extra="test_patch: tests.diff\n")
    with pytest.raises(TaskError, match=r"field 'test_patch': 'tests.diff' is not a file inside the task folder"):
        load_task(folder)


def test_the_scripted_models_oracle_plans_the_fix_of_a_git_based_task(tmp_path, origin):
    from passhat.fake_model._hacks import Plans

    make_task(tmp_path, "../../origin", origin[1])
    plan = Plans(tmp_path / "tasks").get("t")
    assert plan, "no plan for a git-based task"
    assert "a.txt" in str(plan) and "new" in str(plan)
