"""The bundled sample dataset: deterministic, committed as generated, and complete."""

from __future__ import annotations

import filecmp
from pathlib import Path

import numpy as np
import pytest

import codec
from browser_app import sample_data
from browser_app.sample_data import SAMPLE_FILES, write_sample
from codec import example as ex
from codec import images as im
from codec.tensor import parse_tensor

ASSETS = Path(__file__).resolve().parent.parent / "assets" / "sample"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("made")
    write_sample(folder)
    return folder


def test_generator_is_deterministic(made, tmp_path):
    write_sample(tmp_path)
    for name in SAMPLE_FILES:
        assert (tmp_path / name).read_bytes() == (made / name).read_bytes(), name


def test_committed_sample_equals_the_generator(made):
    missing = [n for n in SAMPLE_FILES if not (ASSETS / n).is_file()]
    assert not missing, f"run python scripts/make_sample.py (missing {missing})"
    differ = [n for n in SAMPLE_FILES if not filecmp.cmp(ASSETS / n, made / n, shallow=False)]
    assert not differ, f"assets/sample is stale; run python scripts/make_sample.py ({differ})"
    extra = {str(p.relative_to(ASSETS)) for p in ASSETS.rglob("*") if p.is_file()} - set(
        SAMPLE_FILES
    )
    assert not extra, f"unexpected files in assets/sample: {sorted(extra)}"


def test_small(made):
    assert sum((made / n).stat().st_size for n in SAMPLE_FILES) < 1 << 20


def test_detection_records(made):
    with codec.TFRecordFile(made / "detection.tfrecord", use_cache=False) as f:
        assert f.verify().ok
        formats = set()
        for payload in f:
            rec = ex.decode(payload)
            feats = rec.features
            (ref,) = im.find_images(rec)
            img = ref.image()
            formats.add(ref.format)
            assert img.size == (feats["image/width"].values[0], feats["image/height"].values[0])
            assert 96 <= img.width <= 160 and 96 <= img.height <= 160
            assert feats["image/format"].values[0].decode() == ref.format
            n = len(feats["image/object/class/text"].values)
            assert n == len(feats["image/object/class/label"].values) >= 1
            for side in ("xmin", "ymin", "xmax", "ymax"):
                values = feats[f"image/object/bbox/{side}"].values
                assert len(values) == n and all(0.0 <= v <= 1.0 for v in values)
            boxes = im.find_boxes(rec, img.width, img.height)
            texts = [t.decode() for t in feats["image/object/class/text"].values]
            assert [b.text for b in boxes] == texts
            assert all(sample_data.CLASSES[b.label - 1] == b.text for b in boxes)
    assert formats == {"jpeg", "png"}


def test_damaged_file(made):
    with codec.TFRecordFile(made / "damaged.tfrecord", use_cache=False) as f:
        report = f.verify()
        assert [p.kind for p in report.problems] == ["data_crc", "length_crc"]
        assert report.damaged == 1 and report.records + report.recovered == 11
        assert report.recovered == 3  # the records after the bad header
        assert f.is_damaged(5) is not None
        with pytest.raises(codec.ImageError):
            im.find_images(ex.decode(f[7]))[0].image()


def test_other_files(made):
    with codec.TFRecordFile(made / "tensors.tfrecord", use_cache=False) as f:
        tensors = {
            ex.decode(p).features["name"].values[0].decode(): parse_tensor(
                ex.decode(p).features["tensor"].values[0]
            )
            for p in f
        }
    assert tensors["image_rgb"].shape == (48, 64, 3) and tensors["image_rgb"].dtype == np.uint8
    assert tensors["words"].tolist() == [b"tf", b"record", b"browser"]
    assert len({str(t.dtype) for t in tensors.values()}) >= 7
    with codec.TFRecordFile(made / "raw_pixels.tfrecord.gz", use_cache=False) as gz:
        assert gz.compression == "gzip"
        with codec.TFRecordFile(made / "raw_pixels.tfrecord", use_cache=False) as plain:
            assert list(gz) == list(plain)
            for p in plain:
                (ref,) = im.find_images(ex.decode(p))
                assert ref.source == "raw"
    with codec.TFRecordFile(made / "sequence.tfrecord", use_cache=False) as f:
        assert {ex.detect_kind(p) for p in f} == {"sequence_example"}
    with codec.TFRecordFile(made / "raw.tfrecord", use_cache=False) as f:
        assert [ex.detect_kind(p) for p in f].count("raw") >= 4
    shards = sorted(str(p) for p in (made / "tabular").glob("train-*-of-00003.tfrecord"))
    with codec.TFRecordDataset(shards, use_cache=False) as ds:
        assert len(ds) == 120


def test_sample_dir_prefers_the_bundled_copy():
    assert sample_data.sample_dir() == ASSETS


def test_sample_dir_generates_into_the_cache_once(monkeypatch, tmp_path, _isolated_cache):
    monkeypatch.setattr(sample_data, "bundled_sample_dir", lambda: tmp_path / "no-such-dir")
    first = sample_data.sample_dir()
    assert first == Path(_isolated_cache) / "sample"
    assert all((first / n).is_file() for n in SAMPLE_FILES)
    stamp = (first / "detection.tfrecord").stat().st_mtime_ns
    assert sample_data.sample_dir() == first
    assert (first / "detection.tfrecord").stat().st_mtime_ns == stamp  # not written again
