"""A picture and the objects one record describes: the photograph's own objects, then, when a
count is asked for, made-up ones (random outlines on the picture, random classes) to reach it.

The class vocabulary is COCO's (``"coco"``: every object has a COCO category) or PASCAL VOC's
(``"voc"``: only objects VOC has a class for; made-up ones get a VOC class). Made-up people
in a COCO scene get 17 keypoints laid on a standing figure inside their box.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Literal

from codec.example import FeatureSpec

from .label_maps import COCO_CATEGORIES, COCO_IDS, VOC_CLASSES
from .library import KEYPOINT_NAMES, PHOTOS, Photo, PhotoObject, photo
from .polygons import bbox_of, random_polygon

__all__ = ["COCO_TO_VOC", "MAX_OBJECTS", "Scene", "make_scene"]

MAX_OBJECTS = 100
Vocabulary = Literal["coco", "voc"]

# COCO categories that are PASCAL VOC classes, by name.
COCO_TO_VOC: dict[str, str] = {
    "airplane": "aeroplane",
    "bicycle": "bicycle",
    "bird": "bird",
    "boat": "boat",
    "bottle": "bottle",
    "bus": "bus",
    "car": "car",
    "cat": "cat",
    "chair": "chair",
    "cow": "cow",
    "dining table": "diningtable",
    "dog": "dog",
    "horse": "horse",
    "motorcycle": "motorbike",
    "person": "person",
    "potted plant": "pottedplant",
    "sheep": "sheep",
    "couch": "sofa",
    "train": "train",
    "tv": "tvmonitor",
}
_VOC_TO_COCO = {v: k for k, v in COCO_TO_VOC.items()}
_POSES = ("Unspecified", "Frontal", "Left", "Right", "Rear")

# A person standing, facing the camera, in box-relative (x, y); the person's left is the
# picture's right.
_FIGURE = (
    (0.50, 0.08),
    (0.55, 0.06),
    (0.45, 0.06),
    (0.60, 0.08),
    (0.40, 0.08),
    (0.70, 0.20),
    (0.30, 0.20),
    (0.78, 0.38),
    (0.22, 0.38),
    (0.80, 0.52),
    (0.20, 0.52),
    (0.62, 0.55),
    (0.38, 0.55),
    (0.62, 0.76),
    (0.38, 0.76),
    (0.62, 0.95),
    (0.38, 0.95),
)
assert len(_FIGURE) == len(KEYPOINT_NAMES)


@dataclass(frozen=True)
class Scene:
    """The picture and the objects of one record, in order."""

    photo: Photo
    objects: tuple[PhotoObject, ...]


@dataclass(frozen=True)
class WrittenRecord:
    """The features of one record, in its writer's order, and what they describe: the
    ``scene``, the class ids of the objects written and their boxes ``(ymin, xmin, ymax,
    xmax)``, normalised."""

    features: dict[str, FeatureSpec]
    scene: Scene
    labels: list[int]
    boxes: list[tuple[float, float, float, float]]


def _keypoints(rng: random.Random, polygon: list[float]) -> tuple[list[float], int]:
    x, y, w, h = bbox_of([polygon])
    out: list[float] = []
    labelled = 0
    for fx, fy in _FIGURE:
        v = rng.choices((0, 1, 2), weights=(0.15, 0.15, 0.7))[0]
        if v == 0:
            out += [0, 0, 0]
            continue
        px = x + w * min(max(fx + rng.uniform(-0.04, 0.04), 0.0), 1.0)
        py = y + h * min(max(fy + rng.uniform(-0.03, 0.03), 0.0), 1.0)
        out += [round(px, 2), round(py, 2), v]
        labelled += 1
    return out, labelled


def _made_up(rng: random.Random, pic: Photo, vocabulary: Vocabulary) -> PhotoObject:
    polygon = random_polygon(rng, pic.width, pic.height)
    x, y, w, h = bbox_of([polygon])
    touches = (
        x <= 0 or y <= 0 or math.ceil(x + w) >= pic.width - 1 or math.ceil(y + h) >= pic.height - 1
    )
    if vocabulary == "voc":
        voc: str | None = rng.choice(VOC_CLASSES)
        assert voc is not None
        category = _VOC_TO_COCO[voc]
    else:
        category = COCO_CATEGORIES[rng.choice(tuple(COCO_CATEGORIES))]
        voc = COCO_TO_VOC.get(category)
    keypoints, labelled = (None, 0)
    if category == "person" and vocabulary == "coco":
        keypoints, labelled = _keypoints(rng, polygon)
    return PhotoObject(
        category_id=COCO_IDS[category],
        category=category,
        segmentation=[polygon],
        voc=voc,
        pose=rng.choice(_POSES),
        truncated=int(touches),
        difficult=int(rng.random() < 0.1),
        keypoints=keypoints,
        num_keypoints=labelled,
    )


def make_scene(
    rng: random.Random,
    n_objects: int | None,
    *,
    vocabulary: Vocabulary = "coco",
    photo_name: str | None = None,
    max_side: int | None = None,
    photos: tuple[str, ...] = PHOTOS,
) -> Scene:
    """The picture (``photo_name``, or one of ``photos`` drawn from ``rng``) and its objects:
    all of its own (those with a VOC class for ``"voc"``), or exactly ``n_objects`` (0 to
    :data:`MAX_OBJECTS`): its own first, then made-up ones."""
    if n_objects is not None and not 0 <= n_objects <= MAX_OBJECTS:
        raise ValueError(f"n_objects must be between 0 and {MAX_OBJECTS}, not {n_objects}")
    name = photo_name if photo_name is not None else rng.choice(photos)
    pic = photo(name, max_side)
    own = [o for o in pic.objects if vocabulary == "coco" or o.voc is not None]
    if n_objects is None:
        return Scene(pic, tuple(own))
    objects = own[:n_objects]
    while len(objects) < n_objects:
        objects.append(_made_up(rng, pic, vocabulary))
    return Scene(pic, tuple(objects))
