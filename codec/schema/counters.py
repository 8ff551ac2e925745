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


_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser over a uint64 array: well-spread 64-bit keys from any bits."""
    with np.errstate(over="ignore"):
        z = np.asarray(x, np.uint64) + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def occurrence_keys(record_keys: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """A 64-bit key per value: from the key of its record (``record_keys``, one per value)
    and its place among the values of the same owner (``owners``, one per value, e.g. the
    record number). The same values of the same records get the same keys however the
    records were split into batches, ranges or processes."""
    n = len(owners)
    if not n:
        return np.empty(0, np.uint64)
    order = np.argsort(owners, kind="stable")
    o = np.asarray(owners)[order]
    firsts = np.searchsorted(o, o, side="left")
    pos = np.empty(n, np.uint64)
    pos[order] = (np.arange(n) - firsts).astype(np.uint64)
    with np.errstate(over="ignore"):
        return mix64(np.asarray(record_keys, np.uint64) ^ (pos * _GOLDEN))


class ValueCounter:
    """Counts of hashable values in bounded memory, the same whatever the order the values
    came in and however they were split (every :meth:`merge` is associative and commutative).

    Exact while at most ``capacity`` distinct values have been seen. Beyond that:

    - :meth:`distinct` is a KMV estimate from the ``sketch`` smallest 64-bit hashes of the
      values (about 3% error for 1024; exact below ``sketch`` distinct values);
    - :meth:`top` estimates counts from a sample of occurrences: each occurrence given to
      :meth:`sample` has a 64-bit key (:func:`occurrence_keys`: its record and its place in
      it, never its order of arrival), the ``budget`` occurrences with the smallest keys are
      kept, and a value's count is its occurrences in the sample divided by the share of keys
      sampled. Frequent values show up in proportion; values seen once in the sample are left
      out as noise. The counts are estimates then (:attr:`exact` is false)."""

    def __init__(self, capacity: int = 10_000, sketch: int = 1024, budget: int = 4096) -> None:
        self.capacity = capacity
        self.sketch = sketch
        self.budget = budget
        self.counts: dict[Hashable, int] = {}  # every value while exact, else empty
        self.total = 0
        self.exact = True
        self._kmv: np.ndarray | None = None  # sorted unique uint64, built on overflow
        self._keys = np.empty(0, np.uint64)  # sampled occurrences: their keys ...
        self._vals: np.ndarray = np.empty(0, object)  # ... and values
        self._limit: np.uint64 | None = None  # keys below it are sampled (None: all)

    # -- exact counts and the distinct sketch ---------------------------------------------

    def update(self, counts: Mapping[Any, int]) -> None:
        if not counts:
            return
        self.total += sum(counts.values())
        if not self.exact:
            self._sketch_add(counts.keys())
            return
        mine = self.counts
        for v, c in counts.items():
            mine[v] = mine.get(v, 0) + c
        if len(mine) > self.capacity:
            self._overflow()

    def add(self, values: Iterable[Hashable], keys: np.ndarray | None = None) -> None:
        """Count ``values``; with ``keys`` (one per value) also offer them to the sample."""
        vals = list(values)
        self.update(Counter(vals))
        if keys is not None:
            self.sample(keys, vals)

    def _sketch_add(self, values: Iterable[Hashable]) -> None:
        self._sketch_merge(_hashes(values))

    def _sketch_merge(self, hashes: np.ndarray) -> None:
        base = self._kmv if self._kmv is not None else np.empty(0, np.uint64)
        self._kmv = np.unique(np.concatenate([base, hashes]))[: self.sketch]

    def _overflow(self) -> None:
        """More than ``capacity`` distinct values: keep the sketch, drop the exact counts."""
        self._kmv = np.empty(0, np.uint64)
        self._sketch_add(self.counts.keys())
        self.exact = False
        self.counts = {}

    # -- the sample of occurrences --------------------------------------------------------

    def sample(self, keys: np.ndarray, values: Any) -> None:
        """Offer occurrences (``values[i]`` with key ``keys[i]``) to the sample."""
        if not len(keys):
            return
        keys = np.asarray(keys, np.uint64)
        if self._limit is None:
            vals = _as_array(values)
        else:
            idx = np.flatnonzero(keys < self._limit)
            if not idx.size:
                return
            keys = keys[idx]
            if isinstance(values, np.ndarray):
                vals = values[idx]
            else:
                vals = _as_array([values[i] for i in idx.tolist()])
        self._absorb(keys, vals, self._limit)

    def _absorb(self, keys: np.ndarray, vals: np.ndarray, limit: np.uint64 | None) -> None:
        if self._limit is None or (limit is not None and limit < self._limit):
            self._limit = limit
        all_keys = np.concatenate([self._keys, keys])
        all_vals = _concat(self._vals, vals)
        if self._limit is not None:
            m = all_keys < self._limit
            all_keys, all_vals = all_keys[m], all_vals[m]
        if len(all_keys) > self.budget:
            # Keep the keys below the (budget+1)-th smallest, ties dropped together.
            order = np.argsort(all_keys, kind="stable")
            cut = all_keys[order[self.budget]]
            keep = order[: np.searchsorted(all_keys[order], cut, side="left")]
            all_keys, all_vals = all_keys[keep], all_vals[keep]
            self._limit = cut
        self._keys, self._vals = all_keys, all_vals

    # -- merging and results --------------------------------------------------------------

    def merge(self, other: ValueCounter) -> None:
        self.total += other.total
        if self.exact and other.exact:
            for v, c in other.counts.items():
                self.counts[v] = self.counts.get(v, 0) + c
            if len(self.counts) > self.capacity:
                self._overflow()
        else:
            if self.exact:
                self._overflow()
            if other.exact:
                self._sketch_add(other.counts.keys())
            else:
                assert other._kmv is not None
                self._sketch_merge(other._kmv)
        self._absorb(other._keys, other._vals, other._limit)

    def distinct(self) -> int:
        """Distinct values seen: exact while :attr:`exact` (and below ``sketch`` distinct
        values), else estimated."""
        if self.exact:
            return len(self.counts)
        assert self._kmv is not None
        if len(self._kmv) < self.sketch:
            return len(self._kmv)
        kth = float(self._kmv[self.sketch - 1]) / 2.0**64
        return round((self.sketch - 1) / kth)

    def estimates(self) -> dict[Any, int]:
        """Each sampled value's estimated count (all of them while nothing was left out of
        the sample; else those sampled more than once)."""
        seen = Counter(self._vals.tolist())
        if self._limit is None:
            return dict(seen)
        limit = int(self._limit)
        return {v: ((m << 65) + limit) // (2 * limit) for v, m in seen.items() if m > 1}

    def top(self, k: int = 10) -> list[tuple[Any, int]]:
        """The ``k`` most common values with their counts (ties: smaller value first); past
        ``capacity`` distinct values, estimated from the sample."""
        counts = self.counts if self.exact else self.estimates()
        try:
            return sorted(counts.items(), key=lambda vc: (-vc[1], vc[0]))[:k]
        except TypeError:  # values of mixed types
            return sorted(counts.items(), key=lambda vc: (-vc[1], repr(vc[0])))[:k]


def _hashes(values: Iterable[Hashable]) -> np.ndarray:
    """:func:`_hash64` of each value; int64 values (the counts of int64 features) at numpy
    speed, with the same hash wherever they are counted."""
    vals = list(values)
    ints = [type(v) is int and -(1 << 63) <= v < (1 << 63) for v in vals]
    if all(ints):
        return mix64(np.array(vals, np.int64).view(np.uint64))
    out = np.fromiter((_hash64(v) for v in vals), np.uint64, len(vals))
    if any(ints):
        at = np.flatnonzero(ints)
        out[at] = mix64(np.array([vals[i] for i in at.tolist()], np.int64).view(np.uint64))
    return out


def _as_array(values: Any) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values
    out = np.empty(len(values), object)
    out[:] = values
    return out


def _concat(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if not len(a):
        return b
    if not len(b):
        return a
    if a.dtype != b.dtype:
        return np.concatenate([a.astype(object), b.astype(object)])
    return np.concatenate([a, b])


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


def lower(a: Any, b: Any) -> Any:
    """``min(a, b)``; of equal values the same one whichever comes first (-0.0 below 0.0)."""
    if a == b:
        return a if math.copysign(1, a) <= math.copysign(1, b) else b
    return a if a < b else b


def upper(a: Any, b: Any) -> Any:
    """``max(a, b)``; of equal values the same one whichever comes first (0.0 above -0.0)."""
    if a == b:
        return a if math.copysign(1, a) >= math.copysign(1, b) else b
    return a if a > b else b


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
            if lo == 0 or hi == 0:  # which zero: the same whatever the split
                signs = np.signbit(fin[fin == 0])
                lo = -0.0 if lo == 0 and signs.any() else lo
                hi = 0.0 if hi == 0 and not signs.all() else hi
            self.total += _exact_sum(fin)
        else:
            fin = values
            lo, hi = int(values.min()), int(values.max())
            self.total += _exact_sum(values)
        self.finite += int(fin.size)
        self.min = lo if self.min is None else lower(self.min, lo)
        self.max = hi if self.max is None else upper(self.max, hi)
        self.histogram.add(fin)

    def merge(self, o: NumericStats) -> None:
        self.count += o.count
        self.finite += o.finite
        self.nan += o.nan
        self.posinf += o.posinf
        self.neginf += o.neginf
        self.total += o.total
        for name, pick in (("min", lower), ("max", upper)):
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
        if self.kept >= self.cap and len(self.parts) == 1 and records.min() > self.parts[0].max():
            self.count += n  # all above the kept ones: none of them would be kept
            return
        self.parts.append(np.asarray(records, np.int64))
        self.count += n
        self.kept += n
        self._trim()

    def shift(self, by: int) -> None:
        """Renumber: every record number plus ``by``."""
        if by:
            self.parts = [p + by for p in self.parts]

    def copy(self) -> RecordList:
        """An independent list (its arrays are shared: none is ever changed in place)."""
        out = RecordList(self.cap)
        out.count, out.kept, out.parts = self.count, self.kept, list(self.parts)
        return out

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

    def __getstate__(self) -> tuple[int, int, tuple[np.ndarray, ...]]:
        """Pickled small (a part of a job travels to the merge): runs of consecutive record
        numbers as ``(starts, lengths)`` when that is shorter."""
        kept = np.sort(self.array())
        if len(kept) > 8:
            breaks = np.flatnonzero(np.diff(kept) != 1) + 1
            if 2 * len(breaks) + 2 < len(kept):
                edges = np.concatenate([[0], breaks, [len(kept)]])
                return self.cap, self.count, (kept[edges[:-1]], np.diff(edges))
        return self.cap, self.count, (kept,)

    def __setstate__(self, state: tuple[int, int, tuple[np.ndarray, ...]]) -> None:
        self.cap, self.count, packed = state
        if len(packed) == 2:
            starts, lengths = packed
            firsts = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
            kept = firsts + np.arange(int(lengths.sum()), dtype=np.int64)
        else:
            (kept,) = packed
        self.parts = [kept] if len(kept) else []
        self.kept = len(kept)

    def tolist(self) -> list[int]:
        return sorted(int(x) for x in self.array())


# Bounded tables of keys (list lengths, picture sizes, label/text pairs): the ``cap`` smallest
# keys are kept, so a table merged from parts holds exactly what one pass would. Between
# trims a table may hold up to twice ``cap`` keys; ``cut`` is the largest key kept by the
# last trim (``None``: never trimmed), and a key above it is never taken again.


def admits(table: Mapping[Any, Any], key: Any, cut: Any) -> bool:
    """Whether ``key`` belongs in a bounded table (already there, or below the cut)."""
    return cut is None or key in table or key < cut


def settle(table: dict[Any, Any], cap: int, cut: Any, force: bool = False) -> tuple[Any, list[Any]]:
    """Trim ``table`` to its ``cap`` smallest keys when it holds more than twice that (or
    more than ``cap`` with ``force``): ``(new cut, values dropped)``."""
    if len(table) <= (cap if force else 2 * cap):
        return cut, []
    keys = sorted(table)
    return keys[cap - 1], [table.pop(k) for k in keys[cap:]]


def narrow(table: dict[Any, Any], cut: Any, other: Any) -> tuple[Any, list[Any]]:
    """After merging two tables: the lower of their cuts, and drop (returning their values)
    the keys above it."""
    if other is not None and (cut is None or other < cut):
        cut = other
    if cut is None:
        return cut, []
    return cut, [table.pop(k) for k in [k for k in table if k > cut]]


def smallest(table: Mapping[Any, Any], cap: int) -> dict[Any, Any]:
    """The ``cap`` smallest keys of a bounded table with their values."""
    if len(table) <= cap:
        return dict(table)
    return {k: table[k] for k in sorted(table)[:cap]}


# --------------------------------------------------------------------------------------------
