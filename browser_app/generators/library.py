"""The packaged photographs and their hand-drawn objects.

``photos/`` holds real photographs (scikit-image's sample pictures, written by
``scripts/make_photos.py``) and ``annotations.json``: for each picture a few objects outlined
as COCO polygons with their COCO category, the PASCAL VOC class where VOC has one, and for
people the 17 COCO keypoints. :func:`photo` gives a picture as stored, or made smaller
(``max_side``: re-encoded as JPEG at quality 85, the objects scaled with it), so tests and
benchmarks can ask for small records.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

__all__ = [
    "KEYPOINT_NAMES",
    "PHOTOS",
    "PHOTO_DIR",
    "Photo",
    "PhotoObject",
    "disparity",
    "photo",
]

PHOTO_DIR = Path(__file__).resolve().parent / "photos"
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "motorcycle")
JPEG_QUALITY = 85

# COCO's person keypoints, in its order (create_coco_tf_record.py's _COCO_KEYPOINT_NAMES).
KEYPOINT_NAMES: tuple[str, ...] = (
    "nose",
    "left_eye",
    "right_eye",
    "left_ear",
    "right_ear",
    "left_shoulder",
    "right_shoulder",
    "left_elbow",
    "right_elbow",
    "left_wrist",
    "right_wrist",
    "left_hip",
    "right_hip",
    "left_knee",
    "right_knee",
    "left_ankle",
    "right_ankle",
)


@dataclass(frozen=True)
class PhotoObject:
    """One object: COCO polygons in pixels, its COCO category, its VOC class (``None`` when
    VOC has none) with VOC's pose, truncated and difficult, and for a person the 51 COCO
    keypoint numbers (x, y, v for each of :data:`KEYPOINT_NAMES`; ``None`` otherwise)."""

    category_id: int
    category: str
    segmentation: list[list[float]]
    voc: str | None = None
    pose: str = "Unspecified"
    truncated: int = 0
    difficult: int = 0
    keypoints: list[float] | None = None
    num_keypoints: int = 0


@dataclass(frozen=True)
class Photo:
    """A picture as the records carry it: its encoded bytes (JPEG), file name, size and
    objects (in the picture's pixels)."""

    name: str
    file_name: str
    encoded: bytes
    width: int
    height: int
    objects: tuple[PhotoObject, ...] = field(default=())

    def pixels(self) -> np.ndarray:
        """The decoded RGB pixels, ``uint8`` height × width × 3."""
        with Image.open(io.BytesIO(self.encoded)) as img:
            return np.asarray(img.convert("RGB"))


@cache
def _annotations() -> dict[str, dict[str, Any]]:
    doc = json.loads((PHOTO_DIR / "annotations.json").read_text(encoding="utf-8"))
    return {entry["file_name"]: entry for entry in doc["images"]}


def _object(entry: dict[str, Any], sx: float, sy: float) -> PhotoObject:
    def scaled(xy: list[float]) -> list[float]:
        return [round(v * (sx if i % 2 == 0 else sy), 2) for i, v in enumerate(xy)]

    kp = entry.get("keypoints")
    if kp is not None:
        kp = [
            round(v * (sx if i % 3 == 0 else sy), 2) if i % 3 != 2 else int(v)
            for i, v in enumerate(kp)
        ]
    return PhotoObject(
        category_id=int(entry["category_id"]),
        category=entry["category"],
        segmentation=[scaled(p) for p in entry["segmentation"]],
        voc=entry.get("voc"),
        pose=entry.get("pose", "Unspecified"),
        truncated=int(entry.get("truncated", 0)),
        difficult=int(entry.get("difficult", 0)),
        keypoints=kp,
        num_keypoints=int(entry.get("num_keypoints", 0)),
    )


@cache
def photo(name: str, max_side: int | None = None) -> Photo:
    """The packaged photograph ``name`` (one of :data:`PHOTOS`) with its objects; with
    ``max_side``, made smaller when its longer side exceeds it (a new JPEG, the objects and
    keypoints scaled with it)."""
    if name not in PHOTOS:
        raise ValueError(f"no packaged photograph {name!r} (one of {', '.join(PHOTOS)})")
    file_name = f"{name}.jpg"
    entry = _annotations()[file_name]
    encoded = (PHOTO_DIR / file_name).read_bytes()
    width, height = int(entry["width"]), int(entry["height"])
    sx = sy = 1.0
    if max_side is not None and max(width, height) > max_side:
        if max_side < 1:
            raise ValueError(f"max_side must be at least 1, not {max_side}")
        scale = max_side / max(width, height)
        new = (max(1, round(width * scale)), max(1, round(height * scale)))
        with Image.open(io.BytesIO(encoded)) as img:
            small = img.convert("RGB").resize(new, Image.Resampling.LANCZOS)
        out = io.BytesIO()
        small.save(out, format="JPEG", quality=JPEG_QUALITY)
        encoded = out.getvalue()
        sx, sy = new[0] / width, new[1] / height
        width, height = new
    objects = tuple(_object(o, sx, sy) for o in entry["objects"])
    return Photo(name, file_name, encoded, width, height, objects)


@cache
def disparity(max_side: int | None = None) -> np.ndarray:
    """The motorcycle's disparity map as stored (KITTI style: ``uint16``, disparity × 256,
    0 = unknown), at the size :func:`photo` gives ``"motorcycle"`` for ``max_side``. Made
    smaller, each pixel takes its nearest stored one and the values scale with the width."""
    with Image.open(PHOTO_DIR / "motorcycle_disparity.png") as img:
        coded = np.asarray(img).astype(np.uint16)
    target = photo("motorcycle", max_side)
    h, w = coded.shape
    if (target.width, target.height) == (w, h):
        return coded
    ys = np.minimum(((np.arange(target.height) + 0.5) * h / target.height).astype(int), h - 1)
    xs = np.minimum(((np.arange(target.width) + 0.5) * w / target.width).astype(int), w - 1)
    small = coded[ys[:, None], xs[None, :]].astype(np.float64) * (target.width / w)
    return np.clip(np.rint(small), 0, 65535).astype(np.uint16)
