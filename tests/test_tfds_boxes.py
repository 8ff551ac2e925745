"""TFDS ``BBoxFeature`` boxes drawn as ground truth: which record keys hold boxes and which
ClassLabel names them is read from ``features.json`` (never from a key's name), the flat
``[ymin, xmin, ymax, xmax]`` floats become the lists :mod:`codec.detection` reads, and
:func:`codec.layers.record_layers` draws them with their class names when
:class:`codec.layers.LayerOptions` carries them — on the VOC-like dataset
:func:`browser_app.generators.tfds.write_detection` writes."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from browser_app.generators import tfds as G
from codec import TFRecordDataset, tfds
from codec import example as ex
from codec.kinds import BYTES, FLOAT, INT64
from codec.layers import BOXES, LayerOptions, draw_layers, record_layers
from codec.roles import main_picture


@pytest.fixture(scope="module")
def voc(tmp_path_factory: pytest.TempPathFactory) -> tfds.TfdsDataset:
    root = tmp_path_factory.mktemp("voc")
    G.write_detection(root)
    found = tfds.open_tfds(str(root))
    assert found is not None
    return found


def _records(ds: tfds.TfdsDataset, split: str = "train") -> list[ex.Record]:
    reader = TFRecordDataset(ds.split(split).files)
    try:
        return [ex.decode(reader.read(i), "auto") for i in range(len(reader))]
    finally:
        reader.close()


def _layers(rec: ex.Record, options: LayerOptions) -> tuple[Image.Image, list]:
    main = main_picture(rec)
    assert main is not None
    img = Image.open(io.BytesIO(rec.features["image"].values[0])).convert("RGB")
    return img, record_layers(rec, main, img.width, img.height, options)


def test_box_features_come_from_the_declared_features(voc: tfds.TfdsDataset) -> None:
    boxes = tfds.box_features(voc.features)
    assert [(b.key, b.label, b.prefix) for b in boxes] == [
        ("objects/bbox", "objects/label", "objects/bbox/")
    ]
    names = dict(boxes[0].names)
    assert names[0] == "aeroplane" and names[14] == "person" and len(names) == 20
    hash(boxes)  # part of a cache key


def test_a_key_named_bbox_is_never_guessed() -> None:
    """Without a declared BBoxFeature nothing is a box, whatever the keys are called."""
    plain = {
        "objects/bbox": tfds.FeatureSpec("objects/bbox", tfds.TENSOR, "Tensor", "float32"),
        "objects/label": tfds.FeatureSpec("objects/label", tfds.CLASS_LABEL, "ClassLabel"),
    }
    assert tfds.box_features(plain) == ()


def test_the_label_beside_is_chosen_by_name_then_alone() -> None:
    def spec(key: str, kind: str, levels: tuple[int | None, ...] = (None,)) -> tfds.FeatureSpec:
        return tfds.FeatureSpec(key, kind, kind, sequence_lengths=levels, record_keys=(key,))

    two = {
        k: spec(k, kind)
        for k, kind in (
            ("objects/bbox", tfds.BOUNDING_BOX),
            ("objects/pose", tfds.CLASS_LABEL),
            ("objects/label", tfds.CLASS_LABEL),
            ("label", tfds.CLASS_LABEL),
        )
    }
    assert tfds.box_features(two)[0].label == "objects/label"
    alone = {k: v for k, v in two.items() if k != "objects/label"}
    assert tfds.box_features(alone)[0].label == "objects/pose"  # the only one beside it
    other_level = {
        "objects/bbox": spec("objects/bbox", tfds.BOUNDING_BOX),
        "objects/kind": spec("objects/kind", tfds.CLASS_LABEL, ()),
    }
    assert tfds.box_features(other_level)[0].label is None  # not one per box


def test_with_boxes_reorders_the_flat_coordinates() -> None:
    box = tfds.BoxFeature("objects/bbox", "objects/label", ((0, "cat"), (1, "dog")))
    feats = {
        "objects/bbox": ex.Feature(FLOAT, [0.1, 0.2, 0.5, 0.6, 0.3, 0.0, 0.9, 1.0, 0.7]),
        "objects/label": ex.Feature(INT64, [1, 0]),
    }
    out = tfds.with_boxes(feats, [box])
    p = "objects/bbox/"
    got = {side: out[f"{p}bbox/{side}"].values for side in ("xmin", "ymin", "xmax", "ymax")}
    # Two whole boxes; the ninth number (no box) is left out.
    assert got == {
        "xmin": [0.2, 0.0],
        "ymin": [0.1, 0.3],
        "xmax": [0.6, 1.0],
        "ymax": [0.5, 0.9],
    }
    assert out[f"{p}class/label"].values == [1, 0]
    assert out[f"{p}class/text"] == ex.Feature(BYTES, [b"dog", b"cat"])
    assert set(feats) == {"objects/bbox", "objects/label"}  # the record's own are unchanged


def test_with_boxes_names_only_when_every_label_has_a_name() -> None:
    box = tfds.BoxFeature("b", "l", ((0, "cat"),))
    feats = {"b": ex.Feature(FLOAT, [0.0] * 8), "l": ex.Feature(INT64, [0, 5])}
    out = tfds.with_boxes(feats, [box])
    assert out["b/class/label"].values == [0, 5]
    assert "b/class/text" not in out
    # Values of another type, or none, add nothing.
    assert tfds.with_boxes({"b": ex.Feature(BYTES, [b"x"])}, [box]) == {
        "b": ex.Feature(BYTES, [b"x"])
    }
    assert tfds.with_boxes({}, [box]) == {}


def test_records_of_write_detection_draw_their_boxes_with_names(
    voc: tfds.TfdsDataset, tmp_path: Path
) -> None:
    boxes = tfds.box_features(voc.features)
    options = LayerOptions(box_features=boxes)
    names = dict(boxes[0].names)
    drawn = 0
    for rec in _records(voc):
        img, layers = _layers(rec, options)
        (layer,) = [lay for lay in layers if lay.kind == BOXES]
        labels = rec.features["objects/label"].values
        assert layer.count == len(rec.features["objects/bbox"].values) // 4 == len(labels)
        assert layer.problems == () and layer.bad == 0
        assert {item.caption for item in layer.legend} == {f"{names[v]} ({v})" for v in labels}
        # The first box lies where its flat coordinates say, in pixels.
        ymin, xmin, ymax, xmax = rec.features["objects/bbox"].values[:4]
        first = min(layer.shapes, key=lambda b: b.index)
        assert first.xmin == pytest.approx(xmin * img.width, abs=1e-3)
        assert first.ymin == pytest.approx(ymin * img.height, abs=1e-3)
        assert first.xmax == pytest.approx(xmax * img.width, abs=1e-3)
        assert first.ymax == pytest.approx(ymax * img.height, abs=1e-3)
        out = draw_layers(img, layers, options)
        changed = np.asarray(out, dtype=np.int16) - np.asarray(img, dtype=np.int16)
        assert np.abs(changed).sum() > 0
        drawn += 1
    assert drawn
    out.save(tmp_path / "last.png")


def test_without_box_features_the_record_has_no_layers(voc: tfds.TfdsDataset) -> None:
    rec = _records(voc)[0]
    _img, layers = _layers(rec, LayerOptions())
    assert [lay for lay in layers if lay.kind == BOXES] == []


def test_hidden_classes_and_the_switch_apply_to_tfds_boxes(voc: tfds.TfdsDataset) -> None:
    boxes = tfds.box_features(voc.features)
    names = dict(boxes[0].names)
    rec = _records(voc)[0]
    label = rec.features["objects/label"].values[0]
    key = (names[label], label)
    _img, layers = _layers(rec, LayerOptions(box_features=boxes, hidden=frozenset({key})))
    (layer,) = [lay for lay in layers if lay.kind == BOXES]
    assert all(b.key != key for b in layer.shapes)
    assert any(item.hidden for item in layer.legend)
    _img, off = _layers(rec, LayerOptions(boxes=False, box_features=boxes))
    (layer,) = [lay for lay in off if lay.kind == BOXES]
    assert layer.shapes is None and layer.count == len(rec.features["objects/label"].values)


def test_a_label_list_of_another_length_is_a_problem_of_the_record(
    voc: tfds.TfdsDataset,
) -> None:
    boxes = tfds.box_features(voc.features)
    rec = _records(voc)[0]
    feats = dict(rec.features)
    feats["objects/label"] = ex.Feature(INT64, [*feats["objects/label"].values, 3])
    bad = ex.Record(rec.kind, feats, rec.feature_lists)
    _img, layers = _layers(bad, LayerOptions(box_features=boxes))
    (layer,) = [lay for lay in layers if lay.kind == BOXES]
    assert layer.problems, layer
    assert any("class/label" in p for p in layer.problems)


def test_options_with_box_features_are_a_distinct_key(voc: tfds.TfdsDataset) -> None:
    boxes = tfds.box_features(voc.features)
    a, b = LayerOptions(box_features=boxes), LayerOptions(box_features=list(boxes))  # type: ignore[arg-type]
    assert a == b and hash(a) == hash(b)
    assert a != LayerOptions() and hash(a) != hash(LayerOptions())
