"""Record layer: index build, verify, random access, first record, re-open, peak memory.

Files are generated with the project's own writer under benchmarks/data/ and reused."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import crc32c

from benchmarks.common import Row, best_of
from codec import TFRecordFile
from codec.framing import encode_footer, encode_header

DATA = Path(__file__).parent / "data"
GROUP = "records"


def _make(path: Path, count: int, size: int) -> Path:
    """``count`` records of ``size`` bytes each (contents vary so CRCs differ)."""
    if path.exists() and path.stat().st_size == count * (size + 16):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    block = os.urandom(size + 4096)
    with open(tmp, "wb") as f:
        header = encode_header(size)
        buf = bytearray()
        for i in range(count):
            start = (i * 7919) % 4096
            payload = block[start : start + size]
            buf += header + payload + encode_footer(payload)
            if len(buf) > 16 << 20:
                f.write(buf)
                buf.clear()
        f.write(buf)
    os.replace(tmp, path)
    return path


def _raw_crc_gbps() -> float:
    buf = os.urandom(64 << 20)
    t = best_of(lambda: crc32c.crc32c(buf), 5)
    return len(buf) / t / 1e9


def _child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter: a cold process with its own peak RSS (VmHWM, since
    Linux carries ru_maxrss over from the forking parent)."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick: bool) -> list[Row]:
    rows: list[Row] = []
    n_small = 100_000 if quick else 1_000_000
    small = _make(DATA / f"small-{n_small}.tfrecord", n_small, 100)
    n_large = 20 if quick else 200
    large = _make(DATA / f"large-{n_large}.tfrecord", n_large, 4 << 20)
    big_count = (256 << 20) // (100_016) if quick else (2 << 30) // 100_016
    big = _make(DATA / f"big-{big_count}.tfrecord", big_count, 100_000)

    raw = _raw_crc_gbps()
    rows.append(Row(GROUP, "crc32c package, raw", raw, "GB/s"))

    def index() -> None:
        with TFRecordFile(small, use_cache=False) as f:
            f.build_index()

    t = best_of(index, 3)
    rate = n_small / t / 1e6
    rows.append(Row(GROUP, f"index build, {n_small:,} x 100 B", rate, "M rec/s", ">= 5", rate >= 5))

    with TFRecordFile(small, use_cache=False) as f:
        f.build_index()
        t = best_of(f.verify, 3)
        rate = n_small / t / 1e6
        rows.append(Row(GROUP, "verify, small records", rate, "M rec/s", ">= 1.5", rate >= 1.5))
        ks = [random.randrange(n_small) for _ in range(200_000)]
        read = f.read

        def access() -> None:
            for k in ks:
                read(k)

        t = best_of(access, 3)
        ops = len(ks) / t / 1e3
        rows.append(Row(GROUP, "random access + CRC", ops, "k ops/s", ">= 800", ops >= 800))

    with TFRecordFile(large, use_cache=False) as f:
        f.build_index()
        t = best_of(f.verify, 3)
        gbps = large.stat().st_size / t / 1e9
        rows.append(Row(GROUP, f"verify, {n_large} x 4 MiB", gbps, "GB/s"))
        share = 100 * gbps / raw
        rows.append(Row(GROUP, "  as share of raw crc32c", share, "%", ">= 75", share >= 75))
        rows.append(Row(GROUP, "  records", n_large / t, "rec/s"))

    size_gib = big.stat().st_size / (1 << 30)
    first = _child(
        "import time, json; from codec import TFRecordFile; t=time.perf_counter();"
        f"f=TFRecordFile({str(big)!r}, use_cache=False); f[0];"
        "print(json.dumps({'t': time.perf_counter()-t}))"
    )["t"]
    rows.append(
        Row(GROUP, f"first record of {size_gib:.2f} GiB file", first, "s", "< 0.2", first < 0.2)
    )
    # Build the cached index once, then time a cold re-open that answers len().
    with TFRecordFile(big) as f:
        len(f)
    reopen = _child(
        "import time, json; from codec import TFRecordFile; t=time.perf_counter();"
        f"f=TFRecordFile({str(big)!r}); n=len(f); f[n-1];"
        "print(json.dumps({'t': time.perf_counter()-t}))"
    )["t"]
    rows.append(Row(GROUP, "cached re-open + len + last record", reopen, "s"))
    for label, path, count in (("2 GiB file", big, big_count), ("1M small", small, n_small)):
        mem = _child(
            "import json; from codec import TFRecordFile;"
            f"f=TFRecordFile({str(path)!r}, use_cache=False); f.verify();"
            "hwm=[l for l in open('/proc/self/status') if l.startswith('VmHWM')][0];"
            "print(json.dumps({'mb': int(hwm.split()[1])/1024}))"
        )["mb"]
        limit = 200 + 16 * count / 1e6
        rows.append(
            Row(
                GROUP,
                f"peak RSS, index + verify, {label}",
                mem,
                "MB",
                f"< {limit:.0f}",
                mem < limit,
            )
        )
    return rows


if __name__ == "__main__":
    from benchmarks.common import table

    t0 = time.perf_counter()
    print(table(run("--quick" in sys.argv)))
