"""Frame sequences in MediaPipe's ``media_sequence`` layout
(``mediapipe/util/sequence/media_sequence.py``): one SequenceExample per clip.

Context: ``example/id``, ``clip/data_path``, ``clip/media_id``, ``clip/start/timestamp`` and
``clip/end/timestamp`` (microseconds), ``clip/label/index`` and ``clip/label/string``,
``image/format`` (``JPEG``), ``image/height``, ``image/width``, ``image/channels``,
``image/frame_rate``. Feature lists, one step per frame: ``image/encoded``,
``image/timestamp`` (microseconds), and the frame's regions: ``region/bbox/ymin``,
``region/bbox/xmin``, ``region/bbox/ymax``, ``region/bbox/xmax`` (normalised floats, one per
region, empty for a frame without any), ``region/label/index``, ``region/label/string``,
``region/timestamp``, ``region/is_annotated``.

The frames are real: a camera panning across one of the packaged photographs (crops sliding
from one side to the other), and the regions are the photograph's hand-drawn objects as each
crop sees them (an object less than a third in view is left out).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from codec import example as ex
from codec.writer import write_records

from .library import PHOTOS, photo

__all__ = ["CLIP_LABELS", "clip_payload", "write_media_sequences"]

# clip label (index = position) for each packaged photograph
CLIP_LABELS = ("astronaut", "coffee", "cat", "rocket", "motorcycle")
_LABEL_OF = dict(zip(PHOTOS, CLIP_LABELS, strict=True))
FRAME_SIZE = (240, 180)


def _boxes(obj_polygons: list[list[float]]) -> tuple[float, float, float, float]:
    xs = [v for poly in obj_polygons for v in poly[0::2]]
    ys = [v for poly in obj_polygons for v in poly[1::2]]
    return min(xs), min(ys), max(xs), max(ys)


def clip_payload(name: str, frames: int = 20, frame_rate: float = 8.0, index: int = 0) -> bytes:
    """The SequenceExample of one clip panning across photograph ``name``."""
    pic = photo(name, max_side=480)
    pixels = pic.pixels()
    height, width = pixels.shape[:2]
    crop_w = round(width * 0.6)
    crop_h = min(height, round(crop_w * FRAME_SIZE[1] / FRAME_SIZE[0]))
    objects = [(o, _boxes(o.segmentation)) for o in pic.objects if o.segmentation]
    encoded, stamps = [], []
    regions: dict[str, list[tuple[str, list[object]]]] = {
        k: []
        for k in (
            "region/bbox/ymin",
            "region/bbox/xmin",
            "region/bbox/ymax",
            "region/bbox/xmax",
            "region/label/index",
            "region/label/string",
            "region/timestamp",
            "region/is_annotated",
        )
    }
    for f in range(frames):
        along = f / max(1, frames - 1)
        x0 = round(along * (width - crop_w))
        y0 = round((height - crop_h) * (0.5 + 0.4 * np.sin(np.pi * along) - 0.2))
        y0 = min(max(0, y0), height - crop_h)
        crop = Image.fromarray(pixels[y0 : y0 + crop_h, x0 : x0 + crop_w]).resize(FRAME_SIZE)
        out = io.BytesIO()
        crop.save(out, format="JPEG", quality=80)
        encoded.append(("bytes", [out.getvalue()]))
        stamp = round(f * 1e6 / frame_rate)
        stamps.append(("int64", [stamp]))
        boxes: list[tuple[float, float, float, float]] = []
        labels: list[tuple[int, str]] = []
        for obj, (bx0, by0, bx1, by1) in objects:
            ix0, iy0 = max(bx0, x0), max(by0, y0)
            ix1, iy1 = min(bx1, x0 + crop_w), min(by1, y0 + crop_h)
            area = (bx1 - bx0) * (by1 - by0)
            if ix1 <= ix0 or iy1 <= iy0 or area <= 0:
                continue
            if (ix1 - ix0) * (iy1 - iy0) < area / 3:
                continue
            boxes.append(
                ((iy0 - y0) / crop_h, (ix0 - x0) / crop_w, (iy1 - y0) / crop_h, (ix1 - x0) / crop_w)
            )
            labels.append((obj.category_id, obj.category))
        for k, key in enumerate(("region/bbox/ymin", "region/bbox/xmin", "region/bbox/ymax")):
            regions[key].append(("float", [b[k] for b in boxes]))
        regions["region/bbox/xmax"].append(("float", [b[3] for b in boxes]))
        regions["region/label/index"].append(("int64", [i for i, _ in labels]))
        regions["region/label/string"].append(("bytes", [s for _, s in labels]))
        regions["region/timestamp"].append(("int64", [stamp]))
        regions["region/is_annotated"].append(("int64", [1]))
    label = _LABEL_OF[name]
    context = {
        "example/id": ("bytes", [f"{name}-pan-{index:03d}"]),
        "clip/data_path": ("bytes", [f"videos/{name}_pan.mp4"]),
        "clip/media_id": ("bytes", [f"{name}_pan"]),
        "clip/start/timestamp": ("int64", [0]),
        "clip/end/timestamp": ("int64", [round(frames * 1e6 / frame_rate)]),
        "clip/label/index": ("int64", [CLIP_LABELS.index(label)]),
        "clip/label/string": ("bytes", [label]),
        "image/format": ("bytes", ["JPEG"]),
        "image/height": ("int64", [FRAME_SIZE[1]]),
        "image/width": ("int64", [FRAME_SIZE[0]]),
        "image/channels": ("int64", [3]),
        "image/frame_rate": ("float", [frame_rate]),
    }
    lists = {"image/encoded": encoded, "image/timestamp": stamps, **regions}
    return ex.encode_sequence_example(context, lists)  # type: ignore[arg-type]


def write_media_sequences(path: str | Path, frames: int = 20) -> Path:
    """One clip per packaged photograph (five) into ``path``."""
    out = Path(path)
    write_records(out, [clip_payload(n, frames, index=i) for i, n in enumerate(PHOTOS)])
    return out
