"""What changed between two datasets (two versions, train against eval, training against
serving data): feature by feature, and record by record when a key feature joins them.

**Feature by feature** (:func:`compare`), from each side's statistics (a
:class:`codec.schema.SchemaBuilder`'s, exact and independent of how the records were split):
in how many records each feature is present, its type, and how far its value distributions
lie apart, in the two numbers TensorFlow Data Validation uses for skew and drift, computed
exactly as its ``anomalies/metrics.cc`` does:

- **L-infinity distance** (:func:`linf_distance`) for categorical features (text values;
  integer class labels): the largest absolute difference between the two value counts, each
  normalised by its own total; of equal differences the last value in byte order (the keys
  of a ``std::map<string, double>``; integers are written as decimal text, as TFDV's string
  statistics hold them).
- **Jensen–Shannon divergence** (log 2, capped at 1): of the value counts for categorical
  features (:func:`js_counts`), of the histograms for numeric ones (:func:`js_histograms`):
  point buckets and infinite buckets set apart, the finite buckets rebucketed on the union of
  both histograms' boundaries (a bucket's count spread evenly over the new buckets it
  covers), point masses, infinite masses and NaN added back as buckets of their own, both
  normalised, then ``(KL(P‖M) + KL(Q‖M)) / 2`` with ``M = (P + Q) / 2``. The histograms are
  the schema's (:class:`codec.schema.counters.Histogram`: fixed power-of-two grids, so they
  do not depend on the split; up to 64 bins between the smallest and largest value).

A categorical feature is counted exactly while it has at most 10,000 distinct values of at
most 256 bytes each (the schema's counters); past that no L-infinity distance is given, and
the reason says so. New and vanished features, and values (classes) found on one side only,
are listed.

**Record by record** (:func:`join`), through each side's :class:`DigestTable`: per intact
record, a 64-bit digest of every feature (the CRC-32C and the CRC-32 of each value, mixed
with its place in the list, its type and the list's length) and the value of the key feature
(``image/source_id`` by default). Records whose key is on one side only are *added* or
*removed*; records with the same key are *changed* (with the features that differ: a feature
present on one side only differs) or *unchanged*. A key held by more than one record on a
side is a *duplicate*: its records are listed and left out of the other counts. Two
different values agree in both CRCs by chance only (about one in 2**64). Lists of records are
capped at :data:`LIST_CAP` (the smallest numbers); every count is exact.

Damaged records (data CRC failing) are counted on each side and left out of every figure.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import crc32c as _crc32c
import numpy as np

from .detection import layouts
from .kinds import RAW, SEQUENCE_EXAMPLE
from .schema.builder import SchemaBuilder
from .schema.counters import RECORD_CAP, Histogram, NumericStats, mix64, occurrence_keys
from .schema.stats import TYPE_NAMES, FeatureStats
from .schema.walk import Columns
from .values import is_text

__all__ = [
    "DEFAULT_KEYS",
    "FEATURE_LISTS",
    "LIST_CAP",
    "PAYLOAD",
    "Bucket",
    "DatasetDiff",
    "DiffSide",
    "DigestBuilder",
    "DigestTable",
    "FeatureDiff",
    "FeatureSide",
    "JoinDiff",
    "compare",
    "filter_name",
    "filter_value",
    "join",
    "js_counts",
    "js_histograms",
    "linf_distance",
    "side_of",
    "value_text",
]

DEFAULT_KEYS = ("image/source_id", "image/key/sha256", "image/filename", "id", "key")
"""The key features a dataset job keeps the values of when none is named, in the order the
join takes the first one both sides have."""

LIST_CAP = RECORD_CAP  # record numbers (or pairs) kept per list; counts are exact
FEATURE_LISTS = "(feature lists)"  # the digest column of a SequenceExample's feature lists
PAYLOAD = "(payload)"  # the digest column of a record that is not an Example

_K_TYPE = np.uint64(0x9E3779B97F4A7C15)
_K_LEN = np.uint64(0xC2B2AE3D27D4EB4F)
_ZERO = np.uint64(0)

Key = Any  # a key feature's value: bytes, int or float, or a tuple of them for a list


# --------------------------------------------------------------------------------------------
# TFDV's distances (anomalies/metrics.cc)


def linf_distance(
    counts_a: Mapping[bytes, float], counts_b: Mapping[bytes, float]
) -> tuple[bytes, float]:
    """TFDV's ``LInftyDistance``: ``(value, distance)`` where the two value counts, each
    normalised by its own sum (a sum of 0 leaves the counts as they are), differ most in
    absolute value; of equal differences the last value in byte order. ``(b"", 0.0)`` when
    both are empty."""
    na = _normalize(counts_a)
    nb = _normalize(counts_b)
    diff = dict(na)
    for k, v in nb.items():
        diff[k] = diff.get(k, 0.0) - v
    best: tuple[bytes, float] = (b"", 0.0)
    for k in sorted(diff):
        v = abs(diff[k])
        if v >= best[1]:
            best = (k, v)
    return best


def _normalize(counts: Mapping[bytes, float]) -> dict[bytes, float]:
    total = 0.0
    for k in sorted(counts):  # std::accumulate over the map, in key order
        total += counts[k]
    if total == 0.0:
        return dict(counts)
    return {k: v / total for k, v in counts.items()}


def js_counts(counts_a: Mapping[bytes, float], counts_b: Mapping[bytes, float]) -> float | None:
    """TFDV's Jensen–Shannon divergence of two value counts (log 2, capped at 1); None where
    TFDV refuses (an empty side, a count that is not positive)."""
    if not counts_a or not counts_b:
        return None
    if any(v <= 0 for v in counts_a.values()) or any(v <= 0 for v in counts_b.values()):
        return None
    a_sum = b_sum = 0.0
    for k in sorted(counts_a):
        a_sum += counts_a[k]
    for k in sorted(counts_b):
        b_sum += counts_b[k]
    kl = 0.0
    for k in sorted(set(counts_a) | set(counts_b)):
        ca, cb = counts_a.get(k, 0.0), counts_b.get(k, 0.0)
        p, q = ca / a_sum, cb / b_sum
        m = (p + q) / 2
        if ca != 0:
            kl += p * math.log2(p / m)
        if cb != 0:
            kl += q * math.log2(q / m)
    return min(kl / 2, 1.0)


@dataclass(frozen=True)
class Bucket:
    """A histogram bucket as TFDV's ``Histogram.Bucket``: ``[low, high]`` and its count."""

    low: float
    high: float
    count: float


def js_histograms(
    h1: Sequence[Bucket], nan1: float, h2: Sequence[Bucket], nan2: float
) -> float | None:
    """TFDV's Jensen–Shannon divergence of two histograms (buckets in ascending order, and
    their NaN counts), log 2, capped at 1; None where TFDV refuses (a histogram with nothing
    in it)."""
    a, pa, ia = _strip(h1)
    b, pb, ib = _strip(h2)
    ba, bb = _boundaries(a), _boundaries(b)
    if ba != bb:
        bounds = sorted(ba | bb)
        a = _rebucket(bounds, a)
        b = _rebucket(bounds, b)
    ca = [x.count for x in a]
    cb = [x.count for x in b]
    for point in sorted(set(pa) | set(pb)):
        ca.append(pa.get(point, 0.0))
        cb.append(pb.get(point, 0.0))
    if ia != 0:
        ca.append(ia)
        cb.append(0.0)
    if ib != 0:
        ca.append(0.0)
        cb.append(ib)
    if nan1 > 0 or nan2 > 0:
        ca += [0.0, nan1]
        cb += [nan2, 0.0]
    p = _normalized(ca)
    q = _normalized(cb)
    if p is None or q is None:
        return None
    m = [(x + y) / 2 for x, y in zip(p, q)]
    result = (_kl(p, m) + _kl(q, m)) / 2
    return min(result, 1.0)


def _strip(h: Sequence[Bucket]) -> tuple[list[Bucket], dict[float, float], float]:
    """``StripPointAndInfiniteBuckets``: the finite buckets of non-zero width, the point
    buckets' mass by point, and the mass of buckets with an infinite bound."""
    kept: list[Bucket] = []
    points: dict[float, float] = {}
    infinite = 0.0
    for x in h:
        if not math.isfinite(x.low) or not math.isfinite(x.high):
            infinite += x.count
        elif x.low == x.high:
            points[x.low] = points.get(x.low, 0.0) + x.count
        else:
            kept.append(x)
    return kept, points, infinite


def _boundaries(h: Sequence[Bucket]) -> set[float]:
    out: set[float] = set()
    for x in h:
        out.add(x.low)
        out.add(x.high)
    return out


def _rebucket(bounds: Sequence[float], h: Sequence[Bucket]) -> list[Bucket]:
    """``RebucketHistogram``: ``h``'s counts spread evenly on the buckets between
    ``bounds`` (which hold every boundary of ``h``)."""
    out: list[Bucket] = []
    last = len(bounds) - 1
    i = 0
    for x in h:
        while x.low > bounds[i]:
            if i + 1 > last:
                raise ValueError("a bucket lies past the boundaries")
            out.append(Bucket(bounds[i], bounds[i + 1], 0.0))
            i += 1
        if x.low == x.high and x.low == bounds[i]:
            out.append(Bucket(bounds[i], bounds[i + 1], x.count))
            i += 1
            continue
        covered: list[float] = []
        while x.high > bounds[i]:
            covered.append(bounds[i])
            i += 1
        covered.append(bounds[i])
        if len(covered) > 1:
            span = x.high - x.low
            for lo, hi in itertools.pairwise(covered):
                out.append(Bucket(lo, hi, ((hi - lo) / span) * x.count))
    for j in range(i, last):
        out.append(Bucket(bounds[j], bounds[j + 1], 0.0))
    return out


def _normalized(counts: Sequence[float]) -> list[float] | None:
    total = 0.0
    for c in counts:
        total += c
    if total == 0:
        return None
    return [c / total for c in counts]


def _kl(p: Sequence[float], q: Sequence[float]) -> float:
    out = 0.0
    for x, y in zip(p, q):
        if x > 0 and y > 0:
            out += x * math.log2(x / y)
    return out


# --------------------------------------------------------------------------------------------
# Per-record digests


def _value_hashes(buf: bytes, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each bytes value ``buf[s:s+n]``: its CRC-32C and its CRC-32."""
    crc, crc2 = _crc32c.crc32c, zlib.crc32
    with memoryview(buf) as mv:
        got = [
            (crc(v) << 32) | crc2(v)
            for v in (mv[s : s + n] for s, n in zip(starts.tolist(), lengths.tolist()))
        ]
    return np.array(got, np.uint64) if got else np.empty(0, np.uint64)


def _entry_digests(c: Columns) -> np.ndarray:
    """A digest per entry of ``c`` (one feature of one record): its values' hashes, each
    mixed with its place in the list, summed, then mixed with the type and the length;
    never 0 (which stands for "absent")."""
    n = len(c.rec)
    acc = np.zeros(n, np.uint64)
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    if len(c.floats):
        bits = np.ascontiguousarray(c.floats, np.float32).view(np.uint32).astype(np.uint64)
        parts.append((bits, c.float_owner))
    if len(c.ints):
        parts.append((np.ascontiguousarray(c.ints, np.int64).view(np.uint64), c.int_owner))
    if len(c.b_start):
        parts.append((_value_hashes(c.buf, c.b_start, c.b_len), c.b_owner))
    with np.errstate(over="ignore"):
        for hashes, owners in parts:
            np.add.at(acc, np.asarray(owners, np.int64), occurrence_keys(hashes, owners))
        kind = np.asarray(c.kind, np.uint64) + np.uint64(1)
        length = np.asarray(c.length, np.uint64)
        out = mix64(acc ^ mix64(kind * _K_TYPE + length * _K_LEN))
    out[out == _ZERO] = np.uint64(1)
    return out


def _digest_bytes(data: bytes) -> int:
    d = int(mix64(np.array([(_crc32c.crc32c(data) << 32) | zlib.crc32(data)], np.uint64))[0])
    return d or 1


def _lists_digest(lists: Mapping[str, Sequence[Any]]) -> int:
    """A digest of a SequenceExample's feature lists (every list, step and value)."""
    text = repr(sorted((k, [(f.type, list(f.values)) for f in v]) for k, v in lists.items()))
    return _digest_bytes(text.encode("utf-8", "surrogatepass"))


def _key_of(values: Sequence[Any]) -> Key:
    if len(values) == 1:
        return values[0]
    return tuple(values)


def _keys_of(c: Columns, fid: int) -> dict[int, Key]:
    """Entry → the key value (its one value, or the tuple of its values) of the entries of
    feature ``fid`` in ``c`` that hold values."""
    got: dict[int, list[Any]] = {}
    entries = set(np.flatnonzero(np.asarray(c.fid) == fid).tolist())
    if not entries:
        return {}
    if len(c.b_owner):
        own = np.asarray(c.b_owner)
        sel = np.flatnonzero(np.isin(own, list(entries)))
        for j in sel.tolist():
            s, n = int(c.b_start[j]), int(c.b_len[j])
            got.setdefault(int(own[j]), []).append(bytes(c.buf[s : s + n]))
    for vals, owners, to in (
        (c.ints, c.int_owner, int),
        (c.floats, c.float_owner, float),
    ):
        if len(owners):
            own = np.asarray(owners)
            sel = np.flatnonzero(np.isin(own, list(entries)))
            for j in sel.tolist():
                got.setdefault(int(own[j]), []).append(to(vals[j]))
    return {e: _key_of(v) for e, v in got.items()}


class DigestBuilder(SchemaBuilder):
    """A schema builder (every statistic of :class:`codec.schema.SchemaBuilder`, the
    Object Detection checks left out) that also keeps, per intact record, a digest of each
    feature and the values of the key features ``keys``: what a diff needs of one side.
    :meth:`take_table` hands the digests over as a :class:`DigestTable`."""

    def __init__(self, keys: Sequence[str] = DEFAULT_KEYS) -> None:
        super().__init__(detection=False)
        self.key_names = tuple(keys)
        self._reset()

    def _reset(self) -> None:
        self.cols: dict[str, int] = {}  # digest column → its number (in order of arrival)
        self.rows: list[np.ndarray] = []  # intact record numbers seen
        self.entries: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (rec, col, digest)
        self.found: dict[str, dict[int, Key]] = {k: {} for k in self.key_names}

    def _col(self, name: str) -> int:
        got = self.cols.get(name)
        if got is None:
            got = self.cols[name] = len(self.cols)
        return got

    def _accumulate(self, c: Columns) -> None:
        super()._accumulate(c)
        if not len(c.records):
            return
        self.rows.append(np.asarray(c.records, np.int64))
        if not len(c.rec):
            return
        used = np.unique(np.asarray(c.fid)).tolist()
        remap = np.zeros(max(used) + 1, np.int64)
        for f in used:
            remap[f] = self._col(c.names[f])
        rec = np.asarray(c.rec, np.int64)
        self.entries.append((rec, remap[np.asarray(c.fid)], _entry_digests(c)))
        for key in self.key_names:
            if key in c.names:
                fid = c.names.index(key)
                if fid in used:
                    found = self.found[key]
                    for e, value in _keys_of(c, fid).items():
                        found[int(rec[e])] = value

    def add_records(self, items: Iterable[tuple[int, Any]], keys: np.ndarray | None = None) -> None:
        items = list(items)
        super().add_records(items, keys)
        recs: list[int] = []
        cols: list[int] = []
        digests: list[int] = []
        for index, rec in items:
            if rec.kind == RAW:
                self.rows.append(np.array([index], np.int64))
                recs.append(index)
                cols.append(self._col(PAYLOAD))
                digests.append(_digest_bytes(bytes(rec.raw or b"")))
            elif rec.kind == SEQUENCE_EXAMPLE and rec.feature_lists:
                recs.append(index)
                cols.append(self._col(FEATURE_LISTS))
                digests.append(_lists_digest(rec.feature_lists))
        if recs:
            self.entries.append(
                (np.array(recs, np.int64), np.array(cols, np.int64), np.array(digests, np.uint64))
            )

    def take_table(self) -> DigestTable:
        """The digests of every intact record fed so far (numbered as fed), as a table; the
        builder keeps its statistics and starts a new table."""
        numbers = np.unique(np.concatenate(self.rows)) if self.rows else np.empty(0, np.int64)
        names = sorted(self.cols)
        order = {name: j for j, name in enumerate(names)}
        remap = np.array([order[n] for n in sorted(self.cols, key=self.cols.__getitem__)], np.int64)
        digests = np.zeros((len(numbers), len(names)), np.uint64)
        for rec, col, dig in self.entries:
            digests[np.searchsorted(numbers, rec), remap[col]] = dig
        keys: dict[str, list[Key]] = {}
        for key, found in self.found.items():
            if found:
                keys[key] = [found.get(int(n)) for n in numbers.tolist()]
        self._reset()
        return DigestTable(numbers, names, digests, keys)


@dataclass
class DigestTable:
    """Per intact record of one side (``numbers``, ascending): a digest per feature
    (``digests[row, column]``, 0 where the record lacks the feature; columns named by
    ``names``, sorted) and the values of the key features (``keys[name][row]``, None where
    the record has no value)."""

    numbers: np.ndarray
    names: list[str]
    digests: np.ndarray
    keys: dict[str, list[Key]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.numbers)

    def shift(self, by: int) -> None:
        """Renumber: every record number plus ``by``."""
        if by:
            self.numbers = self.numbers + by

    @staticmethod
    def concat(tables: Sequence[DigestTable]) -> DigestTable:
        """The tables of disjoint records as one (rows by record number, columns sorted)."""
        names = sorted({n for t in tables for n in t.names})
        where = {n: j for j, n in enumerate(names)}
        numbers = np.concatenate([t.numbers for t in tables]) if tables else np.empty(0, np.int64)
        digests = np.zeros((len(numbers), len(names)), np.uint64)
        start = 0
        for t in tables:
            cols = [where[n] for n in t.names]
            if cols:
                digests[start : start + len(t), cols] = t.digests
            start += len(t)
        key_names = sorted({k for t in tables for k in t.keys})
        keys: dict[str, list[Key]] = {}
        for k in key_names:
            vals: list[Key] = []
            for t in tables:
                vals.extend(t.keys.get(k) or [None] * len(t))
            keys[k] = vals
        order = np.argsort(numbers, kind="stable")
        if len(order) and not (np.diff(numbers) > 0).all():
            numbers, digests = numbers[order], digests[order]
            keys = {k: [v[i] for i in order.tolist()] for k, v in keys.items()}
        return DigestTable(np.asarray(numbers, np.int64), names, digests, keys)


# --------------------------------------------------------------------------------------------
# One side's summary


@dataclass
class FeatureSide:
    """What one side says of one feature: records that have it (``present``) and that do
    not (``missing``, the first of them in ``missing_records``); entries per type; its value
    counts (``counts``: text values by their bytes, integers by their value) when every value
    was counted, else None with the reason in ``uncounted``; its numbers' histogram (buckets
    on the schema's grid), NaN and infinite counts, mean; picture formats."""

    present: int
    missing: int
    missing_records: list[int]
    types: dict[str, int]
    counts: dict[Any, int] | None
    uncounted: str
    int_counts: dict[int, int] | None
    histogram: list[Bucket]
    nan: int
    inf: int
    mean: float | None
    formats: dict[str, int]

    @property
    def type(self) -> str:
        """The type most records give it."""
        return _majority(self.types)

    @property
    def pictures(self) -> bool:
        return sum(self.formats.values()) > 0


@dataclass
class DiffSide:
    """One side of a diff: its records (damaged ones included), the intact and damaged
    ones (the first damaged in ``damaged_records``), framing problems, its files as
    ``(path, records)``, every feature's :class:`FeatureSide`, its :class:`DigestTable`, and
    the files that could not be read, with why (left out of every figure)."""

    records: int
    intact: int
    damaged: int
    damaged_records: list[int]
    problems: int
    files: list[tuple[str, int]]
    features: dict[str, FeatureSide]
    table: DigestTable
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (file, why)


def _buckets(h: Histogram) -> list[Bucket]:
    got = h.to_json()
    edges, counts = got["edges"], got["counts"]
    return [Bucket(float(edges[i]), float(edges[i + 1]), float(c)) for i, c in enumerate(counts)]


def _majority(types: Mapping[str, int]) -> str:
    return max(types.items(), key=lambda kv: (kv[1], kv[0]))[0] if types else ""


def _feature_side(fs: FeatureStats) -> FeatureSide:
    types = {TYPE_NAMES[i]: int(n) for i, n in enumerate(fs.types.tolist()) if n}
    counts: dict[Any, int] | None = None
    uncounted = ""
    if types.get("bytes"):
        if not fs.values.exact:
            uncounted = f"more than {fs.values.capacity:,} distinct values"
        elif fs.long_values:
            uncounted = "values longer than 256 bytes are not counted one by one"
        elif sum(fs.image_formats.values()):
            uncounted = "pictures"
        else:
            counts = dict(fs.values.counts)
    int_counts: dict[int, int] | None = None
    if fs.int_values.exact:
        int_counts = cast("dict[int, int]", dict(fs.int_values.counts))
    num: NumericStats = fs.floats if _majority(types) == "float" else fs.ints
    stats = num.to_json()
    return FeatureSide(
        present=int(fs.present),
        missing=int(fs.missing.count),
        missing_records=fs.missing.tolist()[:LIST_CAP],
        types=types,
        counts=counts,
        uncounted=uncounted,
        int_counts=int_counts,
        histogram=_buckets(num.histogram),
        nan=int(num.nan),
        inf=int(num.posinf + num.neginf),
        mean=stats["mean"],
        formats=dict(sorted(fs.image_formats.items())),
    )


def side_of(
    builder: SchemaBuilder,
    table: DigestTable,
    records: int,
    problems: int = 0,
    files: Sequence[tuple[str, int]] = (),
) -> DiffSide:
    """A side from the statistics of every one of its ``records`` (damaged ones included)
    and its digests."""
    return DiffSide(
        records=records,
        intact=int(builder.records),
        damaged=int(builder.damaged.count),
        damaged_records=builder.damaged.tolist()[:LIST_CAP],
        problems=problems,
        files=list(files),
        features={n: _feature_side(builder.features[n]) for n in sorted(builder.features)},
        table=table,
    )


# --------------------------------------------------------------------------------------------
# The comparison


@dataclass
class FeatureDiff:
    """One feature of either side: ``status`` (``"new"``: in B only, ``"vanished"``: in A
    only, ``"type"``: its type differs, ``"same"``: in both); ``kind`` (``categorical``,
    ``numeric``, ``pictures`` or ``other``); its type on each side; records that have it and
    that lack it on each side (the first of those in ``missing_records``); ``linf`` and the
    value ``linf_at`` where it is reached with the value's shares on each side; ``js``; why
    there is no distance (``why``); values on one side only (``new_values``,
    ``vanished_values``, with their counts), and whether it is a class feature."""

    name: str
    status: str
    kind: str
    type_a: str
    type_b: str
    present_a: int
    present_b: int
    missing_a: int
    missing_b: int
    missing_records_a: list[int]
    missing_records_b: list[int]
    linf: float | None = None
    linf_at: Any = None
    shares: tuple[float, float] | None = None
    js: float | None = None
    why: str = ""
    new_values: list[tuple[Any, int]] = field(default_factory=list)
    vanished_values: list[tuple[Any, int]] = field(default_factory=list)
    classes: bool = False
    mean_a: float | None = None
    mean_b: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "feature": self.name,
            "status": self.status,
            "kind": self.kind,
            "type_a": self.type_a,
            "type_b": self.type_b,
            "present_a": self.present_a,
            "present_b": self.present_b,
            "missing_a": self.missing_a,
            "missing_b": self.missing_b,
            "missing_records_a": self.missing_records_a,
            "missing_records_b": self.missing_records_b,
            "linf": self.linf,
            "linf_at": None if self.linf_at is None else value_text(self.linf_at),
            "shares": list(self.shares) if self.shares is not None else None,
            "js": self.js,
            "why": self.why,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "classes": self.classes,
            "new_values": [[value_text(v), c] for v, c in self.new_values],
            "vanished_values": [[value_text(v), c] for v, c in self.vanished_values],
        }


@dataclass
class JoinDiff:
    """The record-by-record comparison by ``key``: record numbers of B ``added`` (key in B
    only), of A ``removed``, ``(a, b)`` pairs ``changed`` with the features that differ
    (``changed_features``, parallel to ``changed``), how many are ``unchanged``, records
    whose key another record of the same side holds (``duplicates_a``/``_b``: key → records)
    and records without the key (``no_key_a``/``_b``). ``counts`` holds the exact number of
    each; the lists keep the first :data:`LIST_CAP`. ``by_feature``: feature → changed
    records, with ``by_feature_pairs`` (the first pairs)."""

    key: str
    counts: dict[str, int]
    added: list[int]
    removed: list[int]
    changed: list[tuple[int, int]]
    changed_features: list[list[str]]
    by_feature: dict[str, int]
    by_feature_pairs: dict[str, list[tuple[int, int]]]
    duplicates_a: list[tuple[Key, list[int]]]
    duplicates_b: list[tuple[Key, list[int]]]
    no_key_a: list[int]
    no_key_b: list[int]

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "counts": dict(self.counts),
            "added": self.added,
            "removed": self.removed,
            "changed": [
                {"a": a, "b": b, "features": f}
                for (a, b), f in zip(self.changed, self.changed_features)
            ],
            "by_feature": dict(self.by_feature),
            "duplicates_a": [{"key": value_text(k), "records": r} for k, r in self.duplicates_a],
            "duplicates_b": [{"key": value_text(k), "records": r} for k, r in self.duplicates_b],
            "no_key_a": self.no_key_a,
            "no_key_b": self.no_key_b,
        }


@dataclass
class DatasetDiff:
    """Two datasets compared: each side's counts (``a``, ``b``), a row per feature
    (``features``, by name), and the record-by-record ``join`` (None when no key joins them:
    ``join_note`` says why)."""

    a: DiffSide
    b: DiffSide
    features: list[FeatureDiff]
    join: JoinDiff | None
    join_note: str = ""

    def feature(self, name: str) -> FeatureDiff | None:
        for f in self.features:
            if f.name == name:
                return f
        return None

    def to_json(self) -> dict[str, Any]:
        def side(s: DiffSide) -> dict[str, Any]:
            return {
                "records": s.records,
                "intact": s.intact,
                "damaged": s.damaged,
                "damaged_records": s.damaged_records,
                "problems": s.problems,
                "files": [{"path": p, "records": n} for p, n in s.files],
                "unreadable": [{"path": p, "why": w} for p, w in s.unreadable],
            }

        return {
            "a": side(self.a),
            "b": side(self.b),
            "features": [f.to_json() for f in self.features],
            "join": self.join.to_json() if self.join is not None else None,
            "join_note": self.join_note,
        }


def value_text(v: Any) -> str:
    """A value as text: UTF-8 text as it is, other bytes as a Python bytes literal, a tuple's
    values joined with ``, ``."""
    if isinstance(v, bytes):
        return v.decode("utf-8") if is_text(v) else repr(v)
    if isinstance(v, tuple):
        return "[" + ", ".join(value_text(x) for x in v) + "]"
    return str(v)


def _tfdv_key(v: Any) -> bytes:
    """A value as TFDV's string statistics name it: the bytes themselves; an integer in
    decimal."""
    return v if isinstance(v, bytes) else str(v).encode()


def _class_features(names: Iterable[str]) -> set[str]:
    """The class label and class text lists of the Object Detection layouts among ``names``."""
    out: set[str] = set()
    for lay in layouts(names):
        out.update(k for k in (lay.label, lay.text) if k)
    return out


def compare(
    a: DiffSide,
    b: DiffSide,
    key: str | None = None,
    categorical: Collection[str] = (),
) -> DatasetDiff:
    """Compare side ``a`` (the old version, train, training data) with ``b``.
    ``categorical``: integer features read as categories (class labels: L-infinity distance
    and new or vanished values) besides the Object Detection layouts' class lists; other
    integers are numeric, as TFDV reads them without a schema. ``key``: the feature that
    joins records (else the first of :data:`DEFAULT_KEYS` both sides hold)."""
    names = sorted(set(a.features) | set(b.features))
    classes = _class_features(names) | set(categorical)
    rows = [_feature_diff(n, a.features.get(n), b.features.get(n), n in classes) for n in names]
    chosen, note = _pick_key(a.table, b.table, key)
    found = join(a.table, b.table, chosen) if chosen is not None else None
    return DatasetDiff(a, b, rows, found, note)


def _feature_diff(
    name: str, fa: FeatureSide | None, fb: FeatureSide | None, cls: bool
) -> FeatureDiff:
    row = FeatureDiff(
        name=name,
        status="same",
        kind="other",
        type_a=fa.type if fa else "",
        type_b=fb.type if fb else "",
        present_a=fa.present if fa else 0,
        present_b=fb.present if fb else 0,
        missing_a=fa.missing if fa else 0,
        missing_b=fb.missing if fb else 0,
        missing_records_a=fa.missing_records if fa else [],
        missing_records_b=fb.missing_records if fb else [],
        mean_a=fa.mean if fa else None,
        mean_b=fb.mean if fb else None,
    )
    one = fa or fb
    assert one is not None
    row.kind = _kind(one, cls)
    row.classes = cls and row.kind == "categorical"
    if fa is None or fb is None:
        row.status = "new" if fa is None else "vanished"
        row.why = "in one dataset only"
        return row
    if fa.type != fb.type:
        row.status = "type"
        row.why = f"its type changed: {fa.type} → {fb.type}"
        return row
    if row.kind == "categorical":
        ca = fa.counts if fa.type == "bytes" else fa.int_counts
        cb = fb.counts if fb.type == "bytes" else fb.int_counts
        if ca is None or cb is None:
            why = (fa.uncounted or fb.uncounted) if fa.type == "bytes" else ""
            row.why = why or "more than 1,000 distinct values"
        else:
            ka = {_tfdv_key(v): float(c) for v, c in ca.items()}
            kb = {_tfdv_key(v): float(c) for v, c in cb.items()}
            at, dist = linf_distance(ka, kb)
            back = {_tfdv_key(v): v for v in [*ca, *cb]}
            row.linf, row.linf_at = dist, back.get(at, at)
            sa, sb = sum(ka.values()), sum(kb.values())
            row.shares = (ka.get(at, 0.0) / sa if sa else 0.0, kb.get(at, 0.0) / sb if sb else 0.0)
            row.js = js_counts(ka, kb)
            row.new_values = _sorted_values((v, c) for v, c in cb.items() if v not in ca)
            row.vanished_values = _sorted_values((v, c) for v, c in ca.items() if v not in cb)
        return row
    if row.kind == "numeric":
        row.js = js_histograms(_with_inf(fa), fa.nan, _with_inf(fb), fb.nan)
        if row.js is None:
            row.why = "no numbers on one side"
        return row
    if row.kind == "pictures":
        row.why = "pictures: compared record by record"
    return row


def _with_inf(f: FeatureSide) -> list[Bucket]:
    """The histogram's buckets and, for infinite values, a bucket with infinite bounds (as
    TFDV's histograms hold them: their mass is set apart from the finite buckets)."""
    if not f.inf:
        return list(f.histogram)
    return [*f.histogram, Bucket(-math.inf, math.inf, float(f.inf))]


def _sorted_values(items: Iterable[tuple[Any, int]]) -> list[tuple[Any, int]]:
    return sorted(items, key=lambda vc: (-vc[1], _tfdv_key(vc[0])))


def _kind(f: FeatureSide, cls: bool) -> str:
    t = f.type
    if t == "bytes":
        return "pictures" if f.pictures and not f.counts else "categorical"
    if t == "int64":
        return "categorical" if cls else "numeric"
    if t == "float":
        return "numeric"
    return "other"


def _pick_key(a: DigestTable, b: DigestTable, key: str | None) -> tuple[str | None, str]:
    if key is not None:
        missing = [side for side, t in (("A", a), ("B", b)) if key not in t.keys]
        if missing:
            return None, f"no record of {' or '.join(missing)} has the key feature {key}"
        return key, ""
    for k in DEFAULT_KEYS:
        if k in a.keys and k in b.keys:
            return k, ""
    return None, (
        "no key feature joins the two datasets (none of "
        + ", ".join(DEFAULT_KEYS)
        + " is in both): name one to compare record by record"
    )


def join(a: DigestTable, b: DigestTable, key: str) -> JoinDiff:
    """Records of ``a`` and ``b`` joined by the values of feature ``key`` (see the module's
    docstring)."""
    rows_a = _rows_by_key(a.keys.get(key) or [None] * len(a))
    rows_b = _rows_by_key(b.keys.get(key) or [None] * len(b))
    na, nb = a.numbers.tolist(), b.numbers.tolist()

    def numbered(rows: list[int], numbers: list[int]) -> list[int]:
        return sorted(numbers[r] for r in rows)

    dup_a = {k: r for k, r in rows_a.items() if k is not None and len(r) > 1}
    dup_b = {k: r for k, r in rows_b.items() if k is not None and len(r) > 1}
    removed: list[int] = []
    pairs: list[tuple[int, int]] = []
    for k, r in rows_a.items():
        if k is None or k in dup_a or k in dup_b:
            continue
        other = rows_b.get(k)
        if other is None:
            removed.append(r[0])
        else:
            pairs.append((r[0], other[0]))
    added = [
        r[0] for k, r in rows_b.items() if k is not None and k not in dup_b and k not in rows_a
    ]
    names = sorted(set(a.names) | set(b.names))
    ia = np.array([p[0] for p in pairs], np.int64)
    ib = np.array([p[1] for p in pairs], np.int64)
    da = _columns(a, names, ia)
    db = _columns(b, names, ib)
    differ = da != db
    changed_rows = np.flatnonzero(differ.any(axis=1))
    na_arr, nb_arr = np.asarray(na, np.int64), np.asarray(nb, np.int64)
    ca = na_arr[ia[changed_rows]] if len(changed_rows) else np.empty(0, np.int64)
    cb = nb_arr[ib[changed_rows]] if len(changed_rows) else np.empty(0, np.int64)
    order = np.lexsort((cb, ca))[:LIST_CAP]
    changed = [(int(ca[i]), int(cb[i])) for i in order.tolist()]
    changed_features = [
        [names[j] for j in np.flatnonzero(differ[changed_rows[i]]).tolist()] for i in order.tolist()
    ]
    by_feature: dict[str, int] = {}
    by_pairs: dict[str, list[tuple[int, int]]] = {}
    for j, name in enumerate(names):
        hit = np.flatnonzero(differ[:, j])
        if len(hit):
            by_feature[name] = len(hit)
            xa, xb = na_arr[ia[hit]], nb_arr[ib[hit]]
            o = np.lexsort((xb, xa))[:LIST_CAP]
            by_pairs[name] = [(int(xa[i]), int(xb[i])) for i in o.tolist()]
    no_a = rows_a.get(None, [])
    no_b = rows_b.get(None, [])
    counts = {
        "added": len(added),
        "removed": len(removed),
        "changed": len(changed_rows),
        "unchanged": len(pairs) - len(changed_rows),
        "duplicate_keys_a": len(dup_a),
        "duplicate_keys_b": len(dup_b),
        "duplicate_records_a": sum(len(r) for r in dup_a.values()),
        "duplicate_records_b": sum(len(r) for r in dup_b.values()),
        "no_key_a": len(no_a),
        "no_key_b": len(no_b),
    }

    def dups(d: dict[Key, list[int]], numbers: list[int]) -> list[tuple[Key, list[int]]]:
        groups = [(k, numbered(r, numbers)) for k, r in d.items()]
        return sorted(groups, key=lambda g: g[1][0])[:LIST_CAP]

    return JoinDiff(
        key=key,
        counts=counts,
        added=numbered(added, nb)[:LIST_CAP],
        removed=numbered(removed, na)[:LIST_CAP],
        changed=changed,
        changed_features=changed_features,
        by_feature=dict(sorted(by_feature.items(), key=lambda kv: (-kv[1], kv[0]))),
        by_feature_pairs=by_pairs,
        duplicates_a=dups(dup_a, na),
        duplicates_b=dups(dup_b, nb),
        no_key_a=numbered(no_a, na)[:LIST_CAP],
        no_key_b=numbered(no_b, nb)[:LIST_CAP],
    )


def _rows_by_key(values: Sequence[Key]) -> dict[Key, list[int]]:
    out: dict[Key, list[int]] = {}
    for row, v in enumerate(values):
        if v == ():
            v = None  # an empty list is no key
        got = out.get(v)
        if got is None:
            out[v] = [row]
        else:
            got.append(row)
    return out


def _columns(t: DigestTable, names: Sequence[str], rows: np.ndarray) -> np.ndarray:
    """``t``'s digests of ``rows`` in the columns ``names`` (0 where ``t`` has no such
    column)."""
    out = np.zeros((len(rows), len(names)), np.uint64)
    where = {n: j for j, n in enumerate(names)}
    if len(rows) and t.names:
        out[:, [where[n] for n in t.names]] = t.digests[rows]
    return out


# --------------------------------------------------------------------------------------------
# The records behind a figure, as a filter (codec.filters) finds them


def filter_name(name: str) -> str:
    """A feature's name as the filter language reads it: bare when it can be, else between
    backquotes (a backquote inside doubled)."""
    from .filters import _BARE, KEYWORDS

    m = _BARE.fullmatch(name)
    if m is not None and name not in KEYWORDS:
        return name
    return "`" + name.replace("`", "``") + "`"


def filter_value(v: Any) -> str | None:
    """A value as a filter literal (a string for UTF-8 text, a number); None for a value no
    literal stands for (bytes that are not UTF-8, a list)."""
    if isinstance(v, (bool, tuple)):
        return None
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else None
    if isinstance(v, bytes):
        try:
            text = v.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
            return None
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return None
