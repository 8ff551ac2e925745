"""Message layer: protobuf parse rate, decode to Python values, image records, a page of 50,
JPEG thumbnails, encoding.

Data is generated in memory with the project's own encoder (codec.example), shaped like the
golden files: basic.tfrecord's four features, and images_jpeg.tfrecord's layout.
"""

from __future__ import annotations

import io
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

from benchmarks.common import Row, best_of, table
from codec import example as ex
from codec.framing import encode_record
from codec.images import thumbnail_bytes
from codec.protos import example_pb2
from codec.reader import TFRecordFile

GROUP = "messages"
ANIMALS = [b"cat", b"dog", b"chicken", b"horse", b"goat"]


def basic_payloads(n: int, seed: int = 0) -> list[bytes]:
    rng = random.Random(seed)
    return [
        ex.encode_example(
            {
                "feature0": ("int64", [rng.randint(0, 1)]),
                "feature1": ("int64", [rng.randint(0, 4)]),
                "feature2": ("bytes", [rng.choice(ANIMALS)]),
                "feature3": ("float", [rng.gauss(0, 1)]),
            }
        )
        for _ in range(n)
    ]


def jpeg_bytes(width: int, height: int, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    # Smooth content, like a photo, rather than noise.
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([x * 255 // max(1, width), y * 255 // max(1, height), (x + y) % 256], -1)
    noise = rng.integers(0, 24, (height, width, 3))
    out = io.BytesIO()
    Image.fromarray((base + noise).clip(0, 255).astype(np.uint8)).save(out, format="JPEG")
    return out.getvalue()


def image_payloads(n: int) -> list[bytes]:
    pictures = [jpeg_bytes(32 + 8 * i, 32 + 5 * i, i) for i in range(8)]
    return [
        ex.encode_example(
            {
                "height": ("int64", [32 + 5 * (i % 8)]),
                "width": ("int64", [32 + 8 * (i % 8)]),
                "depth": ("int64", [3]),
                "label": ("int64", [i % 10]),
                "image_raw": ("bytes", [pictures[i % 8]]),
            }
        )
        for i in range(n)
    ]


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def _each(fn: Callable[[bytes], object], payloads: list[bytes]) -> Callable[[], None]:
    """Streaming use (results dropped, as a page view or a schema scan does): keeping 50k
    decoded records alive instead mostly measures the garbage collector."""

    def loop() -> None:
        for p in payloads:
            fn(p)

    return loop


def run(quick: bool) -> list[Row]:
    rows: list[Row] = []
    n = 5_000 if quick else 50_000
    repeat = 3 if quick else 5
    basic = basic_payloads(n)

    parse = example_pb2.Example.FromString
    t = best_of(_each(parse, basic), repeat)
    rows.append(Row(GROUP, "protobuf parse (Example, 4 features)", _rate(n, t), "records/s"))

    decode = ex.decode
    t = best_of(_each(decode, basic), repeat)
    rate = _rate(n, t)
    rows.append(
        Row(
            GROUP,
            "decode to Python values (4 features)",
            rate,
            "records/s",
            ">= 150k",
            rate >= 150_000,
        )
    )

    t = best_of(_each(lambda p: decode(p, "example"), basic), repeat)
    rows.append(Row(GROUP, "decode, kind forced to example", _rate(n, t), "records/s"))

    t = best_of(_each(lambda p: ex._decode_slow(p, "auto"), basic), repeat)
    rows.append(Row(GROUP, "decode through protobuf objects only", _rate(n, t), "records/s"))

    images = image_payloads(n // 5)
    avg = sum(map(len, images)) / len(images)
    t = best_of(_each(decode, images), repeat)
    rows.append(
        Row(
            GROUP,
            f"decode image records (JPEG, ~{avg / 1024:.1f} KiB)",
            _rate(len(images), t),
            "records/s",
        )
    )

    # A page of 50: fetch from an mmap-backed reader, check the data CRC, decode.
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "page.tfrecord"
        path.write_bytes(b"".join(encode_record(p) for p in basic[:2_000] + images[:500]))
        with TFRecordFile(path, use_cache=False) as f:
            total = len(f)
            starts = [random.Random(1).randrange(0, total - 50) for _ in range(20)]

            def page() -> None:
                for s in starts:
                    for i in range(s, s + 50):
                        decode(f[i])

            t = best_of(page, repeat) / len(starts)
            rows.append(
                Row(
                    GROUP,
                    "page of 50 records: fetch + CRC + decode",
                    t * 1e3,
                    "ms",
                    "< 1 ms",
                    t < 1e-3,
                )
            )

    jpeg = jpeg_bytes(256, 256)
    count = 50 if quick else 300
    t = best_of(lambda: [thumbnail_bytes(jpeg, 128) for _ in range(count)], repeat) / count
    rows.append(Row(GROUP, "thumbnail of a 256×256 JPEG (draft mode)", t * 1e3, "ms", "≈ 0.3 ms"))

    records = [decode(p) for p in basic[: n // 5]]
    t = best_of(lambda: [ex.encode(r) for r in records], repeat)
    rows.append(
        Row(GROUP, "encode with strict checks (4 features)", _rate(len(records), t), "records/s")
    )

    t0 = time.perf_counter()
    for p in basic[:2_000]:
        ex.to_json(p, "example")
    rows.append(
        Row(GROUP, "to_json (MessageToDict)", _rate(2_000, time.perf_counter() - t0), "records/s")
    )
    return rows


if __name__ == "__main__":
    print(table(run(False)))
