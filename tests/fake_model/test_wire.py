"""The bytes on the wire (fake_model/_wire.py): accept-encoding read as a server reads it, every coding decodes
back, a stream compressed piece by piece decodes piece by piece, and each way of cutting bytes cuts where it says."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest
import zstandard

from passhat.fake_model._wire import CODINGS, ENCODINGS, StreamEncoder, choose_encoding, chunked, decode, encode, split

EVENTS = [
    b'event: message_start\ndata: {"type":"message_start"}\n\n',
    'event: content_block_delta\ndata: {"text":"héllo — ✓ 🙂"}\n\n'.encode(),
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
]
STREAM = b"".join(EVENTS)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        pytest.param("gzip, deflate, br, zstd", "gzip", id="the-clis-header"),
        pytest.param(None, "identity", id="no-header"),
        pytest.param("", "identity", id="empty"),
        pytest.param("identity", "identity", id="identity-only"),
        pytest.param("br", "br", id="br-only"),
        pytest.param("zstd, deflate", "zstd", id="server-order-on-a-tie"),
        pytest.param("gzip;q=0.5, br;q=0.9", "br", id="highest-q"),
        pytest.param("gzip;q=0, deflate", "deflate", id="q0-refuses"),
        pytest.param("*", "gzip", id="wildcard"),
        pytest.param("*;q=0", "identity", id="wildcard-q0"),
        pytest.param("br;q=0, *", "gzip", id="wildcard-beside-a-refusal"),
        pytest.param("GZIP ; Q=1", "gzip", id="case-and-spaces"),
        pytest.param("gzip;q=2, br;q=x", "identity", id="malformed-q-drops-the-coding"),
        pytest.param("compress, lzma", "identity", id="unknown-codings"),
    ],
)
def test_choose_encoding(header: str | None, expected: str) -> None:
    assert choose_encoding(header) == expected


def _reference_decode(data: bytes, coding: str) -> bytes:
    """Decoders other than _wire's own (the standard formats, as a client decodes them)."""
    return {
        "gzip": gzip.decompress,
        "deflate": zlib.decompress,
        "br": brotli.decompress,
        "zstd": lambda d: zstandard.ZstdDecompressor().decompressobj().decompress(d),
        "identity": lambda d: d,
    }[coding](data)


@pytest.mark.parametrize("coding", ENCODINGS)
def test_encode_is_the_standard_format(coding: str) -> None:
    encoded = encode(STREAM * 20, coding)
    assert _reference_decode(encoded, coding) == decode(encoded, coding) == STREAM * 20
    assert (encoded == STREAM * 20) == (coding == "identity")  # identity alone leaves the bytes as they are


def _incremental(coding: str):
    """A decoder fed piece by piece, as a client reads a stream."""
    if coding in ("gzip", "deflate"):
        z = zlib.decompressobj(31 if coding == "gzip" else 15)
        return z.decompress
    if coding == "br":
        return brotli.Decompressor().process
    if coding == "zstd":
        return zstandard.ZstdDecompressor().decompressobj().decompress
    return lambda d: d


@pytest.mark.parametrize("coding", ENCODINGS)
def test_a_stream_encoder_makes_every_event_readable_as_soon_as_it_is_sent(coding: str) -> None:
    """A sync flush per piece: after each event's bytes, the client has decoded exactly the events so far."""
    encoder, read = StreamEncoder(coding), _incremental(coding)
    seen = b""
    for n, event in enumerate(EVENTS, 1):
        seen += read(encoder.piece(event))
        assert seen == b"".join(EVENTS[:n])
    whole = b"".join(encoder.piece(e) for e in []) + encoder.end()
    assert read(whole) == b""  # the end adds no data, only the format's close (gzip's trailer, zstd's frame end)


@pytest.mark.parametrize("coding", CODINGS)
def test_a_whole_stream_decodes_with_the_standard_decoder(coding: str) -> None:
    encoder = StreamEncoder(coding)
    body = b"".join(encoder.piece(event) for event in EVENTS) + encoder.end()
    assert _reference_decode(body, coding) == STREAM


def test_split_whole_and_byte() -> None:
    assert split(STREAM, "whole") == [STREAM]
    pieces = split(STREAM, "byte")
    assert all(len(p) == 1 for p in pieces) and b"".join(pieces) == STREAM


def test_split_utf8_cuts_inside_every_multibyte_character() -> None:
    pieces = split(STREAM, "utf8")
    assert b"".join(pieces) == STREAM
    multibyte = [c for c in STREAM.decode() if len(c.encode()) > 1]
    broken = 0
    for piece in pieces[:-1]:
        with pytest.raises(UnicodeDecodeError):
            piece.decode()  # every piece but the last ends inside a character
        broken += 1
    assert broken == len(multibyte) == 4


def test_split_data_cuts_inside_every_data_line() -> None:
    pieces = split(STREAM, "data")
    assert b"".join(pieces) == STREAM and len(pieces) == 4
    for piece in pieces[:-1]:
        line = piece.rsplit(b"\n", 1)[-1]
        assert line.startswith(b"data:") and len(line) > len(b"data:")  # the cut is past the prefix, mid-line
    assert split(b"event: ping\n\n", "data") == [b"event: ping\n\n"]  # nothing to cut


@pytest.mark.parametrize(("bad", "call"), [("lzma", lambda: encode(b"x", "lzma")), ("x", lambda: split(b"x", "x"))])
def test_unknown_codings_and_modes_are_one_clear_error(bad: str, call) -> None:
    with pytest.raises(ValueError, match=f"{bad!r}: expected one of"):
        call()


def _dechunk(wire: bytes) -> list[bytes]:
    """HTTP/1.1 chunked transfer coding, read back: the chunks' payloads; the body must end in the 0 chunk."""
    chunks = []
    while True:
        size, _, wire = wire.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            assert wire == b"\r\n"
            return chunks
        chunks.append(wire[:n])
        assert wire[n : n + 2] == b"\r\n"
        wire = wire[n + 2 :]


@pytest.mark.parametrize("coding", ENCODINGS)
@pytest.mark.parametrize("mode", ["whole", "byte", "utf8", "data"])
def test_chunked_frames_every_piece_and_decodes_back(coding: str, mode: str) -> None:
    pieces = list(chunked(EVENTS, coding, mode))
    chunks = _dechunk(b"".join(pieces))
    assert decode(b"".join(chunks), coding) == STREAM
    if mode == "byte":
        assert {len(c) for c in chunks} == {1}
    if coding == "identity" and mode != "byte":
        assert chunks == [p for e in EVENTS for p in split(e, mode)]
