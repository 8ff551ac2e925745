"""Records that are each one serialized tensor of a picture, as ``tf.io.serialize_tensor``
writes them (a ``TensorProto``: dtype, shape, ``tensor_content``), encoded with
:func:`codec.tensor.serialize_tensor`.
"""

from __future__ import annotations

import random

import numpy as np
from PIL import Image

from codec.tensor import serialize_tensor

from .library import PHOTOS, disparity, photo

__all__ = ["tensor_records"]


def tensor_records(seed: int, *, photo_name: str | None = None, max_side: int = 128) -> list[bytes]:
    """Four records, each one tensor of a picture no larger than ``max_side``: a packaged
    photograph (``photo_name``, or drawn from ``seed``) as ``uint8`` H×W×3, the same in gray
    as ``uint8`` H×W, the motorcycle's disparity map as ``uint16`` H×W (× 256, 0 = unknown),
    and the photograph as ``float32`` H×W×3 in [0, 1]."""
    rng = random.Random(seed)
    name = photo_name if photo_name is not None else rng.choice(PHOTOS)
    rgb = photo(name, max_side).pixels()
    gray = np.asarray(Image.fromarray(rgb).convert("L"))
    return [
        serialize_tensor(np.ascontiguousarray(rgb, dtype=np.uint8)),
        serialize_tensor(np.ascontiguousarray(gray, dtype=np.uint8)),
        serialize_tensor(disparity(max_side)),
        serialize_tensor(rgb.astype(np.float32) / np.float32(255.0)),
    ]
