"""Stream the rows of a Promptfoo JSONL results file (`-o results.jsonl`: promptfoo 0.123 writes one row object
per line, no wrapper): blocks of whole lines, each one msgspec `decode_lines` (`_scan.Typed`); a block msgspec
refuses is read line by line by `json`, with the same one-line errors, line numbers included, as before.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import mmap
from collections.abc import Iterator
from typing import Any

from passhat.common._errors import ResultsError
from passhat.results import _scan
from passhat.results._scan import _REFUSED, ByteSource, NotJson, Typed, _utf8_error

_RELEASE = 16 << 20  # bytes of a mapped file read between two `_release`s


def _blocks(handle: ByteSource, limit: int | None) -> Iterator[bytes | memoryview]:
    """The file in blocks of whole lines (the last may lack its newline), up to byte `limit` (a line start)."""
    mapped = _mapped(handle)
    if mapped is not None:
        yield from _mapped_blocks(handle, mapped, limit)
        return
    rest, read = b"", 0
    while True:
        size = _scan.CHUNK if limit is None else min(_scan.CHUNK, limit - read)
        data = handle.read(size) if size > 0 else b""
        read += len(data)
        if not data:
            yield from [rest] if rest else []
            return
        end = data.rfind(b"\n") + 1
        if end == 0:
            rest += data  # a line longer than the chunk
            continue
        yield rest + memoryview(data)[:end]  # (one copy of the block, not two)
        rest = data[end:]


def _mapped(handle: ByteSource) -> mmap.mmap | None:
    """The file mapped into memory, when it can be (a regular, non-empty file): its blocks are then read in place,
    with no copy. Copying 600 MB out of the page cache by read() took ~0.3 CPU-s of a 5 s report.
    (A file cut shorter by another process while it is read would crash the read, SIGBUS: results files are
    written whole by promptfoo, or appended to, never cut.)"""
    fileno = getattr(handle, "fileno", None)
    if fileno is None:
        return None
    try:
        mapped = mmap.mmap(fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # not a regular file, or empty: read() it
        return None
    mapped.madvise(mmap.MADV_SEQUENTIAL)
    return mapped


def _release(mapped: mmap.mmap, start: int, end: int) -> int:
    """Drop the mapped pages from `start` (a page start) up to the page of byte `end` out of the process's memory
    (the file's pages stay cached by the kernel; a row still holding a part of them reads it back from there):
    else every page read counts in the process's resident memory, the whole file by the end. The next start."""
    end -= end % mmap.PAGESIZE
    mapped.madvise(mmap.MADV_DONTNEED, start, end - start)
    return end


def _mapped_blocks(handle: ByteSource, mapped: mmap.mmap, limit: int | None) -> Iterator[memoryview]:
    """`_blocks` of a mapped file: from the handle's position, which ends where the blocks end. The handle's
    `add`, when it has one (`_progress.Counted`), is told the bytes of each block, as its reads would be."""
    count = getattr(handle, "add", None)
    start = handle.seek(0, 1)
    stop = len(mapped) if limit is None else min(len(mapped), start + limit)
    view = memoryview(mapped)
    released = start - start % mmap.PAGESIZE  # pages before this one are out of the process's memory
    while start < stop:
        end = mapped.rfind(b"\n", start, min(start + _scan.CHUNK, stop)) + 1
        if end == 0:  # a line longer than the chunk
            end = mapped.find(b"\n", start + _scan.CHUNK, stop) + 1 or stop
        yield view[start:end]
        if count is not None:
            count(end - start)
        start = handle.seek(end)
        if start - released >= _RELEASE:
            released = _release(mapped, released, start)
    with contextlib.suppress(BufferError):  # a row still holds a part (msgspec.Raw): it is freed with that row
        view.release()
        mapped.close()


def jsonl_rows(
    path: str, handle: ByteSource, limit: int | None = None, typed: Typed | None = None
) -> Iterator[tuple[int, Any]]:
    """(index, row) for each non-blank line of a JSONL file, up to byte `limit` (a line start) of the handle;
    the index counts rows from 0, and `line_of` turns it into a line number for an error message."""
    return enumerate(itertools.chain.from_iterable(jsonl_blocks(path, handle, limit, typed)))


def jsonl_blocks(
    path: str, handle: ByteSource, limit: int | None = None, typed: Typed | None = None
) -> Iterator[list[Any]]:
    """The rows of the non-blank lines of a JSONL file (as `jsonl_rows`), a block of lines at a time: a reader can go
    over a block's rows at C speed (`_rows.iter_made`).

    Given `typed`, a block of lines msgspec decodes is not counted (a scan of every byte, ~1 us a row): its
    newlines are counted from the file only when a later block needs a line number for an error."""
    base = handle.seek(0, 1)
    offset = rows = 0
    number: int | None = 0  # lines before `offset`; None when not counted
    for block in _blocks(handle, limit):
        found = None
        if typed is not None:
            try:
                found = typed.one.decode_lines(block)
            except _REFUSED:
                pass  # line by line below: the exact error, or json's reading of what msgspec refuses
        if found is not None:
            yield found
            offset, rows, number = offset + len(block), rows + len(found), None
            continue
        if number is None:
            number = _newlines(path, base, offset)
        found = []
        for raw in io.BytesIO(block):
            number += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise _utf8_error(path, offset + error.start) from None
            offset += len(raw)
            if number == 1:
                line = line.removeprefix("\ufeff")
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                cut = " (the file ends mid-row: the eval did not finish writing it)" if not raw.endswith(b"\n") else ""
                msg = (
                    f"{path}: line {number} is not valid JSON at column {error.colno} ({error.msg}){cut}; "
                    "each line of a promptfoo -o results.jsonl file is one row object"
                )
                raise NotJson(msg) from None
            found.append(row if typed is None else typed.convert(row))
        rows += len(found)
        yield found
    if not rows:
        msg = f"{path}: file is empty; the eval did not finish writing it, re-run `npx promptfoo eval -o {path}`"
        raise ResultsError(msg)


def _newlines(path: str, base: int, size: int) -> int:
    """The newlines in `size` bytes of the file from byte `base`."""
    count = 0
    with open(path, "rb") as handle:
        handle.seek(base)
        while size > 0 and (data := handle.read(min(_scan.CHUNK, size))):
            count, size = count + data.count(b"\n"), size - len(data)
    return count


def line_of(path: str, index: int) -> int:
    """The line number of row `index` (from 0) of a JSONL file: its index-th non-blank line, as `jsonl_rows`
    skips blank ones (read again: only for an error message)."""
    rows = -1
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.decode("utf-8", errors="replace")
            if number == 1:
                line = line.removeprefix("\ufeff")
            if line.strip():
                rows += 1
                if rows == index:
                    return number
    return 0  # (not reached for an index jsonl_rows yielded)
