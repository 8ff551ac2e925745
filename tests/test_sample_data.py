"""The bundled sample dataset: deterministic, committed as generated, and complete."""

from __future__ import annotations

import filecmp
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import codec
from browser_app import sample_data
from browser_app.sample_data import SAMPLE_FILES, write_sample
from codec import example as ex
from codec import images as im
from codec.labelmap import find_label_map, read_label_map
from codec.schema import infer_schema
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


# The photographs' files (coco/, segmentation, depth, tensor pictures) and the drawn ones.
PHOTO_FILES = {
    "coco/instances.tfrecord",
    "coco/label_map.pbtxt",
    "coco/predictions.tfrecord",
    "depth.tfrecord",
    "segmentation.tfrecord",
    "tensor_images.tfrecord",
    "versions/v1.tfrecord",
    "versions/v2.tfrecord",
    "video/clips.tfrecord",
} | {n for n in SAMPLE_FILES if n.startswith("tfds/planted/")}
# Sound is bulky by nature (NSynth's notes are 64,000 float samples each).
SOUND_FILES = {"audio/nsynth-test.tfrecord", "audio/speech.tfrecord"}


def test_small(made):
    size = {n: (made / n).stat().st_size for n in SAMPLE_FILES}
    assert sum(v for n, v in size.items() if n not in PHOTO_FILES | SOUND_FILES) < 1 << 20
    assert sum(size[n] for n in SOUND_FILES) < 1200 << 10
    assert sum(size.values()) < 5 << 20  # under the ~6 MB the sample may take
    assert set(SAMPLE_FILES) >= PHOTO_FILES | SOUND_FILES


def _examples(path: Path) -> list[ex.Record]:
    with codec.TFRecordFile(path, use_cache=False) as f:
        assert f.verify().ok
        return [ex.decode(p) for p in f]


def _no_findings(path: Path, label_map: dict[int, str] | None = None) -> None:
    doc = infer_schema(str(path), label_map=label_map, use_cache=False).to_json()
    assert doc["findings"] == [], doc["findings"]


def test_coco_instances_with_masks_keypoints_and_a_label_map(made):
    found = find_label_map(str(made / "coco"))
    assert found is not None and Path(found).name == "label_map.pbtxt"
    names = read_label_map(found).names
    assert len(names) == 80 and names[1] == "person"
    recs = _examples(made / "coco" / "instances.tfrecord")
    assert len(recs) == 12
    counts, people = [], 0
    for rec in recs:
        feats = rec.features
        (photo,) = [r for r in im.find_images(rec) if r.feature == "image/encoded"]
        w, h = photo.image().size
        assert max(w, h) == sample_data.PHOTO_SIDE
        n = len(feats["image/object/class/text"].values)
        counts.append(n)
        labels = feats["image/object/class/label"].values
        texts = [t.decode() for t in feats["image/object/class/text"].values]
        assert [names[v] for v in labels] == texts  # the label map names every class
        masks = feats["image/object/mask"].values
        assert len(masks) == n
        for m in masks:
            with Image.open(io.BytesIO(m)) as mask:
                assert mask.size == (w, h) and set(np.unique(np.asarray(mask))) <= {0, 1}
        assert len(feats["image/object/keypoint/x"].values) == 17 * n
        people += sum(v > 0 for v in feats["image/object/keypoint/num"].values)
    assert 0 in counts and max(counts) >= 10 and people >= 2
    _no_findings(made / "coco" / "instances.tfrecord", names)


def test_coco_predictions_beside_the_ground_truth(made):
    names = read_label_map(str(made / "coco" / "label_map.pbtxt")).names
    recs = _examples(made / "coco" / "predictions.tfrecord")
    assert len(recs) == 12
    for rec in recs:
        feats = rec.features
        scores = feats["image/detection/score"].values
        assert len(scores) == 20 and list(scores) == sorted(scores, reverse=True)
        for side in ("xmin", "ymin", "xmax", "ymax"):
            assert len(feats[f"image/detection/bbox/{side}"].values) == 20
        assert all(v in names for v in feats["image/detection/label"].values)
        assert "image/object/bbox/xmin" in feats and "image/object/mask" in feats
    assert min(len(r.features["image/object/bbox/xmin"].values) for r in recs) == 0
    _no_findings(made / "coco" / "predictions.tfrecord", names)


def test_segmentation_depth_and_tensor_pictures(made):
    recs = _examples(made / "segmentation.tfrecord")
    assert len(recs) == 8
    for rec in recs:
        feats = rec.features
        with Image.open(io.BytesIO(feats["image/encoded"].values[0])) as pic:
            size = pic.size
        with Image.open(io.BytesIO(feats["image/segmentation/class/encoded"].values[0])) as cm:
            assert cm.size == size and cm.mode == "L"
            values = set(np.unique(np.asarray(cm)).tolist())
        assert 0 in values and 255 in values and len(values) >= 3  # classes and void
    recs = _examples(made / "depth.tfrecord")
    assert len(recs) == 4
    for rec in recs:
        feats = rec.features
        with Image.open(io.BytesIO(feats["image/depth/encoded"].values[0])) as d:
            assert d.mode.startswith("I;16") or d.mode == "I"
            assert d.size == (feats["image/width"].values[0], feats["image/height"].values[0])
            assert int(np.asarray(d).max()) > 255  # really 16 bits
    for name in ("segmentation.tfrecord", "depth.tfrecord"):
        _no_findings(made / name)
    with codec.TFRecordFile(made / "tensor_images.tfrecord", use_cache=False) as f:
        payloads = list(f)
    assert len(payloads) == 8
    shapes = [im.tensor_picture_shape(p) for p in payloads]
    assert all(s is not None for s in shapes), shapes
    assert {s[0] for s in shapes if s} == {"uint8", "uint16", "float32"}
    assert {s[3] for s in shapes if s} == {1, 3}
    for p in payloads:
        assert parse_tensor(p).ndim in (2, 3)


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
