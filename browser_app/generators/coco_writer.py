"""COCO records as the Object Detection API's COCO converter writes them.

Matches ``create_tf_example`` of ``research/object_detection/dataset_tools/
create_coco_tf_record.py`` (tensorflow/models, the version with keypoints and DensePose),
with ``dataset_util.py``'s feature helpers, key for key and in its order:

- ``image/height``, ``image/width`` (int64), ``image/filename``, ``image/source_id``
  (``str(image_id)``), ``image/key/sha256`` (the hex digest of the JPEG, as text),
  ``image/encoded``, ``image/format`` (``b"jpeg"``);
- per object, in the annotation file's order: ``image/object/bbox/xmin|xmax|ymin|ymax``
  (``x / width``, ``(x + w) / width``, …: COCO's ``[x, y, w, h]`` normalised),
  ``image/object/class/text`` (the category name), ``image/object/is_crowd`` (int64),
  ``image/object/area`` (float, the annotation's ``area``);
- with masks (``--include_masks``): ``image/object/mask``, one PNG per object: the polygons
  rasterized by pycocotools (see :mod:`.polygons`), merged with ``np.amax``, and saved with
  ``PIL.Image.fromarray(mask).save(..., format="PNG")``: an 8-bit grayscale PNG of the
  picture's size whose pixels are 0 and **1** (not 255);
- with a keypoint annotation file: ``image/object/keypoint/x``, ``/y`` (normalised by the
  width and height, 17 per object), ``/num`` (one per object: the annotation's
  ``num_keypoints``), ``/visibility`` (COCO's 0/1/2, 17 per object) and ``/text`` (the 17
  keypoint names, repeated for every object). An object with no keypoint annotation — every
  non-person object — gets the writer's filler: 17 × ``0.0`` for x and y, 17 × ``0``
  visibility, the 17 names all the same, and ``num`` 0.

The writer collects the category ids but never writes ``image/object/class/label`` (a reader
maps ``class/text`` through a label map); ``class_label=True`` adds it after ``class/text``,
as other COCO converters do. Annotations whose box is empty or leaves the picture are
skipped, as the writer skips them.

:func:`coco_float_masks` writes the same record with ``image/object/mask`` as one float list
of N·H·W values (0.0 or 1.0, object after object, row after row), the layout
``tf_example_decoder.py`` reads as ``NUMERICAL_MASKS`` (``_reshape_instance_masks``).
"""

from __future__ import annotations

import hashlib
import io
import random
from typing import Any

import numpy as np
from PIL import Image

from codec import example as ex

from .library import KEYPOINT_NAMES
from .polygons import bbox_of, polygon_area, polygon_mask
from .scene import WrittenRecord, make_scene

__all__ = ["coco", "coco_features", "coco_float_masks", "mask_png"]

_COCO_IMAGE_IDS = 581929  # the largest image id of COCO 2017


def mask_png(mask: np.ndarray) -> bytes:
    """A 0/1 ``uint8`` mask as the COCO writer encodes it: ``PIL.Image.fromarray(mask)``
    saved as PNG (grayscale, values 0 and 1)."""
    out = io.BytesIO()
    Image.fromarray(mask).save(out, format="PNG")
    return out.getvalue()


def coco_features(
    seed: int,
    n_objects: int | None = None,
    masks: bool = True,
    keypoints: bool = True,
    *,
    float_masks: bool = False,
    photo: str | None = None,
    max_side: int | None = None,
    class_label: bool = False,
    image_id: int | None = None,
) -> WrittenRecord:
    """The features :func:`coco` encodes (see there), with the scene they describe."""
    rng = random.Random(seed)
    scene = make_scene(rng, n_objects, vocabulary="coco", photo_name=photo, max_side=max_side)
    pic = scene.photo
    width, height = pic.width, pic.height
    if image_id is None:
        image_id = rng.randint(1, _COCO_IMAGE_IDS)
    xmin: list[float] = []
    xmax: list[float] = []
    ymin: list[float] = []
    ymax: list[float] = []
    is_crowd: list[int] = []
    names: list[bytes] = []
    ids: list[int] = []
    area: list[float] = []
    png_masks: list[bytes] = []
    float_values: list[np.ndarray] = []
    kx: list[float] = []
    ky: list[float] = []
    kv: list[int] = []
    ktext: list[bytes] = []
    knum: list[int] = []
    k = len(KEYPOINT_NAMES)
    names17 = [n.encode() for n in KEYPOINT_NAMES]
    for obj in scene.objects:
        x, y, w, h = bbox_of(obj.segmentation)
        if w <= 0 or h <= 0 or x + w > width or y + h > height:
            continue  # the writer's num_annotations_skipped
        xmin.append(float(x) / width)
        xmax.append(float(x + w) / width)
        ymin.append(float(y) / height)
        ymax.append(float(y + h) / height)
        is_crowd.append(0)
        ids.append(obj.category_id)
        names.append(obj.category.encode("utf8"))
        area.append(polygon_area(obj.segmentation))
        if masks or float_masks:
            mask = polygon_mask(obj.segmentation, height, width)
            if float_masks:
                float_values.append(mask.astype(np.float32).reshape(-1))
            else:
                png_masks.append(mask_png(mask))
        if keypoints:
            if obj.keypoints is not None:
                kp = obj.keypoints
                kx.extend(float(v) / width for v in kp[0::3])
                ky.extend(float(v) / height for v in kp[1::3])
                kv.extend(int(v) for v in kp[2::3])
                ktext.extend(names17)
                knum.append(obj.num_keypoints)
            else:
                kx.extend([0.0] * k)
                ky.extend([0.0] * k)
                kv.extend([0] * k)
                ktext.extend(names17)
                knum.append(0)
    features: dict[str, Any] = {
        "image/height": ("int64", [height]),
        "image/width": ("int64", [width]),
        "image/filename": ("bytes", [pic.file_name.encode("utf8")]),
        "image/source_id": ("bytes", [str(image_id).encode("utf8")]),
        "image/key/sha256": ("bytes", [hashlib.sha256(pic.encoded).hexdigest().encode("utf8")]),
        "image/encoded": ("bytes", [pic.encoded]),
        "image/format": ("bytes", [b"jpeg"]),
        "image/object/bbox/xmin": ("float", xmin),
        "image/object/bbox/xmax": ("float", xmax),
        "image/object/bbox/ymin": ("float", ymin),
        "image/object/bbox/ymax": ("float", ymax),
        "image/object/class/text": ("bytes", names),
    }
    if class_label:
        features["image/object/class/label"] = ("int64", ids)
    features["image/object/is_crowd"] = ("int64", is_crowd)
    features["image/object/area"] = ("float", area)
    if float_masks:
        flat = np.concatenate(float_values) if float_values else np.zeros(0, np.float32)
        features["image/object/mask"] = ("float", flat)
    elif masks:
        features["image/object/mask"] = ("bytes", png_masks)
    if keypoints:
        features["image/object/keypoint/x"] = ("float", kx)
        features["image/object/keypoint/y"] = ("float", ky)
        features["image/object/keypoint/num"] = ("int64", knum)
        features["image/object/keypoint/visibility"] = ("int64", kv)
        features["image/object/keypoint/text"] = ("bytes", ktext)
    boxes = list(zip(ymin, xmin, ymax, xmax))
    return WrittenRecord(features, scene, ids, boxes)


def coco(
    seed: int,
    n_objects: int | None = None,
    masks: bool = True,
    keypoints: bool = True,
    *,
    photo: str | None = None,
    max_side: int | None = None,
    class_label: bool = False,
    image_id: int | None = None,
) -> bytes:
    """One record as ``create_coco_tf_record.py --include_masks`` writes it (``masks``) with
    a keypoint annotation file (``keypoints``): a packaged photograph (``photo``, or drawn
    from ``seed``) and its objects, or exactly ``n_objects`` (0–100) of them, made-up ones
    added. ``max_side`` makes the picture smaller; ``class_label`` adds
    ``image/object/class/label``; ``image_id`` (else drawn) is the ``source_id``."""
    rec = coco_features(
        seed,
        n_objects,
        masks,
        keypoints,
        photo=photo,
        max_side=max_side,
        class_label=class_label,
        image_id=image_id,
    )
    return ex.encode_example(rec.features)


def coco_float_masks(
    seed: int,
    n_objects: int | None = None,
    keypoints: bool = True,
    *,
    photo: str | None = None,
    max_side: int | None = None,
    class_label: bool = False,
    image_id: int | None = None,
) -> bytes:
    """:func:`coco` with ``image/object/mask`` as N·H·W floats (0.0/1.0) instead of PNGs."""
    rec = coco_features(
        seed,
        n_objects,
        False,
        keypoints,
        float_masks=True,
        photo=photo,
        max_side=max_side,
        class_label=class_label,
        image_id=image_id,
    )
    return ex.encode_example(rec.features)
