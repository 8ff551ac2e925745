"""Generated records with every kind of layer and odd values, for checks that a faster way of
reading layers gives the very description the straightforward way gives: random object
counts (0–100), lists of wrong lengths, coordinates that are NaN, out of range, swapped or in
pixels, predictions with and without scores, keypoints, PNG masks, and the features in a
random order."""

from __future__ import annotations

import io
import math
import random
from typing import Any

from PIL import Image

from codec import example as ex


def _png(side: tuple[int, int], seed: int) -> bytes:
    img = Image.new("L", side, 0)
    img.paste(255, (seed % 5, seed % 7, side[0] // 2, side[1] // 2))
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


def _photo(side: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", side, (90, 120, 150)).save(out, format="JPEG", quality=80)
    return out.getvalue()


def _coord(rng: random.Random, pixels: bool) -> float:
    roll = rng.random()
    if roll < 0.03:
        return math.nan
    if roll < 0.05:
        return rng.choice([math.inf, -math.inf])
    if roll < 0.1:
        return rng.uniform(-0.5, 1.5) * (640 if pixels else 1)
    if roll < 0.12:
        return rng.choice([0.0, -0.0, 1.0])
    return rng.uniform(0, 640 if pixels else 1)


def random_record(seed: int) -> bytes:
    """One record: ground truth (``image/object/``) and, most of the time, predictions
    (``image/detection/``), keypoints and masks, each list possibly of the wrong length."""
    rng = random.Random(seed)
    side = (64, 48)
    n = rng.choice([0, 1, 2, 3, rng.randint(0, 100)])
    pixels = rng.random() < 0.2
    spec: dict[str, Any] = {
        "image/encoded": ("bytes", [_photo(side)]),
        "image/format": ("bytes", [b"jpeg"]),
        "image/height": ("int64", [side[1]]),
        "image/width": ("int64", [side[0]]),
    }

    def length(m: int) -> int:
        return m if rng.random() < 0.85 else max(0, m + rng.choice([-2, -1, 1, 3]))

    for side_name in ("xmin", "ymin", "xmax", "ymax"):
        spec[f"image/object/bbox/{side_name}"] = (
            "float",
            [_coord(rng, pixels) for _ in range(length(n))],
        )
    if rng.random() < 0.8:
        spec["image/object/class/label"] = ("int64", [rng.randint(0, 30) for _ in range(length(n))])
    if rng.random() < 0.8:
        words = [b"cat", b"dog", b"person", "caf\u00e9".encode()]
        spec["image/object/class/text"] = ("bytes", [rng.choice(words) for _ in range(length(n))])
    if rng.random() < 0.3:
        spec["image/object/area"] = ("float", [rng.random() for _ in range(length(n))])
    if rng.random() < 0.5:
        k = rng.choice([3, 17])
        per = length(n) * k if rng.random() < 0.9 else rng.randint(0, 40)
        spec["image/object/keypoint/x"] = ("float", [_coord(rng, False) for _ in range(per)])
        spec["image/object/keypoint/y"] = ("float", [_coord(rng, False) for _ in range(per)])
        spec["image/object/keypoint/visibility"] = (
            "int64",
            [rng.randint(0, 2) for _ in range(per)],
        )
        spec["image/object/keypoint/num"] = ("int64", [k for _ in range(length(n))])
    if rng.random() < 0.4 and n <= 12:
        spec["image/object/mask"] = ("bytes", [_png(side, i) for i in range(length(n))])
    if rng.random() < 0.7:
        m = rng.choice([0, 1, rng.randint(0, 100)])
        for side_name in ("xmin", "ymin", "xmax", "ymax"):
            spec[f"image/detection/bbox/{side_name}"] = (
                "float",
                [_coord(rng, pixels) for _ in range(length(m))],
            )
        spec["image/detection/label"] = ("int64", [rng.randint(0, 30) for _ in range(length(m))])
        if rng.random() < 0.8:
            spec["image/detection/score"] = ("float", [rng.random() for _ in range(length(m))])
        if rng.random() < 0.5:
            spec["image/detection/class/text"] = ("bytes", [b"cat" for _ in range(length(m))])
    order = list(spec)
    rng.shuffle(order)
    return ex.encode_example({k: spec[k] for k in order})
