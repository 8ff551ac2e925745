"""Photographs for the app benchmark: many 640×480 JPEGs of about 46 KB each, cut from the
real photographs the package ships (``browser_app/generators/photos``).

Each record's picture is a 640×480 window of one packaged photograph, scaled by a random
factor (at least enough to cover the window), placed at a random spot, mirrored half the
time and made a little lighter or darker: every picture differs, and each looks and
compresses like a photograph. The JPEG quality is chosen once, on the first pictures, so that
they average about :data:`TARGET_BYTES`. The records are written once with
:func:`codec.write_records` next to a small manifest, and reused while the file still has the
manifest's size.

    python -m benchmarks.ui_photos OUT.tfrecord [COUNT]
"""

from __future__ import annotations

import functools
import io
import json
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageEnhance, ImageOps

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import codec
from browser_app.generators import PHOTOS, photo
from codec import example as ex

WIDTH, HEIGHT = 640, 480
TARGET_BYTES = 46_000
QUALITIES = range(70, 96)
SEED = 27
_CALIBRATE = 600  # pictures the quality is chosen on (fewer miss by a quality step)
MADE_BY = 2  # how the pictures are made: a file made otherwise is made again


@functools.cache
def sources() -> dict[str, Image.Image]:
    """The packaged photographs, decoded (once)."""
    return {name: Image.open(io.BytesIO(photo(name).encoded)).convert("RGB") for name in PHOTOS}


def picture(rng: random.Random, sources: dict[str, Image.Image]) -> tuple[str, Image.Image]:
    """A 640×480 window of a packaged photograph: ``(its name, the pixels)``."""
    name = rng.choice(PHOTOS)
    img = sources[name]
    w, h = img.size
    scale = max(WIDTH / w, HEIGHT / h) * rng.uniform(1.0, 1.5)
    big = img.resize(
        (max(WIDTH, round(w * scale)), max(HEIGHT, round(h * scale))), Image.Resampling.BILINEAR
    )
    x = rng.randrange(big.width - WIDTH + 1)
    y = rng.randrange(big.height - HEIGHT + 1)
    out = big.crop((x, y, x + WIDTH, y + HEIGHT))
    if rng.random() < 0.5:
        out = ImageOps.mirror(out)
    return name, ImageEnhance.Brightness(out).enhance(rng.uniform(0.85, 1.15))


def _jpeg(img: Image.Image, quality: int) -> bytes:
    out = io.BytesIO()
    img.save(out, format="JPEG", quality=quality)
    return out.getvalue()


def quality_for(target: int = TARGET_BYTES, seed: int = SEED) -> int:
    """The JPEG quality whose first pictures average closest to ``target`` bytes."""
    rng = random.Random(seed)
    pictures = [picture(rng, sources())[1] for _ in range(_CALIBRATE)]

    def mean(q: int) -> float:
        return sum(len(_jpeg(p, q)) for p in pictures) / len(pictures)

    lo, hi = QUALITIES.start, QUALITIES.stop - 1
    while lo < hi:  # the size grows with the quality: the first quality at or past the target
        mid = (lo + hi) // 2
        if mean(mid) < target:
            lo = mid + 1
        else:
            hi = mid
    if lo > QUALITIES.start and abs(mean(lo - 1) - target) < abs(mean(lo) - target):
        return lo - 1
    return lo


def payloads(
    count: int,
    quality: int,
    seed: int = SEED,
    progress: bool = True,
    pictures: list[int] | None = None,
) -> Iterator[bytes]:
    """``count`` Example records, each a photograph with its size, file name and the name of
    the photograph it was cut from (its class); each JPEG's size is added to ``pictures``."""
    rng = random.Random(seed)
    decoded = sources()
    t0 = time.monotonic()
    for i in range(count):
        name, img = picture(rng, decoded)
        jpeg = _jpeg(img, quality)
        if pictures is not None:
            pictures.append(len(jpeg))
        yield ex.encode_example(
            {
                "image/encoded": ("bytes", [jpeg]),
                "image/format": ("bytes", [b"jpeg"]),
                "image/filename": ("bytes", [f"photo_{i:05d}.jpg".encode()]),
                "image/height": ("int64", [HEIGHT]),
                "image/width": ("int64", [WIDTH]),
                "image/class/label": ("int64", [PHOTOS.index(name)]),
                "image/class/text": ("bytes", [name.encode()]),
            }
        )
        if progress and (i + 1) % 1000 == 0:
            rate = (i + 1) / (time.monotonic() - t0)
            print(
                f"  photos: {i + 1:,} of {count:,} ({(count - i - 1) / rate:.0f} s left)",
                file=sys.stderr,
                flush=True,
            )


def _manifest(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def ensure(path: Path, count: int) -> dict[str, float]:
    """The file of ``count`` photographs at ``path``, written unless a complete one is there
    (its manifest names the same count and the file's size); returns the manifest."""
    manifest = _manifest(path)
    if path.exists() and manifest.exists():
        try:
            facts = json.loads(manifest.read_text())
        except ValueError:
            facts = {}
        same = facts.get("records") == count and facts.get("made_by") == MADE_BY
        if same and facts.get("bytes") == path.stat().st_size:
            return facts
    path.parent.mkdir(parents=True, exist_ok=True)
    quality = quality_for()
    print(
        f"  writing {count:,} photographs of {WIDTH}×{HEIGHT} (JPEG quality {quality}) to {path}",
        file=sys.stderr,
        flush=True,
    )
    part = path.with_name(path.name + ".part")
    sizes: list[int] = []
    pictures: list[int] = []

    def counted() -> Iterator[bytes]:
        for p in payloads(count, quality, pictures=pictures):
            sizes.append(len(p))
            yield p

    written = codec.write_records(part, counted())
    part.replace(path)
    facts = {
        "records": written,
        "made_by": MADE_BY,
        "bytes": path.stat().st_size,
        "width": WIDTH,
        "height": HEIGHT,
        "quality": quality,
        "mean_record_bytes": round(sum(sizes) / max(1, len(sizes))),
        "mean_picture_bytes": round(sum(pictures) / max(1, len(pictures))),
    }
    manifest.write_text(json.dumps(facts, indent=1) + "\n")
    return facts


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    facts = ensure(Path(args[0]), int(args[1]) if len(args) > 1 else 20_000)
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
