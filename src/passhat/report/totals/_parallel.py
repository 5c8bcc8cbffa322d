"""Fold a large results file in two processes: its first half here, its second in a forked child.

Only a speed-up (a 300 MB file is mostly JSON decoding, and there are usually two CPUs): the totals
are exactly those of one pass, `fold(iter_trials(path))` (each read as `fold_fields` of `trial_fields`: no Trial
is built per row). At any doubt - no row boundary near the middle, a problem in either half, no fork, other
threads running - the file is read whole, in this process, which also reports any problem with the usual exact
message.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from passhat.common._errors import ResultsError
from passhat.report.totals._tally import Groups, fold_fields, merge
from passhat.results._progress import Progress
from passhat.results._provenance import collector
from passhat.results._rows import iter_checked, iter_made
from passhat.results._scan import row_split
from passhat.results._trial import trial_fields

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
PARALLEL_BYTES = 64 << 20  # below this, forking costs more than it saves


def fold_file(path: str | Path, progress: Progress | None = None, wrapper: dict[str, Any] | None = None) -> Groups:
    """Per-(task, provider) totals of a results file (see `_tally.fold_fields`); `progress` counts the bytes read;
    `wrapper` (a dict) is filled with the JSON wrapper's provenance fields (`results._provenance`).

    The cyclic garbage collector is off meanwhile: reading makes no reference cycles, and collecting while a
    million short-lived rows are built costs ~15% of the read (the forked child inherits the setting)."""
    collecting = gc.isenabled()
    gc.disable()
    _keep_freed_memory()
    try:
        return _fold_file(str(path), progress, wrapper)
    finally:
        if collecting:
            gc.enable()


def _keep_freed_memory() -> None:
    """Ask glibc's malloc to keep the few-MB blocks a read frees and hand them out again, instead of unmapping
    each and faulting fresh pages in for the next chunk (~1 CPU-s of kernel time per million rows, ~6% of the
    wall). It costs nothing when files are small; elsewhere than glibc it does nothing."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return
    mallopt(_M_MMAP_THRESHOLD, 64 << 20)  # blocks below 64 MB come from the heap...
    mallopt(_M_TRIM_THRESHOLD, 256 << 20)  # ...which keeps up to 256 MB of freed memory for reuse


def _fold_file(path: str, progress: Progress | None, wrapper: dict[str, Any] | None) -> Groups:
    start = split_point(path)
    if start is not None:
        found = _fold_in_two(path, start, progress)
        if found is not None:
            if wrapper is not None:
                wrapper.update(found[1])
            return found[0]
        if progress is not None:
            progress.restart()
    members: dict[str, Any] = {}
    read = None if progress is None else progress.add
    try:
        groups = fold_fields(iter_made(path, trial_fields, read, collector(members)))
    except (ResultsError, OSError):  # read again, a row at a time, for the exact message (the row named)
        if progress is not None:
            progress.restart()
        members.clear()
        groups = fold_fields(iter_checked(path, trial_fields, read, collector(members)))
    if wrapper is not None:
        wrapper.update(members)
    return groups


def split_point(path: str, minimum: int | None = None) -> int | None:
    """Where a row begins near the middle of a file of `minimum` bytes or more (default PARALLEL_BYTES),
    if reading it in two processes may pay."""
    minimum = PARALLEL_BYTES if minimum is None else minimum
    if (os.cpu_count() or 1) < 2 or threading.active_count() > 1:
        return None  # (forking a process that runs threads is unsafe)
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    try:
        size = os.path.getsize(path)
        if size < minimum:
            return None
        with open(path, "rb") as handle:
            if not path.endswith(".jsonl"):
                return row_split(handle, size)
            handle.seek(size // 2)
            handle.readline()
            return handle.tell() if handle.tell() < size else None
    except OSError:
        return None  # the whole read reports it


def _fold_tail(path: str, start: int, sender: Connection, read: ctypes.c_long | None = None) -> None:
    """In the child: the totals of the second half, or None if anything was off. `read` counts its bytes."""

    def count(size: int) -> None:
        read.value += size  # type: ignore[union-attr]  # only called when read is given

    members: dict[str, Any] = {}
    try:
        counted = None if read is None else count
        tail = iter_made(path, trial_fields, counted, collector(members), (start, "tail"))
        found: tuple[Groups, dict[str, Any]] | None = (fold_fields(tail), members)
    except Exception:
        found = None
    sender.send(found)
    sender.close()


def _fold_in_two(path: str, start: int, progress: Progress | None = None) -> tuple[Groups, dict[str, Any]] | None:
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    read = None if progress is None else context.Value("q", 0, lock=False)  # the child's bytes, shared memory
    child = context.Process(target=_fold_tail, args=(path, start, sender, read), daemon=True)
    child.start()
    sender.close()
    try:
        if progress is not None and read is not None:
            progress.elsewhere = lambda: read.value
        members: dict[str, Any] = {}
        counted = None if progress is None else progress.add
        head = fold_fields(iter_made(path, trial_fields, counted, collector(members), (start, "head")))
        while progress is not None and not receiver.poll(0.1):  # the second half is still being read
            progress.show()
        tail = receiver.recv()
    except Exception:
        return None
    finally:
        receiver.close()
        if child.is_alive():
            child.terminate()  # our own child, by its handle
        child.join()
    if tail is None:
        return None
    tail_groups, tail_members = tail
    return merge(head, tail_groups), {**members, **tail_members}
