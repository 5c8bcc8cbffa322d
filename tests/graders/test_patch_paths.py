"""trial._patch.patch_stats on real `git diff` patches: every path git reads is seen, however git quotes it."""

from __future__ import annotations

import os
import subprocess

import pytest

from passhat.common._errors import SandboxError
from passhat.trial._patch import patch_stats

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.hooksPath=/dev/null"]


def _git(repo, *args: str) -> bytes:
    return subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True, timeout=60).stdout


def _patch(tmp_path, change, renames: bool = False) -> bytes:
    """Commit a.txt, sp ace/x y.txt and s.sql; apply `change`; the staged diff against that commit."""
    repo = tmp_path / "repo"
    (repo / "sp ace").mkdir(parents=True)
    (repo / "a.txt").write_text("one\n")
    (repo / "sp ace" / "x y.txt").write_text("space\n")
    (repo / "s.sql").write_text("-- a comment\nselect 1;\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    change(repo)
    _git(repo, "add", "-A")
    return _git(repo, "diff", "--cached", "--binary", "--find-renames" if renames else "--no-renames")


def _write(name: str, text: str = "x\n"):
    return lambda repo: (repo / name).write_text(text)


@pytest.mark.parametrize(
    ("change", "renames", "paths", "added", "removed"),
    [
        pytest.param(_write("tést.py"), False, ["tést.py"], 1, 0, id="non-ascii"),
        pytest.param(_write("a\nb.py"), False, ["a\nb.py"], 1, 0, id="newline"),
        pytest.param(_write('q"uote\\back\ttab.py'), False, ['q"uote\\back\ttab.py'], 1, 0, id="quote-backslash-tab"),
        pytest.param(_write("sp ace/x y.txt", "spaces\n"), False, ["sp ace/x y.txt"], 1, 1, id="space-edited"),
        pytest.param(
            # removing "-- a comment" writes a hunk line "--- a comment": not a file header
            _write("s.sql", "select 1;\n"),
            False,
            ["s.sql"],
            0,
            1,
            id="removed-line-that-looks-like-a-header",
        ),
        pytest.param(
            lambda repo: os.replace(repo / "sp ace" / "x y.txt", repo / "sp ace" / "z w.txt"),
            True,
            ["sp ace/x y.txt", "sp ace/z w.txt"],
            0,
            0,
            id="rename-with-spaces-both-names",
        ),
        pytest.param(
            lambda repo: os.replace(repo / "a.txt", repo / "é.txt"),
            True,
            ["a.txt", "é.txt"],
            0,
            0,
            id="rename-to-a-quoted-name",
        ),
        pytest.param(lambda repo: (repo / "bin.dat").write_bytes(b"\0\1\2"), False, ["bin.dat"], 0, 0, id="binary"),
        pytest.param(lambda repo: (repo / "l").symlink_to("/etc/passwd"), False, ["l"], 1, 0, id="symlink"),
        pytest.param(lambda repo: (repo / "a.txt").chmod(0o755), False, ["a.txt"], 0, 0, id="mode-only"),
        pytest.param(lambda repo: (repo / "a.txt").unlink(), False, ["a.txt"], 0, 1, id="deleted"),
    ],
)
def test_patch_stats_sees_every_path(tmp_path, change, renames, paths, added, removed):
    stats = patch_stats(_patch(tmp_path, change, renames))
    assert (list(stats.paths), stats.added, stats.removed) == (sorted(paths), added, removed)


def test_an_empty_patch_touches_nothing():
    assert patch_stats(b"").paths == () and patch_stats(b"\n").changed_lines == 0


def test_a_patch_git_cannot_read_is_refused_with_the_reason():
    garbage = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\nnot a hunk line\n"
    with pytest.raises(SandboxError, match="git cannot read the patch: error: "):
        patch_stats(garbage)
