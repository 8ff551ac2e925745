"""Detection layouts (issue 25): ground truth and predictions told apart, the keys each reads,
their order, scores, K, and object lists checked by what they hold — one rule for a record
(:func:`codec.detection.record_boxes`) and for the dataset's schema."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_schema_object_lengths import H, K, W, coco, write

from codec import detection as d
from codec import images as im
from codec.example import decode, encode_example
from codec.schema import infer_schema

_SLOW_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


def _record(feats: dict[str, tuple[str, list[Any]]]) -> Any:
    return decode(encode_example(feats))


def _boxes(prefix: str, n: int, extra: dict | None = None) -> dict[str, tuple[str, list[Any]]]:
    f: dict[str, tuple[str, list[Any]]] = {
        f"{prefix}bbox/{s}": ("float", [0.1 * (i + 1) for i in range(n)]) for s in d.BBOX
    }
    f.update(extra or {})
    return f


# -- kinds, keys and order ---------------------------------------------------------------------


def test_predictions_beside_ground_truth_come_after_it_with_their_own_keys():
    rng = random.Random(0)
    rec = _record(coco(rng, 2, predictions=20))
    found = d.layouts(rec.features)
    assert [(lay.prefix, lay.kind) for lay in found] == [
        ("image/object/", "objects"),
        ("image/detection/", "predictions"),
    ]
    gt, pred = found
    assert gt.root == pred.root == "image/"
    assert gt.image == pred.image == "image/encoded"
    assert gt.label == "image/object/class/label" and gt.score is None
    assert pred.label == "image/detection/label"
    assert pred.text == "image/detection/class/text"
    assert pred.score == "image/detection/score"
    # The ground truth's lists are its own; the predictions' theirs.
    assert not any(n.startswith("image/detection/") for n in gt.parallel)
    assert all(n.startswith("image/detection/") for n in pred.parallel)
    # Scores are read for predictions; the ground truth has none.
    got = d.record_boxes(rec.features, pred, normalized=True)
    scores = [v for v in rec.features["image/detection/score"].values]
    assert [b.score for b in got.boxes] == pytest.approx(scores)
    assert all(b.label == 1 for b in got.boxes) and got.problems == []
    assert all(b.score is None for b in d.record_boxes(rec.features, gt, normalized=True).boxes)


def test_the_first_picture_boxes_are_the_ground_truth_not_the_predictions():
    """``find_boxes`` (the record view's boxes) takes ``layouts()[0]``: the ground truth; a
    picture without objects but with 20 predictions has no ground-truth box."""
    rng = random.Random(1)
    rec = _record(coco(rng, 0, predictions=20))
    assert im.find_boxes(rec, W, H) == []
    rec = _record(coco(rng, 3, predictions=20))
    assert len(im.find_boxes(rec, W, H)) == 3


@pytest.mark.parametrize(
    ("names", "kinds"),
    [
        # infer_detections.py's prefix is predictions even without scores.
        (["image/detection/"], ["predictions"]),
        # Another prefix is predictions when a score list stands beside its boxes ...
        (["pred/"], ["objects"]),
        (["pred/", "+pred/score"], ["predictions"]),
        (["model/", "+model/scores"], ["predictions"]),
        # ... but never the ground truth's object/ prefix.
        (["image/object/", "+image/object/score"], ["objects"]),
    ],
)
def test_layout_kind(names, kinds):
    feats: dict[str, tuple[str, list[Any]]] = {}
    for n in names:
        if n.startswith("+"):
            feats[n[1:]] = ("float", [0.5])
        else:
            feats.update(_boxes(n, 1))
    assert [lay.kind for lay in d.layouts(feats)] == kinds


def test_layouts_order_ground_truth_first_then_predictions_by_prefix():
    names: list[str] = []
    for prefix in ("b/", "image/detection/", "a/", "image/object/", "z/detection/", "m/"):
        names += list(_boxes(prefix, 1))
    names += ["m/score"]
    got = [(lay.prefix, lay.kind) for lay in d.layouts(reversed(names))]
    assert got == [
        ("image/object/", "objects"),
        ("a/", "objects"),
        ("b/", "objects"),
        ("image/detection/", "predictions"),
        ("m/", "predictions"),
        ("z/detection/", "predictions"),
    ]
    assert [lay.prefix for lay in d.layouts(names)] == [p for p, _ in got]  # any order in


def test_label_of_predictions_falls_back_to_class_label():
    feats = _boxes("image/detection/", 2, {"image/detection/class/label": ("int64", [4, 5])})
    (pred,) = d.layouts(feats)
    assert pred.label == "image/detection/class/label"
    got = d.record_boxes(_record(feats).features, pred, normalized=True)
    assert [b.label for b in got.boxes] == [4, 5]


def test_a_layout_inside_another_prefix_keeps_its_own_lists():
    feats = _boxes("", 2, {"label": ("int64", [1, 2])})
    feats.update(_boxes("image/object/", 3, {"image/object/class/label": ("int64", [1, 1, 1])}))
    outer, inner = sorted(d.layouts(feats), key=lambda lay: lay.prefix)
    assert outer.prefix == "" and not any(n.startswith("image/object/") for n in outer.parallel)
    rec = _record(feats)
    assert d.record_boxes(rec.features, outer, normalized=True).problems == []
    assert d.record_boxes(rec.features, inner, normalized=True).problems == []


def test_layout_constructed_by_hand_works_out_its_kind():
    lay = d.Layout("image/detection/", "image/", ("image/detection/score",))
    assert lay.kind == "predictions" and lay.score == "image/detection/score"
    assert d.Layout("image/object/", "image/", ()).kind == "objects"
    assert d.Layout("x/", "x/", (), "predictions").kind == "predictions"


# -- what each list holds --------------------------------------------------------------------


def test_list_kinds():
    lay = d.layout_of("image/object/", [])
    expect = {
        "image/object/bbox/xmin": "box",
        "image/object/class/text": "object",
        "image/object/is_crowd": "object",
        "image/object/area": "object",
        "image/object/keypoint/num": "object",
        "image/object/mask/weight": "object",
        "image/object/densepose/num": "object",
        "image/object/keypoint/x": "keypoint",
        "image/object/keypoint/text": "keypoint",
        "image/object/keypoint/z/weights": "keypoint",
        "image/object/class/multiclass_scores": "class_score",
        "image/object/mask": "mask",
        "image/object/densepose/u": "densepose",
        "image/object/densepose/part_index": "densepose",
    }
    assert {n: d.list_kind(lay, n) for n in expect} == expect


def test_keypoint_count():
    rng = random.Random(2)
    for k in (1, 4, 17):
        rec = _record(coco(rng, 3, keypoints=k))
        (lay,) = d.layouts(rec.features)
        assert d.keypoint_count(rec.features, lay) == k
    rec = _record(coco(rng, 3, keypoints=None))
    assert d.keypoint_count(rec.features, d.layouts(rec.features)[0]) is None
    rec = _record(coco(rng, 0))  # no object, no keypoint
    assert d.keypoint_count(rec.features, d.layouts(rec.features)[0]) is None
    feats = coco(rng, 2)
    t, v = feats["image/object/keypoint/x"]
    feats["image/object/keypoint/x"] = (t, v[:-1])  # 33 values for 2 objects
    rec = _record(feats)
    assert d.keypoint_count(rec.features, d.layouts(rec.features)[0]) is None


def test_record_problems_say_what_the_layout_expected():
    rng = random.Random(3)
    feats = coco(rng, 2, masks="float")
    t, v = feats["image/object/keypoint/x"]
    feats["image/object/keypoint/x"] = (t, v[:30])
    feats["image/object/mask"] = ("float", [0.0] * 95)
    feats["image/object/class/text"] = ("bytes", [b"a"])
    rec = _record(feats)
    got = d.record_boxes(rec.features, d.layouts(rec.features)[0], normalized=True)
    assert got.problems == [
        "image/object/class/text has 1 value; expected N = 2",
        "image/object/keypoint/x has 30 values; expected N·K = 2·17 = 34",
        "image/object/mask has 95 values; expected N·H·W = 2·48 = 96",
    ]
    assert len(got.boxes) == 2
    # The dataset's K wins over the record's own when given.
    ok = _record(coco(rng, 2, keypoints=15))
    lay = d.layouts(ok.features)[0]
    assert d.record_boxes(ok.features, lay, normalized=True).problems == []
    got = d.record_boxes(ok.features, lay, normalized=True, factors={"keypoint": K})
    assert "image/object/keypoint/x has 30 values; expected N·K = 2·17 = 34" in got.problems


def test_float_mask_of_a_picture_of_unknown_size_holds_a_multiple_of_n():
    rng = random.Random(4)
    feats = coco(rng, 2, masks="float", keypoints=None)
    del feats["image/height"]
    rec = _record(feats)
    lay = d.layouts(rec.features)[0]
    assert d.record_boxes(rec.features, lay, normalized=True).problems == []
    feats["image/object/mask"] = ("float", [0.0] * 7)
    got = d.record_boxes(_record(feats).features, lay, normalized=True)
    assert got.problems == [
        "image/object/mask has 7 values; expected N·H·W, a multiple of N = 2"
        " (the picture's size is not known)"
    ]


def test_object_lengths_is_vectorised_over_records():
    lay = d.layout_of("image/object/", ["image/object/keypoint/x", "image/object/keypoint/y"])
    n = np.array([0, 1, 2, 3])
    lengths = {b: n for b in lay.boxes}
    lengths["image/object/keypoint/x"] = n * 17
    lengths["image/object/keypoint/y"] = np.array([0, 17, 33, 51])
    got = d.object_lengths(lay, lengths)
    assert got.bad.tolist() == [False, False, True, False]
    assert got.factors["keypoint"].tolist() == [0, 17, 17, 17]
    assert got.problems(2) == ["image/object/keypoint/y has 33 values; expected N·K = 2·17 = 34"]


# -- one rule: a record's problems and the schema agree ------------------------------------


_MUTATIONS = ("none", "drop", "add", "remove")


@settings(max_examples=40, deadline=None, suppress_health_check=_SLOW_OK)
@given(
    n=st.integers(0, 100),
    masks=st.sampled_from(["png", "float", None]),
    keypoints=st.sampled_from([None, 1, 17]),
    densepose=st.booleans(),
    predictions=st.one_of(st.none(), st.integers(0, 100)),
    mutation=st.sampled_from(_MUTATIONS),
    which=st.integers(0, 1000),
    seed=st.integers(0, 2**16),
)
def test_a_records_problems_and_the_schema_agree(
    tmp_path_factory, n, masks, keypoints, densepose, predictions, mutation, which, seed
):
    rng = random.Random(seed)
    feats = coco(
        rng, n, masks=masks, keypoints=keypoints, densepose=densepose, predictions=predictions
    )
    listed = sorted(k for k in feats if k.startswith(("image/object/", "image/detection/")))
    name = listed[which % len(listed)]
    t, v = feats[name]
    if mutation == "drop" and v:
        feats[name] = (t, v[:-1])
    elif mutation == "add":
        feats[name] = (t, [*v, v[0] if v else (b"x" if t == "bytes" else 0)])
    elif mutation == "remove" and name not in d.layout_of("image/object/", []).boxes:
        del feats[name]
    rec = _record(feats)
    mine = {
        lay.prefix: d.record_boxes(rec.features, lay, normalized=True).problems
        for lay in d.layouts(rec.features)
    }
    path = write(tmp_path_factory.mktemp("one") / "r.tfrecord", [feats])
    doc = infer_schema(path).to_json()
    theirs = {
        prefix: det["checks"]["object_lengths"]["example"]["problem"]
        for prefix, det in doc["detection"].items()
        if "object_lengths" in det["checks"]
    }
    assert {p for p, probs in mine.items() if probs} == set(theirs)
    for prefix, problem in theirs.items():
        assert problem == mine[prefix][0]
    if mutation == "none":
        assert theirs == {}
