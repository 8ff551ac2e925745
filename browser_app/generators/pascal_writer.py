"""PASCAL VOC records as the Object Detection API's VOC converter writes them.

Matches ``dict_to_tf_example`` of ``research/object_detection/dataset_tools/
create_pascal_tf_record.py`` (tensorflow/models), key for key and in its order:
``image/height``, ``image/width``, ``image/filename`` and ``image/source_id`` (both the
annotation's ``filename``, e.g. ``b"astronaut.jpg"``), ``image/key/sha256`` (hex digest, as
text), ``image/encoded`` (JPEG only: the writer refuses other formats), ``image/format``
(``b"jpeg"``), ``image/object/bbox/xmin|xmax|ymin|ymax`` (the XML's 1-based pixel corners
divided by the width or height, unchanged otherwise: no ``- 1``), ``image/object/class/text``
(VOC's class name), ``image/object/class/label`` (its id in ``pascal_label_map.pbtxt``,
1–20), ``image/object/difficult``, ``image/object/truncated`` (int64 0/1) and
``image/object/view`` (the XML's ``pose``: ``Unspecified``, ``Frontal``, ``Left``,
``Right``, ``Rear``). With ``ignore_difficult_instances`` the difficult objects are left out,
as the writer's flag does.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Any

from codec import example as ex

from .label_maps import VOC_IDS
from .polygons import bbox_of
from .scene import WrittenRecord, make_scene

__all__ = ["pascal", "pascal_features"]


def voc_box(polygons: list[list[float]], width: int, height: int) -> tuple[int, int, int, int]:
    """VOC's ``bndbox`` of an outline: 1-based pixel corners ``(xmin, ymin, xmax, ymax)``
    inside the picture."""
    x, y, w, h = bbox_of(polygons)
    xmin = max(1, math.floor(x) + 1)
    ymin = max(1, math.floor(y) + 1)
    xmax = min(width, max(xmin, math.ceil(x + w) + 1))
    ymax = min(height, max(ymin, math.ceil(y + h) + 1))
    return xmin, ymin, xmax, ymax


def pascal_features(
    seed: int,
    n_objects: int | None = None,
    *,
    photo: str | None = None,
    max_side: int | None = None,
    ignore_difficult_instances: bool = False,
) -> WrittenRecord:
    """The features :func:`pascal` encodes, with the scene they describe."""
    rng = random.Random(seed)
    scene = make_scene(rng, n_objects, vocabulary="voc", photo_name=photo, max_side=max_side)
    pic = scene.photo
    width, height = pic.width, pic.height
    xmin: list[float] = []
    ymin: list[float] = []
    xmax: list[float] = []
    ymax: list[float] = []
    classes: list[int] = []
    classes_text: list[bytes] = []
    truncated: list[int] = []
    poses: list[bytes] = []
    difficult_obj: list[int] = []
    for obj in scene.objects:
        assert obj.voc is not None
        difficult = bool(obj.difficult)
        if ignore_difficult_instances and difficult:
            continue
        difficult_obj.append(int(difficult))
        x0, y0, x1, y1 = voc_box(obj.segmentation, width, height)
        xmin.append(float(x0) / width)
        ymin.append(float(y0) / height)
        xmax.append(float(x1) / width)
        ymax.append(float(y1) / height)
        classes_text.append(obj.voc.encode("utf8"))
        classes.append(VOC_IDS[obj.voc])
        truncated.append(int(obj.truncated))
        poses.append(obj.pose.encode("utf8"))
    key = hashlib.sha256(pic.encoded).hexdigest()
    features: dict[str, Any] = {
        "image/height": ("int64", [height]),
        "image/width": ("int64", [width]),
        "image/filename": ("bytes", [pic.file_name.encode("utf8")]),
        "image/source_id": ("bytes", [pic.file_name.encode("utf8")]),
        "image/key/sha256": ("bytes", [key.encode("utf8")]),
        "image/encoded": ("bytes", [pic.encoded]),
        "image/format": ("bytes", [b"jpeg"]),
        "image/object/bbox/xmin": ("float", xmin),
        "image/object/bbox/xmax": ("float", xmax),
        "image/object/bbox/ymin": ("float", ymin),
        "image/object/bbox/ymax": ("float", ymax),
        "image/object/class/text": ("bytes", classes_text),
        "image/object/class/label": ("int64", classes),
        "image/object/difficult": ("int64", difficult_obj),
        "image/object/truncated": ("int64", truncated),
        "image/object/view": ("bytes", poses),
    }
    return WrittenRecord(features, scene, classes, list(zip(ymin, xmin, ymax, xmax)))


def pascal(
    seed: int,
    n_objects: int | None = None,
    *,
    photo: str | None = None,
    max_side: int | None = None,
    ignore_difficult_instances: bool = False,
) -> bytes:
    """One record as ``create_pascal_tf_record.py`` writes it: a packaged photograph
    (``photo``, or drawn from ``seed``) with its objects that VOC has a class for, or exactly
    ``n_objects`` (0–100) objects, made-up ones (random VOC classes, poses, 10% difficult)
    added."""
    return ex.encode_example(
        pascal_features(
            seed,
            n_objects,
            photo=photo,
            max_side=max_side,
            ignore_difficult_instances=ignore_difficult_instances,
        ).features
    )
