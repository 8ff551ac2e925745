"""Shared pieces of the benchmarks: a result row, timing, peak memory and the table."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class Row:
    """One measured figure. ``target`` is the goal as text (e.g. ">= 5 M/s"), ``ok`` whether it
    was met (None when there is no target)."""

    group: str
    name: str
    value: float
    unit: str
    target: str = ""
    ok: bool | None = None

    def cells(self) -> list[str]:
        mark = "" if self.ok is None else ("yes" if self.ok else "NO")
        return [self.group, self.name, fmt(self.value), self.unit, self.target, mark]


def fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:,.2f}"
    return f"{value:.4f}"


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best wall time of ``repeat`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def sharded_dataset(
    folder: Path,
    shards: int,
    count: int,
    seed: int,
    record: Callable[[np.random.Generator, int], dict[str, tuple[str, list[Any]]]],
) -> list[Path]:
    """``count`` Examples made by ``record(rng, n)`` in ``shards`` files
    ``part-K-of-SHARDS.tfrecord`` under ``folder``, written once (each file under a temporary
    name, renamed when whole) and reused while they are all there."""
    paths = [folder / f"part-{k}-of-{shards}.tfrecord" for k in range(shards)]
    if all(p.exists() for p in paths):
        return paths
    from codec import TFRecordWriter
    from codec.example import encode_example

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    per = -(-count // shards)
    n = 0
    for k, path in enumerate(paths):
        tmp = path.with_suffix(".part")
        with TFRecordWriter(tmp) as w:
            for _ in range(min(per, count - k * per)):
                w.write(encode_example(record(rng, n)))
                n += 1
        tmp.rename(path)
    return paths


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def table(rows: list[Row]) -> str:
    head = ["group", "measure", "value", "unit", "target", "met"]
    data = [head] + [r.cells() for r in rows]
    widths = [max(len(r[i]) for r in data) for i in range(len(head))]
    lines = []
    for n, r in enumerate(data):
        lines.append(
            "  ".join(
                c.rjust(w) if i == 2 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))
            )
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
