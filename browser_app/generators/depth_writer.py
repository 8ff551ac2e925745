"""A photograph with its depth (here: stereo disparity) map, as DeepLab2 writes depth records.

Keys: DeepLab2's (google-research/deeplab2) ``data/data_utils.py``
``create_video_and_depth_tfexample``, with its ``common.py`` names, in its order:
``image/encoded``, ``image/filename`` (the file's base name), ``image/format`` (``b"jpeg"``),
``image/height``, ``image/width``, ``image/channels`` (3), ``video/sequence_id``,
``video/frame_id``, ``image/depth/encoded``, ``image/depth/format``. Of the public writers
that keep depth beside a picture in one Example, this is the one a Google codebase reads
(``image/depth/encoded`` with a ``/format`` beside it, as ``image/segmentation/class/*``).

The map is the motorcycle's disparity from the Middlebury stereo pair, stored KITTI style:
round(disparity × 256) as ``uint16``, 0 where unknown. ``depth_format="png"`` (the default)
stores the 16-bit grayscale PNG, the file KITTI and DeepLab2's DVPS data ship as
``*_depth.png``; ``"raw"`` stores what ``build_dvps_data.py`` itself writes from that file:
the values as native int32 bytes (height × width × 4), format ``b"raw"``.

``crop`` (the default) takes a window of 60–100% of each side, drawn from ``seed``, of both
picture and map, so records differ; the picture is then a new JPEG (quality 85).
"""

from __future__ import annotations

import io
import random
from typing import Literal

import numpy as np
from PIL import Image

from codec import example as ex

from .library import JPEG_QUALITY, disparity, photo

__all__ = ["depth", "depth_map"]


def depth_map(seed: int, *, crop: bool = True, max_side: int | None = None) -> np.ndarray:
    """The ``uint16`` map (disparity × 256, 0 = unknown) :func:`depth` stores."""
    return _build(seed, crop=crop, max_side=max_side)[1]


def _build(seed: int, *, crop: bool, max_side: int | None) -> tuple[bytes, np.ndarray]:
    pic = photo("motorcycle", max_side)
    coded = disparity(max_side)
    if not crop:
        return pic.encoded, coded
    rng = random.Random(seed)
    w = max(1, round(pic.width * rng.uniform(0.6, 1.0)))
    h = max(1, round(pic.height * rng.uniform(0.6, 1.0)))
    x = rng.randint(0, pic.width - w)
    y = rng.randint(0, pic.height - h)
    pixels = pic.pixels()[y : y + h, x : x + w]
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue(), np.ascontiguousarray(coded[y : y + h, x : x + w])


def depth(
    seed: int,
    *,
    crop: bool = True,
    depth_format: Literal["png", "raw"] = "png",
    max_side: int | None = None,
) -> bytes:
    """One picture-and-depth record in DeepLab2's layout (see the module docstring)."""
    if depth_format not in ("png", "raw"):
        raise ValueError(f"depth_format must be 'png' or 'raw', not {depth_format!r}")
    encoded, coded = _build(seed, crop=crop, max_side=max_side)
    if depth_format == "png":
        out = io.BytesIO()
        Image.fromarray(coded).save(out, format="PNG")
        depth_bytes = out.getvalue()
    else:
        depth_bytes = coded.astype(np.int32).tobytes()
    height, width = coded.shape
    return ex.encode_example(
        {
            "image/encoded": ("bytes", [encoded]),
            "image/filename": ("bytes", [b"motorcycle.jpg"]),
            "image/format": ("bytes", [b"jpeg"]),
            "image/height": ("int64", [height]),
            "image/width": ("int64", [width]),
            "image/channels": ("int64", [3]),
            "video/sequence_id": ("bytes", [b"motorcycle"]),
            "video/frame_id": ("bytes", [f"{seed % 1_000_000:06d}".encode()]),
            "image/depth/encoded": ("bytes", [depth_bytes]),
            "image/depth/format": ("bytes", [depth_format.encode()]),
        }
    )
