"""The reader against TensorFlow's golden files, damage of every kind, and its contract."""

from __future__ import annotations

import base64
import gzip
import os
import shutil
import tracemalloc
import zlib
from pathlib import Path

import pytest
from conftest import DATA, INTACT_GOLDEN, damaged_expectations, expected_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codec
from codec import framing
from codec.reader import TFRecordFile, sniff_compression
from codec.writer import TFRecordWriter, write_records


@pytest.mark.parametrize("name", INTACT_GOLDEN)
def test_golden_offsets_and_lengths(name):
    expected = expected_lines(name)
    with TFRecordFile(DATA / name) as f:
        assert len(f) == len(expected)
        for i, e in enumerate(expected):
            assert f.span(i) == (e["offset"], e["length"])
            assert len(f[i]) == e["length"]
        assert f.problems == []
        report = f.verify()
    assert report.ok and report.records == len(expected)


def test_golden_raw_payloads_byte_for_byte():
    with TFRecordFile(DATA / "raw_records.tfrecord") as f:
        got = [base64.b64encode(p).decode() for p in f]
    assert got == [e["record"] for e in expected_lines("raw_records.tfrecord")]


@pytest.mark.parametrize("name", ["basic.tfrecord.gz", "basic.tfrecord.zlib"])
def test_compressed_golden_match_plain(name):
    with TFRecordFile(DATA / name) as f, TFRecordFile(DATA / "basic.tfrecord") as plain:
        assert f.compression == ("gzip" if name.endswith("gz") else "zlib")
        assert list(f) == list(plain)
        assert f.size == plain.size


def test_shards_match_basic_interleaved():
    with codec.TFRecordDataset(str(DATA / "shards" / "part-*-of-00003.tfrecord")) as ds:
        assert len(ds) == 64
        with TFRecordFile(DATA / "basic.tfrecord") as basic:
            records = list(basic)
        # record i of basic is in shard i mod 3
        k, j = ds.locate(0)
        assert (k, j) == (0, 0)
        per_shard = [records[s::3] for s in range(3)]
        assert list(ds) == per_shard[0] + per_shard[1] + per_shard[2]
        assert ds.locate(22) == (1, 0)
        assert ds.locate(-1) == (2, 20)
        assert ds.global_index(2, 0) == 43
        assert ds.span(22)[0].endswith("part-00001-of-00003.tfrecord")


@pytest.mark.parametrize("name", sorted(damaged_expectations()))
def test_damaged_golden(name):
    exp = damaged_expectations()[name]
    with TFRecordFile(DATA / name) as f:
        report = f.verify()
        got = [(p.offset, p.kind) for p in report.problems]
        assert got == [(p["offset"], p["problem"]) for p in exp["problems"]]
        for p in report.problems:
            assert name in p.describe() and str(p.offset) in p.describe()
        offsets = [f.span(i)[0] for i in range(len(f))]
        readable = []
        for i in range(len(f)):
            try:
                f[i]
                readable.append(offsets[i])
            except codec.CorruptRecordError as exc:
                assert exc.offset == offsets[i] and name in str(exc)
        assert readable == exp["readable_offsets"]
        # Records found by resynchronising after a bad header are readable but recovered:
        # nothing but their own CRCs says they are records of the file.
        assert report.records + report.recovered == len(exp["readable_offsets"])
        resynced = any(p["problem"] == "length_crc" for p in exp["problems"])
        assert (report.recovered > 0) == resynced
        if resynced:
            first = f.recovered_from
            assert first is not None and offsets[first] > exp["problems"][0]["offset"]


def test_iteration_skips_damage_and_records_it():
    with TFRecordFile(DATA / "corrupt_data_crc.tfrecord") as f:
        payloads = list(f)
        assert len(payloads) == 63
        infos = list(f.records())
        assert [i.index for i in infos if i.data is None] == [5]
        assert infos[5].problem is not None and infos[5].problem.offset == 501
        assert f.is_damaged(5) is not None


def test_sequence_protocol(tmp_path):
    path = tmp_path / "s.tfrecord"
    payloads = [f"record {i}".encode() for i in range(10)]
    write_records(path, payloads)
    with TFRecordFile(path) as f:
        assert f[-1] == payloads[-1]
        assert f[2:5] == payloads[2:5]
        assert f[::-3] == payloads[::-3]
        assert list(f) == payloads
        with pytest.raises(IndexError):
            f[10]
        with pytest.raises(IndexError):
            f[-11]
        with pytest.raises(TypeError):
            f["1"]  # type: ignore[call-overload]
    with pytest.raises(codec.ReaderClosedError, match="closed"):
        f[0]


def test_payload_outlives_close(tmp_path):
    path = tmp_path / "s.tfrecord"
    write_records(path, [b"abc"])
    with TFRecordFile(path) as f:
        data = f[0]
    assert data == b"abc"


def test_empty_file(tmp_path):
    path = tmp_path / "e.tfrecord"
    path.write_bytes(b"")
    with TFRecordFile(path) as f:
        assert len(f) == 0 and list(f) == [] and f.verify().ok


def test_missing_file_is_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        TFRecordFile(tmp_path / "nope.tfrecord")


def test_text_file_is_one_problem_at_zero(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("this is not a TFRecord file at all\n" * 30)
    with TFRecordFile(path) as f:
        assert len(f) == 0
        [p] = f.verify().problems
        assert p.offset == 0 and p.kind == "length_crc"
        assert "Is this even a TFRecord file?" in p.message
        assert p.skipped == path.stat().st_size


def test_huge_length_is_never_allocated(tmp_path):
    path = tmp_path / "huge.tfrecord"
    body = framing.encode_record(b"first")
    import struct

    bad = struct.pack("<Q", 2**62)
    bad += struct.pack("<I", framing.masked_crc32c(bad))  # a *valid* length CRC
    path.write_bytes(body + bad + b"\0" * 100)
    tracemalloc.start()
    with TFRecordFile(path) as f:
        assert len(f) == 1
        report = f.verify()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [p.kind for p in report.problems] == ["truncated"]
    assert peak < 32 << 20


def _sample_stream(n: int = 3) -> bytes:
    return b"".join(framing.encode_record(bytes([65 + i]) * (5 + i)) for i in range(n))


@pytest.mark.slow
def test_truncate_at_every_byte(tmp_path):
    full = _sample_stream()
    payloads = [bytes([65 + i]) * (5 + i) for i in range(3)]
    for cut in range(len(full) + 1):
        path = tmp_path / f"t{cut}.tfrecord"
        path.write_bytes(full[:cut])
        with TFRecordFile(path, use_cache=False) as f:
            got = list(f)
            report = f.verify()
        assert got == payloads[: len(got)]
        complete = sum(1 for i in range(3) if sum(21 + j for j in range(i + 1)) <= cut)
        assert len(got) == complete
        clean = cut in (0, 21, 43, 66)
        assert report.ok == clean, cut
        if not clean:
            assert [p.kind for p in report.problems] == ["truncated"]


@pytest.mark.slow
def test_flip_every_byte(tmp_path):
    full = _sample_stream()
    payloads = [bytes([65 + i]) * (5 + i) for i in range(3)]
    for pos in range(len(full)):
        for bit in (0x01, 0x80):
            data = bytearray(full)
            data[pos] ^= bit
            path = tmp_path / "f.tfrecord"
            path.write_bytes(bytes(data))
            with TFRecordFile(path, use_cache=False) as f:
                got = list(f)
                report = f.verify()
            assert not report.ok, (pos, bit)
            # Whatever is returned is a real record, in order, never garbage.
            it = iter(payloads)
            assert all(any(g == p for p in it) for g in got), (pos, bit)
            assert len(got) >= 2, (pos, bit)  # only the hit record is lost


def test_index_cache_makes_reopen_scan_free(tmp_path, monkeypatch):
    path = tmp_path / "c.tfrecord"
    write_records(path, [b"x" * i for i in range(100)])
    with TFRecordFile(path) as f:
        assert len(f) == 100

    def no_scan(*a, **k):
        raise AssertionError("scanned although the index was cached")

    monkeypatch.setattr("codec.record_index.scan", no_scan)
    with TFRecordFile(path) as f:
        assert f.index_complete and len(f) == 100 and f[99] == b"x" * 99
    # A changed file is scanned again.
    write_records(path, [b"y"])
    monkeypatch.undo()
    with TFRecordFile(path) as f:
        assert len(f) == 1


def test_index_grows_incrementally(tmp_path, monkeypatch):
    monkeypatch.setattr("codec.reader._SCAN_STEP", 10)
    monkeypatch.setattr("codec.reader._FIRST_STEP", 10)
    path = tmp_path / "inc.tfrecord"
    write_records(path, [b"%d" % i for i in range(1000)])
    with TFRecordFile(path, use_cache=False) as f:
        assert f[0] == b"0"
        assert f.indexed < 1000 and not f.index_complete
        assert 0 < f.index_progress < 1
        assert f[500] == b"500"
        assert len(f) == 1000 and f.index_complete


def test_text_index_roundtrip(tmp_path):
    path = tmp_path / "d.tfrecord"
    payloads = [b"a" * i for i in range(20)]
    write_records(path, payloads)
    idx = tmp_path / "d.idx"
    with TFRecordFile(path, use_cache=False) as f:
        f.write_text_index(idx)
    lines = idx.read_text().splitlines()
    assert lines[0] == "0 16" and lines[1] == "16 17"
    with TFRecordFile(path, use_cache=False) as f:
        f.load_text_index(idx)
        assert f.index_complete and list(f) == payloads


def test_text_index_that_lies_is_not_trusted(tmp_path):
    path = tmp_path / "d.tfrecord"
    write_records(path, [b"a" * i for i in range(5)])
    idx = tmp_path / "d.idx"
    idx.write_text("0 16\n17 99\n")
    with TFRecordFile(path, use_cache=False) as f:
        f.load_text_index(idx)
        assert len(f) == 5


def test_sniff_compression():
    assert sniff_compression(b"\x1f\x8b") == "gzip"
    assert sniff_compression(b"\x78\x9c") == "zlib"
    assert sniff_compression(b"\x57\x00") == "none"
    assert sniff_compression(b"") == "none"


@pytest.mark.parametrize("length", [0x0178, 0x5E78, 0x9C78, 0xDA78, 0x8B1F, 0x01_0178])
def test_records_whose_length_looks_like_a_magic_number_are_not_compressed(tmp_path, length):
    """The first record's little-endian length can start with a zlib header (376 bytes is
    ``78 01``) or GZIP's magic (35,615 bytes is ``1f 8b``): such files are still plain."""
    payloads = [bytes([n % 251]) * length for n in range(3)]
    path = tmp_path / "magic.tfrecord"
    write_records(path, payloads)
    assert sniff_compression(path.read_bytes()[:12]) == "none"
    with TFRecordFile(path, use_cache=False) as f:
        assert f.compression == "none"
        assert list(f) == payloads


@given(st.binary(min_size=0, max_size=70_000))
@settings(max_examples=40, deadline=None)
def test_a_plain_file_is_never_taken_for_compressed(payload):
    head = framing.encode_record(payload)[:12]
    assert sniff_compression(head) == "none"


def test_forced_compression_on_plain_file_reports_damage(tmp_path):
    with TFRecordFile(DATA / "basic.tfrecord", compression="gzip", use_cache=False) as f:
        assert len(f) == 0
        assert [p.kind for p in f.problems] == ["compression"]


def test_truncated_gzip_keeps_what_inflated(tmp_path):
    blob = (DATA / "basic.tfrecord.gz").read_bytes()
    path = tmp_path / "cut.tfrecord.gz"
    path.write_bytes(blob[: len(blob) // 2])
    with TFRecordFile(path) as f:
        report = f.verify()
        kinds = {p.kind for p in report.problems}
        assert "compression" in kinds
        assert 0 < report.records < 64


def test_inflated_cache_is_reused(tmp_path, _isolated_cache):
    src = tmp_path / "b.tfrecord.gz"
    shutil.copy(DATA / "basic.tfrecord.gz", src)
    with TFRecordFile(src) as f:
        assert len(f) == 64
    inflated = list((_isolated_cache / "inflated").glob("*.tfrecord"))
    assert len(inflated) == 1
    before = inflated[0].stat().st_mtime_ns
    with TFRecordFile(src) as f:
        assert len(f) == 64
    assert inflated[0].stat().st_mtime_ns == before
    assert not list(tmp_path.glob(".*"))  # nothing written next to the source


def test_read_only_cache_dir_still_works(tmp_path):
    path = tmp_path / "r.tfrecord"
    write_records(path, [b"abc"] * 3)
    with TFRecordFile(path, cache_dir="/proc/definitely/not/writable") as f:
        assert len(f) == 3


COMPRESSIONS = ["none", "gzip", "zlib"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    payloads=st.lists(st.binary(max_size=300), max_size=30),
    compression=st.sampled_from(COMPRESSIONS),
)
def test_write_read_roundtrip(tmp_path, payloads, compression):
    path = tmp_path / f"h.{compression}"
    write_records(path, payloads, compression)
    with TFRecordFile(path, use_cache=False) as f:
        assert f.compression == (compression if payloads else f.compression)
        assert list(f) == payloads
        assert f.verify().ok


def test_gzip_and_zlib_output_decompress_to_plain_stream(tmp_path):
    payloads = [os.urandom(50) for _ in range(20)]
    write_records(tmp_path / "p", payloads)
    write_records(tmp_path / "g", payloads, "gzip")
    write_records(tmp_path / "z", payloads, "zlib")
    plain = (tmp_path / "p").read_bytes()
    assert gzip.decompress((tmp_path / "g").read_bytes()) == plain
    assert zlib.decompress((tmp_path / "z").read_bytes()) == plain


def test_uncompressed_writer_matches_tensorflow(tmp_path):
    for name in ["basic.tfrecord", "edge_values.tfrecord", "sequence.tfrecord", "tensors.tfrecord"]:
        with TFRecordFile(DATA / name) as f:
            out = tmp_path / name
            write_records(out, list(f))
        assert out.read_bytes() == (DATA / name).read_bytes(), name


def test_writer_is_atomic_on_exception(tmp_path):
    out = tmp_path / "o.tfrecord"
    with pytest.raises(RuntimeError), TFRecordWriter(out) as w:
        w.write(b"partial")
        raise RuntimeError("boom")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_writer_keeps_old_file_on_failure(tmp_path):
    out = tmp_path / "o.tfrecord"
    write_records(out, [b"old"])
    with pytest.raises(RuntimeError), TFRecordWriter(out) as w:
        w.write(b"new")
        raise RuntimeError("boom")
    with TFRecordFile(out, use_cache=False) as f:
        assert list(f) == [b"old"]


def test_writer_full_disk_leaves_nothing(tmp_path, monkeypatch):
    out = tmp_path / "o.tfrecord"
    real_fsync = os.fsync

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(codec.WriteError, match="No space left"), TFRecordWriter(out) as w:
        w.write(b"x" * 100)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert list(tmp_path.iterdir()) == []


def test_writer_unwritable_destination(tmp_path, monkeypatch):
    import tempfile

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    # Tests may run as root, who may write anywhere: refuse the way the OS would.
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(codec.WriteError, match="cannot write here: Permission denied"):
        TFRecordWriter(tmp_path / "o.tfrecord")
    assert list(tmp_path.iterdir()) == []


def test_writer_missing_folder_is_write_error(tmp_path):
    with pytest.raises(codec.WriteError, match="cannot write here"):
        TFRecordWriter(tmp_path / "no" / "such" / "dir" / "o.tfrecord")


def test_expand_paths(tmp_path):
    for k in range(3):
        write_records(tmp_path / f"train-{k:05d}-of-00003", [b"%d" % k])
    (tmp_path / "notes.txt").write_text("x")
    shards = codec.expand_paths(str(tmp_path / "train-*-of-00003"))
    assert [Path(p).name for p in shards] == [f"train-{k:05d}-of-00003" for k in range(3)]
    assert codec.expand_paths(str(tmp_path / "train@3")) == shards
    assert codec.expand_paths(str(tmp_path)) == shards
    with pytest.raises(FileNotFoundError, match="no file matches"):
        codec.expand_paths(str(tmp_path / "val-*"))
    with pytest.raises(FileNotFoundError, match="no such file"):
        codec.expand_paths(str(tmp_path / "typo.tfrecord"))
    with pytest.raises(FileNotFoundError, match="missing"):
        codec.expand_paths(str(tmp_path / "train@4"))


@pytest.mark.parametrize("index", ["{name}.idx", "{stem}.idx", "{name}.index"])
def test_a_glob_leaves_out_the_text_index_beside_each_file(tmp_path, index):
    data = []
    for k in range(2):
        path = tmp_path / f"part-{k}.tfrecord"
        write_records(path, [b"%d" % k] * 3)
        with codec.TFRecordFile(path) as f:
            f.write_text_index(tmp_path / index.format(name=path.name, stem=path.stem))
        data.append(str(path))
    lone = tmp_path / "part-9.idx"  # no data file of that name: kept (and read as data)
    lone.write_text("0 9\n")
    assert codec.expand_paths(str(tmp_path / "part-*")) == [*data, str(lone)]
    with codec.TFRecordDataset(str(tmp_path / "part-*.tfrecord*")) as ds:
        assert len(ds) == 6 and not ds.problems


def test_dataset_verify_in_parallel(tmp_path):
    paths = []
    for k in range(4):
        p = tmp_path / f"s{k}.tfrecord"
        write_records(p, [b"r%d" % i for i in range(10)])
        paths.append(str(p))
    data = bytearray(Path(paths[2]).read_bytes())
    data[14] ^= 0xFF
    Path(paths[2]).write_bytes(bytes(data))
    with codec.TFRecordDataset(paths) as ds:
        reports = ds.verify(workers=2)
        assert [r.ok for r in reports] == [True, True, False, True]
        assert [r.records for r in reports] == [10, 10, 9, 10]
        assert len(ds.problems) == 1


def test_spans_and_read_span(tmp_path):
    path = tmp_path / "s.tfrecord"
    write_records(path, [b"a", b"bb", b"ccc"])
    with TFRecordFile(path, use_cache=False) as f:
        offs, lens = f.spans()
        assert offs.tolist() == [0, 17, 35] and lens.tolist() == [1, 2, 3]
        assert f.spans(1, 2)[0].tolist() == [17]
        assert f.read_span(17, 35) == framing.encode_record(b"bb")
        with pytest.raises(IndexError):
            f.read_span(30, 10_000)


def test_reading_through_a_file_releases_pages(tmp_path, monkeypatch):
    monkeypatch.setattr("codec.reader._RELEASE_EVERY", 10_000)
    path = tmp_path / "r.tfrecord"
    write_records(path, [bytes(1000)] * 50)
    released = []
    with TFRecordFile(path, use_cache=False) as f:
        real = f._release
        monkeypatch.setattr(f, "_release", lambda a, b: (released.append((a, b)), real(a, b)))
        for i in range(50):
            assert f[i] == bytes(1000)
    assert len(released) >= 4


@pytest.mark.parametrize("threads", [1, 2])
def test_verify_in_blocks_finds_every_bad_record(tmp_path, monkeypatch, threads):
    monkeypatch.setattr("codec.reader._VERIFY_BLOCK", 4096)
    path = tmp_path / "v.tfrecord"
    write_records(path, [bytes([i % 251]) * 1000 for i in range(40)])
    data = bytearray(path.read_bytes())
    for k in (3, 17, 39):  # one payload byte of three records, in different blocks
        data[k * 1016 + 12 + 500] ^= 0xFF
    path.write_bytes(bytes(data))
    with TFRecordFile(path, use_cache=False) as f:
        report = f.verify(threads=threads)
    assert report.damaged == 3 and report.records == 37
    assert [p.offset for p in report.problems] == [3 * 1016, 17 * 1016, 39 * 1016]
