"""Fold a large results file in two processes: its first half here, its second in a forked child.

Only a speed-up (a 300 MB file is mostly JSON decoding, and there are usually two CPUs): the totals
are exactly those of one pass, `fold(iter_trials(path))`. At any doubt - no row boundary near the
middle, a problem in either half, no fork, other threads running - the file is read whole, in this
process, which also reports any problem with the usual exact message.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from multiprocessing.connection import Connection
from pathlib import Path

from passhat._results import iter_trials, iter_trials_part
from passhat._scan import row_split
from passhat._summary import Groups, fold, merge

PARALLEL_BYTES = 64 << 20  # below this, forking costs more than it saves


def fold_file(path: str | Path) -> Groups:
    """Per-(task, provider) totals of a results file (see `_summary.fold`)."""
    path = str(path)
    start = split_point(path)
    if start is not None:
        groups = _fold_in_two(path, start)
        if groups is not None:
            return groups
    return fold(iter_trials(path))


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


def _fold_tail(path: str, start: int, sender: Connection) -> None:
    """In the child: the totals of the second half, or None if anything was off."""
    try:
        groups: Groups | None = fold(iter_trials_part(path, start, "tail"))
    except Exception:  # noqa: BLE001 - any doubt: the parent reads the file whole
        groups = None
    sender.send(groups)
    sender.close()


def _fold_in_two(path: str, start: int) -> Groups | None:
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_fold_tail, args=(path, start, sender), daemon=True)
    child.start()
    sender.close()
    try:
        head = fold(iter_trials_part(path, start, "head"))
        tail = receiver.recv()
    except Exception:  # noqa: BLE001 - any doubt: read the file whole
        return None
    finally:
        receiver.close()
        if child.is_alive():
            child.terminate()  # our own child, by its handle
        child.join()
    return None if tail is None else merge(head, tail)
