"""Dataset QA: schema inference over many small Examples and over an image dataset, and a
filter run.

Files are generated with the project's own encoder and writer under benchmarks/data/ and
reused. Each measurement runs in a fresh interpreter (open, index from the cache, infer), so
the figures include start-up costs a user sees and the peak memory is the run's own."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchmarks.common import Row

DATA = Path(__file__).parent / "data"
GROUP = "schema"
WORDS = [b"cat", b"dog", b"chicken", b"horse", b"goat"]


def _basic(count: int) -> Path:
    """basic.tfrecord-style Examples: feature0 0/1, feature1 0-4, feature2 a word,
    feature3 a float."""
    path = DATA / f"schema-basic-{count}.tfrecord"
    if path.exists():
        return path
    from codec import TFRecordWriter
    from codec.example import encode_example

    DATA.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    f0 = rng.integers(0, 2, count).tolist()
    f1 = rng.integers(0, 5, count).tolist()
    f3 = rng.standard_normal(count).astype(np.float32).tolist()
    with TFRecordWriter(path) as w:
        for i in range(count):
            w.write(
                encode_example(
                    {
                        "feature0": ("int64", [f0[i]]),
                        "feature1": ("int64", [f1[i]]),
                        "feature2": ("bytes", [WORDS[f1[i]]]),
                        "feature3": ("float", [f3[i]]),
                    }
                )
            )
    return path


def _images(count: int) -> Path:
    """The tutorial image layout: image_raw (small JPEGs of varied sizes), height, width,
    depth, label."""
    path = DATA / f"schema-images-{count}.tfrecord"
    if path.exists():
        return path
    from PIL import Image

    from codec import TFRecordWriter
    from codec.example import encode_example

    DATA.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    pool = []
    for _ in range(256):
        w, h = int(rng.integers(24, 97)), int(rng.integers(24, 97))
        arr = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        buf = io.BytesIO()
        Image.fromarray(arr).save(buf, "JPEG", quality=70)
        pool.append((buf.getvalue(), w, h))
    with TFRecordWriter(path) as wr:
        for i in range(count):
            jpg, w, h = pool[i % len(pool)]
            wr.write(
                encode_example(
                    {
                        "image_raw": ("bytes", [jpg]),
                        "height": ("int64", [h]),
                        "width": ("int64", [w]),
                        "depth": ("int64", [3]),
                        "label": ("int64", [i % 10]),
                    }
                )
            )
    return path


def _detection(count: int) -> Path:
    """Object Detection records with planted problems (browser_app.sample_data)."""
    path = DATA / f"schema-detection-{count}.tfrecord"
    if not path.exists():
        from browser_app.sample_data import write_detection_checks

        DATA.mkdir(parents=True, exist_ok=True)
        write_detection_checks(path, count)
    return path


_CODE = """
import json, resource, time
import codec
from codec.schema import infer_schema
from codec.filters import filter_dataset
t0 = time.perf_counter()
with codec.TFRecordFile({path!r}) as f:
    n = len(f)
    t1 = time.perf_counter()
    c1 = time.process_time()
    s = infer_schema(f, workers={workers}, detection={detection})
    cpu = time.process_time() - c1
    t2 = time.perf_counter()
    hits = len(filter_dataset(f, {flt!r})) if {flt!r} else 0
    t3 = time.perf_counter()
doc = s.to_json()
rss = 0.0
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        rss = int(line.split()[1]) / 1024
print(json.dumps({{"n": n, "open": t1 - t0, "infer": t2 - t1, "filter": t3 - t2, "hits": hits,
                  "cpu": cpu,
                  "records": doc["records"], "rss": rss}}))
"""


def _measure(path: Path, workers: int = 1, flt: str = "", detection: bool = True) -> dict:
    # One warm-up so the index cache exists and the file is in the page cache.
    code = _CODE.format(path=str(path), workers=workers, flt=flt, detection=detection)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def run(quick: bool) -> list[Row]:
    n_basic = 100_000 if quick else 1_000_000
    n_images = 2_000 if quick else 20_000
    basic = _basic(n_basic)
    images = _images(n_images)
    rows: list[Row] = []
    _measure(basic)  # warm-up: index cache, page cache
    best = min((_measure(basic) for _ in range(2)), key=lambda r: r["open"] + r["infer"])
    total = best["open"] + best["infer"]
    limit = 5.0 * n_basic / 1_000_000
    rows.append(
        Row(
            GROUP,
            f"infer {n_basic:,} small Examples (1 process, open+index+infer)",
            total,
            "s",
            f"< {limit:g} s",
            total < limit and best["records"] == n_basic,
        )
    )
    rows.append(Row(GROUP, "  records per second", n_basic / best["infer"], "rec/s"))
    rows.append(Row(GROUP, "  CPU time of the inference (load-independent)", best["cpu"], "s"))
    rows.append(Row(GROUP, "  peak memory", best["rss"], "MB"))
    two = _measure(basic, workers=2)
    rows.append(
        Row(
            GROUP,
            f"infer {n_basic:,} small Examples (2 processes)",
            two["open"] + two["infer"],
            "s",
        )
    )
    _measure(images)
    img = _measure(images)
    rows.append(
        Row(
            GROUP,
            f"infer {n_images:,} JPEG Examples (sizes from headers)",
            img["open"] + img["infer"],
            "s",
        )
    )
    rows.append(Row(GROUP, "  records per second", n_images / img["infer"], "rec/s"))
    n_det = 2_000 if quick else 20_000
    det = _detection(n_det)
    _measure(det)
    runs = [(_measure(det, detection=True), _measure(det, detection=False)) for _ in range(3)]
    with_checks = min(r[0]["infer"] for r in runs)
    without = min(r[1]["infer"] for r in runs)
    rows.append(
        Row(
            GROUP, f"infer {n_det:,} detection records, with the detection checks", with_checks, "s"
        )
    )
    rows.append(Row(GROUP, "  the same without the checks", without, "s"))
    extra = with_checks / without - 1
    rows.append(Row(GROUP, "  time the checks add", 100 * extra, "%", "<= 50 %", extra <= 0.5))
    flt = _measure(basic if quick else _basic(100_000), flt='feature2 == "dog" and feature1 >= 1')
    rows.append(Row(GROUP, "filter 100,000 Examples (decode + evaluate)", flt["filter"], "s"))
    return rows


if __name__ == "__main__":
    from benchmarks.common import table

    print(table(run(quick="--quick" in sys.argv)))
