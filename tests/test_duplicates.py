"""Duplicate pictures: the perceptual hashes are imagehash's, bit for bit; the pixel digest
is equal exactly when decoded pixels are; the multi-index search finds every pair a search of
all pairs finds; on planted duplicates (re-encoded, resized, the same bytes, the same pixels,
cropped, mirrored) across two splits every group is found, with no false group and no decoy;
the job's answer is the same bytes whatever the split and on one process, a pool and a Dask
cluster; the main picture is chosen by role, not byte order; damaged, odd and pictureless
records are counted and never crash; an embedding is searched by cosine distance."""

from __future__ import annotations

import io
import itertools
import json
import random
from pathlib import Path
from typing import Any

import imagehash
import numpy as np
import pytest
from dask_support import local_scheduler
from PIL import Image, ImageOps

import codec
import codec.duplicates as dup
from browser_app.generators import PHOTOS, photo
from browser_app.generators.duplicates import COPY_KINDS, Planted, write_planted
from codec.example import encode_example
from codec.jobs import Task, executor, plan, run
from codec.jobs.duplicates import DuplicatesJob, DuplicatesResult, fingerprint, source_tasks
from codec.perceptual import dhash, distance, hashes_of, phash, pixel_digest

# -- the hashes ------------------------------------------------------------------------------


def _pictures() -> list[Image.Image]:
    """Real photographs in several sizes, qualities and modes, and flat, striped and noisy
    pictures (where the DCT's low frequencies tie)."""
    out: list[Image.Image] = []
    for name in PHOTOS:
        for side in (None, 201, 64, 17):
            img = Image.open(io.BytesIO(photo(name, side).encoded))
            img.load()
            out += [img, img.convert("L"), ImageOps.mirror(img), img.rotate(90, expand=True)]
            buf = io.BytesIO()
            img.save(buf, "JPEG", quality=30)
            out.append(Image.open(io.BytesIO(buf.getvalue())))
    rng = np.random.default_rng(29)
    out.append(Image.new("RGB", (50, 40), (10, 20, 30)))
    out.append(Image.new("L", (8, 8), 0))
    ramp = np.tile((np.arange(64) * 4).astype(np.uint8), (64, 1))
    out += [Image.fromarray(ramp), Image.fromarray(np.ascontiguousarray(ramp.T))]
    out.append(Image.fromarray((np.indices((64, 64)).sum(0) % 2 * 255).astype(np.uint8)))
    for _ in range(60):
        h, w = (int(x) for x in rng.integers(9, 90, 2))
        out.append(Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)))
    return out


def test_hashes_are_imagehash_s_bit_for_bit() -> None:
    pictures = _pictures()
    assert len(pictures) == 165
    for img in pictures:
        assert phash(img) == int(str(imagehash.phash(img)), 16)
        assert dhash(img) == int(str(imagehash.dhash(img)), 16)
        got = hashes_of(img)
        assert (got.phash, got.dhash) == (phash(img), dhash(img))


def test_the_mirrored_hashes_find_a_mirrored_copy() -> None:
    for name in PHOTOS:
        img = Image.open(io.BytesIO(photo(name, 256).encoded)).convert("RGB")
        a, b = hashes_of(img), hashes_of(ImageOps.mirror(img))
        assert distance(a.phash_mirrored, b.phash) <= 2
        assert distance(a.dhash_mirrored, b.dhash) <= 2
        assert distance(a.phash, b.phash) > 10  # unmirrored they are far apart


def test_the_pixel_digest_is_equal_exactly_when_the_pixels_are() -> None:
    img = Image.open(io.BytesIO(photo("coffee", 120).encoded))
    img.load()
    png = io.BytesIO()
    img.save(png, "PNG")
    again = Image.open(io.BytesIO(png.getvalue()))
    assert pixel_digest(again) == pixel_digest(img)
    assert pixel_digest(img.convert("P").convert("RGB")) != pixel_digest(img)
    changed = np.asarray(img.convert("RGB")).copy()
    changed[5, 7, 1] ^= 1
    assert pixel_digest(Image.fromarray(changed)) != pixel_digest(img)
    rgba = img.convert("RGBA")
    assert pixel_digest(rgba) != pixel_digest(img)  # transparency is part of the picture
    assert len(pixel_digest(img)) == 16


# -- the search ------------------------------------------------------------------------------


@pytest.mark.parametrize("t", [0, 1, 2, 3, 4, 6, 7, 8, 11, 12, 16])
def test_multi_index_search_finds_what_all_pairs_find(t: int) -> None:
    rng = np.random.default_rng(t)
    n = 1500
    h = rng.integers(0, 1 << 62, n, dtype=np.int64).astype(np.uint64) << np.uint64(2)
    # near ones planted at every distance up to 16, and copies
    for k in range(0, 200, 2):
        bits = rng.choice(64, size=k % 17, replace=False)
        h[k + 1] = h[k] ^ np.uint64(sum(1 << int(b) for b in bits))
    h[300:310] = h[299]
    i, j = dup.near_pairs(h, h, t, same=True)
    d = np.bitwise_count(h[:, None] ^ h[None, :])
    ei, ej = np.nonzero(np.triu(d <= t, 1))
    assert (i.tolist(), j.tolist()) == (ei.tolist(), ej.tolist())
    assert len(i) >= 45 + (t + 1) * 5  # the copies and the planted pairs at most t apart
    q = h[:40] ^ np.uint64(1)
    i, j = dup.near_pairs(q, h, t)
    ei, ej = np.nonzero(np.bitwise_count(q[:, None] ^ h[None, :]) <= t)
    assert (i.tolist(), j.tolist()) == (ei.tolist(), ej.tolist())


def test_a_threshold_beyond_the_limit_is_refused() -> None:
    h = np.zeros(3, np.uint64)
    with pytest.raises(ValueError, match="from 0 to 16"):
        dup.near_pairs(h, h, 17)
    with pytest.raises(ValueError, match="from 0 to 16"):
        DuplicatesJob(threshold=20)


def test_components_join_chains() -> None:
    label = dup._components(7, np.array([5, 1, 3]), np.array([6, 3, 6]))
    assert label.tolist() == [0, 1, 2, 1, 4, 1, 1]


# -- planted duplicates ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    root = tmp_path_factory.mktemp("planted")
    return write_planted(root, originals=150, copied=60, decoys=20, shards=3, seed=3)


def _named(p: Planted) -> list[tuple[str, list[codec.TFRecordFile], bool]]:
    from browser_app.cli.inputs import open_inputs

    return [(name, list(open_inputs([spec], "auto")), False) for name, spec in p.splits.items()]


def _run(p: Planted, job: DuplicatesJob | None = None, ex: Any = "inline") -> DuplicatesResult:
    named = _named(p)
    sources, tasks = source_tasks(named)
    for _, fs, _ in named:
        for f in fs:
            f.close()
    j = job or DuplicatesJob()
    return run(DuplicatesJob(sources, j.threshold, j.mirror, j.embedding, j.cosine), tasks, ex)


def _keys(result: DuplicatesResult, records: list[int]) -> frozenset[tuple[str, int]]:
    out = set()
    for r in records:
        src, _, _, number = result.where(r)
        out.add((result.sources[src].label, number))
    return frozenset(out)


def test_planted_duplicates_are_found_with_no_false_group(planted: Planted) -> None:
    result = _run(planted)
    assert result.records == planted.pictures == 230
    found = {_keys(result, g.records): g for g in result.groups}
    truth = {frozenset(g) for g in planted.groups}
    assert set(found) == truth  # every planted group, and no other
    for a, b in planted.decoys:
        assert not any(a in k and b in k for k in found)
    kinds = {planted.kinds[x]: found[frozenset(g)] for g in planted.groups for x in g[1:]}
    assert set(kinds) == set(COPY_KINDS)
    assert kinds["identical"].kind == dup.IDENTICAL
    assert kinds["pixels"].kind == dup.PIXELS
    for kind in ("quality", "resized", "cropped", "mirrored"):
        g = kinds[kind]
        assert g.kind == dup.NEAR
        m = g.members[1]
        assert m.distance is not None and 0 <= m.distance <= dup.DEFAULT_THRESHOLD
        assert m.mirrored == (kind == "mirrored")
    doc = result.to_json()
    assert doc["records"]["fingerprinted"] == 230
    assert doc["duplicate_records"] == 60
    leaks = [g for g in doc["groups"] if len(g["sources"]) == 2]
    assert leaks and len(leaks) == sum(1 for g in planted.groups if g[0][0] != g[1][0])
    member = doc["groups"][0]["members"][1]
    assert {"source", "record", "file", "index_in_file", "relation", "distance"} <= set(member)


def test_across_keeps_only_the_groups_of_both_sides(planted: Planted) -> None:
    named = _named(planted)
    named[1] = (named[1][0], named[1][1], True)
    sources, tasks = source_tasks(named)
    result = run(DuplicatesJob(sources), tasks, "inline")
    across = {_keys(result, g.records) for g in result.groups}
    assert across == {frozenset(g) for g in planted.groups if g[0][0] != g[1][0]}
    assert result.to_json()["search"]["across"] is True


def _cut(tasks: list[Task], cuts: list[float]) -> list[Task]:
    out = []
    for t in tasks:
        at = sorted({int(c * t.end) for c in cuts if 0 < int(c * t.end) < t.end})
        edges = [0, *at, t.end]
        out += [
            Task(t.file, t.path, a, b, whole=False, identity=t.identity)
            for a, b in itertools.pairwise(edges)
        ]
    return out


def _json(result: DuplicatesResult) -> str:
    return json.dumps(result.to_json(), sort_keys=True)


def test_the_same_bytes_whatever_the_split_and_wherever_it_runs(planted: Planted) -> None:
    named = _named(planted)
    sources, tasks = source_tasks(named)
    job = DuplicatesJob(sources)
    whole = _json(run(job, tasks, "inline"))
    assert json.loads(whole)["groups"]
    cut = _cut(tasks, [0.2, 0.21, 0.5, 0.77])
    assert len(cut) > len(tasks)
    assert _json(run(job, cut, "inline")) == whole
    parts = [job.task(t) for t in cut]
    random.Random(2).shuffle(parts)
    assert _json(job.merge(parts)) == whole
    assert _json(run(job, cut, "processes:2")) == whole
    with (
        local_scheduler(2, threads_per_worker=1) as cluster,
        executor(f"dask:{cluster.scheduler_address}") as ex,
    ):
        assert _json(run(job, cut, ex)) == whole


# -- records of every sort -------------------------------------------------------------------


def _jpeg(img: Image.Image, quality: int = 85) -> bytes:
    out = io.BytesIO()
    img.save(out, "JPEG", quality=quality)
    return out.getvalue()


def _png(img: Image.Image) -> bytes:
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def test_the_picture_is_the_main_one_whatever_the_byte_order() -> None:
    img = Image.open(io.BytesIO(photo("chelsea", 160).encoded)).convert("RGB")
    jpeg = _jpeg(img)
    mask = _png(Image.fromarray((np.asarray(img.convert("L")) > 128).astype(np.uint8)))
    first = encode_example(
        {"image/object/mask": ("bytes", [mask]), "image/encoded": ("bytes", [jpeg])}
    )
    second = encode_example(
        {"image/encoded": ("bytes", [jpeg]), "image/object/mask": ("bytes", [mask])}
    )
    (s1, f1), (s2, f2) = fingerprint(first), fingerprint(second)
    assert s1 == s2 == dup.OK
    assert f1[0] == f2[0] == "image/encoded"
    decoded = Image.open(io.BytesIO(jpeg))
    assert f1[4].phash == f2[4].phash == phash(decoded)


def test_damaged_odd_and_pictureless_records_are_counted(tmp_path: Path) -> None:
    img = Image.open(io.BytesIO(photo("rocket", 120).encoded)).convert("RGB")
    good = encode_example({"image": ("bytes", [_jpeg(img)])})
    path = tmp_path / "odd.tfrecord"
    codec.write_records(
        path,
        [
            good,
            encode_example({"label": ("int64", [3])}),
            encode_example({"image": ("bytes", [_jpeg(img)[:200]])}),
            b"\x01\x02not a message",
            good,
            good,
        ],
    )
    raw = bytearray(path.read_bytes())
    with codec.TFRecordFile(path) as f:
        off = f.spans()[0][5]
    raw[int(off) + 12 + 5] ^= 0xFF  # the last record's data CRC fails
    path.write_bytes(bytes(raw))
    result = run(DuplicatesJob(), plan([str(path)]), "inline")
    assert result.fingerprints.status.tolist() == [
        dup.OK,
        dup.NO_PICTURE,
        dup.UNDECODABLE,
        dup.NOT_EXAMPLE,
        dup.OK,
        dup.DAMAGED,
    ]
    assert [g.records for g in result.groups] == [[0, 4]]
    left = result.to_json()["records"]["left_out"]
    assert {why: [r["record"] for r in got["first"]] for why, got in left.items()} == {
        "its data CRC fails": [5],
        "it is not an Example": [3],
        "it has no picture": [1],
        "its picture cannot be decoded": [2],
    }


def test_a_file_that_cannot_be_read_is_said_and_left_out(tmp_path: Path) -> None:
    img = Image.open(io.BytesIO(photo("rocket", 80).encoded)).convert("RGB")
    good = tmp_path / "good.tfrecord"
    codec.write_records(good, [encode_example({"image": ("bytes", [_jpeg(img)])})] * 2)
    gone = tmp_path / "gone.tfrecord"
    gone.write_bytes(good.read_bytes())
    tasks = plan([str(good), str(gone)], split=0)
    gone.unlink()
    result = run(DuplicatesJob(), tasks, "inline")
    assert result.records == 2
    assert [p for p, _ in result.unreadable] == [str(gone)]
    assert [g.records for g in result.groups] == [[0, 1]]


def test_an_embedding_is_searched_by_cosine_distance(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    base = rng.normal(size=(40, 16)).astype(np.float32)
    vectors = [*base, base[3] * 2.0, base[7] + 0.01, rng.normal(size=16).astype(np.float32)]
    recs = [
        encode_example(
            {
                "image": ("bytes", [_png(Image.new("RGB", (8, 8), (i, 2, 3)))]),
                "emb": ("float", [float(x) for x in v]),
            }
        )
        for i, v in enumerate(vectors)
    ]
    img = Image.new("RGB", (8, 8), (99, 2, 3))
    recs.append(encode_example({"image": ("bytes", [_png(img)]), "emb": ("float", [1.0])}))
    path = tmp_path / "emb.tfrecord"
    codec.write_records(path, recs)
    result = run(DuplicatesJob(embedding=("emb", 16), cosine=0.01), plan([str(path)]), "inline")
    assert [g.records for g in result.groups] == [[3, 40], [7, 41]]
    m = result.groups[0].members[1]
    assert m.relation == dup.NEAR and m.cosine is not None and m.cosine < 1e-6
    assert result.fingerprints.status[-1] == dup.NO_EMBEDDING
    doc = result.to_json()
    assert doc["search"]["by"] == "embedding emb"
    assert "phash" not in doc["groups"][0]["members"][0]
