"""A generated Object Detection dataset with planted problems, for tests and benchmarks.

Every record is a clean detection example (a small JPEG, two or three normalised boxes with
class text and label) except the planted ones; :func:`write_detection` returns which records
carry which problem, so a test can check that each is found and that nothing else is.
"""

from __future__ import annotations

import io
import math
import random
from pathlib import Path

from PIL import Image

import codec
from codec.framing import HEADER_SIZE

NAMES = {1: "cat", 2: "dog", 3: "bird"}
LABEL_MAP = "\n".join(f'item {{\n  id: {i}\n  name: "{n}"\n}}' for i, n in NAMES.items())
# The planted problems, in the order they are planted (every seventh record, the kinds in
# turn), and the filter expression that finds each.
PLANTS = {
    "box_range": "any(image/object/bbox/xmax > 1)",
    "box_not_finite": "any(image/object/bbox/ymin != image/object/bbox/ymin)",
    "box_inverted": "any(image/object/bbox/xmin >= image/object/bbox/xmax)",
    "object_lengths": "len(image/object/class/text) != len(image/object/bbox/xmin)",
    "label_map": "not all(image/object/class/label in [1, 2, 3])",
    "label_text": 'any(image/object/class/label == 1 and image/object/class/text != "cat")',
    "image_size": "image/height != 48",
    "undecodable": None,  # a cut JPEG: only decoding finds it
    "missing_label": "not has(image/object/class/label)",
    "damaged": "not intact",
}


def jpeg(width: int, height: int, seed: int) -> bytes:
    img = Image.new("RGB", (width, height), ((seed * 37) % 256, (seed * 91) % 256, 120))
    out = io.BytesIO()
    img.save(out, format="JPEG", quality=70)
    return out.getvalue()


def example(rnd: random.Random, seed: int, plant: str | None, pictures: dict[int, bytes]) -> bytes:
    n = rnd.randrange(2, 4)
    labels = [rnd.randrange(1, 4) for _ in range(n)]
    xs = [rnd.uniform(0.0, 0.5) for _ in range(n)]
    ys = [rnd.uniform(0.0, 0.5) for _ in range(n)]
    x1 = [x + rnd.uniform(0.1, 0.45) for x in xs]
    y1 = [y + rnd.uniform(0.1, 0.45) for y in ys]
    texts = [NAMES[v].encode() for v in labels]
    width, height = 64, 48
    picture = pictures.setdefault(seed % 8, jpeg(width, height, seed % 8))
    if plant == "box_range":
        x1[0] = 1.35
    elif plant == "box_not_finite":
        ys[1] = math.nan
    elif plant == "box_inverted":
        xs[0], x1[0] = 0.8, 0.2
    elif plant == "object_lengths":
        texts = texts[:-1]
    elif plant == "label_map":
        labels[0] = 99
        texts[0] = b"yak"
    elif plant == "label_text":
        labels[0], texts[0] = 1, b"dog"
    elif plant == "image_size":
        height = 49
    elif plant == "undecodable":
        picture = picture[: len(picture) // 2]
    features = {
        "image/encoded": ("bytes", [picture]),
        "image/format": ("bytes", [b"jpeg"]),
        "image/height": ("int64", [height]),
        "image/width": ("int64", [width]),
        "image/source_id": ("bytes", [f"img-{seed:06d}".encode()]),
        "image/object/bbox/xmin": ("float", xs),
        "image/object/bbox/ymin": ("float", ys),
        "image/object/bbox/xmax": ("float", x1),
        "image/object/bbox/ymax": ("float", y1),
        "image/object/class/text": ("bytes", texts),
        "image/object/class/label": ("int64", labels),
    }
    if plant == "missing_label":
        del features["image/object/class/label"]
    return codec.encode_example(features)


def write_detection(
    path: Path, n: int = 200, seed: int = 0, plant: bool = True
) -> dict[str, list[int]]:
    """Write ``n`` detection records to ``path``; return the planted records by problem."""
    rnd = random.Random(seed)
    kinds = list(PLANTS) if plant else []
    planted: dict[str, list[int]] = {k: [] for k in kinds}
    payloads = []
    pictures: dict[int, bytes] = {}
    for i in range(n):
        what = None
        if kinds and i % 7 == 3:  # every seventh record, the kinds in turn
            what = kinds[(i // 7) % len(kinds)]
            planted[what].append(i)
        payloads.append(example(rnd, i, what, pictures))
    codec.write_records(path, payloads)
    damaged = planted.get("damaged", [])
    if damaged:
        data = bytearray(path.read_bytes())
        with codec.TFRecordFile(path, use_cache=False) as f:
            for i in damaged:
                off, _n = f.span(i)
                data[off + HEADER_SIZE + 5] ^= 0xFF
        path.write_bytes(bytes(data))
    return planted
