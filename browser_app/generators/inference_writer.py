"""Records with a detector's predictions, as the Object Detection API's inference tool writes.

Matches ``infer_detections_and_add_to_example`` of ``research/object_detection/inference/
detection_inference.py`` (run by ``infer_detections.py``, tensorflow/models): the input
Example (here a :func:`~.coco_writer.coco` or :func:`~.pascal_writer.pascal` record) is kept
whole and gains, after its own features and in this order, ``image/detection/score``,
``image/detection/bbox/ymin``, ``/xmin``, ``/ymax``, ``/xmax`` (float, normalised, the
model's ``detection_boxes`` transposed) and ``image/detection/label`` (int64, the model's
``detection_classes``: label map ids, 1-based). An exported detector returns its detections
by descending score, ``num_detections`` of them. With ``discard_image_pixels`` the tool
deletes ``image/encoded`` (and ``image/additional_channels/encoded``): every other key of the
input stays.

The detections are made up but plausible: most ground-truth objects are found (a box within
a few percent of theirs, usually their class, a high score), some twice, and the rest are
false positives with low scores, as many as it takes to reach ``n_detections``.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from codec import example as ex

from .coco_writer import coco_features
from .label_maps import COCO_CATEGORIES, VOC_IDS
from .pascal_writer import pascal_features

__all__ = ["predictions"]

Box = tuple[float, float, float, float]  # ymin, xmin, ymax, xmax


def _clip(v: float) -> float:
    return min(max(v, 0.0), 1.0)


def _jittered(rng: random.Random, box: Box, amount: float) -> Box:
    ymin, xmin, ymax, xmax = box
    h, w = ymax - ymin, xmax - xmin
    y0 = _clip(ymin + rng.uniform(-amount, amount) * h)
    x0 = _clip(xmin + rng.uniform(-amount, amount) * w)
    y1 = _clip(ymax + rng.uniform(-amount, amount) * h)
    x1 = _clip(xmax + rng.uniform(-amount, amount) * w)
    return (min(y0, y1), min(x0, x1), max(y0, y1), max(x0, x1))


def _random_box(rng: random.Random) -> Box:
    h, w = rng.uniform(0.03, 0.5), rng.uniform(0.03, 0.5)
    y, x = rng.uniform(0, 1 - h), rng.uniform(0, 1 - w)
    return (y, x, y + h, x + w)


def _detections(
    rng: random.Random, truth: list[tuple[int, Box]], classes: list[int], count: int
) -> list[tuple[float, Box, int]]:
    found: list[tuple[float, Box, int]] = []
    for label, box in rng.sample(truth, len(truth)):
        if rng.random() < 0.85:
            cls = label if rng.random() < 0.9 else rng.choice(classes)
            found.append((rng.uniform(0.5, 0.99), _jittered(rng, box, 0.06), cls))
            if rng.random() < 0.15:  # a second, weaker box on the same object
                found.append((rng.uniform(0.3, 0.6), _jittered(rng, box, 0.15), label))
    while len(found) < count:
        found.append((rng.uniform(0.01, 0.45), _random_box(rng), rng.choice(classes)))
    found.sort(key=lambda d: -d[0])
    return found[:count]


def predictions(
    seed: int,
    n_detections: int = 20,
    *,
    layout: Literal["coco", "pascal"] = "coco",
    discard_image_pixels: bool = False,
    n_objects: int | None = None,
    photo: str | None = None,
    max_side: int | None = None,
    masks: bool = False,
    keypoints: bool = False,
) -> bytes:
    """One record as ``infer_detections.py`` writes it: a ground-truth record in ``layout``
    (COCO: ``masks`` and ``keypoints`` as :func:`~.coco_writer.coco` takes them, off by
    default) with ``n_detections`` detections added, sorted by descending score; without
    ``image/encoded`` when ``discard_image_pixels``."""
    if n_detections < 0:
        raise ValueError(f"n_detections must be at least 0, not {n_detections}")
    features: dict[str, Any]
    if layout == "coco":
        crec = coco_features(seed, n_objects, masks, keypoints, photo=photo, max_side=max_side)
        features, labels, boxes = dict(crec.features), crec.labels, crec.boxes
        classes = list(COCO_CATEGORIES)
    elif layout == "pascal":
        prec = pascal_features(seed, n_objects, photo=photo, max_side=max_side)
        features, labels, boxes = dict(prec.features), prec.labels, prec.boxes
        classes = list(VOC_IDS.values())
    else:
        raise ValueError(f"layout must be 'coco' or 'pascal', not {layout!r}")
    rng = random.Random(f"detections:{seed}")
    found = _detections(rng, list(zip(labels, boxes)), classes, n_detections)
    features["image/detection/score"] = ("float", [d[0] for d in found])
    features["image/detection/bbox/ymin"] = ("float", [d[1][0] for d in found])
    features["image/detection/bbox/xmin"] = ("float", [d[1][1] for d in found])
    features["image/detection/bbox/ymax"] = ("float", [d[1][2] for d in found])
    features["image/detection/bbox/xmax"] = ("float", [d[1][3] for d in found])
    features["image/detection/label"] = ("int64", [d[2] for d in found])
    if discard_image_pixels:
        del features["image/encoded"]
        features.pop("image/additional_channels/encoded", None)
    return ex.encode_example(features)
