"""Remote objects through the one reader, against real servers on loopback: moto's S3 server
(with a fault-injecting proxy in front of it) and a range-serving HTTP server.

The oracle is always the same bytes read as a local file: a remote object must give the same
records, problems and verify report, read only the blocks it needs, never mix two versions of
an object, and turn network trouble into one clear message without credentials."""

from __future__ import annotations

import gzip
import json
import random

import pytest
from netservers import FaultProxy, MotoS3, RangeHTTPServer

import codec
from codec import locations, remote, settings
from codec.errors import ObjectChangedError, RemoteError
from codec.framing import OVERHEAD, encode_record

BLOCK = 64 << 10


@pytest.fixture(autouse=True)
def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(settings.BLOCK_ENV, str(BLOCK))
    monkeypatch.setattr(remote, "BACKOFF", 0.01)
    locations.forget()


def _stream(rng: random.Random, n: int, lo: int = 10, hi: int = 3000) -> tuple[list[bytes], bytes]:
    payloads = [rng.randbytes(rng.randint(lo, hi)) for _ in range(n)]
    return payloads, b"".join(encode_record(p) for p in payloads)


def _report(path: str) -> dict:
    with codec.TFRecordFile(path) as f:
        rep = f.verify().to_json()
    rep.pop("path")
    for p in rep["problems"]:
        p["message"] = p["message"].replace(path, "<path>")
    return rep


def _damage(rng: random.Random, raw: bytes, hits: int) -> bytes:
    out = bytearray(raw)
    for _ in range(hits):
        at = rng.randrange(len(out))
        if rng.random() < 0.5:
            out[at] ^= 1 << rng.randrange(8)
        else:
            del out[at : at + rng.randint(1, 40)]
    return bytes(out)


@pytest.mark.parametrize("seed", range(6))
def test_an_object_reads_and_verifies_as_the_local_file(store, tmp_path, seed):
    scheme, server = store
    rng = random.Random(seed)
    _, raw = _stream(rng, 300)
    if seed % 2:  # damaged copies: the same problems, found the same way
        raw = _damage(rng, raw, 1 + seed)
    if seed >= 4:  # compressed: inflated in the background, as far as asked
        raw = gzip.compress(raw)
    name = "x.tfrecord.gz" if seed >= 4 else "x.tfrecord"
    server.put("bkt", f"data/{name}", raw)
    local = tmp_path / name
    local.write_bytes(raw)
    url = f"{scheme}://bkt/data/{name}"
    expected = _report(str(local))
    assert _report(url) == {**expected}
    with codec.TFRecordFile(url) as f, codec.TFRecordFile(local) as g:
        assert f.compression == g.compression
        assert [r.data for r in f.records()] == [r.data for r in g.records()]
        assert [p.message.replace(url, "<>") for p in f.problems] == [
            p.message.replace(str(local), "<>") for p in g.problems
        ]


def test_the_first_records_read_only_the_first_blocks(s3: MotoS3):
    rng = random.Random(1)
    payloads, raw = _stream(rng, 2000, 900, 1100)  # ~2 MB, 32 blocks
    s3.put("bkt", "big.tfrecord", raw)
    with codec.TFRecordFile("s3://bkt/big.tfrecord") as f:
        assert [f[i] for i in range(10)] == payloads[:10]
        src = f._source
        # the first step of the scan and the read-ahead: a few blocks, not the object
        assert src.bytes_read <= (2 + remote.READ_AHEAD + 1) * BLOCK < len(raw) // 2
        assert f.index_complete is False
        assert len(f) == 2000 and f[-1] == payloads[-1]


def test_blocks_are_cached_on_disk_and_shared_by_the_next_open(s3: MotoS3):
    rng = random.Random(2)
    payloads, raw = _stream(rng, 500)
    s3.put("bkt", "c.tfrecord", raw)
    with codec.TFRecordFile("s3://bkt/c.tfrecord") as f:
        assert list(f) == payloads
        assert f._source.bytes_read == len(raw)
    with codec.TFRecordFile("s3://bkt/c.tfrecord") as f:
        assert list(f) == payloads
        assert f._source.bytes_read == 0  # index and every block from the cache
        assert f.verify().ok


def test_the_block_cache_stays_under_its_cap(s3: MotoS3, _isolated_cache, monkeypatch):
    cap = 6 * BLOCK
    monkeypatch.setenv(settings.REMOTE_CAP_ENV, str(cap))
    rng = random.Random(3)
    for k in range(3):
        payloads, raw = _stream(rng, 400, 1000, 3000)  # ~0.8 MB each, far over the cap
        s3.put("bkt", f"cap-{k}.tfrecord", raw)
        with codec.TFRecordFile(f"s3://bkt/cap-{k}.tfrecord", use_cache=True) as f:
            assert f.verify().records == 400
            assert [f[i] for i in (0, 199, 399)] == [payloads[0], payloads[199], payloads[399]]
        used, _ = remote.remote_usage(_isolated_cache)
        # the cap holds, give or take the blocks in flight when it was last checked
        assert used <= cap + (2 * remote.READ_AHEAD + 16) * BLOCK


def test_an_object_replaced_while_open_is_never_mixed_with_the_old(store):
    scheme, server = store
    url = f"{scheme}://bkt/v.tfrecord"
    rng = random.Random(4)
    old, raw = _stream(rng, 800, 900, 1100)
    server.put("bkt", "v.tfrecord", raw)
    with codec.TFRecordFile(url) as f:
        assert f[0] == old[0]
        ident = f.identity
        new = bytearray(raw)
        new[-500:] = bytes(500)  # same size, other bytes: only the version tells
        server.put("bkt", "v.tfrecord", bytes(new))
        locations.forget()
        assert not ident.unchanged()
        with pytest.raises(ObjectChangedError, match="changed since it was opened"):
            f.verify()  # needs blocks it has not read yet
    with codec.TFRecordFile(url) as f:  # opened again: the new version
        assert f.identity.version != ident.version
        assert not f.verify().ok


@pytest.mark.parametrize("pinned", [True, False], ids=["pinned", "asked-after"])
def test_a_read_after_the_object_was_replaced_never_returns_the_new_bytes(
    store, monkeypatch, pinned
):
    """Same size, other bytes: a thread's next read of the open object is refused, never
    answered with the new version's bytes. S3 pins each read (If-Match), GCS asks for the
    generation opened; a file system that pins nothing (Azure, ...) asks for the version after
    every read ("asked-after": S3 and GCS read that way here too)."""
    scheme, server = store
    if not pinned:
        monkeypatch.setattr(remote, "_IF_MATCH", ())
        monkeypatch.setattr(remote, "_GENERATION", ())
    server.put("bkt", "v.bin", b"A" * 100_000)
    obj = remote.RemoteObject(f"{scheme}://bkt/v.bin")
    assert obj.read(0, 10) == b"A" * 10
    server.put("bkt", "v.bin", b"B" * 100_000)
    with pytest.raises(ObjectChangedError, match="changed since it was opened"):
        obj.read(50_000, 50_010)
    server.delete("bkt", "v.bin")  # gone: said as missing, not as changed
    with pytest.raises(FileNotFoundError, match="no such object"):
        obj.read(60_000, 60_010)
    obj.close()


def test_a_gcsfs_that_drops_the_generation_is_asked_after_each_read(gcs, monkeypatch):
    """gcsfs before 2026.7 drops a read's generation and sends the newest bytes: with it, a
    gs:// read is checked against the version opened afterwards, and still refused."""
    import gcsfs

    monkeypatch.setattr(gcsfs, "__version__", "2024.2.0")
    gcs.put("bkt", "v.bin", b"A" * 100_000)
    obj = remote.RemoteObject("gs://bkt/v.bin")
    assert (obj._generation, obj._check_after) == (False, True)
    assert obj.read(0, 10) == b"A" * 10
    gcs.put("bkt", "v.bin", b"B" * 100_000)
    with pytest.raises(ObjectChangedError, match="changed since it was opened"):
        obj.read(50_000, 50_010)
    monkeypatch.setattr(gcsfs, "__version__", "2026.7.0")
    assert remote.RemoteObject("gs://bkt/v.bin")._generation


def test_throttling_and_server_errors_are_retried(s3_proxy: FaultProxy, s3: MotoS3):
    rng = random.Random(5)
    payloads, raw = _stream(rng, 200)
    s3.put("bkt", "t.tfrecord", raw)
    s3_proxy.fail(503, times=2, method="GET", ranged=True)  # SlowDown
    s3_proxy.fail(500, times=1, method="GET", ranged=True)
    s3_proxy.drop(after_bytes=100, times=1, method="GET", ranged=True)
    with codec.TFRecordFile("s3://bkt/t.tfrecord") as f:
        assert list(f) == payloads


def test_a_fault_that_persists_is_one_message_naming_the_object(s3_proxy: FaultProxy, s3):
    rng = random.Random(6)
    _, raw = _stream(rng, 2000, 900, 1100)
    s3.put("bkt", "p.tfrecord", raw)
    with pytest.raises(RemoteError) as info:  # at open
        s3_proxy.fail(500, times=None, method="GET", ranged=True)
        codec.TFRecordFile("s3://bkt/p.tfrecord")
    s3_proxy.clear_faults()
    with codec.TFRecordFile("s3://bkt/p.tfrecord") as f:
        s3_proxy.fail(503, times=None, method="GET", ranged=True)
        with pytest.raises(RemoteError) as info:  # while reading
            f[1900]
        message = str(info.value)
        assert "s3://bkt/p.tfrecord" in message and "failed 6 times" in message
        assert "try again" in message
        s3_proxy.clear_faults()
        assert f[1900]  # the same reader carries on once the server answers


def test_a_stalled_connection_times_out_and_is_retried(s3_proxy: FaultProxy, s3, monkeypatch):
    monkeypatch.setenv("TFRECORD_BROWSER_REMOTE_TIMEOUT", "0.5")
    locations.forget()
    rng = random.Random(7)
    payloads, raw = _stream(rng, 50)
    s3.put("bkt", "s.tfrecord", raw)
    s3_proxy.stall(3.0, times=1, method="GET", ranged=True)
    with codec.TFRecordFile("s3://bkt/s.tfrecord") as f:
        assert list(f) == payloads


def test_patterns_of_urls(s3: MotoS3):
    rng = random.Random(8)
    for k in range(4):
        s3.put("bkt", f"ds/train-{k:05d}-of-00004.tfrecord", _stream(rng, 5)[1])
    s3.put("bkt", "ds/train-00000-of-00005.tfrecord", _stream(rng, 5)[1])  # another set
    s3.put("bkt", "ds/notes.txt", b"x")
    s3.put("bkt", "ds/train-00001-of-00004.tfrecord.idx", b"0 21\n")  # its index: not data
    whole = [f"s3://bkt/ds/train-{k:05d}-of-00004.tfrecord" for k in range(4)]
    assert codec.expand_paths("s3://bkt/ds/train-*-of-00004.tfrecord*") == whole
    assert codec.expand_paths("s3://bkt/ds/train-*-of-00004.tfrecord") == whole
    everything = sorted([*whole, "s3://bkt/ds/train-00000-of-00005.tfrecord"])
    assert codec.expand_paths("s3://bkt/ds") == everything  # a folder: its TFRecord objects
    assert codec.expand_paths("s3://bkt/ds/train.tfrecord@4") == whole
    with pytest.raises(FileNotFoundError, match="no object matches"):
        codec.expand_paths("s3://bkt/ds/valid-*")
    with codec.TFRecordDataset("s3://bkt/ds/train-*-of-00004.tfrecord") as ds:
        assert len(ds) == 20


def test_http_objects_and_signed_urls_never_show_their_signature(http_server: RangeHTTPServer):
    rng = random.Random(9)
    payloads, raw = _stream(rng, 100)
    http_server.put("d/x.tfrecord", raw)
    url = http_server.url("d/x.tfrecord") + "?X-Amz-Signature=topsecret&X-Amz-Credential=AKIDX"
    with codec.TFRecordFile(url) as f:
        assert list(f) == payloads
        assert "topsecret" not in f.path and "AKIDX" not in f.path
        assert "topsecret" not in json.dumps(f.identity.to_json())
        assert "topsecret" not in repr(f) and "topsecret" not in json.dumps(f.verify().to_json())
    http_server.delete("d/x.tfrecord")
    locations.forget()
    with pytest.raises(FileNotFoundError) as info:
        codec.TFRecordFile(url)
    assert "topsecret" not in str(info.value) and "AKIDX" not in str(info.value)


def test_http_object_replaced_mid_read_is_refused(http_server: RangeHTTPServer):
    rng = random.Random(10)
    _, raw = _stream(rng, 3000, 900, 1100)
    http_server.put("v.tfrecord", raw)
    with codec.TFRecordFile(http_server.url("v.tfrecord")) as f:
        f[0]
        http_server.put("v.tfrecord", raw[::-1])
        with pytest.raises(ObjectChangedError):
            f.verify()


def test_a_missing_library_names_the_extra(without_library):
    without_library("gs", "gcsfs")
    with pytest.raises(codec.errors.MissingExtraError) as info:
        codec.TFRecordFile("gs://bucket/x.tfrecord")
    assert "pip install 'tfrecord-browser[gcs]'" in str(info.value)
    assert str(info.value).startswith("gs://bucket/x.tfrecord")


def test_landing_in_the_middle_of_a_remote_object_reads_little(s3: MotoS3):
    rng = random.Random(11)
    payloads, raw = _stream(rng, 3000, 900, 1100)  # ~3 MB
    s3.put("bkt", "j.tfrecord", raw)
    offsets = []
    off = 0
    for p in payloads:
        offsets.append(off)
        off += len(p) + OVERHEAD
    with codec.TFRecordFile("s3://bkt/j.tfrecord") as f:
        land = f.land(len(raw) // 2, count=5)
        first = next(i for i, o in enumerate(offsets) if o >= len(raw) // 2)
        assert land.offset == offsets[first]
        assert [f.read_at(o) for o, _ in land.spans] == payloads[first : first + 5]
        # the open's first block and read-ahead, and a few blocks where it landed
        assert f._source.bytes_read <= (1 + remote.READ_AHEAD + 6) * BLOCK < len(raw) // 2


def test_read_ahead_grows_with_sequential_reading_and_starts_over_at_a_jump(
    http_server: RangeHTTPServer,
):
    rng = random.Random(12)
    _, raw = _stream(rng, 4000, 900, 1100)  # ~4 MB: 61 blocks
    http_server.put("r.tfrecord", raw)
    with codec.TFRecordFile(http_server.url("r.tfrecord")) as f:
        src = f._source
        count = -(-len(raw) // BLOCK)

        def fetched() -> set[int]:
            for fut in list(src._inflight.values()):
                fut.result()
            return {k for k in range(count) if src._blocks.has(k)}

        opened = fetched()
        assert 0 in opened and len(opened) < remote.READ_AHEAD  # the open read little ahead
        for k in range(1, 20):  # reading on, block after block
            src.need(k * BLOCK, (k + 1) * BLOCK)
        assert fetched() == set(range(20 + remote.READ_AHEAD))  # a full window ahead
        src.need(40 * BLOCK + 10, 40 * BLOCK + 20)  # a jump: that block alone
        assert fetched() == set(range(20 + remote.READ_AHEAD)) | {40}
        back = 20 + remote.READ_AHEAD
        for k in range(back - 2, back + 3):  # back where reading was, and on: it grows again
            src.need(k * BLOCK, (k + 1) * BLOCK)
        again = fetched() - set(range(back + 3)) - {40}
        assert again and max(again) < back + 3 + remote.READ_AHEAD
        for k in range(41, 45):  # reading on from the jump
            src.need(k * BLOCK, (k + 1) * BLOCK)
        after = fetched() - set(range(41))
        assert set(range(41, 46)) <= after and max(after) < 45 + remote.READ_AHEAD
        assert src.requests == len(fetched())  # each block once
