"""A model's predictions (``image/detection/*``, as ``infer_detections.py`` writes them beside
the ground truth) are never taken for the record's objects: not as its boxes, not in its box
count or class facets, not in the dataset's normalised-or-pixels decision."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_app import generators as gen
from browser_app.selection import record_facts
from codec import TFRecordDataset
from codec import example as ex
from codec import images as im


@pytest.mark.parametrize("objects", [0, 3])
def test_predictions_are_not_the_records_boxes(objects: int) -> None:
    rec = ex.decode(gen.predictions(7, n_detections=20, n_objects=objects))
    assert len(rec.features["image/detection/score"].values) == 20
    boxes = im.find_boxes(rec, 640, 480)
    assert len(boxes) == objects
    assert all(b.label is None or b.text for b in boxes)
    assert im.box_problems(rec, 640, 480) == []


def test_predictions_alone_give_no_boxes() -> None:
    rec = ex.decode(gen.predictions(3, n_detections=5, n_objects=2))
    features = {k: f for k, f in rec.features.items() if not k.startswith("image/object/")}
    alone = ex.Record(rec.kind, features, {})
    assert im.find_boxes(alone, 640, 480) == []


def test_facts_count_ground_truth_only(tmp_path: Path) -> None:
    path = tmp_path / "pred.tfrecord"
    gen.write(path, [gen.predictions(s, n_detections=20, n_objects=s % 3) for s in range(6)])
    with TFRecordDataset([str(path)]) as ds:
        facts = record_facts(ds)
    assert facts.boxes.tolist() == [s % 3 for s in range(6)]
