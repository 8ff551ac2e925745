"""Export throughput of untouched records: TFRecord (none, GZIP), JSON Lines and Parquet.

A generated file of Examples shaped like a small labelled dataset (an id, a label, a score,
a 16-value embedding and a 200-byte blob) is exported whole; the figures count records and
source stream bytes per second, verification pass included. Quick mode uses 10k records
instead of 100k.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

if __package__ in (None, ""):  # `python benchmarks/bench_export.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import codec
from benchmarks.common import Row, table
from browser_app.export import export_jsonl, export_table, export_tfrecord
from codec import example as ex


def make_file(path: str, records: int, seed: int = 0) -> int:
    """Write ``records`` Examples to ``path``; return the stream size in bytes."""
    rng = random.Random(seed)

    def payloads() -> Iterator[bytes]:
        for i in range(records):
            yield ex.encode_example(
                {
                    "id": ("bytes", [f"item-{i:08d}".encode()]),
                    "label": ("int64", [rng.randrange(1000)]),
                    "score": ("float", [rng.random()]),
                    "embedding": ("float", [rng.random() for _ in range(16)]),
                    "blob": ("bytes", [rng.randbytes(200)]),
                }
            )

    codec.write_records(path, payloads())
    return os.path.getsize(path)


@contextlib.contextmanager
def _private_cache(folder: str) -> Iterator[None]:
    """Keep indexes and inflated streams of the benchmark out of the user's cache."""
    old = os.environ.get("TFRECORD_BROWSER_CACHE")
    os.environ["TFRECORD_BROWSER_CACHE"] = folder
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TFRECORD_BROWSER_CACHE", None)
        else:
            os.environ["TFRECORD_BROWSER_CACHE"] = old


def _time(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(quick: bool) -> list[Row]:
    n = 10_000 if quick else 100_000
    label = f"{n // 1000}k records"
    rows: list[Row] = []
    with (
        tempfile.TemporaryDirectory(prefix="bench-export-") as tmp,
        _private_cache(os.path.join(tmp, "cache")),
    ):
        src = os.path.join(tmp, "src.tfrecord")
        size = make_file(src, n)
        mb = size / 1e6
        cases: list[tuple[str, Callable[[], object]]] = [
            (
                "tfrecord none",
                lambda: export_tfrecord(src, os.path.join(tmp, "o.tfrecord")),
            ),
            (
                "tfrecord gzip",
                lambda: export_tfrecord(
                    src, os.path.join(tmp, "o.tfrecord.gz"), compression="gzip"
                ),
            ),
            ("jsonl", lambda: export_jsonl(src, os.path.join(tmp, "o.jsonl"))),
            ("parquet", lambda: export_table(src, os.path.join(tmp, "o.parquet"))),
        ]
        with codec.TFRecordFile(src) as f:  # index once, as an opened dataset would be
            len(f)
        for name, fn in cases:
            seconds = _time(fn)
            rows.append(Row("export", f"{name}, {label}", n / seconds, "records/s"))
            rows.append(Row("export", f"{name}, {label}", mb / seconds, "MB/s"))
    return rows


if __name__ == "__main__":
    print(table(run(quick="--quick" in sys.argv)))
