"""Folders through the object store: packed, unpacked whole or not at all, nothing outside the folder."""

from __future__ import annotations

import io
import os
import tarfile

import pytest

from passhat.cluster._ship import pack, unpack


def test_round_trip_keeps_files_links_and_exec_bits(tmp_path):
    src = tmp_path / "src"
    (src / "repo" / "sub").mkdir(parents=True)
    (src / "task.yaml").write_text("id: x\n")
    (src / "repo" / "sub" / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(src / "repo" / "sub" / "run.sh", 0o755)
    os.symlink("sub/run.sh", src / "repo" / "link")
    dest = unpack(pack(src), tmp_path / "a" / "b" / "x")
    assert (dest / "task.yaml").read_text() == "id: x\n"
    assert os.readlink(dest / "repo" / "link") == "sub/run.sh"
    assert os.access(dest / "repo" / "sub" / "run.sh", os.X_OK)
    assert [p.name for p in dest.parent.iterdir()] == ["x"]  # no staging folder left


def test_a_second_unpack_keeps_the_first(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "f").write_text("1")
    dest = unpack(pack(src), tmp_path / "x")
    (src / "f").write_text("2")
    assert unpack(pack(src), tmp_path / "x") == dest
    assert (dest / "f").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "x"]


def test_a_member_outside_the_folder_is_refused(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("../escaped")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(tarfile.OutsideDestinationError):
        unpack(buffer.getvalue(), tmp_path / "d" / "x")
    assert not (tmp_path / "d" / "escaped").exists()
    assert not (tmp_path / "d" / "x").exists()
