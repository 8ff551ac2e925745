"""Spec vectors from format.md and the pure framing functions."""

from __future__ import annotations

import struct

import crc32c
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codec import framing
from codec.errors import CorruptRecordError, TruncatedRecordError
from codec.framing import encode_record, find_next_record


def test_crc32c_check_value():
    assert framing.crc32c(b"123456789") == 0xE3069283
    assert framing.mask_crc(0xE3069283) == 0xC78AB0E5
    assert framing.unmask_crc(0xC78AB0E5) == 0xE3069283


@pytest.mark.parametrize(
    ("length", "masked"),
    [(0, 0x07980329), (1, 0x41DE7501), (49, 0xE983839D)],
)
def test_length_crc_vectors(length, masked):
    header = framing.encode_header(length)
    assert header[:8] == struct.pack("<Q", length)
    assert struct.unpack("<I", header[8:])[0] == masked


def test_empty_record_is_exactly_16_bytes():
    assert framing.encode_record(b"").hex() == "0000000000000000" + "29039807" + "d8ea82a2"
    assert framing.masked_crc32c(b"") == 0xA282EAD8


def test_mask_roundtrip_all_bits():
    for crc in (0, 1, 0xFFFFFFFF, 0x80000000, 0x12345678):
        assert framing.unmask_crc(framing.mask_crc(crc)) == crc


def test_vectorised_length_crc_agrees_with_scalar():
    import numpy as np

    values = np.array([0, 1, 49, 2**32, 2**62, 2**64 - 1, 123456789], dtype=np.uint64)
    got = framing._masked_crc_of_u64(values)
    want = [framing.masked_crc32c(struct.pack("<Q", int(v))) for v in values]
    assert got.tolist() == want


def _stream(*payloads: bytes) -> bytes:
    return b"".join(framing.encode_record(p) for p in payloads)


def test_read_at_three_outcomes():
    buf = _stream(b"abc", b"defg")
    payload, nxt = framing.read_at(buf, 0, len(buf))
    assert payload == b"abc" and nxt == 19
    assert framing.read_at(buf, nxt, len(buf))[0] == b"defg"
    assert framing.read_at(buf, len(buf), len(buf)) is None  # clean end
    with pytest.raises(TruncatedRecordError) as e:
        framing.read_at(buf[:-2], 19, len(buf) - 2, path="f.tfrecord")
    assert "f.tfrecord at byte 19" in str(e.value)
    bad = bytearray(buf)
    bad[13] ^= 1
    with pytest.raises(CorruptRecordError) as e2:
        framing.read_at(bytes(bad), 0, len(bad))
    assert e2.value.kind == "data_crc" and e2.value.offset == 0
    with pytest.raises(CorruptRecordError) as e3:
        framing.read_at(b"hello, this is text", 0, 19)
    assert "Is this even a TFRecord file?" in str(e3.value)
    with pytest.raises(TruncatedRecordError):
        framing.read_at(buf + b"12345", len(buf), len(buf) + 5)


def test_scan_reports_junk_and_resyncs():
    junk = b"\x00\xff" * 20
    buf = _stream(b"one", b"two") + junk + _stream(b"three")
    chunk = framing.scan(buf, 0, len(buf))
    assert chunk.done
    assert len(chunk.offsets) == 3
    [p] = chunk.problems
    assert p.kind == "length_crc" and p.offset == 38 and p.end == 38 + len(junk)
    assert p.skipped == len(junk)


def test_scan_is_incremental():
    buf = _stream(*[bytes([i]) * i for i in range(50)])
    chunk = framing.scan(buf, 0, len(buf), max_records=7)
    assert len(chunk.offsets) == 7 and not chunk.done
    rest = framing.scan(buf, chunk.next_offset, len(buf))
    assert len(rest.offsets) == 43 and rest.done


def test_huge_length_in_last_header_is_not_trusted():
    buf = _stream(b"ok") + struct.pack("<Q", 2**62) + b"\0" * 4
    chunk = framing.scan(buf, 0, len(buf))
    assert len(chunk.offsets) == 1
    assert [p.kind for p in chunk.problems] == ["length_crc"]


def test_valid_header_promising_too_much_is_truncated():
    full = _stream(b"x" * 100)
    chunk = framing.scan(full[:60], 0, 60)
    assert [(p.kind, p.offset) for p in chunk.problems] == [("truncated", 0)]


def test_public_api_is_sorted_and_importable():
    import codec

    # isort-style, as ruff keeps it: CONSTANTS, then Classes, then functions and modules.
    def order(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert codec.__all__ == sorted(codec.__all__, key=order)
    for name in codec.__all__:
        assert hasattr(codec, name), name
    assert callable(codec.parse_tensor) and callable(codec.serialize_tensor)


def test_codec_imports_no_front_end():
    import subprocess
    import sys

    code = (
        "import sys, codec, codec.example, codec.images, codec.tensor;"
        "bad = [m for m in ('streamlit', 'pandas', 'browser_app') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stdout + res.stderr


def _masked(data: bytes) -> int:
    crc = crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _record_at(buf: bytes, pos: int, size: int) -> bool:
    """Whether both CRCs of a record at ``pos`` check, its length inside the stream."""
    length = int.from_bytes(buf[pos : pos + 8], "little")
    if int.from_bytes(buf[pos + 8 : pos + 12], "little") != _masked(buf[pos : pos + 8]):
        return False
    if length > size - pos - 16:
        return False
    data = buf[pos + 12 : pos + 12 + length]
    return int.from_bytes(buf[pos + 12 + length : pos + 16 + length], "little") == _masked(data)


def _first_record_at_or_after(buf: bytes, start: int, size: int) -> int | None:
    """The reference: every position tried in turn, both CRCs computed."""
    return next((p for p in range(start, size - 15) if _record_at(buf, p, size)), None)


_PIECES = st.one_of(
    st.binary(min_size=1, max_size=400),  # noise
    st.integers(1, 300).map(bytes),  # runs of zeros (with the noise: zero words anywhere)
    st.binary(max_size=120).map(encode_record),  # records
    st.binary(max_size=40).map(lambda b: encode_record(b)[:-3]),  # a record cut short
)


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=40), start=st.integers(0, 5000))
def test_the_resync_search_finds_the_first_record_a_full_search_finds(pieces, start):
    """find_next_record (zero words found first, then the CRCs of the few positions near
    them) gives the first position where both CRCs check, as trying every position does."""
    buf = b"".join(pieces)
    start = min(start, len(buf))
    assert find_next_record(buf, start, len(buf)) == _first_record_at_or_after(buf, start, len(buf))


def _first_record_in_large(buf: bytes, start: int, size: int) -> int | None:
    """The reference for large streams: the positions whose length fits in the stream
    (bytes ``used..7`` of it zero, each byte tested), then both CRCs of each in turn."""
    used = max(1, -(-size.bit_length() // 8))
    data = np.frombuffer(buf, np.uint8)[start:size]
    fits = np.ones(max(0, len(data) - 15), bool)
    for k in range(used, 8):
        fits &= data[k : k + len(fits)] == 0
    return next(
        (p for p in (np.flatnonzero(fits) + start).tolist() if _record_at(buf, p, size)), None
    )


@pytest.mark.parametrize(
    ("seed", "at", "odd"),
    [
        (1, 0, False),
        (2, 1501, True),
        (3, 70_001, False),
        (4, 300_000, True),
        (5, 1_700_003, False),
        (6, 3_900_000, True),
    ],
)
def test_the_resync_search_in_a_stream_of_16_mib(seed, at, odd):
    """A stream large enough that a length has 4 bytes that may be non-zero: random bytes
    with runs of zeros and a record planted ``at`` bytes after the start (odd or even
    offsets, in the first window or several windows on): the first record found is the one
    the reference finds."""
    rng = np.random.default_rng(seed)
    buf = bytearray(rng.integers(0, 256, 16 << 20, dtype=np.uint8).tobytes())
    for z in rng.integers(0, len(buf) - 64, 400).tolist():
        n = int(rng.integers(2, 40))
        buf[z : z + n] = bytes(n)
    start = (1 << 20) + int(odd)
    record = encode_record(rng.bytes(int(rng.integers(0, 100))))
    buf[start + at : start + at + len(record)] = record
    data = bytes(buf)
    want = _first_record_in_large(data, start, len(data))
    assert want is not None and want <= start + at
    assert find_next_record(data, start, len(data)) == want
