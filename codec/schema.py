"""Schema inference, drift and statistics over every record of a file or a shard set.

What is collected, per feature (an Example's features, a SequenceExample's context) and per
feature list (a SequenceExample's lists, one entry per step):

- the value types seen with record counts, how many records have the feature, list length
  min / mean / max and a count per length;
- numbers: count, min, max, mean, NaN / +Inf / -Inf counts, a histogram (streaming bins:
  64 equal bins whose width doubles when a value falls outside them, so counts are exact and
  the edges cover min..max) and, for int64, counts per value;
- bytes: distinct values and the most common ones (:class:`ValueCounter`: exact up to
  ``capacity`` distinct values, then Misra-Gries counts plus a KMV distinct estimate, so memory
  stays bounded), values sniffed as images by their magic number with their format, width x
  height read from the header (PNG IHDR, JPEG SOF, GIF, BMP; Pillow's lazy open otherwise) and
  the images whose header cannot be read or whose end marker is missing (undecodable);
- drift, with record numbers: a type that differs from the feature's majority type, a
  feature missing from some records, a list length that differs where most records agree.

Record numbers are global over the files given (the first record of the second file follows
the last of the first). Lists of record numbers are capped (:data:`RECORD_CAP`); the counts
beside them are exact.

Speed: Example payloads are walked with numpy, many records at a time (tags, varint lengths,
packed floats and varints are all vectorised). Any record that is not a plain, canonically
encoded Example (SequenceExamples, unpacked lists, repeated fields, unknown fields, raw
payloads) goes through :func:`codec.example.decode` instead; both routes feed the same
accumulator. Files with many records can be split over processes (``workers``).
"""

from __future__ import annotations

import bisect
import hashlib
import io
import math
import struct
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import crc32c as _crc32c
import numpy as np

from .dataset import TFRecordDataset
from .errors import CorruptRecordError
from .reader import TFRecordFile
from .values import is_text, sniff_image

__all__ = [
    "RECORD_CAP",
    "TYPE_NAMES",
    "FeatureListStats",
    "FeatureStats",
    "NumericStats",
    "Schema",
    "SchemaBuilder",
    "StreamingHistogram",
    "ValueCounter",
    "image_size",
    "infer_schema",
]

# Type codes used in the arrays; "none" is a Feature message with no list set.
TYPE_NAMES = ("none", "bytes", "float", "int64")
_NONE, _BYTES, _FLOAT, _INT64 = 0, 1, 2, 3
_TYPE_CODE = {n: i for i, n in enumerate(TYPE_NAMES)}

RECORD_CAP = 10_000  # record numbers kept per drift list
_LEN_RECORD_CAP = 1_000  # record numbers kept per distinct list length
_LEN_TRACKED = 64  # distinct list lengths whose records are kept
_TEXT_MAX = 256  # bytes values longer than this are not counted one by one
_IMAGE_SIZES_CAP = 10_000  # distinct (width, height) pairs kept
_CHUNK = 65_536  # records per vectorised batch
_MAX_ENTRIES = 4_096  # features per record walked with numpy; more go the exact route
_MAX_ITEMS = 256  # bytes values per list walked with numpy
_PARALLEL_MIN = 200_000  # records below which one process is faster than two
_LENGTH_DRIFT_SHARE = 0.8  # "most records" for list-length drift

ProgressFn = Callable[[int, int], None]


# --------------------------------------------------------------------------------------------
# Bounded counters


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


class StreamingHistogram:
    """Exact counts in ``bins`` equal bins that always cover every value added.

    The first batch sets the range to its min..max; a later value outside the range doubles
    the bin width (adjacent bins merge) and extends the range in its direction."""

    def __init__(self, bins: int = 64) -> None:
        self.bins = bins
        self.lo = 0.0
        self.width = 0.0
        self.counts = np.zeros(bins, np.int64)
        self.empty = True

    def add(self, values: np.ndarray, weights: np.ndarray | None = None) -> None:
        v = np.asarray(values, np.float64)
        if weights is not None:
            keep = np.isfinite(v)
            v, weights = v[keep], np.asarray(weights)[keep]
        else:
            v = v[np.isfinite(v)]
        if v.size == 0:
            return
        vmin, vmax = float(v.min()), float(v.max())
        if self.empty:
            self.empty = False
            self.lo = vmin
            span = vmax - vmin
            # Integers get whole-number bins when they fit; otherwise a hair above the span so
            # vmax lands in the last bin.
            self.width = span / self.bins * (1 + 1e-9) if span > 0 else 1.0
            if span > 0 and math.isinf(self.width):
                self.width = float(np.finfo(np.float64).max) / self.bins
        while vmin < self.lo or vmax >= self.lo + self.width * self.bins:
            self._grow(down=vmin < self.lo)
        idx = ((v - self.lo) / self.width).astype(np.int64)
        np.clip(idx, 0, self.bins - 1, out=idx)
        if weights is None:
            self.counts += np.bincount(idx, minlength=self.bins)
        else:
            np.add.at(self.counts, idx, np.asarray(weights, np.int64))

    def _grow(self, down: bool) -> None:
        half = self.counts.reshape(-1, 2).sum(axis=1)
        zeros = np.zeros(self.bins // 2, np.int64)
        span = self.width * self.bins
        if down:
            self.counts = np.concatenate([zeros, half])
            self.lo -= span
        else:
            self.counts = np.concatenate([half, zeros])
        self.width *= 2
        if math.isinf(self.width) or math.isinf(self.lo):  # pragma: no cover - float64 edge
            self.width = float(np.finfo(np.float64).max) / self.bins
            self.lo = -float(np.finfo(np.float64).max) / 2

    def merge(self, other: StreamingHistogram) -> None:
        if other.empty:
            return
        centers = other.lo + (np.arange(other.bins) + 0.5) * other.width
        nz = other.counts > 0
        self.add(centers[nz], other.counts[nz])

    def to_json(self) -> dict[str, list[float] | list[int]]:
        """``{"edges": [...], "counts": [...]}`` trimmed to the bins between the first and
        the last non-empty one (``len(edges) == len(counts) + 1``)."""
        if self.empty:
            return {"edges": [], "counts": []}
        nz = np.flatnonzero(self.counts)
        a, b = int(nz[0]), int(nz[-1]) + 1
        edges = self.lo + np.arange(a, b + 1) * self.width
        return {"edges": [float(e) for e in edges], "counts": self.counts[a:b].tolist()}


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
    histogram: StreamingHistogram = field(default_factory=StreamingHistogram)

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


class _Capped:
    """Record numbers in ascending chunks, keeping the first ``cap``; ``count`` is exact."""

    __slots__ = ("cap", "count", "parts")

    def __init__(self, cap: int = RECORD_CAP) -> None:
        self.cap = cap
        self.count = 0
        self.parts: list[np.ndarray] = []

    @property
    def kept(self) -> int:
        return sum(len(p) for p in self.parts)

    def add(self, records: np.ndarray) -> None:
        n = len(records)
        if not n:
            return
        room = self.cap - self.kept
        if room > 0:
            self.parts.append(np.asarray(records[:room], np.int64))
        self.count += n

    def merge(self, other: _Capped) -> None:
        for p in other.parts:
            room = self.cap - self.kept
            if room > 0:
                self.parts.append(p[:room])
        self.count += other.count

    def array(self) -> np.ndarray:
        if not self.parts:
            return np.empty(0, np.int64)
        return np.concatenate(self.parts)

    def tolist(self) -> list[int]:
        return sorted(int(x) for x in self.array())


# --------------------------------------------------------------------------------------------
# Images: sniff the magic number, read the size from the header


def _jpeg_size(b: bytes) -> tuple[int, int] | None:
    i, n = 2, len(b)
    while i + 4 <= n:
        if b[i] != 0xFF:
            return None
        m = b[i + 1]
        if m == 0xFF:  # fill byte
            i += 1
            continue
        if m in (0x01, 0xD8) or 0xD0 <= m <= 0xD7:
            i += 2
            continue
        (seg,) = struct.unpack_from(">H", b, i + 2)
        if m in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            if i + 9 > n:
                return None
            h, w = struct.unpack_from(">HH", b, i + 5)
            return w, h
        if m == 0xD9 or seg < 2:
            return None
        i += 2 + seg
    return None


def image_size(b: bytes) -> tuple[str, int, int] | None:
    """``(format, width, height)`` of an encoded image read from its header without decoding
    the pixels, or ``None`` when ``b`` is not an image or its header is unreadable."""
    magic = sniff_image(b)
    if magic is None:
        return None
    fmt = magic.format
    size: tuple[int, int] | None = None
    try:
        if fmt == "png":
            if b[12:16] == b"IHDR":
                w, h = struct.unpack_from(">II", b, 16)
                size = (w, h)
        elif fmt == "jpeg":
            size = _jpeg_size(b)
        elif fmt == "gif":
            size = struct.unpack_from("<HH", b, 6)
        elif fmt == "bmp":
            (dib,) = struct.unpack_from("<I", b, 14)
            if dib == 12:
                size = struct.unpack_from("<HH", b, 18)
            else:
                w, h = struct.unpack_from("<ii", b, 18)
                size = (w, abs(h))
        else:
            from PIL import Image

            with Image.open(io.BytesIO(b)) as im:  # lazy: reads the header only
                size = im.size
    except Exception:  # any header that cannot be read is "undecodable", not an error
        size = None
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return fmt, int(size[0]), int(size[1])


def _image_complete(fmt: str, b: bytes) -> bool:
    """The cheap end-of-data check: JPEG's EOI marker, PNG's IEND chunk."""
    if fmt == "jpeg":
        return b.rstrip(b"\x00").endswith(b"\xff\xd9")
    if fmt == "png":
        return b"IEND" in b[-32:]
    return True


def _image_decodes(b: bytes) -> bool:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(b)) as im:
            im.load()
        return True
    except Exception:
        return False


_IMAGE_FIRST = np.zeros(256, bool)
_IMAGE_FIRST[[0xFF, 0x89, ord("G"), ord("B"), ord("R"), ord("I"), ord("M")]] = True


# --------------------------------------------------------------------------------------------
# Per-feature accumulators


class FeatureStats:
    """Everything collected about one feature (or about the steps of one feature list)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.types = np.zeros(len(TYPE_NAMES), np.int64)  # entries (records) per type
        self.present = 0
        self.len_min: int | None = None
        self.len_max: int | None = None
        self.len_sum = 0
        self.len_counts: dict[int, int] = {}
        self.len_records: dict[int, _Capped] = {}
        self.type_records = [_Capped() for _ in TYPE_NAMES]
        self.missing = _Capped()
        self.floats = NumericStats()
        self.ints = NumericStats()
        self.int_values = ValueCounter(capacity=1_000)
        self.values = ValueCounter()
        self.long_values = 0
        self.text_values = 0
        self.binary_values = 0
        self.image_formats: Counter[str] = Counter()
        self.image_sizes: Counter[tuple[int, int]] = Counter()
        self.image_sizes_other = 0
        self.undecodable = _Capped()

    # -- accumulate ---------------------------------------------------------------------

    def add_entries(self, rec: np.ndarray, kind: np.ndarray, length: np.ndarray) -> None:
        """One entry per (record, feature) for plain features; ``rec`` ascending."""
        if not len(rec):
            return
        self.present += len(rec)
        self.types += np.bincount(kind, minlength=len(TYPE_NAMES))
        for t in np.unique(kind):
            self.type_records[int(t)].add(rec[kind == t])
        self._lengths(rec, length)

    def _lengths(self, rec: np.ndarray, length: np.ndarray) -> None:
        lo, hi = int(length.min()), int(length.max())
        self.len_min = lo if self.len_min is None else min(self.len_min, lo)
        self.len_max = hi if self.len_max is None else max(self.len_max, hi)
        self.len_sum += int(length.sum())
        if lo == hi:
            uniq, counts = np.array([lo]), np.array([len(length)])
        else:
            uniq, counts = np.unique(length, return_counts=True)
        for u, c in zip(uniq.tolist(), counts.tolist()):
            self.len_counts[u] = self.len_counts.get(u, 0) + c
            capped = self.len_records.get(u)
            if capped is None:
                if len(self.len_records) >= _LEN_TRACKED:
                    continue
                capped = self.len_records[u] = _Capped(_LEN_RECORD_CAP)
            if capped.kept < capped.cap:
                capped.add(rec if lo == hi else rec[length == u])
            else:
                capped.count += c

    def add_floats(self, values: np.ndarray) -> None:
        self.floats.add(values)

    def add_ints(self, values: np.ndarray) -> None:
        if not values.size:
            return
        self.ints.add(values)
        uniq, counts = np.unique(values, return_counts=True)
        self.int_values.update(dict(zip(uniq.tolist(), counts.tolist())))

    def add_bytes(
        self,
        buf: bytes,
        starts: np.ndarray,
        lengths: np.ndarray,
        owners: np.ndarray,
        decode_images: bool = False,
    ) -> None:
        """Bytes values ``buf[s:s+n]``; ``owners`` are their record numbers."""
        if not len(starts):
            return
        if buf:
            first = np.frombuffer(buf, np.uint8)[np.minimum(starts, len(buf) - 1)]
        else:
            first = np.zeros(len(starts), np.uint8)
        cand = (lengths >= 8) & _IMAGE_FIRST[first]
        small = lengths <= _TEXT_MAX
        plain = small & ~cand
        if plain.all():
            s_l, n_l = starts.tolist(), lengths.tolist()
            self._count_plain(Counter([buf[s : s + n] for s, n in zip(s_l, n_l)]))
            return
        idx = np.flatnonzero(plain)
        s_l, n_l = starts[idx].tolist(), lengths[idx].tolist()
        self._count_plain(Counter([buf[s : s + n] for s, n in zip(s_l, n_l)]))
        others: Counter[bytes] = Counter()
        for j in np.flatnonzero(~plain).tolist():
            s, n = int(starts[j]), int(lengths[j])
            v = buf[s : s + n]
            if cand[j] and self._image(v, int(owners[j]), decode_images):
                continue
            if n <= _TEXT_MAX:
                others[v] += 1
            else:
                self.long_values += 1
                if is_text(v[:_TEXT_MAX]):
                    self.text_values += 1
                else:
                    self.binary_values += 1
        self._count_plain(others)

    def _count_plain(self, counts: Counter[bytes]) -> None:
        if not counts:
            return
        for v, c in counts.items():
            if is_text(v):
                self.text_values += c
            else:
                self.binary_values += c
        self.values.update(counts)

    def _image(self, v: bytes, record: int, decode_images: bool) -> bool:
        magic = sniff_image(v)
        if magic is None:
            return False
        self.image_formats[magic.format] += 1
        found = image_size(v)
        ok = found is not None and _image_complete(magic.format, v)
        if ok and decode_images:
            ok = _image_decodes(v)
        if not ok:
            self.undecodable.add(np.array([record], np.int64))
        if found is not None:
            wh = (found[1], found[2])
            if wh in self.image_sizes or len(self.image_sizes) < _IMAGE_SIZES_CAP:
                self.image_sizes[wh] += 1
            else:
                self.image_sizes_other += 1
        return True

    def merge(self, o: FeatureStats) -> None:
        self.types += o.types
        self.present += o.present
        for name, pick in (("len_min", min), ("len_max", max)):
            mine, theirs = getattr(self, name), getattr(o, name)
            if theirs is not None:
                setattr(self, name, theirs if mine is None else pick(mine, theirs))
        self.len_sum += o.len_sum
        for k, c in o.len_counts.items():
            self.len_counts[k] = self.len_counts.get(k, 0) + c
        for k, capped in o.len_records.items():
            if k in self.len_records:
                self.len_records[k].merge(capped)
            elif len(self.len_records) < _LEN_TRACKED:
                self.len_records[k] = capped
        for mine_c, theirs_c in zip(self.type_records, o.type_records):
            mine_c.merge(theirs_c)
        self.missing.merge(o.missing)
        self.floats.merge(o.floats)
        self.ints.merge(o.ints)
        self.int_values.merge(o.int_values)
        self.values.merge(o.values)
        self.long_values += o.long_values
        self.text_values += o.text_values
        self.binary_values += o.binary_values
        self.image_formats.update(o.image_formats)
        for wh, c in o.image_sizes.items():
            if wh in self.image_sizes or len(self.image_sizes) < _IMAGE_SIZES_CAP:
                self.image_sizes[wh] += c
            else:
                self.image_sizes_other += c
        self.image_sizes_other += o.image_sizes_other
        self.undecodable.merge(o.undecodable)

    # -- results ------------------------------------------------------------------------

    def type_counts(self) -> dict[str, int]:
        return {TYPE_NAMES[i]: int(c) for i, c in enumerate(self.types) if c}

    def majority_type(self) -> str | None:
        if not self.types.any():
            return None
        # Ties go to the type seen first in TYPE_NAMES order reversed (int64, float, bytes).
        order = sorted(range(len(TYPE_NAMES)), key=lambda i: (-self.types[i], -i))
        return TYPE_NAMES[order[0]]

    def type_conflicts(self) -> list[int]:
        """Records whose type differs from the majority type (first :data:`RECORD_CAP`)."""
        major = self.majority_type()
        if major is None:
            return []
        parts = [c.array() for i, c in enumerate(self.type_records) if TYPE_NAMES[i] != major]
        parts = [p for p in parts if len(p)]
        if not parts:
            return []
        return [int(x) for x in np.unique(np.concatenate(parts))[:RECORD_CAP]]

    def length_drift(self) -> dict[str, Any] | None:
        """When most records (80%) share one list length and some do not: that length and
        the records whose length differs."""
        total = sum(self.len_counts.values())
        if len(self.len_counts) < 2 or not total:
            return None
        usual, n = max(self.len_counts.items(), key=lambda kv: (kv[1], -kv[0]))
        if n < _LENGTH_DRIFT_SHARE * total:
            return None
        parts = [c.array() for k, c in self.len_records.items() if k != usual]
        recs = np.unique(np.concatenate(parts)) if parts else np.empty(0, np.int64)
        return {
            "usual_len": usual,
            "count": total - n,
            "records": [int(x) for x in recs[:RECORD_CAP]],
        }

    def numeric(self) -> NumericStats | None:
        if not self.floats.count and not self.ints.count:
            return None
        if not self.floats.count:
            return self.ints
        if not self.ints.count:
            return self.floats
        out = NumericStats()  # both types (drift): the histogram is merged by bin centres
        out.merge(self.ints)
        out.merge(self.floats)
        return out

    def to_json(self, top: int = 10) -> dict[str, Any]:
        d: dict[str, Any] = {
            "types": self.type_counts(),
            "present": self.present,
            "min_len": self.len_min,
            "max_len": self.len_max,
            "mean_len": self.len_sum / self.present if self.present else None,
            "values": self.len_sum,
        }
        num = self.numeric()
        if num is not None:
            d["numeric"] = num.to_json()
        if self.int_values.total:
            d["int_values"] = {
                "distinct": self.int_values.distinct(),
                "exact": self.int_values.exact,
                "top": [[v, c] for v, c in self.int_values.top(top)],
            }
        if self.values.total or self.long_values:
            d["bytes"] = {
                "text": self.text_values,
                "binary": self.binary_values,
                "long": self.long_values,
                "distinct": self.values.distinct(),
                "exact": self.values.exact,
                "top": [[_show_bytes(v), c] for v, c in self.values.top(top)],
            }
        if self.image_formats:
            d["images"] = {
                "count": sum(self.image_formats.values()),
                "formats": dict(self.image_formats),
                "sizes": [[w, h, c] for (w, h), c in self.image_sizes.most_common(top)],
                "undecodable": self.undecodable.count,
                "undecodable_records": self.undecodable.tolist(),
            }
        return d


def _show_bytes(v: Any) -> str:
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return "0x" + v.hex()
    return str(v)


class FeatureListStats:
    """One feature list of SequenceExamples: records having it, steps per record, and the
    steps themselves in :attr:`steps` (types, lengths and values counted per step)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.present = 0
        self.steps_min: int | None = None
        self.steps_max: int | None = None
        self.steps_sum = 0
        self.missing = _Capped()
        self.steps = FeatureStats(name)

    def add_steps(self, count: int) -> None:
        self.present += 1
        self.steps_sum += count
        self.steps_min = count if self.steps_min is None else min(self.steps_min, count)
        self.steps_max = count if self.steps_max is None else max(self.steps_max, count)

    def merge(self, o: FeatureListStats) -> None:
        self.present += o.present
        self.steps_sum += o.steps_sum
        for name, pick in (("steps_min", min), ("steps_max", max)):
            mine, theirs = getattr(self, name), getattr(o, name)
            if theirs is not None:
                setattr(self, name, theirs if mine is None else pick(mine, theirs))
        self.missing.merge(o.missing)
        self.steps.merge(o.steps)

    def to_json(self, top: int = 10) -> dict[str, Any]:
        inner = self.steps.to_json(top)
        inner.pop("present", None)
        d: dict[str, Any] = {
            "present": self.present,
            "min_steps": self.steps_min,
            "max_steps": self.steps_max,
            "mean_steps": self.steps_sum / self.present if self.present else None,
            "steps": self.steps.present,
        }
        d.update(inner)
        conflicts = self.steps.type_conflicts()
        if conflicts:
            d["type_conflicts"] = conflicts
        if self.missing.count:
            d["missing"] = self.missing.count
            d["missing_records"] = self.missing.tolist()
        return d


# --------------------------------------------------------------------------------------------
# Columns: what one batch of records contributes, whichever route decoded it


@dataclass
class _Columns:
    records: np.ndarray  # record numbers decoded as Example/SequenceExample, ascending
    names: list[str]  # feature names; fid indexes this list
    rec: np.ndarray  # per entry: record number
    fid: np.ndarray  # per entry: feature id
    kind: np.ndarray  # per entry: type code
    length: np.ndarray  # per entry: number of values
    floats: np.ndarray  # float32 values
    float_owner: np.ndarray  # entry of each float
    ints: np.ndarray  # int64 values
    int_owner: np.ndarray
    buf: bytes  # bytes values live in buf[start:start+len]
    b_start: np.ndarray
    b_len: np.ndarray
    b_owner: np.ndarray


def _empty_i64() -> np.ndarray:
    return np.empty(0, np.int64)


class _ColumnBuilder:
    """Builds :class:`_Columns` from decoded :class:`codec.example.Feature` values."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.ids: dict[str, int] = {}
        self.records: list[int] = []
        self.rec: list[int] = []
        self.fid: list[int] = []
        self.kind: list[int] = []
        self.length: list[int] = []
        self.floats: list[float] = []
        self.float_owner: list[int] = []
        self.ints: list[int] = []
        self.int_owner: list[int] = []
        self.bvals: list[bytes] = []
        self.b_owner: list[int] = []

    def add(self, record: int, name: str, feature: Any) -> None:
        f = self.ids.get(name)
        if f is None:
            f = self.ids[name] = len(self.names)
            self.names.append(name)
        e = len(self.rec)
        self.rec.append(record)
        self.fid.append(f)
        t = _TYPE_CODE.get(feature.type, _NONE)
        values = feature.values
        self.kind.append(t)
        self.length.append(len(values))
        if t == _FLOAT:
            self.floats.extend(values)
            self.float_owner.extend([e] * len(values))
        elif t == _INT64:
            self.ints.extend(values)
            self.int_owner.extend([e] * len(values))
        elif t == _BYTES:
            self.bvals.extend(values)
            self.b_owner.extend([e] * len(values))

    def build(self) -> _Columns:
        lens = np.fromiter(map(len, self.bvals), np.int64, len(self.bvals))
        starts = np.cumsum(lens) - lens if len(lens) else _empty_i64()
        return _Columns(
            records=np.asarray(self.records, np.int64),
            names=self.names,
            rec=np.asarray(self.rec, np.int64),
            fid=np.asarray(self.fid, np.int64),
            kind=np.asarray(self.kind, np.int64),
            length=np.asarray(self.length, np.int64),
            floats=np.asarray(self.floats, np.float32),
            float_owner=np.asarray(self.float_owner, np.int64),
            ints=np.asarray(self.ints, np.int64),
            int_owner=np.asarray(self.int_owner, np.int64),
            buf=b"".join(self.bvals),
            b_start=starts,
            b_len=lens,
            b_owner=np.asarray(self.b_owner, np.int64),
        )


# --------------------------------------------------------------------------------------------
# The numpy walk over Example payloads


def _varint(b: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Varints (up to 5 bytes: lengths) at positions ``p``: ``(values, sizes)``; size 0 marks
    a varint longer than 5 bytes (not a plausible length)."""
    val = b[p].astype(np.int64)
    size = np.ones(len(p), np.int64)
    more = val >= 0x80
    if not more.any():
        return val, size
    val &= 0x7F
    idx = np.flatnonzero(more)
    for k in range(1, 5):
        byte = b[p[idx] + k].astype(np.int64)
        val[idx] |= (byte & 0x7F) << (7 * k)
        size[idx] += 1
        cont = byte >= 0x80
        idx = idx[cont]
        if not idx.size:
            return val, size
    size[idx] = 0
    return val, size


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, s + n)`` for each pair."""
    total = int(lengths.sum())
    if not total:
        return _empty_i64()
    out_starts = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - out_starts, lengths)


def _decode_varints(data: np.ndarray) -> np.ndarray:
    """Every varint in ``data`` (complete varints back to back) as int64 (two's complement)."""
    if not data.size:
        return _empty_i64()
    ends = data < 0x80
    group: np.ndarray = np.cumsum(ends) - ends  # value number of each byte
    starts = np.flatnonzero(np.concatenate([[True], ends[:-1]]))
    pos = np.arange(data.size) - starts[group]
    if pos.max() > 9:
        raise ValueError("varint too long")
    contrib = (data.astype(np.uint64) & np.uint64(0x7F)) << (pos.astype(np.uint64) * np.uint64(7))
    vals = np.bitwise_or.reduceat(contrib, starts)
    return vals.view(np.int64)


def _walk_examples(
    b: np.ndarray, rs: np.ndarray, re_: np.ndarray, keys: _KeyTable
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Walk Example payloads ``b[rs[i]:re_[i]]`` (``b`` padded with 16 zero bytes).

    Returns ``bad`` (records that are not plain canonical Examples) and per-entry arrays for
    the others: ``r`` (position in rs), ``fid``, ``kind``, ``length``, value regions."""
    n = len(rs)
    bad = np.zeros(n, bool)
    cur = rs.copy()
    end = rs.copy()
    nonempty = np.flatnonzero(re_ > rs)
    if nonempty.size:
        p = rs[nonempty]
        tag = b[p]
        ln, sz = _varint(b, p + 1)
        fs = p + 1 + sz
        fe = fs + ln
        ok = (tag == 0x0A) & (sz > 0) & (fe == re_[nonempty])
        bad[nonempty[~ok]] = True
        good = nonempty[ok]
        cur[good] = fs[ok]
        end[good] = fe[ok]
    # Entries, one per iteration for every record that still has some.
    e_r: list[np.ndarray] = []
    e_s: list[np.ndarray] = []
    e_e: list[np.ndarray] = []
    active = np.flatnonzero(cur < end)
    it = 0
    while active.size:
        it += 1
        if it > _MAX_ENTRIES:
            bad[active] = True
            break
        p = cur[active]
        ln, sz = _varint(b, p + 1)
        es = p + 1 + sz
        ee = es + ln
        ok = (b[p] == 0x0A) & (sz > 0) & (ee <= end[active])
        bad[active[~ok]] = True
        good = active[ok]
        e_r.append(good)
        e_s.append(es[ok])
        e_e.append(ee[ok])
        cur[good] = ee[ok]
        active = good[cur[good] < end[good]]
    if e_r:
        r = np.concatenate(e_r)
        es = np.concatenate(e_s)
        ee = np.concatenate(e_e)
        order = np.argsort(r, kind="stable")
        r, es, ee = r[order], es[order], ee[order]
    else:
        r = es = ee = _empty_i64()
    # Entry: 0A klen key 12 vlen value, exactly.
    klen, ksz = _varint(b, es + 1)
    ks = es + 1 + ksz
    ke = ks + klen
    ke_safe = np.minimum(ke, len(b) - 16)
    vlen, vsz = _varint(b, ke_safe + 1)
    vs = ke_safe + 1 + vsz
    ve = vs + vlen
    ok = (b[es] == 0x0A) & (ksz > 0) & (ke < ee) & (b[ke_safe] == 0x12) & (vsz > 0) & (ve == ee)
    bad[r[~ok]] = True
    # Feature: empty, or tag (0A bytes / 12 float / 1A int64) L1 List, exactly.
    vs_safe = np.minimum(vs, len(b) - 16)
    tag = b[vs_safe].astype(np.int64)
    nonempty = vs < ve
    kind = np.where(nonempty, np.select([tag == 0x0A, tag == 0x12, tag == 0x1A], [1, 2, 3], 9), 0)
    l1, sz1 = _varint(b, vs_safe + 1)
    ls = vs + 1 + sz1
    le = ls + l1
    ok = ~nonempty | ((kind != 9) & (sz1 > 0) & (le == ve))
    bad[r[~ok]] = True
    length = np.zeros(len(r), np.int64)
    # Packed numbers: empty List, or 0A L2 data, exactly.
    num = nonempty & ((kind == 2) | (kind == 3)) & (ls < le)
    ni = np.flatnonzero(num)
    ds = np.zeros(len(r), np.int64)
    de = np.zeros(len(r), np.int64)
    if ni.size:
        p = np.minimum(ls[ni], len(b) - 16)
        l2, sz2 = _varint(b, p + 1)
        d0 = p + 1 + sz2
        d1 = d0 + l2
        okn = (b[p] == 0x0A) & (sz2 > 0) & (d1 == le[ni])
        isf = kind[ni] == 2
        okn &= ~isf | (l2 % 4 == 0)
        d1c = np.minimum(d1, len(b) - 16)
        okn &= isf | (l2 == 0) | (b[np.maximum(d1c - 1, 0)] < 0x80)
        bad[r[ni[~okn]]] = True
        ds[ni], de[ni] = d0, d1c
        length[ni[isf]] = l2[isf] // 4
    # Bytes lists: items 0A len data, walked together.
    bi = np.flatnonzero(nonempty & (kind == 1))
    it_e: list[np.ndarray] = []
    it_s: list[np.ndarray] = []
    it_l: list[np.ndarray] = []
    if bi.size:
        cur2 = ls[bi].copy()
        end2 = le[bi]
        act = np.flatnonzero(cur2 < end2)
        steps = 0
        while act.size:
            steps += 1
            if steps > _MAX_ITEMS:
                bad[r[bi[act]]] = True
                break
            p = np.minimum(cur2[act], len(b) - 16)
            ln, sz = _varint(b, p + 1)
            s0 = p + 1 + sz
            s1 = s0 + ln
            oki = (b[p] == 0x0A) & (sz > 0) & (s1 <= end2[act])
            bad[r[bi[act[~oki]]]] = True
            g = act[oki]
            it_e.append(bi[g])
            it_s.append(s0[oki])
            it_l.append(ln[oki])
            cur2[g] = s1[oki]
            act = g[cur2[g] < end2[g]]
    if it_e:
        item_e = np.concatenate(it_e)
        item_s = np.concatenate(it_s)
        item_l = np.concatenate(it_l)
        order = np.argsort(item_e, kind="stable")
        item_e, item_s, item_l = item_e[order], item_s[order], item_l[order]
        length += np.bincount(item_e, minlength=len(r))
    else:
        item_e = item_s = item_l = _empty_i64()
    # Int64 counts: bytes ending a varint inside each data region.
    ii = np.flatnonzero(num & (kind == 3) & (de > ds))
    if ii.size:
        ends = (b[_ranges(ds[ii], de[ii] - ds[ii])] < 0x80).astype(np.int64)
        length[ii] = np.add.reduceat(ends, np.cumsum(de[ii] - ds[ii]) - (de[ii] - ds[ii]))
    fid = keys.lookup(b, ks, klen, bad, r)
    return bad, {
        "r": r,
        "fid": fid,
        "kind": kind,
        "length": length,
        "ds": ds,
        "de": de,
        "item_e": item_e,
        "item_s": item_s,
        "item_l": item_l,
    }


class _KeyTable:
    """Feature names to ids, matching key bytes in the buffer with numpy."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.ids: dict[bytes, int] = {}
        self.by_len: dict[int, list[tuple[np.ndarray, int]]] = {}

    def _add(self, key: bytes) -> int | None:
        try:
            name = key.decode("utf-8")
        except UnicodeDecodeError:
            return None
        fid = self.ids[key] = len(self.names)
        self.names.append(name)
        self.by_len.setdefault(len(key), []).append((np.frombuffer(key, np.uint8), fid))
        return fid

    def lookup(
        self, b: np.ndarray, ks: np.ndarray, klen: np.ndarray, bad: np.ndarray, r: np.ndarray
    ) -> np.ndarray:
        fid = np.full(len(ks), -1, np.int64)
        live = np.flatnonzero(~bad[r]) if len(r) else _empty_i64()
        if not live.size:
            return fid
        for L in np.unique(klen[live]).tolist():
            cand = live[klen[live] == L]
            if L == 0:
                empty = self.ids.get(b"")
                fid[cand] = empty if empty is not None else self._add(b"") or 0
                continue
            rows = b[ks[cand][:, None] + np.arange(L)]
            unresolved = np.ones(len(cand), bool)
            for key, f in self.by_len.get(L, []):
                m = unresolved & (rows == key).all(axis=1)
                fid[cand[m]] = f
                unresolved &= ~m
            if unresolved.any():
                rest = cand[unresolved]
                void = np.ascontiguousarray(rows[unresolved]).view(np.dtype((np.void, L)))
                uniq, inv = np.unique(void.ravel(), return_inverse=True)
                for u, key_v in enumerate(uniq):
                    kb = key_v.tobytes()
                    f2 = self.ids.get(kb)
                    if f2 is None:
                        f2 = self._add(kb)
                    if f2 is None:  # not UTF-8: the exact route decides what it is
                        bad[r[rest[inv.ravel() == u]]] = True
                        continue
                    fid[rest[inv.ravel() == u]] = f2
        return fid


def _walk_columns(
    b: np.ndarray, rs: np.ndarray, re_: np.ndarray, numbers: np.ndarray, keys: _KeyTable
) -> tuple[_Columns, np.ndarray]:
    """Columns of the regular records and the record positions (into ``rs``) that are not."""
    bad, w = _walk_examples(b, rs, re_, keys)
    r = w["r"]
    # Repeated keys in one record: the last wins in a map; leave those to the exact route.
    if len(r) > 1:
        width = len(keys.names) + 1
        srt = np.sort(r * width + w["fid"])
        dup = srt[1:][srt[1:] == srt[:-1]]
        if dup.size:
            bad[np.unique(dup // width)] = True
    keep = ~bad[r] if len(r) else np.zeros(0, bool)
    entry_ids = np.flatnonzero(keep)
    remap = np.full(len(r), -1, np.int64)
    remap[entry_ids] = np.arange(entry_ids.size)
    kind = w["kind"][entry_ids]
    # Float values.
    fe = entry_ids[kind == _FLOAT]
    ds, de = w["ds"][fe], w["de"][fe]
    fidx = _ranges(ds, de - ds)
    floats = b[fidx].view("<f4") if fidx.size else np.empty(0, np.float32)
    float_owner = np.repeat(remap[fe], (de - ds) // 4)
    # Int values.
    ie = entry_ids[kind == _INT64]
    ds, de = w["ds"][ie], w["de"][ie]
    iidx = _ranges(ds, de - ds)
    try:
        ints = _decode_varints(b[iidx])
    except ValueError:  # an over-long varint: let the exact route judge every record
        bad[:] = True
        return _walk_columns_nothing(numbers, keys), np.arange(len(rs))
    int_owner = np.repeat(remap[ie], w["length"][ie])
    # Bytes values.
    item_e = w["item_e"]
    keep_i = keep[item_e] if item_e.size else np.zeros(0, bool)
    cols = _Columns(
        records=numbers[~bad],
        names=keys.names,
        rec=numbers[r[entry_ids]],
        fid=w["fid"][entry_ids],
        kind=kind,
        length=w["length"][entry_ids],
        floats=floats,
        float_owner=float_owner,
        ints=ints,
        int_owner=int_owner,
        buf=b.tobytes(),
        b_start=w["item_s"][keep_i],
        b_len=w["item_l"][keep_i],
        b_owner=remap[item_e[keep_i]],
    )
    return cols, np.flatnonzero(bad)


def _walk_columns_nothing(numbers: np.ndarray, keys: _KeyTable) -> _Columns:
    e = _empty_i64()
    return _Columns(
        np.empty(0, np.int64),
        keys.names,
        e,
        e,
        e,
        e,
        np.empty(0, np.float32),
        e,
        e,
        e,
        b"",
        e,
        e,
        e,
    )


# --------------------------------------------------------------------------------------------
# The accumulator


class SchemaBuilder:
    """Accumulates a :class:`Schema` from records fed in ascending record order.

    Feed decoded records with :meth:`add_record`, raw payloads with :meth:`add_payloads`
    (Examples take the vectorised route), damaged records with :meth:`add_damaged`."""

    def __init__(self, *, decode_images: bool = False) -> None:
        self.decode_images = decode_images
        self.records = 0
        self.kinds: Counter[str] = Counter()
        self.damaged = _Capped()
        self.features: dict[str, FeatureStats] = {}
        self.feature_lists: dict[str, FeatureListStats] = {}
        self.first_records = _Capped()  # records with features, for "missing" bookkeeping
        self.first_sequences = _Capped()
        self._keys = _KeyTable()

    # -- input ----------------------------------------------------------------------------

    def add_damaged(self, index: int) -> None:
        self.damaged.add(np.array([index], np.int64))

    def add_record(self, index: int, record: Any) -> None:
        """One decoded :class:`codec.example.Record` (slow route: prefer batches)."""
        self.add_records([(index, record)])

    def add_records(self, items: Iterable[tuple[int, Any]]) -> None:
        """Decoded records with their numbers, ascending."""
        cb = _ColumnBuilder()
        lists: list[tuple[int, dict[str, list[Any]]]] = []
        for index, rec in items:
            self.records += 1
            self.kinds[rec.kind] += 1
            if rec.kind == "raw":
                continue
            cb.records.append(index)
            for name, feat in rec.features.items():
                cb.add(index, name, feat)
            if rec.kind == "sequence_example":
                lists.append((index, rec.feature_lists))
        self._accumulate(cb.build())
        if lists:
            self._add_lists(lists)

    def add_payloads(self, payloads: Sequence[bytes], numbers: Sequence[int] | np.ndarray) -> None:
        """Intact payloads with their record numbers (ascending)."""
        lens = np.fromiter(map(len, payloads), np.int64, len(payloads))
        starts = np.cumsum(lens) - lens
        buf = b"".join(payloads) + bytes(16)
        self._add_buffer(np.frombuffer(buf, np.uint8), starts, starts + lens, numbers)

    def _add_buffer(
        self, b: np.ndarray, rs: np.ndarray, re_: np.ndarray, numbers: Sequence[int] | np.ndarray
    ) -> None:
        numbers = np.asarray(numbers, np.int64)
        cols, odd = _walk_columns(b, rs, re_, numbers, self._keys)
        n_fast = len(rs) - len(odd)
        self.records += n_fast
        if n_fast:
            self.kinds["example"] += n_fast
        self._accumulate(cols)
        if odd.size:
            from .example import decode

            payloads = [b[int(rs[i]) : int(re_[i])].tobytes() for i in odd]
            self.add_records((int(numbers[i]), decode(p)) for i, p in zip(odd, payloads))

    # -- accumulation ---------------------------------------------------------------------

    def _feature(self, name: str) -> FeatureStats:
        fs = self.features.get(name)
        if fs is None:
            fs = self.features[name] = FeatureStats(name)
            # Every record seen before this feature appeared lacks it.
            fs.missing.merge(self.first_records)
        return fs

    def _accumulate(self, c: _Columns) -> None:
        if not len(c.records):
            return
        order_f = np.argsort(c.fid, kind="stable") if len(c.fid) else c.fid
        fids, starts = np.unique(c.fid[order_f], return_index=True)
        bounds = [*starts.tolist(), len(order_f)]
        seen: set[str] = set()
        f_fid = c.fid[c.float_owner] if len(c.float_owner) else c.float_owner
        i_fid = c.fid[c.int_owner] if len(c.int_owner) else c.int_owner
        b_fid = c.fid[c.b_owner] if len(c.b_owner) else c.b_owner
        for j, f in enumerate(fids.tolist()):
            name = c.names[f]
            seen.add(name)
            fs = self._feature(name)
            sel = order_f[bounds[j] : bounds[j + 1]]
            rec = c.rec[sel]
            fs.add_entries(rec, c.kind[sel], c.length[sel])
            if len(rec) < len(c.records):
                fs.missing.add(np.setdiff1d(c.records, rec, assume_unique=True))
            if len(f_fid):
                fs.add_floats(c.floats[f_fid == f] if len(fids) > 1 else c.floats)
            if len(i_fid):
                fs.add_ints(c.ints[i_fid == f] if len(fids) > 1 else c.ints)
            if len(b_fid):
                m = b_fid == f
                if m.any():
                    fs.add_bytes(
                        c.buf,
                        c.b_start[m],
                        c.b_len[m],
                        c.rec[c.b_owner[m]],
                        self.decode_images,
                    )
        for name, fs in self.features.items():
            if name not in seen:
                fs.missing.add(c.records)
        self.first_records.add(c.records)

    def _add_lists(self, lists: list[tuple[int, dict[str, list[Any]]]]) -> None:
        cb = _ColumnBuilder()
        seqs = np.array([i for i, _ in lists], np.int64)
        seen: dict[str, list[int]] = {}
        for index, fl in lists:
            for name, steps in fl.items():
                st = self.feature_lists.get(name)
                if st is None:
                    st = self.feature_lists[name] = FeatureListStats(name)
                    st.missing.merge(self.first_sequences)
                st.add_steps(len(steps))
                seen.setdefault(name, []).append(index)
                for step in steps:
                    cb.add(index, name, step)
        for name, st in self.feature_lists.items():
            have = np.array(seen.get(name, []), np.int64)
            if len(have) < len(seqs):
                st.missing.add(np.setdiff1d(seqs, have))
        self.first_sequences.add(seqs)
        c = cb.build()
        if not len(c.rec):
            return
        for f, name in enumerate(c.names):
            st = self.feature_lists[name]
            m = c.fid == f
            if not m.any():
                continue
            st.steps.types += np.bincount(c.kind[m], minlength=len(TYPE_NAMES))
            st.steps.present += int(m.sum())
            for t in np.unique(c.kind[m]):
                st.steps.type_records[int(t)].add(np.unique(c.rec[m & (c.kind == t)]))
            st.steps._lengths(c.rec[m], c.length[m])
            if len(c.float_owner):
                st.steps.add_floats(c.floats[c.fid[c.float_owner] == f])
            if len(c.int_owner):
                st.steps.add_ints(c.ints[c.fid[c.int_owner] == f])
            if len(c.b_owner):
                mb = c.fid[c.b_owner] == f
                if mb.any():
                    st.steps.add_bytes(
                        c.buf, c.b_start[mb], c.b_len[mb], c.rec[c.b_owner[mb]], self.decode_images
                    )

    # -- merging and results --------------------------------------------------------------

    def merge(self, later: SchemaBuilder) -> None:
        """Fold in a builder that saw later records (e.g. the next range, another process)."""
        for name, fs in self.features.items():
            if name not in later.features:
                fs.missing.merge(later.first_records)
        for name, fs in later.features.items():
            mine = self.features.get(name)
            if mine is None:
                mine = self.features[name] = FeatureStats(name)
                mine.missing.merge(self.first_records)
            mine.merge(fs)
        for name, ls in self.feature_lists.items():
            if name not in later.feature_lists:
                ls.missing.merge(later.first_sequences)
        for name, ls in later.feature_lists.items():
            mine_l = self.feature_lists.get(name)
            if mine_l is None:
                mine_l = self.feature_lists[name] = FeatureListStats(name)
                mine_l.missing.merge(self.first_sequences)
            mine_l.merge(ls)
        self.records += later.records
        self.kinds.update(later.kinds)
        self.damaged.merge(later.damaged)
        self.first_records.merge(later.first_records)
        self.first_sequences.merge(later.first_sequences)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_keys"] = None  # rebuilt on demand; not needed once accumulated
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._keys = _KeyTable()

    def result(self, **info: Any) -> Schema:
        return Schema(self, **info)


# --------------------------------------------------------------------------------------------
# The result


@dataclass
class ShardInfo:
    path: str
    first_record: int
    records: int


class Schema:
    """An inferred schema with drift and statistics. :meth:`to_json` is what the CLI prints;
    :meth:`statistics` the chart data; :attr:`shards` the same per file of a dataset."""

    def __init__(
        self,
        builder: SchemaBuilder,
        *,
        total: int | None = None,
        sample: int | None = None,
        files: Sequence[ShardInfo] = (),
        shards: Mapping[str, Schema] | None = None,
        problems: int = 0,
    ) -> None:
        self.builder = builder
        self.features = builder.features
        self.feature_lists = builder.feature_lists
        self.records = builder.records
        self.total = total if total is not None else builder.records + builder.damaged.count
        self.sample = sample
        self.files = list(files)
        self.shards = dict(shards or {})
        self.problems = problems

    @property
    def damaged(self) -> list[int]:
        return self.builder.damaged.tolist()

    @property
    def is_sample(self) -> bool:
        return self.sample is not None

    def type_conflicts(self) -> dict[str, list[int]]:
        out = {}
        for name, fs in sorted(self.features.items()):
            recs = fs.type_conflicts()
            if recs:
                out[name] = recs
        return out

    def missing(self) -> dict[str, list[int]]:
        return {
            n: fs.missing.tolist() for n, fs in sorted(self.features.items()) if fs.missing.count
        }

    def length_drift(self) -> dict[str, dict[str, Any]]:
        out = {}
        for name, fs in sorted(self.features.items()):
            d = fs.length_drift()
            if d:
                out[name] = d
        return out

    def locate(self, record: int) -> tuple[str, int] | None:
        """``(path, local record number)`` of a global record number."""
        if not self.files:
            return None
        starts = [f.first_record for f in self.files]
        k = bisect.bisect_right(starts, record) - 1
        if k < 0:
            return None
        return self.files[k].path, record - starts[k]

    def to_json(self, top: int = 10) -> dict[str, Any]:
        b = self.builder
        out: dict[str, Any] = {
            "records": self.records,
            "features": {n: fs.to_json(top) for n, fs in sorted(self.features.items())},
            "type_conflicts": self.type_conflicts(),
            "missing": self.missing(),
            "missing_counts": {
                n: fs.missing.count for n, fs in sorted(self.features.items()) if fs.missing.count
            },
            "length_drift": self.length_drift(),
            "kinds": dict(sorted(b.kinds.items())),
            "damaged": b.damaged.count,
            "damaged_records": b.damaged.tolist(),
            "problems": self.problems,
            "sampled": self.is_sample,
        }
        if self.feature_lists:
            out["feature_lists"] = {
                n: ls.to_json(top) for n, ls in sorted(self.feature_lists.items())
            }
        if self.is_sample:
            out["sample"] = {"records": self.sample, "of": self.total}
        if self.files:
            out["files"] = [
                {"path": f.path, "first_record": f.first_record, "records": f.records}
                for f in self.files
            ]
        return out

    def statistics(self, top: int = 20) -> dict[str, Any]:
        """Chart data per feature: ``histogram`` (edges/counts), ``values`` (top int64 or
        text values with counts), ``lengths`` (list length -> records), ``image_sizes``
        ([width, height, count]), and the same per shard under ``"shards"``."""
        return _statistics(self, top)


def _statistics(schema: Schema, top: int) -> dict[str, Any]:
    def one(fs: FeatureStats) -> dict[str, Any]:
        d: dict[str, Any] = {
            "types": fs.type_counts(),
            "lengths": sorted([k, v] for k, v in fs.len_counts.items()),
        }
        num = fs.numeric()
        if num is not None:
            d["histogram"] = num.histogram.to_json()
        if fs.int_values.total:
            d["values"] = [[v, c] for v, c in fs.int_values.top(top)]
        elif fs.values.total:
            d["values"] = [[_show_bytes(v), c] for v, c in fs.values.top(top)]
        if fs.image_sizes:
            d["image_sizes"] = [[w, h, c] for (w, h), c in fs.image_sizes.most_common()]
        return d

    out: dict[str, Any] = {
        "records": schema.records,
        "sampled": schema.is_sample,
        "features": {n: one(fs) for n, fs in sorted(schema.features.items())},
    }
    if schema.feature_lists:
        out["feature_lists"] = {
            n: {**one(ls.steps), "steps": [ls.steps_min, ls.steps_max]}
            for n, ls in sorted(schema.feature_lists.items())
        }
    if schema.shards:
        out["shards"] = {p: _statistics(s, top) for p, s in schema.shards.items()}
    return out


# --------------------------------------------------------------------------------------------
# Files: ranges of records, processes


def _mask_crc(crc: np.ndarray) -> np.ndarray:
    c = crc.astype(np.uint64)
    rot = ((c >> np.uint64(15)) | (c << np.uint64(17))) & np.uint64(0xFFFFFFFF)
    return ((rot + np.uint64(0xA282EAD8)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def _bulk(f: Any) -> tuple[Callable[[int, int], bytes], np.ndarray, np.ndarray] | None:
    """The reader's raw-span reader and its index as arrays, when the reader has them."""
    if not isinstance(f, TFRecordFile):
        return None
    offsets, lengths = f.spans()
    return f.read_span, offsets, lengths


def _scan_range(
    f: Any,
    builder: SchemaBuilder,
    start: int,
    stop: int,
    base: int,
    kind: str,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Feed records ``start..stop`` of reader ``f`` (numbered from ``base``) to ``builder``."""
    bulk = _bulk(f) if kind == "example" else None
    if bulk is None:
        _scan_slow(f, builder, range(start, stop), base, progress)
        return
    read_span, offsets, lengths = bulk
    crc = _crc32c.crc32c
    for c0 in range(start, stop, _CHUNK):
        c1 = min(stop, c0 + _CHUNK)
        off = offsets[c0:c1]
        ln = lengths[c0:c1]
        lo = int(off[0])
        hi = int(off[-1] + ln[-1] + 16)
        raw = read_span(lo, hi) + bytes(16)
        b = np.frombuffer(raw, np.uint8)
        rs = off - lo + 12
        re_ = rs + ln
        mv = memoryview(raw)
        got = np.fromiter(
            (crc(mv[s:e]) for s, e in zip(rs.tolist(), re_.tolist())), np.uint32, len(rs)
        )
        stored = b[re_[:, None] + np.arange(4)].copy().view("<u4").ravel()
        mv.release()
        numbers = np.arange(c0, c1, dtype=np.int64) + base
        intact = _mask_crc(got) == stored
        if not intact.all():
            for i in np.flatnonzero(~intact).tolist():
                if f.is_damaged(c0 + i) is None:
                    _note_damage(f, c0 + i)  # records the problem in the reader
                builder.add_damaged(int(numbers[i]))
            builder._add_buffer(b, rs[intact], re_[intact], numbers[intact])
        else:
            builder._add_buffer(b, rs, re_, numbers)
        if progress:
            progress(c1 - c0)


def _note_damage(f: Any, i: int) -> None:
    try:
        f.read(i)
    except CorruptRecordError:
        pass


def _scan_slow(
    f: Any,
    builder: SchemaBuilder,
    indices: Iterable[int],
    base: int,
    progress: Callable[[int], None] | None = None,
    batch: int = 4096,
) -> None:
    """Feed records by number through ``f.read`` (CRC checked) and the exact decoder."""
    payloads: list[bytes] = []
    numbers: list[int] = []

    def flush() -> None:
        if payloads:
            builder.add_payloads(payloads, numbers)
            if progress:
                progress(len(payloads))
            payloads.clear()
            numbers.clear()

    for i in indices:
        try:
            p = f.read(i)
        except CorruptRecordError:
            flush()
            builder.add_damaged(base + i)
            if progress:
                progress(1)
            continue
        payloads.append(p)
        numbers.append(base + i)
        if len(payloads) >= batch:
            flush()
    flush()


def _file_kind(f: Any) -> str:
    from .example import detect_file_kind

    def firsts() -> Iterator[bytes]:
        for info in f.records(0, 64):
            if info.data is not None:
                yield info.data

    return detect_file_kind(firsts())


def _task(args: tuple[str, dict[str, Any], int, int, int, bool]) -> SchemaBuilder:
    path, options, start, stop, base, decode_images = args
    from .reader import TFRecordFile

    builder = SchemaBuilder(decode_images=decode_images)
    with TFRecordFile(path, **options) as f:
        _scan_range(f, builder, start, stop, base, _file_kind(f))
    return builder


def infer_schema(
    source: Any,
    *,
    sample: int | None = None,
    progress: ProgressFn | None = None,
    workers: int = 1,
    seed: int = 0,
    decode_images: bool = False,
    per_shard: bool = True,
    **reader_options: Any,
) -> Schema:
    """Infer the schema of every record of ``source``: a path, a list of paths/globs/shard
    patterns, a :class:`codec.TFRecordFile`, a list of them or a
    :class:`codec.TFRecordDataset` (files given open are left open).

    ``sample=N`` looks at N records picked at random (``seed``) instead, and the result says
    so (:attr:`Schema.is_sample`). ``progress(done, total)`` is called as records are read.
    ``workers > 1`` spreads large files over processes (opened by path). ``decode_images``
    fully decodes every image to find the undecodable ones (default: header and end-marker
    checks only)."""

    own = False
    if isinstance(source, TFRecordFile):
        files = [source]
    elif isinstance(source, TFRecordDataset):
        files = list(source.files)
    elif (
        isinstance(source, (list, tuple))
        and source
        and all(isinstance(f, TFRecordFile) for f in source)
    ):
        files = list(source)
    else:
        ds = TFRecordDataset(source, **reader_options)
        files = list(ds.files)
        own = True
    try:
        return _infer(files, sample, progress, workers, seed, decode_images, per_shard)
    finally:
        if own:
            for f in files:
                f.close()


def _infer(
    files: list[Any],
    sample: int | None,
    progress: ProgressFn | None,
    workers: int,
    seed: int,
    decode_images: bool,
    per_shard: bool,
) -> Schema:
    counts = [len(f) for f in files]
    total = sum(counts)
    firsts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    infos = [ShardInfo(f.path, int(firsts[k]), counts[k]) for k, f in enumerate(files)]
    problems = sum(len([p for p in f.problems if p.kind != "data_crc"]) for f in files)
    done = 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total if sample is None else min(sample, total))

    builders: list[SchemaBuilder] = []
    if sample is not None:
        n = max(0, min(sample, total))
        picked = np.sort(np.random.default_rng(seed).choice(total, size=n, replace=False))
        for k, f in enumerate(files):
            lo, hi = np.searchsorted(picked, [firsts[k], firsts[k + 1]])
            b = SchemaBuilder(decode_images=decode_images)
            local = (picked[lo:hi] - firsts[k]).tolist()
            _scan_slow(f, b, local, int(firsts[k]), step)
            builders.append(b)
    elif workers > 1 and total >= _PARALLEL_MIN:
        builders = _infer_parallel(files, counts, firsts, workers, decode_images, step)
    else:
        for k, f in enumerate(files):
            b = SchemaBuilder(decode_images=decode_images)
            if counts[k]:
                _scan_range(f, b, 0, counts[k], int(firsts[k]), _file_kind(f), step)
            builders.append(b)
    shards: dict[str, Schema] = {}
    if per_shard and len(files) > 1:
        for k, b in enumerate(builders):
            shards[files[k].path] = Schema(
                _copy(b), total=counts[k], sample=None if sample is None else b.records
            )
    total_b = builders[0] if builders else SchemaBuilder()
    for b in builders[1:]:
        total_b.merge(b)
    if progress and sample is None:
        progress(total, total)
    return Schema(
        total_b,
        total=total,
        sample=None if sample is None else total_b.records + total_b.damaged.count,
        files=infos,
        shards=shards,
        problems=problems,
    )


def _copy(b: SchemaBuilder) -> SchemaBuilder:
    import pickle

    out: SchemaBuilder = pickle.loads(pickle.dumps(b))
    return out


def _infer_parallel(
    files: list[Any],
    counts: list[int],
    firsts: np.ndarray,
    workers: int,
    decode_images: bool,
    step: Callable[[int], None],
) -> list[SchemaBuilder]:
    total = sum(counts)
    piece = max(_CHUNK, -(-total // (workers * 4)))
    tasks: list[tuple[int, tuple[str, dict[str, Any], int, int, int, bool]]] = []
    for k, f in enumerate(files):
        options = {"compression": f.compression, "check_crc": True}
        for s in range(0, counts[k], piece):
            e = min(counts[k], s + piece)
            tasks.append((k, (f.path, options, s, e, int(firsts[k]), decode_images)))
    per_file: list[SchemaBuilder | None] = [None] * len(files)
    with ProcessPoolExecutor(max_workers=min(workers, len(tasks)) or 1) as pool:
        futures = [(k, a, pool.submit(_task, a)) for k, a in tasks]
        for k, a, fut in futures:
            b = fut.result()
            step(a[3] - a[2])
            acc = per_file[k]
            if acc is None:
                per_file[k] = b
            else:
                acc.merge(b)
    return [b if b is not None else SchemaBuilder() for b in per_file]
