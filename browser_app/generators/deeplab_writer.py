"""Semantic segmentation records as DeepLab's VOC 2012 converter writes them.

Matches ``image_seg_to_tfexample`` of ``research/deeplab/datasets/build_data.py`` as
``build_voc2012_data.py`` calls it (tensorflow/models), key for key and in its order:
``image/encoded`` (the JPEG as read), ``image/filename`` (the list's name, *without*
extension: ``b"astronaut"``), ``image/format`` (``b"jpeg"``: ``--image_format=jpg`` mapped
through ``_IMAGE_FORMAT_MAP``), ``image/height``, ``image/width``, ``image/channels`` (always
3), ``image/segmentation/class/encoded`` and ``image/segmentation/class/format``
(``b"png"``).

The class map is what ``SegmentationClassRaw`` holds (VOC's palette PNG with the colour map
removed): a single-channel 8-bit PNG of the picture's size, 0 for background, 1–20 for the VOC
classes (``pascal_label_map.pbtxt``'s ids), and 255 (void) on a band ``void_width`` pixels
wide along every object's outline, and over the whole of a difficult object, as VOC's
annotators drew them. Objects are painted in order, a later one over an earlier one.
"""

from __future__ import annotations

import io
import random

import numpy as np
from PIL import Image

from codec import example as ex

from .label_maps import VOC_IDS
from .polygons import outline_band, polygon_mask
from .scene import make_scene

__all__ = ["VOID", "class_map", "segmentation"]

VOID = 255


def class_map(
    seed: int,
    n_objects: int | None = None,
    *,
    photo: str | None = None,
    max_side: int | None = None,
    void_width: int = 5,
) -> np.ndarray:
    """The class map :func:`segmentation` encodes, as a ``uint8`` array."""
    return _build(seed, n_objects, photo=photo, max_side=max_side, void_width=void_width)[1]


def _build(
    seed: int,
    n_objects: int | None = None,
    *,
    photo: str | None = None,
    max_side: int | None = None,
    void_width: int = 5,
) -> tuple[bytes, np.ndarray, str]:
    rng = random.Random(seed)
    scene = make_scene(rng, n_objects, vocabulary="voc", photo_name=photo, max_side=max_side)
    pic = scene.photo
    labels = np.zeros((pic.height, pic.width), dtype=np.uint8)
    masks = []
    for obj in scene.objects:
        assert obj.voc is not None
        mask = polygon_mask(obj.segmentation, pic.height, pic.width).astype(bool)
        labels[mask] = VOC_IDS[obj.voc]
        masks.append((mask, bool(obj.difficult)))
    for mask, difficult in masks:
        labels[mask if difficult else outline_band(mask, void_width)] = VOID
    return pic.encoded, labels, pic.name


def segmentation(
    seed: int,
    n_objects: int | None = None,
    *,
    photo: str | None = None,
    max_side: int | None = None,
    void_width: int = 5,
) -> bytes:
    """One record as DeepLab's ``build_voc2012_data.py`` writes it: a packaged photograph
    (``photo``, or drawn from ``seed``) and its VOC class map, with the picture's own objects
    that VOC has a class for, or exactly ``n_objects`` (0–100) objects, made-up ones added."""
    encoded, labels, name = _build(
        seed, n_objects, photo=photo, max_side=max_side, void_width=void_width
    )
    out = io.BytesIO()
    Image.fromarray(labels).save(out, format="PNG")
    height, width = labels.shape
    return ex.encode_example(
        {
            "image/encoded": ("bytes", [encoded]),
            "image/filename": ("bytes", [name.encode("utf8")]),
            "image/format": ("bytes", [b"jpeg"]),
            "image/height": ("int64", [height]),
            "image/width": ("int64", [width]),
            "image/channels": ("int64", [3]),
            "image/segmentation/class/encoded": ("bytes", [out.getvalue()]),
            "image/segmentation/class/format": ("bytes", [b"png"]),
        }
    )
