"""Stream the rows of a Promptfoo results file without loading the whole document.

JSON (`-o results.json`): a small hand-written scanner walks the wrapper object
{"evalId", "results": {"version", ..., "results": [row, ...]}, ...} and hands each row's text to
the C decoder (`json.JSONDecoder.raw_decode`), so only one chunk of the file and one row are held
at a time. JSONL (`-o results.jsonl`): `_jsonl`, with what it shares from here. Malformed files give the same one-line errors, with line and column, as `json.loads`.

Given `Typed` (the report's msgspec Struct, `_schema`), rows are decoded in batches: a chunk's rows up to
its last row separator (guessed from the layout: `},` + the whitespace between the first two rows + `{`)
are one msgspec decode. The guess needs no trust: a batch that begins at a row and decodes as a JSON array
ends between two rows. A batch msgspec refuses (broken JSON, NaN, a compact file's `},{` inside a row) is
read row by row by the general path, which reports as before.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator
from typing import IO, Any, NamedTuple, Protocol

import msgspec

from passhat.common._errors import ResultsError

# Characters (JSON) or bytes (JSONL) read at a time; a longer value doubles the next read. Small enough that a
# chunk's rows stay in the CPU's cache while they are folded: at 4 MB, a 300,000-row report took ~25% more CPU.
CHUNK = 1 << 18
_WHITESPACE = re.compile(r"[ \t\n\r]*")  # matches everywhere (maybe empty): .match() is never None
_DECODER = json.JSONDecoder()
_NOT_JSON = "pass the .json file written by `promptfoo eval -o results.json`, or name a JSONL file *.jsonl"
MISSING = object()

Bad = Callable[[str, object, str], ResultsError]  # (field, value, expected) -> error
OnMember = Callable[[tuple[str, ...], Any], None]  # told each wrapper member but the rows: (("evalId",), "eval-1")


class ByteSource(Protocol):
    """What the readers use of a binary file: an open file, or one wrapped by `_progress.Counted`."""

    def read(self, size: int = -1, /) -> bytes: ...

    def seek(self, offset: int, whence: int = 0, /) -> int: ...


class Typed(NamedTuple):
    """Rows decoded into a msgspec type (see `_schema`) rather than dicts."""

    many: msgspec.json.Decoder[list[Any]]  # a JSON array of rows
    one: msgspec.json.Decoder[Any]  # one row (JSONL: `decode_lines`)
    convert: Callable[[Any], Any]  # a row decoded by `json` into the type (the general path)


_REFUSED = (msgspec.DecodeError, UnicodeError)  # what msgspec raises for text it does not decode


class NotJson(ResultsError):  # noqa: N818 - the name the readers catch
    """The file is not valid JSON (or JSONL) text: reported before any problem with a row's content."""


class SplitReached(Exception):  # noqa: N818 - a signal, not an error
    """A byte-limited read of results.results stopped cleanly between two rows."""


class SplitUnsafe(Exception):  # noqa: N818
    """Reading a file in two parts could differ from reading it whole: read it whole instead."""


def read_error(path: str, error: OSError) -> ResultsError:
    if isinstance(error, FileNotFoundError):
        return ResultsError(f"{path}: no such file. A paused eval (Ctrl+C) writes it when it ends: `promptfoo eval "
                            f"--resume` finishes it; else write it with `npx promptfoo eval -o {path}` or pass the right path")  # fmt: skip
    if isinstance(error, IsADirectoryError):
        return ResultsError(f"{path}: is a directory; pass the results.json file written by `promptfoo eval -o`")
    return ResultsError(f"{path}: cannot be read ({error.strerror}); check its permissions")


def _utf8_error(path: str, offset: int) -> ResultsError:
    return NotJson(f"{path}: not UTF-8 text (byte {offset}); pass the .json file written by `promptfoo eval -o`")


class _Reader:
    """The file's text in a sliding buffer; positions stay absolute for error messages."""

    def __init__(self, path: str, handle: ByteSource, limit: int | None = None, typed: Typed | None = None) -> None:
        self.path, self.handle, self.limit, self.typed = path, handle, limit, typed  # limit: read no more bytes
        self.separator: str | None = None  # between two rows of results.results, as the file lays them out
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf, self.pos, self.eof, self.bytes_read = "", 0, False, 0
        self.offset = 0  # characters before buf[0]; lines are counted only for an error message
        self.count = 0  # elements read by the last elements() / more_elements()

    def fill(self) -> None:
        """Drop what was consumed, append the next chunk (at least as long as what is kept)."""
        self.offset += self.pos
        size = max(CHUNK, 2 * (len(self.buf) - self.pos))
        data = self.handle.read(size if self.limit is None else max(0, min(size, self.limit - self.bytes_read)))
        pending = len(self.decoder.getstate()[0])
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as error:
            raise _utf8_error(self.path, self.bytes_read - pending + error.start) from None
        self.bytes_read += len(data)
        self.buf, self.pos, self.eof = self.buf[self.pos :] + text, 0, not data
        if self.offset == 0 and self.buf.startswith("\ufeff"):
            self.pos = 1  # a UTF-8 byte-order mark is not content

    def error(self, message: str, pos: int | None = None) -> ResultsError:
        line, column = self._line_column(self.offset + (self.pos if pos is None else pos))
        return NotJson(f"{self.path}: not valid JSON at line {line}, column {column} ({message}); {_NOT_JSON}")

    def _line_column(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset, counted by reading the file again."""
        line, column, seen = 1, 1, 0
        with open(self.path, encoding="utf-8", errors="replace", newline="") as text:
            while seen < offset and (chunk := text.read(min(CHUNK, offset - seen))):
                newlines = chunk.count("\n")
                line += newlines
                column = len(chunk) - chunk.rfind("\n") if newlines else column + len(chunk)
                seen += len(chunk)
        return line, column

    def peek(self) -> str:
        """The next non-whitespace character, or "" at the end of the file."""
        while True:
            self.pos = _WHITESPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf) or self.eof:
                return self.buf[self.pos : self.pos + 1]
            self.fill()

    def value(self) -> Any:
        """Decode the next JSON value; read more of the file while it may just be cut off."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as error:
                cut = error.pos >= len(self.buf) - 16 or error.msg.startswith("Unterminated string")
                if cut and not self.eof:
                    self.fill()
                    continue
                raise self.error(error.msg, error.pos) from None
            if end == len(self.buf) and not self.eof:  # a number may go on in the next chunk
                self.fill()
                continue
            self.pos = end
            return value

    def members(self) -> Iterator[str]:
        """After "{": each key, leaving the reader at its value (which the caller must consume)."""
        self.pos += 1
        if self.peek() == "}":
            self.pos += 1
            return
        yield self._key()
        yield from self.more_members()

    def more_members(self) -> Iterator[str]:
        """After a member's value: the object's remaining keys, as `members`."""
        while True:
            after = self.peek()
            self.pos += 1
            if after == "}":
                return
            if after != ",":
                raise self.error("Expecting ',' delimiter", self.pos - 1)
            yield self._key()

    def _key(self) -> str:
        if self.peek() != '"':
            raise self.error("Expecting property name enclosed in double quotes")
        key: str = self.value()  # a string: it starts with a quote
        if self.peek() != ":":
            raise self.error("Expecting ':' delimiter")
        self.pos += 1
        return key

    def elements(self) -> Iterator[Any]:
        """After "[": each element, decoded."""
        self.pos += 1
        if self.peek() == "]":
            self.pos += 1
            self.count = 0
            return
        yield from self.more_elements()

    def more_elements(self) -> Iterator[Any]:
        """At an element: it and the array's remaining elements. With a byte limit, the limit right
        after a comma ends the walk (SplitReached): the rest of the array is read elsewhere.

        The loop runs once per row, so its common case is inlined: the row and the comma after it
        both inside the buffer. Anything else (a chunk edge, an error) takes the general path.
        """
        decode, skip = _DECODER.raw_decode, _WHITESPACE.match
        self.count = 0
        slow_until = -1  # where a refused batch ended: up to there, the general path
        while True:
            if self.limit is not None and self.peek() == "":
                raise SplitReached
            buf = self.buf
            if self.typed is not None and self.offset + self.pos >= slow_until:
                batch, start, cut = None, skip(buf, self.pos).end(), -1  # type: ignore[union-attr]
                if self.separator is not None and (cut := buf.rfind(self.separator, start)) > start:
                    try:
                        batch = self.typed.many.decode(f"[{buf[start : cut + 1]}]")  # (one copy fewer than +)
                    except _REFUSED:
                        slow_until = self.offset + cut
                if batch is not None:
                    self.pos = cut + 2  # after the comma
                    self.count += len(batch)
                    yield from batch
                    if not self.eof:
                        self.fill()  # the rest is the start of a row: the next batch begins with it
                    continue
            try:
                value, end = decode(buf, skip(buf, self.pos).end())  # type: ignore[union-attr]
                after_at = skip(buf, end).end()  # type: ignore[union-attr]
                after = buf[after_at]  # IndexError at the end of the buffer
            except (json.JSONDecodeError, IndexError):
                value = self.value()
                after = self.peek()
                after_at = self.pos
            self.pos = after_at + 1
            self.count += 1
            if self.typed is None:
                yield value
            else:
                if self.separator is None and after == ",":
                    gap = skip(self.buf, self.pos).end()  # type: ignore[union-attr]
                    self.separator = "}," + self.buf[self.pos : gap] + "{" if gap < len(self.buf) else None
                yield self.typed.convert(value)
            if after == "]":
                return
            if after != ",":
                raise self.error("Expecting ',' delimiter", self.pos - 1)


def _check_text(path: str, reader: _Reader) -> None:
    if reader.peek() == "":
        msg = (
            f"{path}: file is empty; the eval did not finish writing it, re-run `npx promptfoo eval -o "
            "results.json` with the promptfoo pinned in package.json (0.123) and pass that file"
        )
        raise ResultsError(msg)


def _results_rows(
    reader: _Reader, bad: Bad, version_ok: Callable[[object], str | None], on_member: OnMember | None
) -> Iterator[Any]:
    version: object = MISSING
    rows = -1
    for key in reader.members():
        if key == "version":
            version = reader.value()
            if (expected := version_ok(version)) is not None:
                raise bad("results.version", version, expected)
        elif key == "results":
            if reader.peek() != "[":
                raise bad("results.results", reader.value(), "an array of rows")
            if reader.limit is not None and version is MISSING:
                raise SplitUnsafe
            yield from reader.elements()
            rows = reader.count
        else:
            value = reader.value()
            if on_member is not None:
                on_member(("results", key), value)
    if (expected := version_ok(version)) is not None:
        raise bad("results.version", version, expected)
    if rows < 0:
        raise bad("results.results", MISSING, "an array of rows")
    if rows == 0:
        msg = (
            f"{reader.path}: results.results is [], so there is nothing to report; "
            "check the eval's tests and providers and re-run it"
        )
        raise ResultsError(msg)


def json_rows(
    path: str,
    handle: ByteSource,
    bad: Bad,
    version_ok: Callable[[object], str | None],
    limit: int | None = None,
    on_member: OnMember | None = None,
    typed: Typed | None = None,
) -> Iterator[Any]:
    """Each row of results.results in file order; errors once the wrapper shows it is wrong.

    With `limit`, only that many bytes are read, and the walk must stop exactly between two rows
    (SplitReached); `json_tail_rows` reads the rest. `on_member` is told every other member of the
    wrapper and of `results` as it is read (evalId, results.timestamp, config, metadata, ...).
    """
    reader = _Reader(path, handle, limit, typed)
    reader.fill()
    _check_text(path, reader)
    if reader.peek() != "{":
        value = reader.value()
        if reader.peek():
            raise reader.error("Extra data")
        raise bad("the top level", value, 'an object {"evalId", "results", "config", ...}')
    found = False
    for key in reader.members():
        if key != "results":
            value = reader.value()
            if on_member is not None:
                on_member((key,), value)
        elif reader.peek() != "{":
            raise bad("results", reader.value(), 'an object {"version": 3, "results": [...], ...}')
        else:
            found = True
            yield from _results_rows(reader, bad, version_ok, on_member)
    if reader.peek():
        raise reader.error("Extra data")
    if not found:
        raise bad("results", MISSING, 'an object {"version": 3, "results": [...], ...}')


def json_tail_rows(
    path: str, handle: ByteSource, start: int, on_member: OnMember | None = None, typed: Typed | None = None
) -> Iterator[Any]:
    """The rows of results.results from byte `start` (where a row begins) on, then the rest of the
    document checked as JSON (its members told to `on_member`, as by `json_rows`). Positions in errors
    are relative: on any problem, read the file whole."""
    handle.seek(start)
    reader = _Reader(path, handle, typed=typed)
    reader.fill()
    if reader.peek() != "{":
        raise SplitUnsafe
    yield from reader.more_elements()
    for inside, unsafe in ((("results",), {"version", "results"}), ((), {"results"})):  # results {...}, then the top
        for key in reader.more_members():
            if key in unsafe:
                raise SplitUnsafe  # a second results / a version after the rows: the whole read decides
            value = reader.value()
            if on_member is not None:
                on_member((*inside, key), value)
    if reader.peek():
        raise reader.error("Extra data")


def row_split(handle: IO[bytes], size: int) -> int | None:
    """A byte offset near the middle of a pretty-printed results file where a row of results.results
    begins, or None. A guess from the layout promptfoo writes (JSON.stringify(..., 2): rows separated by
    a comma, a newline and the same indent each); the two-part read verifies it."""
    head = handle.read(1 << 20)
    found = re.search(rb'"results":\s*\[(\s*)\{', head)
    if found is None or b"\n" not in found[1]:
        return None
    separator = b"}," + found[1] + b"{"
    handle.seek(size // 2)
    window = handle.read(1 << 22)
    at = window.find(separator)
    return None if at < 0 else size // 2 + at + len(separator) - 1
