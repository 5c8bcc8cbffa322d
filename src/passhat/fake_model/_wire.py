"""The bytes on the wire as a real API sends them: compressed as the request accepts, cut at odd places.

choose_encoding reads `accept-encoding` as a server does (q-values, `*`, `identity`); encode compresses a
whole body; StreamEncoder compresses an event stream piece by piece, with a sync flush after each piece so the
client can decode every event as soon as it is sent (as a compressing server or proxy does); split cuts bytes
where a careless reader breaks: one byte at a time, inside every multibyte UTF-8 character, inside every
`data:` line.
"""

from __future__ import annotations

import gzip
import itertools
import zlib
from collections.abc import Iterable, Iterator
from typing import Protocol

import brotli
import zstandard

CODINGS = ("gzip", "br", "zstd", "deflate")  # what the server can send, most preferred first on a tie of q
ENCODINGS = (*CODINGS, "identity")
SPLITS = ("whole", "byte", "utf8", "data")


def _q(text: str) -> float | None:
    try:
        q = float(text)
    except ValueError:
        return None
    return q if 0.0 <= q <= 1.0 else None


def accepted(accept_encoding: str | None) -> dict[str, float]:
    """`accept-encoding` → {coding: q}, codings lower-cased; a malformed q drops its coding (RFC 9110 12.5.3)."""
    weights: dict[str, float] = {}
    for item in (accept_encoding or "").split(","):
        coding, *params = (part.strip() for part in item.split(";"))
        q: float | None = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                q = _q(value.strip())
        if coding and q is not None:
            weights[coding.lower()] = q
    return weights


def choose_encoding(accept_encoding: str | None) -> str:
    """The coding a compressing server picks: the accepted coding of highest q (ties: gzip, br, zstd, deflate),
    `*` standing for any coding not named; "identity" when none is accepted (no header, or every q=0)."""
    weights = accepted(accept_encoding)
    wildcard = weights.get("*", 0.0)
    best, best_q = "identity", 0.0
    for coding in CODINGS:
        q = weights.get(coding, wildcard)
        if q > best_q:
            best, best_q = coding, q
    return best


def _check(encoding: str) -> None:
    if encoding not in ENCODINGS:
        msg = f"encoding {encoding!r}: expected one of {', '.join(ENCODINGS)}"
        raise ValueError(msg)


def encode(data: bytes, encoding: str) -> bytes:
    """A whole body in `encoding` (deflate: the zlib format, as HTTP's `deflate` means)."""
    _check(encoding)
    if encoding == "gzip":
        return gzip.compress(data)
    if encoding == "deflate":
        return zlib.compress(data)
    if encoding == "br":
        return bytes(brotli.compress(data))
    if encoding == "zstd":
        return zstandard.ZstdCompressor().compress(data)
    return data


def decode(data: bytes, encoding: str) -> bytes:
    """The inverse of encode (and of a StreamEncoder's whole output), for tests."""
    _check(encoding)
    if encoding == "gzip":
        return gzip.decompress(data)
    if encoding == "deflate":
        return zlib.decompress(data)
    if encoding == "br":
        return bytes(brotli.decompress(data))
    if encoding == "zstd":
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return data


class _Codec(Protocol):
    def piece(self, data: bytes) -> bytes: ...
    def end(self) -> bytes: ...


class _Zlib:
    def __init__(self, wbits: int) -> None:
        self._z = zlib.compressobj(wbits=wbits)

    def piece(self, data: bytes) -> bytes:
        return self._z.compress(data) + self._z.flush(zlib.Z_SYNC_FLUSH)

    def end(self) -> bytes:
        return self._z.flush(zlib.Z_FINISH)


class _Brotli:
    def __init__(self) -> None:
        self._b = brotli.Compressor()

    def piece(self, data: bytes) -> bytes:
        return bytes(self._b.process(data)) + bytes(self._b.flush())

    def end(self) -> bytes:
        return bytes(self._b.finish())


class _Zstd:
    def __init__(self) -> None:
        self._z = zstandard.ZstdCompressor().compressobj()

    def piece(self, data: bytes) -> bytes:
        return self._z.compress(data) + self._z.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)

    def end(self) -> bytes:
        return self._z.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)


class _Identity:
    def piece(self, data: bytes) -> bytes:
        return data

    def end(self) -> bytes:
        return b""


class StreamEncoder:
    """One response body compressed as it is sent: piece(data) gives bytes that, with all before them, decode
    to everything given so far (a sync flush); end() closes the stream (gzip's trailer, zstd's last block)."""

    def __init__(self, encoding: str) -> None:
        _check(encoding)
        self.encoding = encoding
        self._codec: _Codec
        if encoding in ("gzip", "deflate"):
            self._codec = _Zlib(31 if encoding == "gzip" else 15)
        elif encoding == "br":
            self._codec = _Brotli()
        elif encoding == "zstd":
            self._codec = _Zstd()
        else:
            self._codec = _Identity()

    def piece(self, data: bytes) -> bytes:
        return self._codec.piece(data)

    def end(self) -> bytes:
        return self._codec.end()


def _cuts_utf8(data: bytes) -> list[int]:
    """After the first byte of every multibyte UTF-8 character (a lead byte: 11xxxxxx)."""
    return [i + 1 for i, byte in enumerate(data) if byte >= 0xC0]


def _cuts_data(data: bytes) -> list[int]:
    """In the middle of every `data:` line (past its `data:` prefix, before its newline)."""
    cuts = []
    start = 0
    while (start := data.find(b"data:", start)) != -1:
        if start == 0 or data[start - 1 : start] == b"\n":
            end = data.find(b"\n", start)
            end = len(data) if end == -1 else end
            cuts.append(start + max(1, (end - start) // 2))
        start += 5
    return cuts


def split(data: bytes, mode: str) -> list[bytes]:
    """`data` cut into pieces (joined, they are `data`): "whole" one piece; "byte" one byte each; "utf8" a cut
    inside every multibyte character; "data" a cut inside every `data:` line. No piece is empty."""
    if mode not in SPLITS:
        msg = f"split mode {mode!r}: expected one of {', '.join(SPLITS)}"
        raise ValueError(msg)
    if mode == "byte":
        return [data[i : i + 1] for i in range(len(data))]
    points = {"whole": [], "utf8": _cuts_utf8(data), "data": _cuts_data(data)}[mode]
    bounds = [0, *sorted(set(points)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def chunked(events: Iterable[bytes], encoding: str, mode: str = "whole") -> Iterator[bytes]:
    """A streamed body as a server writes it, in HTTP/1.1 chunked transfer coding: each event compressed with a
    sync flush (StreamEncoder), cut as `mode` says (split: "utf8" and "data" cut the event before it is
    compressed, so the cut survives decoding; "byte" sends the compressed bytes one at a time), each piece one
    chunk; the last item ends the body. Write and flush each item as it comes."""
    encoder = StreamEncoder(encoding)
    for event in events:
        for piece in [event] if mode == "byte" else split(event, mode):
            yield from _chunks(encoder.piece(piece), mode)
    yield from _chunks(encoder.end(), mode)
    yield b"0\r\n\r\n"


def _chunks(sent: bytes, mode: str) -> Iterator[bytes]:
    for part in split(sent, "byte") if mode == "byte" else [sent] if sent else []:
        yield b"%x\r\n%s\r\n" % (len(part), part)
