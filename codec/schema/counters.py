"""Bounded, mergeable counters: value counts with a distinct-count sketch, a streaming
histogram, exact numeric summaries and capped lists of record numbers.

Every ``merge`` is associative, so a result does not depend on how the records were split
into batches, ranges or processes.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

RECORD_CAP = 10_000  # record numbers kept per drift list


def _hash64(value: Hashable) -> int:
    """A hash that is the same in every process (Python's str/bytes hash is salted)."""
    if isinstance(value, bytes):
        data = value
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
    else:
        data = repr(value).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


class ValueCounter:
    """Counts of hashable values in bounded memory.

    Exact while at most ``capacity`` distinct values have been seen. Beyond that the counts
    are Misra-Gries summaries (each count may be low by at most :attr:`error`; every value
    more frequent than ``total / capacity`` is kept) and :meth:`distinct` is a KMV estimate
    from the ``sketch`` smallest 64-bit hashes (about 3% error for 1024)."""

    def __init__(self, capacity: int = 10_000, sketch: int = 1024) -> None:
        self.capacity = capacity
        self.sketch = sketch
        self.counts: dict[Hashable, int] = {}
        self.total = 0
        self.exact = True
        self.error = 0
        self._kmv: np.ndarray | None = None  # sorted unique uint64, built on overflow

    def update(self, counts: Mapping[Any, int]) -> None:
        if not counts:
            return
        mine = self.counts
        for v, c in counts.items():
            mine[v] = mine.get(v, 0) + c
            self.total += c
        if self._kmv is not None:
            self._sketch_add(counts.keys())
        if len(mine) > self.capacity:
            self._overflow()

    def add(self, values: Iterable[Hashable]) -> None:
        self.update(Counter(values))

    def _sketch_add(self, values: Iterable[Hashable]) -> None:
        hashes = np.fromiter((_hash64(v) for v in values), np.uint64)
        self._sketch_merge(hashes)

    def _sketch_merge(self, hashes: np.ndarray) -> None:
        base = self._kmv if self._kmv is not None else np.empty(0, np.uint64)
        self._kmv = np.unique(np.concatenate([base, hashes]))[: self.sketch]

    def _overflow(self) -> None:
        if self._kmv is None:
            self._kmv = np.empty(0, np.uint64)
            self._sketch_add(self.counts.keys())
        self.exact = False
        # Misra-Gries: subtract the (capacity+1)-th largest count from every count.
        ranked = sorted(self.counts.values(), reverse=True)
        cut = ranked[self.capacity]
        self.error += cut
        self.counts = {v: c - cut for v, c in self.counts.items() if c > cut}

    def merge(self, other: ValueCounter) -> None:
        if other._kmv is not None or not other.exact:
            if self._kmv is None:
                self._kmv = np.empty(0, np.uint64)
                self._sketch_add(self.counts.keys())
            assert other._kmv is not None
            self._sketch_merge(other._kmv)
        elif self._kmv is not None:
            self._sketch_add(other.counts.keys())
        if not other.exact:
            self.exact = False
        self.error += other.error
        for v, c in other.counts.items():
            self.counts[v] = self.counts.get(v, 0) + c
        self.total += other.total
        if len(self.counts) > self.capacity:
            self._overflow()

    def distinct(self) -> int:
        """Distinct values seen: exact while :attr:`exact`, else estimated."""
        if self.exact:
            return len(self.counts)
        assert self._kmv is not None
        if len(self._kmv) < self.sketch:
            return len(self._kmv)
        kth = float(self._kmv[self.sketch - 1]) / 2.0**64
        return max(len(self.counts), round((self.sketch - 1) / kth))

    def top(self, k: int = 10) -> list[tuple[Any, int]]:
        """The ``k`` most common values with their counts (ties: smaller value first)."""
        try:
            return sorted(self.counts.items(), key=lambda vc: (-vc[1], vc[0]))[:k]
        except TypeError:  # values of mixed types
            return sorted(self.counts.items(), key=lambda vc: (-vc[1], repr(vc[0])))[:k]


_EDGE_BITS = 40  # bins are never narrower than 2**-40 of the largest magnitude


class Histogram:
    """Counts of numbers in at most ``bins`` equal bins on a fixed grid.

    A bin is ``[i * 2**k, (i + 1) * 2**k)``; ``k`` is the smallest exponent at which every
    finite value added fits in ``bins`` bins, but at least 0 for integers (their edges stay
    whole numbers) and never so small that an edge near the largest magnitude could not be
    written exactly (2**-40 of it). Grids of different ``k`` nest, so coarsening is exact and
    :meth:`merge` is associative: the result depends only on the values, never on how they
    were split into batches, ranges or processes, or in which order they came."""

    def __init__(self, bins: int = 64, integer: bool = False) -> None:
        self.bins = bins
        self.k = 0 if integer else -1074
        self.counts: dict[int, int] = {}

    @property
    def empty(self) -> bool:
        return not self.counts

    def _fits(self, lo: float, hi: float, k: int) -> bool:
        return math.floor(math.ldexp(hi, -k)) - math.floor(math.ldexp(lo, -k)) < self.bins

    def _coarsen(self, k: int) -> None:
        if k <= self.k:
            return
        shift = 1 << (k - self.k)
        merged: dict[int, int] = {}
        for i, c in self.counts.items():
            j = i // shift
            merged[j] = merged.get(j, 0) + c
        self.counts = merged
        self.k = k

    def _settle(self, lo: float, hi: float) -> None:
        """Coarsen until ``[lo, hi]`` and the bins already counted fit."""
        if self.counts:
            width = math.ldexp(1.0, self.k)
            lo = min(lo, min(self.counts) * width)
            hi = max(hi, max(self.counts) * width)
        k = self.k
        big = max(abs(lo), abs(hi))
        if big > 0:
            k = max(k, math.frexp(big)[1] - _EDGE_BITS)
        span = hi - lo
        if span > 0 and math.isfinite(span):
            k = max(k, math.floor(math.log2(span / self.bins)) - 1)
        while not self._fits(lo, hi, k):
            k += 1
        self._coarsen(k)

    def add(self, values: np.ndarray, weights: np.ndarray | None = None) -> None:
        v = np.asarray(values, np.float64)
        keep = np.isfinite(v)
        if weights is not None:
            weights = np.asarray(weights, np.int64)[keep]
        v = v[keep]
        if v.size == 0:
            return
        self._settle(float(v.min()), float(v.max()))
        idx = np.floor(np.ldexp(v, -self.k))
        if weights is None:
            uniq, counts = np.unique(idx, return_counts=True)
        else:
            uniq, inverse = np.unique(idx, return_inverse=True)
            counts = np.bincount(inverse.ravel(), weights=weights).astype(np.int64)
        for u, c in zip(uniq.tolist(), counts.tolist()):
            i = int(u)
            self.counts[i] = self.counts.get(i, 0) + int(c)

    def merge(self, other: Histogram) -> None:
        if not other.counts:
            return
        other = self._copy_of(other)
        k = max(self.k, other.k)
        self._coarsen(k)
        other._coarsen(k)
        for i, c in other.counts.items():
            self.counts[i] = self.counts.get(i, 0) + c
        width = math.ldexp(1.0, self.k)
        self._settle(min(self.counts) * width, max(self.counts) * width)

    @staticmethod
    def _copy_of(h: Histogram) -> Histogram:
        out = Histogram(h.bins)
        out.k, out.counts = h.k, dict(h.counts)
        return out

    def to_json(self) -> dict[str, list[float] | list[int]]:
        """``{"edges": [...], "counts": [...]}`` from the first to the last non-empty bin, empty
        bins between them included (``len(edges) == len(counts) + 1``)."""
        if not self.counts:
            return {"edges": [], "counts": []}
        a, b = min(self.counts), max(self.counts)
        return {
            "edges": [math.ldexp(float(i), self.k) for i in range(a, b + 2)],
            "counts": [self.counts.get(i, 0) for i in range(a, b + 1)],
        }


# Sums are kept as whole numbers times 2**173: a float32 is m * 2**(e - 24) with a 24-bit m and
# e >= -148 (2**-149 is the smallest denormal), so every float32 times 2**173 is whole.
_FLOAT_SCALE = 173


def _exact_sum(values: np.ndarray) -> int:
    """The exact sum of int64 or float32 values, times 2**173, as a Python int: the mean
    does not depend on how records were batched (float sums would)."""
    if values.dtype.kind in "iu":
        v = values.astype(np.int64)
        hi = int((v >> 32).sum())
        lo = int((v & 0xFFFFFFFF).sum())
        return ((hi << 32) + lo) << _FLOAT_SCALE
    mant, exp = np.frexp(values.astype(np.float64))
    m = (mant * (1 << 24)).astype(np.int64)  # float32 has 24 significant bits: exact
    e = exp.astype(np.int64) - 24 + _FLOAT_SCALE  # >= 1 for every float32
    total = 0
    for k in np.unique(e).tolist():
        total += int(m[e == k].sum()) << k
    return total


@dataclass
class NumericStats:
    """Count, min, max, sum and non-finite counts of numbers, plus a histogram."""

    count: int = 0
    min: float | int | None = None
    max: float | int | None = None
    total: int = 0  # exact sum of the finite values, times 2**FLOAT_SCALE (see _exact_sum)
    finite: int = 0
    nan: int = 0
    posinf: int = 0
    neginf: int = 0
    histogram: Histogram = field(default_factory=Histogram)

    def add(self, values: np.ndarray) -> None:
        if values.size == 0:
            return
        self.count += int(values.size)
        if values.dtype.kind == "f":
            nan = np.isnan(values)
            inf = np.isinf(values)
            self.nan += int(nan.sum())
            self.posinf += int((inf & (values > 0)).sum())
            self.neginf += int((inf & (values < 0)).sum())
            fin = values[~(nan | inf)] if (nan.any() or inf.any()) else values
            if fin.size == 0:
                return
            lo, hi = float(fin.min()), float(fin.max())
            self.total += _exact_sum(fin)
        else:
            fin = values
            lo, hi = int(values.min()), int(values.max())
            self.total += _exact_sum(values)
        self.finite += int(fin.size)
        self.min = lo if self.min is None else min(self.min, lo)
        self.max = hi if self.max is None else max(self.max, hi)
        self.histogram.add(fin)

    def merge(self, o: NumericStats) -> None:
        self.count += o.count
        self.finite += o.finite
        self.nan += o.nan
        self.posinf += o.posinf
        self.neginf += o.neginf
        self.total += o.total
        for name, pick in (("min", min), ("max", max)):
            mine, theirs = getattr(self, name), getattr(o, name)
            if theirs is not None:
                setattr(self, name, theirs if mine is None else pick(mine, theirs))
        self.histogram.merge(o.histogram)

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "min": self.min,
            "max": self.max,
            "mean": self.total / (self.finite << _FLOAT_SCALE) if self.finite else None,
            "nan": self.nan,
            "inf": self.posinf + self.neginf,
            "posinf": self.posinf,
            "neginf": self.neginf,
        }


class RecordList:
    """Record numbers, keeping the ``cap`` smallest whatever order they come in (so merges
    do not depend on how the records were split); ``count`` is exact."""

    __slots__ = ("cap", "count", "kept", "parts")

    def __init__(self, cap: int = RECORD_CAP) -> None:
        self.cap = cap
        self.count = 0
        self.kept = 0  # record numbers held in parts
        self.parts: list[np.ndarray] = []

    def add(self, records: np.ndarray) -> None:
        n = len(records)
        if not n:
            return
        self.parts.append(np.asarray(records, np.int64))
        self.count += n
        self.kept += n
        self._trim()

    def merge(self, other: RecordList) -> None:
        self.parts.extend(other.parts)
        self.count += other.count
        self.kept += other.kept
        self._trim()

    def _trim(self) -> None:
        if self.kept > self.cap:
            self.parts = [np.sort(np.concatenate(self.parts))[: self.cap]]
            self.kept = self.cap

    def array(self) -> np.ndarray:
        if not self.parts:
            return np.empty(0, np.int64)
        return np.concatenate(self.parts)

    def tolist(self) -> list[int]:
        return sorted(int(x) for x in self.array())


# --------------------------------------------------------------------------------------------
