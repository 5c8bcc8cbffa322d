"""A progress line on stderr while `passhat report` reads a big results file.

Only on a terminal (a CI log stays clean) and only for files of MIN_BYTES or more: "reading results.json:
120 / 320 MB (37%)", redrawn in place at most every INTERVAL seconds, erased when the read is done.
The readers count the bytes they read through `Counted`; the time comes from `clock`, so tests need no sleep.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TextIO

MIN_BYTES = 50 << 20
INTERVAL = 0.1  # seconds: at most ~10 redraws a second
MB = 1 << 20
_ERASE = "\r\x1b[K"  # back to the start of the line, clear to its end


class Progress:
    """Bytes read out of `total`, drawn on `stream` as one line that is rewritten in place."""

    def __init__(
        self, stream: TextIO, total: int, name: str, *, clock: Callable[[], float] = time.monotonic,
        interval: float = INTERVAL,
    ) -> None:  # fmt: skip
        self.stream, self.total, self.name, self.clock, self.interval = stream, total, name, clock, interval
        self.done = 0
        self.elsewhere: Callable[[], int] = lambda: 0  # bytes read by another process (the second half)
        self._shown_at: float | None = None
        self._drawn = False

    def add(self, count: int) -> None:
        """`count` more bytes were read here."""
        self.done += count
        self.show()

    def show(self) -> None:
        """Redraw, unless the last redraw was less than `interval` ago."""
        now = self.clock()
        if self._shown_at is not None and now - self._shown_at < self.interval:
            return
        self._shown_at = now
        done = min(self.done + self.elsewhere(), self.total)
        share = done / self.total if self.total else 1.0
        self.stream.write(f"{_ERASE}reading {self.name}: {done / MB:.0f} / {self.total / MB:.0f} MB ({share:.0%})")
        self.stream.flush()
        self._drawn = True

    def restart(self) -> None:
        """The file is read again from the start (the two-part read gave up)."""
        self.done = 0
        self.elsewhere = lambda: 0

    def close(self) -> None:
        """Erase the line, if one was drawn."""
        if self._drawn:
            self.stream.write(_ERASE)
            self.stream.flush()
            self._drawn = False


def for_file(
    path: str | Path, stream: TextIO, *, tty: bool | None = None, minimum: int | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Progress | None:  # fmt: skip
    """A Progress for reading `path`, or None: when `stream` is not a terminal (tty defaults to
    stream.isatty()), or the file is smaller than `minimum` bytes (default MIN_BYTES) or cannot be sized."""
    minimum = MIN_BYTES if minimum is None else minimum
    if tty is None:
        isatty = getattr(stream, "isatty", None)
        tty = bool(isatty and isatty())
    if not tty:
        return None
    try:
        size = os.path.getsize(path)
    except OSError:
        return None  # the read reports it
    return Progress(stream, size, Path(path).name, clock=clock) if size >= minimum else None


class Counted:
    """A binary file whose reads are counted: `add(bytes)` after each read(), every `step` bytes of lines."""

    def __init__(self, handle: IO[bytes], add: Callable[[int], None], step: int = MB) -> None:
        self.handle, self.add, self.step = handle, add, step

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.add(len(data))
        return data

    def __iter__(self) -> Iterator[bytes]:
        pending = 0
        for line in self.handle:
            pending += len(line)
            if pending >= self.step:
                self.add(pending)
                pending = 0
            yield line
        self.add(pending)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.handle.seek(offset, whence)

    def tell(self) -> int:
        return self.handle.tell()

    def fileno(self) -> int:
        """The file's descriptor: a reader that maps the file (`_jsonl`) calls `add` itself."""
        return self.handle.fileno()
