"""Salvage of damaged files, checked against the records written before the damage.

The oracle for compressed files is what inflates at all: the longest prefix of the stream that
zlib produces before it fails, fed one byte at a time as TensorFlow's reader would at best. A
record whose framed bytes lie whole in that prefix is one TensorFlow could return, so the
reader must return it; and every record the reader calls intact must be one that was written.
"""

from __future__ import annotations

import itertools
import os
import random
import zlib
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import codec
from codec.framing import HEADER_SIZE, OVERHEAD, encode_record

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def make_records(seed: int, n: int) -> list[bytes]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        size = rnd.choice([0, 1, 7, 40, 120, 700])
        # Compressible but distinct payloads, like serialized Examples.
        out.append(f"record {i} ".encode() + bytes(rnd.randrange(4) for _ in range(size)))
    return out


def compress(raw: bytes, compression: str, level: int, members: int = 1) -> bytes:
    wbits = 31 if compression == "gzip" else 15
    if members == 1:
        c = zlib.compressobj(level, zlib.DEFLATED, wbits)
        return c.compress(raw) + c.flush()
    cut = [len(raw) * k // members for k in range(members + 1)]
    out = b""
    for a, b in itertools.pairwise(cut):
        c = zlib.compressobj(level, zlib.DEFLATED, wbits)
        out += c.compress(raw[a:b]) + c.flush()
    return out


def inflatable_prefix(data: bytes, compression: str) -> bytes:
    """Everything zlib yields before it fails, one input byte at a time; GZIP members are
    followed as TensorFlow follows them, a ZLIB file is one stream."""
    wbits = 31 if compression == "gzip" else 15
    out = bytearray()
    d = zlib.decompressobj(wbits)
    pos = 0
    while pos < len(data):
        try:
            out += d.decompress(data[pos : pos + 1])
        except zlib.error:
            break
        pos += 1
        if d.eof:
            if compression != "gzip" or data[pos : pos + 2] != b"\x1f\x8b":
                break
            d = zlib.decompressobj(wbits)
    return bytes(out)


def whole_records(prefix: bytes, records: list[bytes]) -> list[bytes]:
    """The records, from the first, whose framed bytes lie whole and unchanged in ``prefix``."""
    out = []
    pos = 0
    for r in records:
        framed = encode_record(r)
        if prefix[pos : pos + len(framed)] != framed:
            break
        out.append(r)
        pos += len(framed)
    return out


def read_all(path: Path, cache: Path) -> tuple[list[bytes], codec.TFRecordFile]:
    f = codec.TFRecordFile(path, cache_dir=cache)
    return list(f), f


def damage(data: bytes, how: str, rnd: random.Random) -> bytes:
    b = bytearray(data)
    if how == "flip":
        i = rnd.randrange(len(b))
        b[i] ^= 1 << rnd.randrange(8)
    elif how == "cut":
        del b[rnd.randrange(1, len(b)) :]
    elif how == "trailer_crc":
        b[-8 if rnd.random() < 0.5 else -5] ^= 0xFF
    elif how == "trailer_length":
        b[-1] ^= 0x01
    elif how == "junk":
        b += bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40)))
    elif how == "stray":
        b += b"\x00"
    elif how == "second_stream":
        b += data
    elif how == "zero_block":
        i = rnd.randrange(len(b))
        b[i : i + 64] = bytes(len(b[i : i + 64]))
    return bytes(b)


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    compression=st.sampled_from(["gzip", "zlib"]),
    how=st.sampled_from(
        [
            "flip",
            "cut",
            "trailer_crc",
            "trailer_length",
            "junk",
            "stray",
            "second_stream",
            "zero_block",
        ]
    ),
    level=st.sampled_from([1, 6, 9]),
    members=st.sampled_from([1, 1, 3]),
)
@example(seed=9245, compression="zlib", how="trailer_crc", level=9, members=1)  # tail ≤ trailer
def test_damaged_streams_keep_every_record_that_inflates(
    tmp_path: Path, seed: int, compression: str, how: str, level: int, members: int
) -> None:
    if compression == "zlib":
        members = 1  # a ZLIB file is one stream
    rnd = random.Random(seed)
    records = make_records(seed, rnd.randrange(1, 120))
    raw = b"".join(encode_record(r) for r in records)
    data = damage(compress(raw, compression, level, members), how, rnd)
    path = tmp_path / f"d{seed}.tfrecord.{'gz' if compression == 'gzip' else 'zlib'}"
    path.write_bytes(data)
    got, f = read_all(path, tmp_path / "cache")
    possible = whole_records(inflatable_prefix(data, compression), records)
    # Every record TensorFlow could have returned is returned, first and in order...
    assert got[: len(possible)] == possible
    # ... and every record called intact or recovered is one that was written.
    assert all(r in set(records) for r in got)
    compression_problems = [p for p in f.problems if p.kind == "compression"]
    if how in ("stray", "junk") and compression == "gzip" and got == records:
        assert not any(p.kind == "truncated" for p in f.problems)
    if got == records:
        # Nothing was lost: no message may say otherwise.
        for p in compression_problems:
            assert "cannot be inflated" not in p.message and "lost" not in p.message
    if data == compress(raw, compression, level, members):
        assert not f.problems


def test_trailer_crc_only_keeps_all_600_records(tmp_path: Path) -> None:
    records = [os.urandom(200) for _ in range(600)]
    raw = b"".join(encode_record(r) for r in records)
    data = bytearray(compress(raw, "gzip", 6))
    data[-6] ^= 0x01  # the stored CRC of the data
    path = tmp_path / "crc.tfrecord.gz"
    path.write_bytes(bytes(data))
    got, f = read_all(path, tmp_path / "cache")
    assert got == records
    (p,) = f.problems
    assert p.kind == "compression"
    assert f"compressed byte {len(data) - 5:,}" in p.message
    assert "trailer" in p.message and "lost" not in p.message


def test_damage_in_the_middle_names_the_exact_compressed_byte(tmp_path: Path) -> None:
    records = [os.urandom(300) for _ in range(200)]
    raw = b"".join(encode_record(r) for r in records)
    good = compress(raw, "zlib", 6)
    data = bytearray(good)
    data[len(data) // 2 : len(data) // 2 + 200] = bytes(200)
    path = tmp_path / "mid.tfrecord.zlib"
    path.write_bytes(bytes(data))
    got, f = read_all(path, tmp_path / "cache")
    prefix = inflatable_prefix(bytes(data), "zlib")
    assert got[: len(whole_records(prefix, records))] == whole_records(prefix, records)
    (p,) = [p for p in f.problems if p.kind == "compression"]
    # The byte where inflation stops is the one after the longest inflatable prefix.
    d = zlib.decompressobj()
    at = 0
    while True:
        try:
            d.decompress(bytes(data[at : at + 1]))
        except zlib.error:
            break
        at += 1
    assert f"compressed byte {at:,}" in p.message


def test_trailing_bytes_are_reported_not_called_truncation(tmp_path: Path) -> None:
    records = [b"a" * 50, b"b" * 60]
    raw = b"".join(encode_record(r) for r in records)
    for name, data, says in (
        ("one.gz", compress(raw, "gzip", 6) + b"\x00", "1 byte after the end of the GZIP"),
        ("junk.zlib", compress(raw, "zlib", 6) + b"abc", "3 bytes after the end of the ZLIB"),
        (
            "two.zlib",
            compress(raw, "zlib", 6) * 2,
            "a second ZLIB stream, which is not read",
        ),
    ):
        path = tmp_path / name
        path.write_bytes(data)
        got, f = read_all(path, tmp_path / "cache")
        assert got == records, name
        (p,) = f.problems
        assert p.kind == "compression" and says in p.message, (name, p.message)
    # Two GZIP members are one GZIP file, as TensorFlow reads them.
    path = tmp_path / "two.gz"
    path.write_bytes(compress(raw, "gzip", 6) * 2)
    got, f = read_all(path, tmp_path / "cache")
    assert got == records * 2 and not f.problems


def test_a_gzip_of_a_bare_example_says_it_is_not_tfrecord_framing(tmp_path: Path) -> None:
    payload = codec.encode_example({"label": ("int64", [3])})
    path = tmp_path / "bare.tfrecord.gz"
    path.write_bytes(compress(payload, "gzip", 6))
    got, f = read_all(path, tmp_path / "cache")
    assert got == []
    (p,) = f.problems
    assert "not TFRecord framing" in p.message and f"{len(payload):,} bytes" in p.message


# -- framing: bytes removed from or added to a payload ------------------------------------


@SETTINGS
@given(
    seed=st.integers(0, 10**6),
    delta=st.integers(-60, 60).filter(lambda d: d != 0),
)
def test_a_payload_with_bytes_removed_or_added_costs_no_neighbour(
    tmp_path: Path, seed: int, delta: int
) -> None:
    rnd = random.Random(seed)
    records = [os.urandom(rnd.randrange(70, 200)) for _ in range(rnd.randrange(3, 30))]
    hit = rnd.randrange(len(records))
    offsets = []
    pos = 0
    for r in records:
        offsets.append(pos)
        pos += len(r) + OVERHEAD
    data = bytearray(b"".join(encode_record(r) for r in records))
    at = offsets[hit] + HEADER_SIZE + rnd.randrange(0, len(records[hit]) - 60)
    if delta < 0:
        del data[at : at - delta]
    else:
        data[at:at] = os.urandom(delta)
    path = tmp_path / f"p{seed}.tfrecord"
    path.write_bytes(bytes(data))
    with codec.TFRecordFile(path, use_cache=False) as f:
        got = list(f)
        report = f.verify()
    others = [r for i, r in enumerate(records) if i != hit]
    assert got == others
    if hit == len(records) - 1 and delta < 0:
        # Bytes removed from the last record look exactly like a file cut short.
        assert report.damaged == 0 and [p.kind for p in report.problems] == ["truncated"]
    else:
        assert report.damaged == 1
    assert report.records == hit  # the records before the damage are intact ...
    assert report.recovered == len(others) - hit  # ... those after it are recovered


def test_records_found_inside_a_damaged_record_are_recovered_not_intact(tmp_path: Path) -> None:
    inner = [b"inner-%d" % i * 5 for i in range(4)]
    nested = b"".join(encode_record(r) for r in inner)  # a TFRecord stored in a record
    records = [b"first" * 10, nested, b"last" * 10]
    data = bytearray(b"".join(encode_record(r) for r in records))
    start = len(records[0]) + OVERHEAD
    data[start + 8] ^= 0xFF  # the nested record's own length CRC
    path = tmp_path / "nested.tfrecord"
    path.write_bytes(bytes(data))
    with codec.TFRecordFile(path, use_cache=False) as f:
        got = list(f)
        assert got[0] == records[0]
        assert got[1:5] == inner  # found by resynchronisation inside the damaged record
        assert f.recovered_from == 1
        assert [f.is_recovered(i) for i in range(len(f))] == [False] + [True] * (len(f) - 1)
        report = f.verify()
    assert report.records == 1 and report.recovered == len(got) - 1
    assert report.to_json()["recovered"] == len(got) - 1
