"""The schema's ``object_lengths`` check reads object lists by what they hold (issue 25).

Records are written with the keys of the Object Detection API's own writers
(``create_coco_tf_record.py``: class text without label, ``is_crowd``, ``area``, a 0/1 PNG
per object, 17 keypoints per object with ``/visibility``, ``/text`` and ``/num``, DensePose
points; ``tf_example_decoder.py``'s float masks of N·H·W values; ``infer_detections.py``'s
``image/detection/*`` beside the ground truth). Valid data gives no finding, whatever the
object counts (0 to 100) and however the records are split into batches and byte ranges;
planted bad lengths give exactly the planted records, and the finding says what the layout
expected.
"""

from __future__ import annotations

import io
import itertools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_support import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

import codec.schema.scan as scan
from codec.example import encode_example
from codec.jobs import SchemaJob, Task, plan
from codec.schema import infer_schema
from codec.writer import TFRecordWriter

_SLOW_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
K = 17
NAMES = [f"point{i}".encode() for i in range(K)]
W, H = 8, 6  # small pictures keep float masks small


def _png(arr: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(arr).save(out, format="PNG")
    return out.getvalue()


_PHOTO = _png(np.full((H, W, 3), 90, np.uint8))
_MASK = _png((np.arange(W * H).reshape(H, W) % 2).astype(np.uint8))  # values 0/1


def coco(
    rng: random.Random,
    n: int,
    *,
    masks: str | None = "png",
    keypoints: int | None = K,
    densepose: bool = False,
    predictions: int | None = None,
) -> dict[str, tuple[str, list[Any]]]:
    """One record's features, lengths all valid: ``n`` objects, masks ``"png"`` (one per
    object) or ``"float"`` (N·H·W), ``keypoints`` per object, DensePose points, and
    ``predictions`` detections beside the ground truth."""
    xs = [rng.uniform(0, 0.5) for _ in range(n)]
    ys = [rng.uniform(0, 0.5) for _ in range(n)]
    f: dict[str, tuple[str, list[Any]]] = {
        "image/height": ("int64", [H]),
        "image/width": ("int64", [W]),
        "image/encoded": ("bytes", [_PHOTO]),
        "image/format": ("bytes", [b"png"]),
        "image/object/bbox/xmin": ("float", xs),
        "image/object/bbox/xmax": ("float", [x + 0.3 for x in xs]),
        "image/object/bbox/ymin": ("float", ys),
        "image/object/bbox/ymax": ("float", [y + 0.3 for y in ys]),
        "image/object/class/text": ("bytes", [b"person"] * n),
        "image/object/is_crowd": ("int64", [0] * n),
        "image/object/area": ("float", [12.5] * n),
    }
    if masks == "png":
        f["image/object/mask"] = ("bytes", [_MASK] * n)
    elif masks == "float":
        f["image/object/mask"] = ("float", [float(i % 2) for i in range(n * H * W)])
    if keypoints is not None:
        f["image/object/keypoint/x"] = ("float", [rng.random() for _ in range(n * keypoints)])
        f["image/object/keypoint/y"] = ("float", [rng.random() for _ in range(n * keypoints)])
        f["image/object/keypoint/visibility"] = ("int64", [2] * (n * keypoints))
        f["image/object/keypoint/text"] = ("bytes", (NAMES * n)[: n * keypoints])
        f["image/object/keypoint/num"] = ("int64", [keypoints] * n)
    if densepose:
        nums = [rng.randint(0, 5) for _ in range(n)]
        points = sum(nums)
        f["image/object/densepose/num"] = ("int64", nums)
        f["image/object/densepose/part_index"] = ("int64", [1] * points)
        for side in "xyuv":
            f[f"image/object/densepose/{side}"] = ("float", [0.5] * points)
    if predictions is not None:
        m = predictions
        px = [rng.uniform(0, 0.5) for _ in range(m)]
        f["image/detection/bbox/xmin"] = ("float", px)
        f["image/detection/bbox/xmax"] = ("float", [x + 0.2 for x in px])
        f["image/detection/bbox/ymin"] = ("float", px)
        f["image/detection/bbox/ymax"] = ("float", [x + 0.2 for x in px])
        f["image/detection/label"] = ("int64", [1] * m)
        f["image/detection/score"] = ("float", [rng.random() for _ in range(m)])
    return f


def write(path: Path, records: list[dict[str, tuple[str, list[Any]]]]) -> str:
    with TFRecordWriter(str(path)) as w:
        for feats in records:
            w.write(encode_example(feats))
    return str(path)


def _lengths(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["check"] == "object_lengths"]


# -- valid data: no finding --------------------------------------------------------------


@pytest.mark.parametrize(
    "kind",
    ["coco_keypoints", "float_masks", "predictions", "densepose", "no_objects"],
)
def test_valid_layouts_give_no_object_lengths_finding(tmp_path, kind):
    rng = random.Random(kind)
    counts = [0, 1, 2, 3, 7, 0, 12]
    choices: dict[str, dict[str, Any]] = {
        "coco_keypoints": {},
        "float_masks": {"masks": "float", "keypoints": None},
        "predictions": {"predictions": 0},
        "densepose": {"densepose": True},
        "no_objects": {},
    }
    opts = choices[kind]
    records = []
    for i, n in enumerate(counts):
        o = dict(opts)
        if kind == "predictions":
            o["predictions"] = (5 * i + 3) % 20  # their own N, not the ground truth's
        records.append(coco(rng, 0 if kind == "no_objects" else n, **o))
    doc = infer_schema(write(tmp_path / "ok.tfrecord", records)).to_json()
    assert _lengths(doc) == []
    assert "object_lengths" not in json.dumps(doc["detection"])
    if kind == "predictions":
        assert list(doc["detection"]) == ["image/object/", "image/detection/"]
        assert doc["detection"]["image/detection/"]["kind"] == "predictions"
        assert doc["detection"]["image/object/"]["kind"] == "objects"
    if kind == "coco_keypoints":
        assert doc["detection"]["image/object/"]["factors"] == {"keypoint": K}


def test_schema_json_on_the_command_line_has_no_object_lengths_finding(tmp_path):
    rng = random.Random(3)
    records = [coco(rng, n, predictions=n + 4) for n in (0, 2, 5)]
    records += [coco(rng, n, masks="float", predictions=1) for n in (1, 3)]
    path = write(tmp_path / "coco.tfrecord", records)
    done = run_cli("schema", path, "--json", cache=tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert _lengths(doc) == []


# -- planted bad lengths: exactly the planted records ------------------------------------------


def _plant(rng: random.Random, what: str) -> dict[str, tuple[str, list[Any]]]:
    """A record with two objects and one bad length of kind ``what``."""
    f = coco(rng, 2, predictions=3, densepose=True)
    if what == "keypoint_short":
        t, v = f["image/object/keypoint/x"]
        f["image/object/keypoint/x"] = (t, v[:30])
    elif what == "keypoint_k":  # lists agree with each other, K = 15 where the data has 17
        g = coco(rng, 2, keypoints=15, predictions=3, densepose=True)
        for name in [n for n in g if "/keypoint/" in n]:
            f[name] = g[name]
    elif what == "mask_png":
        t, v = f["image/object/mask"]
        f["image/object/mask"] = (t, v[:1])
    elif what == "mask_float":
        f["image/object/mask"] = ("float", [0.0] * (2 * H * W - 3))
    elif what == "class_text":
        f["image/object/class/text"] = ("bytes", [b"person"] * 3)
    elif what == "score":
        t, v = f["image/detection/score"]
        f["image/detection/score"] = (t, v[:2])
    elif what == "missing_is_crowd":
        del f["image/object/is_crowd"]
    elif what == "densepose":
        t, v = f["image/object/densepose/u"]
        f["image/object/densepose/u"] = (t, [*v, 0.1])
    elif what == "bbox":
        t, v = f["image/object/bbox/ymax"]
        f["image/object/bbox/ymax"] = (t, v[:1])
    else:
        raise AssertionError(what)
    return f


PLANTS = (
    "keypoint_short",
    "keypoint_k",
    "mask_png",
    "class_text",
    "score",
    "missing_is_crowd",
    "densepose",
    "bbox",
)


def _planted(tmp_path: Path, n: int = 120) -> tuple[str, dict[str, list[int]]]:
    rng = random.Random(25)
    planted: dict[str, list[int]] = {k: [] for k in PLANTS}
    records = []
    for i in range(n):
        if i % 9 == 4:
            what = PLANTS[(i // 9) % len(PLANTS)]
            planted[what].append(i)
            records.append(_plant(rng, what))
        else:
            records.append(
                coco(rng, rng.choice([0, 1, 2, 4]), predictions=rng.randint(0, 6), densepose=True)
            )
    return write(tmp_path / "planted.tfrecord", records), planted


def test_planted_bad_lengths_are_exactly_the_records_found(tmp_path):
    path, planted = _planted(tmp_path)
    doc = infer_schema(path).to_json()
    by_prefix = {f["feature"]: f for f in _lengths(doc)}
    truth = set().union(*(planted[k] for k in PLANTS if k != "score"))
    assert set(by_prefix["image/object/*"]["records"]) == truth
    assert by_prefix["image/object/*"]["count"] == len(truth)
    assert set(by_prefix["image/detection/*"]["records"]) == set(planted["score"])
    assert set(by_prefix) == {"image/object/*", "image/detection/*"}
    # The message names the first record's list and what its layout expected.
    first = min(truth)
    what = next(k for k in PLANTS if first in planted[k])
    message = by_prefix["image/object/*"]["message"]
    assert "their layout does not explain" in message
    if what == "keypoint_short":
        assert "image/object/keypoint/x has 30 values; expected N·K = 2·17 = 34" in message
    det = doc["detection"]["image/object/"]["checks"]["object_lengths"]["example"]
    assert det["record"] == first
    assert doc["detection"]["image/object/"]["factors"] == {"keypoint": K}
    # Every planted kind's own words, each from a dataset holding just that record.
    words = {
        "keypoint_short": "image/object/keypoint/x has 30 values; expected N·K = 2·17 = 34",
        "keypoint_k": "image/object/keypoint/x has 30 values; expected N·K = 2·17 = 34 (K = 17",
        "mask_png": "image/object/mask has 1 value; expected N = 2 (one PNG per object)",
        "class_text": "image/object/class/text has 3 values; expected N = 2",
        "score": "image/detection/score has 2 values; expected N = 3",
        "missing_is_crowd": "image/object/is_crowd has no values; expected N = 2",
        "densepose": "expected the sum of image/object/densepose/num",
        "bbox": "image/object/bbox/ymax has 1 value; expected N = 2",
    }
    for what, text in words.items():
        rng = random.Random(what)
        records = [coco(rng, 2, predictions=3, densepose=True) for _ in range(3)]
        records.insert(1, _plant(rng, what))
        one = infer_schema(write(tmp_path / f"{what}.tfrecord", records)).to_json()
        (finding,) = _lengths(one)
        assert finding["records"] == [1], what
        assert text in finding["message"], (what, finding["message"])


def test_float_masks_are_n_h_w_with_h_w_from_the_picture(tmp_path):
    rng = random.Random(1)
    good = [coco(rng, n, masks="float", keypoints=None) for n in (1, 2, 3)]
    bad = coco(rng, 2, masks="float", keypoints=None)
    bad["image/object/mask"] = ("float", [0.0] * (2 * H * W - 3))
    doc = infer_schema(write(tmp_path / "m.tfrecord", [*good, bad])).to_json()
    (finding,) = _lengths(doc)
    assert finding["records"] == [3]
    assert (
        f"image/object/mask has {2 * H * W - 3} values; expected N·H·W = 2·48 = 96"
        in (finding["message"])
    )


# -- random object counts and split points ---------------------------------------------------


def _tasks(path: str, cuts: list[float]) -> list[Task]:
    out = []
    for t in plan([path], split=1 << 40):
        at = sorted({int(c * t.end) for c in cuts if 0 < int(c * t.end) < t.end})
        edges = [0, *at, t.end]
        out += [Task(t.file, t.path, a, b, whole=False) for a, b in itertools.pairwise(edges)]
    return out


@settings(max_examples=20, deadline=None, suppress_health_check=_SLOW_OK)
@given(
    counts=st.lists(st.integers(0, 100), min_size=1, max_size=12),
    plants=st.lists(st.integers(0, 11), max_size=3),
    cuts=st.lists(st.floats(0, 1), max_size=5),
    chunk=st.integers(1, 9),
    seed=st.integers(0, 2**16),
)
def test_random_object_counts_any_split_same_findings(
    tmp_path_factory, monkeypatch, counts, plants, cuts, chunk, seed
):
    rng = random.Random(seed)
    planted = sorted({p for p in plants if p < len(counts)})
    records = []
    for i, n in enumerate(counts):
        f = coco(rng, n, predictions=rng.randint(0, 100), masks=rng.choice(["png", "float"]))
        if i in planted:
            t, v = f["image/object/keypoint/y"]
            f["image/object/keypoint/y"] = (t, [*v, 0.5])  # one value too many
        records.append(f)
    path = write(tmp_path_factory.mktemp("split") / "r.tfrecord", records)
    whole = infer_schema(path).to_json()
    findings = _lengths(whole)
    if planted:
        (finding,) = findings
        assert finding["records"] == planted
    else:
        assert findings == []
    # The same answer for any batch size and any split into byte ranges.
    with monkeypatch.context() as m:
        m.setattr(scan, "_CHUNK", chunk)
        small = infer_schema(path).to_json()
    assert small["findings"] == whole["findings"]
    assert small["detection"] == whole["detection"]
    job = SchemaJob()
    parts = [job.task(t) for t in _tasks(path, cuts)]
    rng.shuffle(parts)
    split = job.merge(parts, rerun=job.task).to_json()
    assert split["findings"] == whole["findings"]
    assert split["detection"] == whole["detection"]


def test_k_is_the_datasets_not_the_first_records(tmp_path):
    """The dataset's K is the one most records have, so a bad first record is the one found,
    in any split."""
    rng = random.Random(7)
    records = [coco(rng, 2, keypoints=15)] + [coco(rng, 1 + i % 3) for i in range(6)]
    path = write(tmp_path / "k.tfrecord", records)
    doc = infer_schema(path).to_json()
    (finding,) = _lengths(doc)
    assert finding["records"] == [0]
    assert "(K = 17 in most records)" in finding["message"]
    job = SchemaJob()
    for cuts in ([0.3], [0.5, 0.8], [0.1, 0.2, 0.9]):
        parts = [job.task(t) for t in _tasks(path, cuts)]
        assert job.merge(parts, rerun=job.task).to_json()["findings"] == doc["findings"]


# -- the generators' records, as the public writers lay them out ------------------------------


def test_generated_public_layouts_give_no_object_lengths_finding(tmp_path):
    """``schema --json`` on the generators' COCO (PNG masks, 17 keypoints), float-mask and
    ``infer_detections.py`` records (feature order shuffled as another TensorFlow run writes
    it), and on Pascal VOC records with predictions, object counts from 0 to 100: no
    ``object_lengths`` finding, each layout its own kind, K = 17."""
    from browser_app import generators as gen

    rng = random.Random(5)
    payloads = [
        gen.coco(0, 0, max_side=64),
        gen.coco(1, 3, max_side=64),
        gen.coco(2, 100, max_side=48),
        gen.coco_float_masks(3, 2, max_side=40),
        gen.coco_float_masks(4, 0, max_side=40),
        gen.predictions(6, 20, n_objects=0, max_side=64, masks=True, keypoints=True),
        gen.predictions(7, 0, n_objects=5, max_side=64, masks=True, keypoints=True),
        gen.predictions(8, 100, n_objects=2, max_side=64, masks=True, keypoints=True),
    ]
    payloads = [gen.shuffled_features(p, rng) for p in payloads]
    pascal = [gen.pascal(10 + i, n, max_side=64) for i, n in enumerate((0, 1, 4, 100))]
    pascal += [gen.predictions(20 + i, 7 * i, layout="pascal", max_side=64) for i in range(3)]
    for name, family in (("coco", payloads), ("pascal", pascal)):
        path = tmp_path / f"{name}.tfrecord"
        gen.write(path, family)
        done = run_cli("schema", str(path), "--json", cache=tmp_path / "cache")
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        assert _lengths(doc) == [], name
        det = doc["detection"]  # the command line prints keys sorted
        assert set(det) == {"image/object/", "image/detection/"}
        assert det["image/object/"]["kind"] == "objects"
        assert det["image/detection/"]["kind"] == "predictions"
        if name == "coco":
            assert det["image/object/"]["factors"] == {"keypoint": 17}
    # A planted keypoint list one value short is the one record found.
    feats = decode_features(gen.coco(9, 2, max_side=64))
    t, v = feats["image/object/keypoint/x"]
    feats["image/object/keypoint/x"] = (t, v[:-4])
    bad = tmp_path / "bad.tfrecord"
    gen.write(bad, [*payloads[:4], encode_example(feats), *payloads[4:]])
    doc = infer_schema(str(bad)).to_json()
    (finding,) = _lengths(doc)
    assert finding["records"] == [4]
    assert "image/object/keypoint/x has 30 values; expected N·K = 2·17 = 34" in finding["message"]


def decode_features(payload: bytes) -> dict[str, tuple[str, list[Any]]]:
    """An Example's features as ``encode_example`` takes them."""
    from codec.example import decode

    rec = decode(payload)
    return {name: (f.type, list(f.values)) for name, f in rec.features.items()}
