"""Jumping to a byte position without an index: the landing is the first true record boundary
at or after the target, its records are the file's own, numbers are exact where the index
reaches and estimates otherwise, and a boundary that was really inside a record is told apart
once the index gets there."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codec
from codec.framing import OVERHEAD, encode_record
from codec.writer import write_records


def _payloads(rng: random.Random, n: int, lo: int = 1, hi: int = 400) -> list[bytes]:
    return [rng.randbytes(rng.randint(lo, hi)) for _ in range(n)]


def _offsets(payloads: list[bytes]) -> list[int]:
    out, off = [], 0
    for p in payloads:
        out.append(off)
        off += len(p) + OVERHEAD
    return out


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), fraction=st.floats(0.0, 1.0), indexed=st.integers(0, 3))
def test_landing_is_the_next_boundary_with_its_records(tmp_path, seed, fraction, indexed):
    rng = random.Random(seed)
    payloads = _payloads(rng, rng.randint(1, 120))
    path = tmp_path / f"{seed}-{indexed}.tfrecord"
    write_records(path, payloads)
    offsets = _offsets(payloads)
    with codec.TFRecordFile(path, use_cache=False) as f:
        f.index_more(indexed * 10)  # part of the file indexed, or none, or all
        target = int(fraction * f.size)
        land = f.land(target, count=5)
        after = [i for i, o in enumerate(offsets) if o >= target]
        if not after:
            assert land.offset is None and land.spans == []
            return
        first = after[0]
        assert land.offset == offsets[first]
        assert land.spans == [(offsets[i], len(payloads[i])) for i in after[:5]]
        for off, _ in land.spans:
            assert f.read_at(off) == payloads[offsets.index(off)]
        if land.exact:
            assert land.first == first
        else:
            assert land.estimate is not None and land.estimate >= 0
            assert f.known_number(land.offset) is None  # not indexed yet
        f.build_index()
        assert f.known_number(land.offset) == first


def test_estimate_is_close_for_even_records(tmp_path):
    rng = random.Random(7)
    payloads = [rng.randbytes(1000) for _ in range(5000)]
    write_records(tmp_path / "even.tfrecord", payloads)
    with codec.TFRecordFile(tmp_path / "even.tfrecord", use_cache=False) as f:
        f.index_more(100)
        land = f.land(f.size // 2)
        assert not land.exact
        assert land.estimate is not None and abs(land.estimate - 2500) <= 1


def test_landing_past_damage_finds_the_next_intact_record(tmp_path):
    rng = random.Random(3)
    payloads = _payloads(rng, 200, 50, 300)
    raw = bytearray(b"".join(encode_record(p) for p in payloads))
    offsets = _offsets(payloads)
    # Break the header of record 100 and the payload of record 101.
    raw[offsets[100] + 9] ^= 0xFF
    raw[offsets[101] + 20] ^= 0xFF
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(bytes(raw))
    with codec.TFRecordFile(path, use_cache=False) as f:
        land = f.land(offsets[100] - 3)
        assert land.offset == offsets[102]
        assert f.read_at(land.offset) == payloads[102]


def test_a_boundary_inside_a_record_is_told_apart_once_indexed(tmp_path):
    """A record whose payload is itself TFRecord framing: the search lands on the nested
    record (both CRCs check), and the index, once it gets there, says no record of the file
    starts at that byte."""
    rng = random.Random(5)
    inner = b"".join(encode_record(p) for p in _payloads(rng, 20, 100, 200))
    payloads = [*_payloads(rng, 30, 10, 50), inner, *_payloads(rng, 30, 10, 50)]
    path = tmp_path / "nested.tfrecord"
    write_records(path, payloads)
    offsets = _offsets(payloads)
    with codec.TFRecordFile(path, use_cache=False) as f:
        land = f.land(offsets[30] + 1)
        assert land.offset is not None and offsets[30] < land.offset < offsets[31]
        f.build_index()
        assert f.known_number(land.offset) is None


def test_dataset_landing_across_files(tmp_path):
    rng = random.Random(11)
    files = []
    allp: list[bytes] = []
    for k in range(3):
        ps = [rng.randbytes(200) for _ in range(100)]
        write_records(tmp_path / f"s-{k:05d}-of-00003.tfrecord", ps)
        files.append(str(tmp_path / f"s-{k:05d}-of-00003.tfrecord"))
        allp.extend(ps)
    with codec.TFRecordDataset(files, use_cache=False) as ds:
        land = ds.land(0.5)
        assert land.file == 1
        assert not land.exact and land.estimate is not None
        assert abs(land.estimate - 150) <= 1
        off = land.landing.offset
        assert off is not None
        assert ds.files[1].read_at(off) == allp[land.estimate]
        ds.index_more(1 << 20)
        ds.index_more(1 << 20)
        ds.index_more(1 << 20)
        again = ds.land(0.5)
        assert again.exact and again.first == 150
