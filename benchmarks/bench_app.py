"""The app's own work, measured without a browser: the time to present a page (browser_app.view).

- a page of 50 records with thumbnails on the sample and on a 20,000-record picture dataset;
- the first page of a 2 GiB file (about 100 KB per record) visible after opening it: open +
  header scan for the first page + the view, with the index cache off;
- memory while paging through a whole file with the view: resident anonymous memory
  (the heap) must stay flat; file-backed pages of the memory map are reported too, as the
  kernel may drop them at any time.

Data is generated into benchmarks/data/ on first use (with the sample generator's drawing
code) and reused. ``--quick`` uses smaller files.
"""

from __future__ import annotations

import gc
import io
import random
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image

import codec
from benchmarks.common import Row, table
from browser_app import view
from browser_app.sample_data import detection_payload, draw_scene, sample_dir
from codec import example as ex

DATA = Path(__file__).resolve().parent / "data"
PAGE = 50
PAGE_TARGET_MS = 150.0
FIRST_PAGE_TARGET_S = 1.0
RSS_GROWTH_TARGET_MB = 64.0


def _page_ms(ds: codec.TFRecordDataset, start: int, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        view.page_view(ds.page(start, start + PAGE))
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def images_dataset(n: int) -> Path:
    """``n`` Object Detection records drawn like the sample's (made once, then reused)."""
    path = DATA / f"images-{n}.tfrecord"
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    rng = random.Random(n)
    with codec.TFRecordWriter(path) as w:
        for i in range(n):
            fmt = "png" if i % 3 == 2 else "jpeg"
            size = (rng.choice((96, 128, 160)), rng.choice((96, 112, 128)))
            w.write(detection_payload(rng, i, fmt, size))
    return path


def _big_pictures(count: int, target: int = 100_000) -> list[bytes]:
    """``count`` distinct JPEGs of about ``target`` bytes (noise keeps them from shrinking)."""
    import numpy as np

    rng = random.Random(3)
    nprng = np.random.default_rng(3)
    out = []
    for _ in range(count):
        img, _shapes = draw_scene(rng, 400, 300)
        arr = np.asarray(img, dtype=np.int16) + nprng.integers(-40, 40, (300, 400, 3))
        noisy = Image.fromarray(arr.clip(0, 255).astype("uint8"), "RGB")
        buf = io.BytesIO()
        noisy.save(buf, format="JPEG", quality=90)
        out.append(buf.getvalue())
    return out


def big_file(size: int) -> Path:
    """A file of about ``size`` bytes of ~100 KB picture records (made once, then reused)."""
    path = DATA / f"big-{size >> 20}MiB.tfrecord"
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    pictures = _big_pictures(24)
    written = 0
    i = 0
    with codec.TFRecordWriter(path) as w:
        while written < size:
            pic = pictures[i % len(pictures)]
            payload = ex.encode_example(
                {
                    "image/encoded": ("bytes", [pic]),
                    "image/format": ("bytes", [b"jpeg"]),
                    "image/height": ("int64", [300]),
                    "image/width": ("int64", [400]),
                    "label": ("int64", [i % 10]),
                    "id": ("int64", [i]),
                }
            )
            w.write(payload)
            written += len(payload) + 16
            i += 1
    return path


def _rss_mb() -> tuple[float, float]:
    """(anonymous, file-backed) resident memory of this process in MB."""
    anon = file_ = 0.0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                anon = int(line.split()[1]) / 1024
            elif line.startswith("RssFile:"):
                file_ = int(line.split()[1]) / 1024
    return anon, file_


def run(quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    group = "app"

    # 1. A page of 50 with thumbnails: the sample, then a 20,000-record picture dataset.
    sample = sample_dir() / "detection.tfrecord"
    with codec.TFRecordDataset([str(sample)], use_cache=False) as ds:
        ms = _page_ms(ds, 0)
    rows.append(
        Row(
            group,
            "page of 50 + thumbnails, sample",
            ms,
            "ms",
            f"< {PAGE_TARGET_MS:.0f} ms",
            ms < PAGE_TARGET_MS,
        )
    )
    n = 2_000 if quick else 20_000
    path = images_dataset(n)
    with codec.TFRecordDataset([str(path)]) as ds:
        total = len(ds)
        starts = [0, (total // 2) // PAGE * PAGE, (total - PAGE) // PAGE * PAGE]
        times = [_page_ms(ds, s) for s in starts]
    ms = statistics.median(times)
    rows.append(
        Row(
            group,
            f"page of 50 + thumbnails, {n:,} records (median of 3 places)",
            ms,
            "ms",
            f"< {PAGE_TARGET_MS:.0f} ms",
            max(times) < PAGE_TARGET_MS,
        )
    )

    # 2. First page of a big file, from opening it (no index cache: a first visit).
    size = (256 << 20) if quick else (2 << 30)
    big = big_file(size)
    gc.collect()
    t0 = time.perf_counter()
    ds = codec.TFRecordDataset([str(big)], use_cache=False)
    first_page = view.page_view(ds.page(0, PAGE))
    first = time.perf_counter() - t0
    assert len(first_page.rows) == PAGE
    label = f"first page visible, {big.stat().st_size / (1 << 30):.2f} GiB file"
    rows.append(
        Row(group, label, first, "s", f"< {FIRST_PAGE_TARGET_S:.0f} s", first < FIRST_PAGE_TARGET_S)
    )

    # 3. Memory while paging through the whole file with the view.
    total = len(ds)
    anon0, _ = _rss_mb()
    peak_anon = anon0
    peak_file = 0.0
    samples = []
    t0 = time.perf_counter()
    for start in range(0, total, PAGE):
        view.page_view(ds.page(start, start + PAGE))
        if (start // PAGE) % 10 == 0:
            anon, file_ = _rss_mb()
            samples.append(anon)
            peak_anon = max(peak_anon, anon)
            peak_file = max(peak_file, file_)
    seconds = time.perf_counter() - t0
    ds.close()
    settled = statistics.median(samples[: max(1, len(samples) // 10)])
    growth = peak_anon - settled
    rows.append(
        Row(
            group,
            f"heap growth paging {total:,} records ({total // PAGE:,} pages)",
            growth,
            "MB",
            f"< {RSS_GROWTH_TARGET_MB:.0f} MB",
            growth < RSS_GROWTH_TARGET_MB,
        )
    )
    rows.append(Row(group, "paging speed, whole file with view", total / seconds, "records/s"))
    rows.append(Row(group, "peak file-backed resident (mmap pages)", peak_file, "MB"))
    return rows


if __name__ == "__main__":
    print(table(run(quick="--quick" in sys.argv[1:])))
