"""trial._paths: writes, removals and reads inside a tree the agent wrote never follow its symlinks.

(Not test_paths.py: tests/cli/test_paths.py has that basename, and pytest's default import mode needs unique ones.)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from passhat.trial._paths import (
    Entry,
    UnsafePathError,
    lstat_within,
    read_within,
    remove_within,
    symlink_within,
    tree_entries,
    write_within,
)


@pytest.fixture
def tree(tmp_path):
    """root/ (the agent's tree: a/b.txt) beside host/ (what it must not reach: secret.txt)."""
    root, host = tmp_path / "root", tmp_path / "host"
    (root / "a").mkdir(parents=True)
    (root / "a" / "b.txt").write_text("inside\n")
    host.mkdir()
    (host / "secret.txt").write_text("secret\n")
    return root, host


def _final_link_to_host_file(root: Path, host: Path) -> None:
    (root / "a" / "b.txt").unlink()
    (root / "a" / "b.txt").symlink_to(host / "secret.txt")


def _parent_link_to_host_folder(root: Path, host: Path) -> None:
    (root / "a" / "b.txt").unlink()
    (root / "a").rmdir()
    (root / "a").symlink_to(host)


def _parent_relative_link_out(root: Path, host: Path) -> None:
    _parent_link_to_host_folder(root, host)
    (root / "a").unlink()
    (root / "a").symlink_to("../host")


def _parent_is_a_file(root: Path, host: Path) -> None:
    (root / "a" / "b.txt").unlink()
    (root / "a").rmdir()
    (root / "a").write_text("a file where a folder was\n")


def _final_is_a_folder(root: Path, host: Path) -> None:
    (root / "a" / "b.txt").unlink()
    (root / "a" / "b.txt").mkdir()
    (root / "a" / "b.txt" / "inner").symlink_to(host / "secret.txt")


def _nothing_there(root: Path, host: Path) -> None:
    (root / "a" / "b.txt").unlink()
    (root / "a").rmdir()


SETUPS = [
    pytest.param(_final_link_to_host_file, id="file-is-a-link-to-a-host-file"),
    pytest.param(_parent_link_to_host_folder, id="folder-is-a-link-to-a-host-folder"),
    pytest.param(_parent_relative_link_out, id="folder-is-a-relative-link-out"),
    pytest.param(_parent_is_a_file, id="folder-is-a-file"),
    pytest.param(_final_is_a_folder, id="file-is-a-folder"),
    pytest.param(_nothing_there, id="missing"),
]


def _host_untouched(host: Path) -> bool:
    return sorted(os.listdir(host)) == ["secret.txt"] and (host / "secret.txt").read_text() == "secret\n"


@pytest.mark.parametrize("setup", SETUPS)
def test_write_within_replaces_what_is_in_the_way_and_never_writes_through_it(tree, setup):
    root, host = tree
    setup(root, host)
    write_within(root, "a/b.txt", b"restored\n", 0o640)
    assert _host_untouched(host)
    assert not (root / "a").is_symlink() and not (root / "a" / "b.txt").is_symlink()
    assert (root / "a" / "b.txt").read_bytes() == b"restored\n"
    assert (root / "a" / "b.txt").stat().st_mode & 0o777 == 0o640  # the mode asked for, whatever the umask


@pytest.mark.parametrize("setup", SETUPS)
def test_symlink_within_places_a_link_and_never_writes_through_one(tree, setup):
    root, host = tree
    setup(root, host)
    symlink_within(root, "a/b.txt", "../elsewhere")
    assert _host_untouched(host)
    assert os.readlink(root / "a" / "b.txt") == "../elsewhere" and not (root / "a").is_symlink()


@pytest.mark.parametrize(
    ("setup", "removed", "left"),
    [
        pytest.param(_final_link_to_host_file, True, {}, id="removes-the-link-not-its-target"),
        pytest.param(_parent_link_to_host_folder, False, {"a": "symlink"}, id="nothing-inside-through-a-folder-link"),
        pytest.param(_final_is_a_folder, True, {}, id="removes-a-folder-and-what-is-in-it"),
        pytest.param(_nothing_there, False, {}, id="nothing-there"),
    ],
)
def test_remove_within_removes_only_what_is_inside(tree, setup, removed, left):
    root, host = tree
    setup(root, host)
    assert remove_within(root, "a/b.txt") is removed
    assert _host_untouched(host)
    assert tree_entries(root) == left


@pytest.mark.parametrize(
    ("links", "rel", "expected"),
    [
        pytest.param({}, "a/b.txt", b"inside\n", id="regular-file"),
        pytest.param({}, "a/none.txt", None, id="missing"),
        pytest.param({}, "a", None, id="a-folder-is-no-file"),
        pytest.param({}, "a/b.txt/x", None, id="below-a-file"),
        pytest.param({"l.txt": "a/b.txt"}, "l.txt", b"inside\n", id="link-inside-followed-inside"),
        pytest.param({"a/up.txt": "../a/./b.txt"}, "a/up.txt", b"inside\n", id="link-with-dotdot-that-stays-in"),
        pytest.param({"c": "a", "d": "c"}, "d/b.txt", b"inside\n", id="chain-of-folder-links-inside"),
        pytest.param({"self": "."}, "self/a/b.txt", b"inside\n", id="link-to-the-root-itself"),
        pytest.param({"dangling": "nowhere"}, "dangling", None, id="dangling-link-inside"),
    ],
)
def test_read_within_follows_links_only_inside_the_tree(tree, links, rel, expected):
    root, _ = tree
    for link, target in links.items():
        (root / link).symlink_to(target)
    assert read_within(root, rel) == expected


@pytest.mark.parametrize(
    ("links", "rel", "message"),
    [
        pytest.param(
            {"l.txt": "{host}/secret.txt"},
            "l.txt",
            "l.txt is a symlink to {host}/secret.txt outside the tree (not followed)",
            id="absolute-link",
        ),
        pytest.param(
            {"l.txt": "../host/secret.txt"},
            "l.txt",
            "l.txt is a symlink to ../host/secret.txt outside the tree (not followed)",
            id="relative-link-climbing-out",
        ),
        pytest.param(
            {"a/deep.txt": "../../host/secret.txt"},
            "a/deep.txt",
            "a/deep.txt is a symlink to ../../host/secret.txt outside the tree (not followed)",
            id="relative-link-climbing-out-from-below",
        ),
        pytest.param(
            {"h": "{host}"},
            "h/secret.txt",
            "h/secret.txt leads to h, a symlink to {host} outside the tree (not followed)",
            id="folder-link",
        ),
        pytest.param(
            {"in": "a", "a/out": "/etc"},
            "in/out/passwd",
            "in/out/passwd leads to a/out, a symlink to /etc outside the tree (not followed)",
            id="in-tree-link-then-one-out",
        ),
        pytest.param(
            {"x": "y", "y": "x"},
            "x",
            "after 40 links (a loop?) (not followed)",
            id="loop",
        ),
        pytest.param({}, "../host/secret.txt", "'../host/secret.txt' is not a relative path inside", id="dotdot"),
        pytest.param({}, "/etc/passwd", "'/etc/passwd' is not a relative path inside", id="absolute"),
    ],
)
def test_read_within_refuses_what_leaves_the_tree_and_says_what_it_is(tree, links, rel, message):
    root, host = tree
    for link, target in links.items():
        (root / link).symlink_to(target.format(host=host))
    with pytest.raises(UnsafePathError, match=re.escape(message.format(host=host))):
        read_within(root, rel)


def test_read_within_does_not_block_on_a_fifo_nor_read_past_its_limit(tree):
    root, _ = tree
    os.mkfifo(root / "pipe")
    with pytest.raises(UnsafePathError, match=r"pipe is not a regular file \(mode prw"):
        read_within(root, "pipe")
    with pytest.raises(UnsafePathError, match=re.escape("a/b.txt is larger than 3 bytes; not read")):
        read_within(root, "a/b.txt", limit=3)


@pytest.mark.parametrize(
    ("links", "rel", "entry"),
    [
        pytest.param({}, "a/b.txt", Entry("file"), id="file"),
        pytest.param({}, "a", Entry("dir"), id="folder"),
        pytest.param({}, "nope", Entry("missing"), id="missing"),
        pytest.param({"l": "/etc/passwd"}, "l", Entry("symlink", "/etc/passwd"), id="link-not-followed"),
        pytest.param({"c": "a", "a/l": "b.txt"}, "c/l", Entry("symlink", "b.txt"), id="in-tree-parent-resolved"),
    ],
)
def test_lstat_within_reports_the_last_component_itself(tree, links, rel, entry):
    root, _ = tree
    for link, target in links.items():
        (root / link).symlink_to(target)
    assert lstat_within(root, rel) == entry


def test_tree_entries_lists_links_without_entering_them(tree):
    root, host = tree
    (root / "h").symlink_to(host)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("")
    assert tree_entries(root) == {"a/b.txt": "file", "h": "symlink"}
