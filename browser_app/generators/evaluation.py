"""Detection datasets whose evaluation is known in advance: ground truth and predictions made
so that every figure COCOeval gives follows from counting.

Each record is a packaged photograph as the COCO converter writes it (:func:`~.coco_writer.
coco_features`, with ``image/object/class/label``), its objects laid out on a grid of cells
so that no two overlap, and a model's detections added as ``infer_detections.py`` adds them
(:data:`DETECTION_KEYS`, by descending score). What the predictions are is the scenario
(:data:`SCENARIOS`):

==============  =====================================================================
``perfect``     a box on every object, its class: AP 1 for every class
``shifted``     a box on every object with IoU exactly :data:`SHIFTED_IOU` of its class
                (the width cut to that share): AP is the share of the ten thresholds
                at or below it
``swapped``     the first two classes exchanged: their AP 0, the others 1, and the
                confusion matrix says which went where
``missing``     every third object has no prediction: AP counts the recall points up
                to the recall left
``extra``       a few false positives in empty cells, scored below every true one: AP
                stays 1, the false positives are counted
``crowd``       every fourth object is a crowd with a small box inside it predicted
                (its IoU 0.3, but a crowd's is intersection over the detection: 1):
                ignored, as COCOeval ignores it
``difficult``   every fourth object is Pascal VOC ``difficult`` with a box on it:
                ignored
==============  =====================================================================

:func:`known_dataset` gives the records with the expected figures, computed from the counts
alone (never by evaluating): per class ``ap``, ``ap50``, ``ap75``, ``ar100`` and, at IoU 0.5,
``gt``, ``tp``, ``fp``, ``fn``; the means; and the confusion matrix at 0.5.

:func:`planted_mistakes` gives records whose ground truth has planted annotation mistakes
(wrong classes, objects left out, objects that are not there) beside a model's predictions
that reveal them, with the list of what was planted: what :mod:`codec.mistakes` must find
first.

:func:`masked_dataset` gives records with instance masks on both sides, and the masks
themselves, for the ``segm`` evaluation to be checked against pycocotools'.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from codec import example as ex

from .coco_writer import coco_features
from .label_maps import COCO_CATEGORIES
from .scene import WrittenRecord

__all__ = [
    "CLASSES",
    "DETECTION_KEYS",
    "SCENARIOS",
    "SHIFTED_IOU",
    "KnownDataset",
    "MaskedDataset",
    "PlantedDataset",
    "known_dataset",
    "masked_dataset",
    "planted_mistakes",
    "with_detections",
]

SCENARIOS = ("perfect", "shifted", "swapped", "missing", "extra", "crowd", "difficult")
CLASSES = (1, 3, 17, 18)  # person, car, cat, dog
SHIFTED_IOU = {1: 0.52, 3: 0.62, 17: 0.78, 18: 0.97}  # per class: between the thresholds
THRESHOLDS = tuple(Fraction(50 + 5 * i, 100) for i in range(10))  # .50:.05:.95
_COLUMNS, _ROWS = 4, 3  # the grid of cells objects sit in
DETECTION_KEYS = (
    "image/detection/score",
    "image/detection/bbox/ymin",
    "image/detection/bbox/xmin",
    "image/detection/bbox/ymax",
    "image/detection/bbox/xmax",
    "image/detection/label",
)
"""The keys ``infer_detections_and_add_to_example`` adds, in its order."""

Box = tuple[float, float, float, float]  # ymin, xmin, ymax, xmax (normalised)


def with_detections(
    features: dict[str, Any], found: list[tuple[float, Box, int]]
) -> dict[str, Any]:
    """``features`` with detections ``(score, box, label)`` added as ``infer_detections.py``
    adds them (:data:`DETECTION_KEYS`, in that order), by descending score (an exported
    detector returns them so; equal scores keep their order)."""
    found = sorted(found, key=lambda d: -d[0])
    out = dict(features)
    out["image/detection/score"] = ("float", [d[0] for d in found])
    for j, side in enumerate(("ymin", "xmin", "ymax", "xmax")):
        out[f"image/detection/bbox/{side}"] = ("float", [d[1][j] for d in found])
    out["image/detection/label"] = ("int64", [d[2] for d in found])
    return out


def _f32(x: float) -> float:
    """``x`` as the float32 a record stores."""
    import numpy as np

    return float(np.float32(x))


def _cell(k: int, rng: random.Random) -> Box:
    """A box inside cell ``k`` of the grid, away from its edges."""
    col, row = k % _COLUMNS, k // _COLUMNS
    w, h = 1 / _COLUMNS, 1 / _ROWS
    x0 = col * w + w * rng.uniform(0.1, 0.25)
    x1 = col * w + w * rng.uniform(0.7, 0.9)
    y0 = row * h + h * rng.uniform(0.1, 0.25)
    y1 = row * h + h * rng.uniform(0.7, 0.9)
    return (_f32(y0), _f32(x0), _f32(y1), _f32(x1))


def _inside(box: Box, share: float) -> Box:
    """A box inside ``box``, its left part of ``share`` of the width (its IoU with ``box``
    is ``share``, up to the float32 the corners are stored as)."""
    ymin, xmin, ymax, xmax = box
    return (ymin, xmin, ymax, _f32(xmin + share * (xmax - xmin)))


@dataclass
class KnownDataset:
    """Records and what their evaluation must give: per class label ``expected`` figures
    (``ap``, ``ap50``, ``ap75``, ``ar100`` — ``None`` for a class without unignored ground
    truth — and at IoU 0.5 ``gt``, ``tp``, ``fp``, ``fn``), the means over classes with
    ground truth, and the confusion matrix at 0.5 as counts by (truth label, prediction
    label), ``None`` standing for background."""

    scenario: str
    records: list[bytes]
    names: dict[int, str]
    expected: dict[int, dict[str, Any]]
    map: float
    map50: float
    map75: float
    confusion: Counter[tuple[int | None, int | None]] = field(default_factory=Counter)


def _points(recall: Fraction) -> Fraction:
    """The share of COCO's 101 recall points ``i/100`` at or below ``recall``: the AP at one
    threshold of detections all true, scored above every false one, that find ``recall``
    of the objects."""
    return Fraction(sum(1 for i in range(101) if Fraction(i, 100) <= recall), 101)


def _photo(seed: int, i: int, max_side: int) -> WrittenRecord:
    """Record ``i`` before its objects: a COCO record's photograph, with no objects of its
    own, its image id the record's place in the seed's series."""
    n = seed * 100_003 + i
    return coco_features(n, 0, False, False, max_side=max_side, class_label=True, image_id=n + 1)


def known_dataset(
    scenario: str, count: int = 12, *, seed: int = 0, max_side: int = 160
) -> KnownDataset:
    """``count`` records of ``scenario`` (see :data:`SCENARIOS`) and their known evaluation;
    the same bytes for the same arguments."""
    if scenario not in SCENARIOS:
        raise ValueError(f"no scenario {scenario!r} (one of {', '.join(SCENARIOS)})")
    rng = random.Random(f"{scenario}:{seed}")
    a, b = CLASSES[0], CLASSES[1]
    gt: Counter[int] = Counter()  # unignored objects per class
    tp: dict[Fraction, Counter[int]] = {t: Counter() for t in THRESHOLDS}
    fp: Counter[int] = Counter()  # at 0.5
    confusion: Counter[tuple[int | None, int | None]] = Counter()
    records: list[bytes] = []
    nth = 0  # objects so far, over the records
    for i in range(count):
        rec = _photo(seed, i, max_side)
        features = dict(rec.features)
        cells = rng.sample(range(_COLUMNS * _ROWS), rng.randint(2, 6))
        objects = [(_cell(k, rng), rng.choice(CLASSES)) for k in cells[:-1]]
        empty = cells[-1]  # a cell left free for a false positive
        crowd: list[int] = []
        difficult: list[int] = []
        found: list[tuple[float, Box, int]] = []
        for box, label in objects:
            nth += 1
            special = nth % 4 == 0
            score = _f32(rng.uniform(0.5, 0.99))
            is_crowd = scenario == "crowd" and special
            is_difficult = scenario == "difficult" and special
            crowd.append(int(is_crowd))
            difficult.append(int(is_difficult))
            if is_crowd:
                found.append((score, _inside(box, 0.3), label))
                continue
            if is_difficult:
                found.append((score, box, label))
                continue
            gt[label] += 1
            if scenario == "missing" and nth % 3 == 0:
                confusion[label, None] += 1
                continue
            said = label
            if scenario == "swapped" and label in (a, b):
                said = b if label == a else a
            share = SHIFTED_IOU[label] if scenario == "shifted" else 1.0
            found.append((score, _inside(box, share) if share < 1 else box, said))
            confusion[label, said] += 1
            for t in THRESHOLDS:
                if said == label and Fraction(share) >= t:
                    tp[t][label] += 1
            if said != label:
                fp[said] += 1
        if scenario == "extra":
            for _ in range(rng.randint(1, 2)):
                label = rng.choice(CLASSES)
                found.append((_f32(rng.uniform(0.05, 0.45)), _cell(empty, rng), label))
                fp[label] += 1
                confusion[None, label] += 1
        ymin, xmin, ymax, xmax = ([o[0][j] for o in objects] for j in range(4))
        features["image/object/bbox/xmin"] = ("float", xmin)
        features["image/object/bbox/xmax"] = ("float", xmax)
        features["image/object/bbox/ymin"] = ("float", ymin)
        features["image/object/bbox/ymax"] = ("float", ymax)
        features["image/object/class/text"] = (
            "bytes",
            [COCO_CATEGORIES[o[1]].encode() for o in objects],
        )
        features["image/object/class/label"] = ("int64", [o[1] for o in objects])
        features["image/object/is_crowd"] = ("int64", crowd)
        width, height = rec.scene.photo.width, rec.scene.photo.height
        features["image/object/area"] = (
            "float",
            [(o[0][3] - o[0][1]) * width * (o[0][2] - o[0][0]) * height for o in objects],
        )
        if scenario == "difficult":
            features["image/object/difficult"] = ("int64", difficult)
        records.append(ex.encode_example(with_detections(features, found)))
    return _expected(scenario, records, gt, tp, fp, confusion)


def _expected(
    scenario: str,
    records: list[bytes],
    gt: Counter[int],
    tp: dict[Fraction, Counter[int]],
    fp: Counter[int],
    confusion: Counter[tuple[int | None, int | None]],
) -> KnownDataset:
    half = THRESHOLDS[0]
    expected: dict[int, dict[str, Any]] = {}
    aps, ap50s, ap75s = [], [], []
    for label in sorted(set(gt) | set(fp) | set(tp[half])):
        g = gt[label]
        row: dict[str, Any] = {
            "gt": g,
            "tp": tp[half][label],
            "fp": fp[label],
            "fn": g - tp[half][label],
        }
        if g:
            # every true positive is scored above every false one: precision 1 up to the
            # recall found at each threshold (0 where nothing is found)
            per = [
                _points(Fraction(tp[t][label], g)) if tp[t][label] else Fraction(0)
                for t in THRESHOLDS
            ]
            recalls = [Fraction(tp[t][label], g) for t in THRESHOLDS]
            row["ap"] = float(sum(per) / len(per))
            row["ap50"] = float(per[0])
            row["ap75"] = float(per[5])
            row["ar100"] = float(sum(recalls) / len(recalls))
            aps.append(sum(per) / len(per))
            ap50s.append(per[0])
            ap75s.append(per[5])
        else:
            row.update(ap=None, ap50=None, ap75=None, ar100=None)
        expected[label] = row
    mean = lambda xs: float(sum(xs) / len(xs)) if xs else float("nan")  # noqa: E731
    names = {k: COCO_CATEGORIES[k] for k in CLASSES}
    return KnownDataset(
        scenario, records, names, expected, mean(aps), mean(ap50s), mean(ap75s), confusion
    )


@dataclass
class PlantedDataset:
    """Records whose ground truth has planted mistakes, found by a model's predictions:
    ``mislabelled`` objects (record, object index) carry a wrong class while the model says
    the right one with a confidence of 0.96 to 0.99; ``missing`` objects (record, prediction
    index) are in the picture, found by the model above 0.95, and not annotated;
    ``spurious`` ones (record, object index) are annotated where the model finds nothing.
    Every other object is predicted with its own class at 0.6 to 0.9, or — the model's own
    mistakes, not the annotators' — with another class at 0.3 to 0.6; a few unsure
    predictions (0.1 to 0.4) fall on empty cells. ``truth_class``: the right class of each
    mislabelled object."""

    records: list[bytes]
    names: dict[int, str]
    mislabelled: list[tuple[int, int]]
    missing: list[tuple[int, int]]
    spurious: list[tuple[int, int]]
    truth_class: dict[tuple[int, int], int] = field(default_factory=dict)


def planted_mistakes(count: int = 40, *, seed: int = 0, max_side: int = 160) -> PlantedDataset:
    """``count`` records with planted annotation mistakes (:class:`PlantedDataset`): about
    one object in nine mislabelled, one record in seven with a missing object and one in
    eight with a spurious one; the same bytes for the same arguments."""
    rng = random.Random(f"planted:{seed}")
    records: list[bytes] = []
    mislabelled: list[tuple[int, int]] = []
    missing: list[tuple[int, int]] = []
    spurious: list[tuple[int, int]] = []
    truth_class: dict[tuple[int, int], int] = {}
    nth = 0
    for i in range(count):
        rec = _photo(seed, i, max_side)
        features = dict(rec.features)
        cells = rng.sample(range(_COLUMNS * _ROWS), rng.randint(4, 7))
        objects: list[tuple[Box, int]] = []
        found: list[tuple[float, Box, int]] = []
        planted: list[tuple[str, int]] = []  # (what, object or prediction) in found order
        for k in cells[:-2]:
            nth += 1
            box, label = _cell(k, rng), rng.choice(CLASSES)
            said = label
            if nth % 9 == 0:  # the annotator wrote another class
                said = rng.choice([c for c in CLASSES if c != label])
                truth_class[i, len(objects)] = label
                mislabelled.append((i, len(objects)))
                found.append((_f32(rng.uniform(0.96, 0.99)), box, label))
            elif i % 8 == 3 and not any(p[0] == "spurious" for p in planted):
                spurious.append((i, len(objects)))
                planted.append(("spurious", len(objects)))
            elif nth % 5 == 0:  # the model's own mistake: unsure, another class
                other = rng.choice([c for c in CLASSES if c != label])
                found.append((_f32(rng.uniform(0.3, 0.6)), _inside(box, 0.9), other))
            else:
                found.append((_f32(rng.uniform(0.6, 0.9)), _inside(box, 0.9), label))
            objects.append((box, said))
        unmarked, empty = cells[-2], cells[-1]
        if i % 7 == 2:  # an object nobody annotated, found by the model
            found.append(
                (_f32(rng.uniform(0.965, 0.99)), _cell(unmarked, rng), rng.choice(CLASSES))
            )
            planted.append(("missing", len(found) - 1))
        found.append((_f32(rng.uniform(0.1, 0.4)), _cell(empty, rng), rng.choice(CLASSES)))
        # with_detections orders by descending score: the planted prediction's index then
        order = sorted(range(len(found)), key=lambda j: -found[j][0])
        for what, j in planted:
            if what == "missing":
                missing.append((i, order.index(j)))
        ymin, xmin, ymax, xmax = ([o[0][j] for o in objects] for j in range(4))
        features["image/object/bbox/xmin"] = ("float", xmin)
        features["image/object/bbox/xmax"] = ("float", xmax)
        features["image/object/bbox/ymin"] = ("float", ymin)
        features["image/object/bbox/ymax"] = ("float", ymax)
        features["image/object/class/text"] = (
            "bytes",
            [COCO_CATEGORIES[o[1]].encode() for o in objects],
        )
        features["image/object/class/label"] = ("int64", [o[1] for o in objects])
        features["image/object/is_crowd"] = ("int64", [0] * len(objects))
        records.append(ex.encode_example(with_detections(features, found)))
    names = {k: COCO_CATEGORIES[k] for k in CLASSES}
    return PlantedDataset(records, names, mislabelled, missing, spurious, truth_class)


@dataclass
class MaskedDataset:
    """Records with instance masks on both sides (:func:`masked_dataset`): the payloads,
    and per record the ground truth's and the predictions' masks as bool ``H×W`` arrays
    with their classes, crowd flags and scores, in the records' order (what a reference
    evaluation is given)."""

    records: list[bytes]
    size: tuple[int, int]  # width, height
    truth: list[list[tuple[Any, int, bool]]]  # (mask, label, crowd) per object
    predictions: list[list[tuple[Any, int, float]]]  # (mask, label, score), by score


def _blob(rng: random.Random, width: int, height: int) -> Any:
    """A bool ``height×width`` mask: an ellipse, some of it cut away."""
    import numpy as np

    cx, cy = rng.uniform(6, width - 6), rng.uniform(6, height - 6)
    rx, ry = rng.uniform(4, width / 4), rng.uniform(4, height / 4)
    y, x = np.mgrid[0:height, 0:width]
    inside = ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1
    if rng.random() < 0.3:
        inside &= x < cx + rng.uniform(-rx / 2, rx / 2)
    return inside


def _shifted(mask: Any, rng: random.Random) -> Any:
    """``mask`` moved by a few pixels (what leaves the picture is lost)."""
    import numpy as np

    dx, dy = rng.randint(-2, 2), rng.randint(-2, 2)
    out = np.zeros_like(mask)
    h, w = mask.shape
    out[max(dy, 0) : h + min(dy, 0), max(dx, 0) : w + min(dx, 0)] = mask[
        max(-dy, 0) : h + min(-dy, 0), max(-dx, 0) : w + min(-dx, 0)
    ]
    return out


def _png(mask: Any) -> bytes:
    """A 0/1 grey PNG, as ``create_coco_tf_record.py --include_masks`` writes a mask."""
    import io

    import numpy as np
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.asarray(mask, np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def masked_dataset(
    count: int = 24,
    *,
    seed: int = 0,
    width: int = 48,
    height: int = 36,
    float_masks: bool = True,
) -> MaskedDataset:
    """``count`` records whose ground truth has instance masks (``image/object/mask``, one
    0/1 PNG per object, as ``create_coco_tf_record.py --include_masks`` writes them; every
    fifth object a crowd) and whose predictions have masks too (``image/detection/mask``: one
    PNG per prediction, or in every third record the N·H·W floats a detector's
    ``detection_masks`` come as; PNGs only without ``float_masks``): shifted copies of the
    objects, some of another class, some spurious, scores in random order. Boxes are the
    masks' extents, normalised. The same bytes for the same arguments."""
    import numpy as np

    rng = random.Random(f"masked:{seed}")
    records: list[bytes] = []
    truth_all: list[list[tuple[Any, int, bool]]] = []
    preds_all: list[list[tuple[Any, int, float]]] = []
    nth = 0

    def box(m: Any) -> Box:
        ys, xs = np.nonzero(m)
        if not len(xs):
            return (0.0, 0.0, 0.0, 0.0)
        return (
            _f32(ys.min() / height),
            _f32(xs.min() / width),
            _f32((ys.max() + 1) / height),
            _f32((xs.max() + 1) / width),
        )

    for i in range(count):
        truth: list[tuple[Any, int, bool]] = []
        preds: list[tuple[Any, int, float]] = []
        for _ in range(rng.randint(0, 5)):
            nth += 1
            m = _blob(rng, width, height)
            label = rng.choice(CLASSES)
            truth.append((m, label, nth % 5 == 0))
            for _ in range(rng.choice((0, 1, 1, 2))):
                said = label if rng.random() < 0.8 else rng.choice(CLASSES)
                preds.append((_shifted(m, rng), said, _f32(rng.uniform(0.05, 0.99))))
        for _ in range(rng.randint(0, 2)):
            preds.append((_blob(rng, width, height), rng.choice(CLASSES), _f32(rng.random())))
        preds.sort(key=lambda p: -p[2])
        features: dict[str, Any] = {
            "image/height": ("int64", [height]),
            "image/width": ("int64", [width]),
            "image/source_id": ("bytes", [str(i).encode()]),
        }
        for j, side in enumerate(("ymin", "xmin", "ymax", "xmax")):
            features[f"image/object/bbox/{side}"] = ("float", [box(t[0])[j] for t in truth])
        features["image/object/class/label"] = ("int64", [t[1] for t in truth])
        features["image/object/is_crowd"] = ("int64", [int(t[2]) for t in truth])
        features["image/object/mask"] = ("bytes", [_png(t[0]) for t in truth])
        out = with_detections(features, [(p[2], box(p[0]), p[1]) for p in preds])
        if float_masks and i % 3 == 2:
            stack = [v for p in preds for v in p[0].astype(np.float32).ravel().tolist()]
            out["image/detection/mask"] = ("float", stack)
        else:
            out["image/detection/mask"] = ("bytes", [_png(p[0]) for p in preds])
        records.append(ex.encode_example(out))
        truth_all.append(truth)
        preds_all.append(preds)
    return MaskedDataset(records, (width, height), truth_all, preds_all)
