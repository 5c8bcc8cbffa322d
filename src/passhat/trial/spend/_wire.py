"""Content codings on the model proxy's wire: what passhat lets the upstream send, and how it decodes a copy.

The client (the bundled CLI sends `accept-encoding: gzip, deflate, br, zstd`) gets the upstream's bytes untouched;
passhat decodes a copy to meter the reply. So the upstream is offered only the codings passhat can decode
(`accepted`): the client's own list filtered to gzip, deflate, br and zstd, `q=0` honoured, else `identity`. A
reply coded otherwise, or that does not decode, raises UnreadableError: the proxy then fails closed (trial/_proxy.py).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import brotli
import zstandard

DECODABLE = ("gzip", "deflate", "br", "zstd")


class UnreadableError(Exception):
    """A reply passhat cannot read, with why."""


def accepted(client: str | None) -> str:
    """The accept-encoding passhat sends upstream for the client's: the codings of its list passhat decodes (in its
    order, with its q-values), `identity` when none is left. Never a coding the client did not accept."""
    kept: list[tuple[str, str]] = []
    for item in (client or "").split(","):
        coding, _, params = item.partition(";")
        coding = coding.strip().lower()
        q = next(
            (v.strip() for k, _, v in (p.partition("=") for p in params.split(";")) if k.strip().lower() == "q"), "1"
        )
        try:
            weight = float(q)
        except ValueError:
            continue
        if coding in DECODABLE and weight > 0 and coding not in (k for k, _ in kept):
            kept.append((coding, q))
    return ", ".join(c if q == "1" else f"{c};q={q}" for c, q in kept) or "identity"


class _Gzip:
    """gzip, every member of a multi-member stream."""

    def __init__(self) -> None:
        self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def feed(self, data: bytes) -> bytes:
        out = []
        while data:
            if self._d.eof:  # the next member
                self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out.append(self._d.decompress(data))
            data = self._d.unused_data if self._d.eof else b""
        return b"".join(out)

    def end(self) -> bytes:
        return self._d.flush()


class _Deflate:
    """HTTP's deflate: zlib-wrapped as RFC 9110 says, or raw as some servers send it (told apart by the header)."""

    def __init__(self) -> None:
        self._head = b""
        self._d: zlib._Decompress | None = None

    def feed(self, data: bytes) -> bytes:
        if self._d is None:
            self._head += data
            if len(self._head) < 2:
                return b""
            cmf, flg = self._head[0], self._head[1]
            wrapped = cmf & 0x0F == 8 and (cmf << 8 | flg) % 31 == 0
            self._d = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
            data, self._head = self._head, b""
        if self._d.eof and data:
            raise UnreadableError("data after the end of the deflate stream")
        return self._d.decompress(data)

    def end(self) -> bytes:
        return self._d.flush() if self._d is not None else b""


class _Brotli:
    def __init__(self) -> None:
        self._d = brotli.Decompressor()

    def feed(self, data: bytes) -> bytes:
        return bytes(self._d.process(data))

    def end(self) -> bytes:
        return b""


class _Zstd:
    """zstd, every frame of a multi-frame stream."""

    def __init__(self) -> None:
        self._d = zstandard.ZstdDecompressor().decompressobj()

    def feed(self, data: bytes) -> bytes:
        out = []
        while data:
            if self._d.eof:  # the next frame
                self._d = zstandard.ZstdDecompressor().decompressobj()
            out.append(self._d.decompress(data))
            data = self._d.unused_data if self._d.eof else b""
        return b"".join(out)

    def end(self) -> bytes:
        return b""


_DECODERS: dict[str, Callable[[], _Gzip | _Deflate | _Brotli | _Zstd]] = {
    "gzip": _Gzip, "x-gzip": _Gzip, "deflate": _Deflate, "br": _Brotli, "zstd": _Zstd,
}  # fmt: skip
_ERRORS = (zlib.error, brotli.error, zstandard.ZstdError)


class Decoder:
    """Decodes a reply's body as its `content-encoding` says, chunk by chunk; codings stacked ("gzip, br": gzip
    first, then br) are undone in reverse order. Raises UnreadableError for a coding passhat does not decode
    (at construction) or data that does not decode."""

    def __init__(self, content_encoding: str | None) -> None:
        codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        unknown = [c for c in codings if c not in _DECODERS]
        if unknown:
            shown = ", ".join(repr(c[:40]) for c in unknown)
            msg = f"content-encoding {shown}: passhat decodes {', '.join(DECODABLE)} (and asked for no other)"
            raise UnreadableError(msg)
        self._stages = [_DECODERS[c]() for c in reversed(codings)]
        self.codings = codings

    def feed(self, data: bytes) -> bytes:
        try:
            for stage in self._stages:
                data = stage.feed(data)
        except _ERRORS as error:
            raise UnreadableError(f"the {'+'.join(self.codings)} body does not decode: {error}") from None
        return data

    def end(self) -> bytes:
        """What the decoders still hold at the reply's end (a stream cut short inside a coding ends here too)."""
        data = b""
        try:
            for stage in self._stages:
                data = (stage.feed(data) if data else b"") + stage.end()
        except _ERRORS as error:
            raise UnreadableError(f"the {'+'.join(self.codings)} body does not decode: {error}") from None
        return data
