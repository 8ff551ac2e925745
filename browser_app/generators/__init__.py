"""Datasets written in public writers' layouts, over real photographs, for the bundled sample,
the tests and the benchmarks.

Each generator gives the bytes of one serialized ``tf.train.Example`` (or, for
:func:`tensor_records`, of serialized tensors), the same bytes for the same seed and
options, laid out key for key as the public writer it names writes them:

==============================  ========================================================
:func:`coco`                    Object Detection API ``create_coco_tf_record.py``
                                (``--include_masks``, keypoint annotations)
:func:`coco_float_masks`        the same, masks as N·H·W floats (``tf_example_decoder``)
:func:`pascal`                  Object Detection API ``create_pascal_tf_record.py``
:func:`segmentation`            DeepLab ``build_data.py`` / ``build_voc2012_data.py``
:func:`predictions`             Object Detection API ``detection_inference.py``
:func:`depth`                   DeepLab2 ``create_video_and_depth_tfexample``
:func:`tensor_records`          ``tf.io.serialize_tensor``
==============================  ========================================================

The pictures are real photographs packaged in ``photos/`` with hand-drawn objects; asked for
a number of objects, a generator adds made-up ones on the photograph. :func:`shuffled_features`
re-orders an Example's map entries as another TensorFlow run would; :func:`write` writes a
TFRecord file; :func:`coco_label_map` and :func:`voc_label_map` give ``label_map.pbtxt`` text.
Other layout families have their own modules in this package, imported by name.

No Streamlit, pandas or scikit-image here: Pillow and numpy, and the ``codec`` library.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .coco_writer import coco, coco_float_masks, mask_png
from .deeplab_writer import VOID, class_map, segmentation
from .depth_writer import depth, depth_map
from .inference_writer import predictions
from .label_maps import (
    COCO_CATEGORIES,
    COCO_IDS,
    VOC_CLASSES,
    VOC_IDS,
    coco_label_map,
    voc_label_map,
)
from .library import KEYPOINT_NAMES, PHOTO_DIR, PHOTOS, Photo, PhotoObject, disparity, photo
from .pascal_writer import pascal
from .polygons import polygon_mask
from .scene import MAX_OBJECTS
from .tensor_writer import tensor_records
from .wire import shuffled_features, write

__all__ = [
    "COCO_CATEGORIES",
    "COCO_IDS",
    "KEYPOINT_NAMES",
    "MAX_OBJECTS",
    "PHOTOS",
    "PHOTO_DIR",
    "VOC_CLASSES",
    "VOC_IDS",
    "VOID",
    "Photo",
    "PhotoObject",
    "class_map",
    "coco",
    "coco_float_masks",
    "coco_label_map",
    "depth",
    "depth_map",
    "disparity",
    "mask_png",
    "pascal",
    "photo",
    "polygon_mask",
    "predictions",
    "records",
    "segmentation",
    "shuffled_features",
    "tensor_records",
    "voc_label_map",
    "write",
]


def records(
    generator: Callable[..., bytes], count: int, seed: int = 0, **options: Any
) -> list[bytes]:
    """``count`` records of one generator, with seeds ``seed``, ``seed + 1``, …"""
    return [generator(seed + i, **options) for i in range(count)]
