"""Folders as bytes through Ray's object store: a task's files to a node, a trial's artifacts back.

No shared filesystem: a folder is packed into an uncompressed tar in memory and unpacked beside its
destination, then renamed into place, so a reader never sees half of it and two unpackers never mix.
Members are extracted with tarfile's `data` filter: no absolute paths, no links out of the folder, no
device files, no setuid bits.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import uuid
from pathlib import Path


def pack(folder: Path) -> bytes:
    """`folder`'s files (links kept as links) as a tar, paths relative to the folder."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in sorted(folder.iterdir()):
            tar.add(entry, arcname=entry.name)  # recursive; symlinks stored as links
    return buffer.getvalue()


def unpack(data: bytes, dest: Path) -> Path:
    """Unpack `data` as the folder `dest` (created with its parents). If another process unpacked it first,
    its copy stays and ours is dropped: both came from the same bytes."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = dest.with_name(f".{dest.name}.unpack-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            tar.extractall(staging, filter="data")
        try:
            os.rename(staging, dest)
        except OSError:
            if not dest.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest
