"""Per-feature accumulators: everything collected about one feature or feature list."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from ..audio import sniff_audio
from ..values import image_complete, image_decodes, image_magic, image_size, is_text
from .counters import (
    RECORD_CAP,
    Histogram,
    NumericStats,
    RecordList,
    ValueCounter,
    admits,
    narrow,
    settle,
    smallest,
)

# Type codes used in the arrays; "none" is a Feature message with no list set.
TYPE_NAMES = ("none", "bytes", "float", "int64")
NONE_CODE, BYTES_CODE, FLOAT_CODE, INT64_CODE = 0, 1, 2, 3
TYPE_CODE = {n: i for i, n in enumerate(TYPE_NAMES)}

_LEN_RECORD_CAP = 1_000  # record numbers kept per distinct list length
_LEN_TRACKED = 64  # distinct list lengths whose records are kept (the smallest ones)
_TEXT_MAX = 256  # bytes values longer than this are not counted one by one
_IMAGE_SIZES_CAP = 10_000  # distinct (width, height) pairs counted (the smallest ones)
_LENGTH_DRIFT_SHARE = 0.8  # "most records" for list-length drift

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
        self.len_records: dict[int, RecordList] = {}  # bounded (counters.settle)
        self.len_cut: int | None = None
        self.type_records = [RecordList() for _ in TYPE_NAMES]
        self.missing = RecordList()
        self.floats = NumericStats()
        self.ints = NumericStats(histogram=Histogram(integer=True))
        self.int_values = ValueCounter(capacity=1_000)
        self.values = ValueCounter()
        self.long_values = 0
        self.text_values = 0
        self.binary_values = 0
        self.image_formats: Counter[str] = Counter()
        self.audio_formats: Counter[str] = Counter()  # long binary values that are audio
        self.image_sizes: Counter[tuple[int, int]] = Counter()  # bounded (counters.settle)
        self.image_sizes_other = 0
        self.sizes_cut: tuple[int, int] | None = None
        self.undecodable = RecordList()

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
        tracked = self.len_records
        for u, c in zip(uniq.tolist(), counts.tolist()):
            self.len_counts[u] = self.len_counts.get(u, 0) + c
            capped = tracked.get(u)
            if capped is None:
                if not admits(tracked, u, self.len_cut):
                    continue
                capped = tracked[u] = RecordList(_LEN_RECORD_CAP)
            capped.add(rec if lo == hi else rec[length == u])
        self.len_cut, _ = settle(tracked, _LEN_TRACKED, self.len_cut)

    def add_floats(self, values: np.ndarray) -> None:
        self.floats.add(values)

    def add_ints(self, values: np.ndarray, keys: np.ndarray | None = None) -> None:
        """int64 values; ``keys`` (one per value, :func:`.counters.occurrence_keys`) let the
        value counter sample them."""
        if not values.size:
            return
        self.ints.add(values)
        uniq, counts = np.unique(values, return_counts=True)
        self.int_values.update(dict(zip(uniq.tolist(), counts.tolist())))
        if keys is not None:
            self.int_values.sample(keys, values)

    def add_bytes(
        self,
        buf: bytes,
        starts: np.ndarray,
        lengths: np.ndarray,
        owners: np.ndarray,
        decode_images: bool = False,
        sizes: dict[int, tuple[str, int, int] | None] | None = None,
        keys: np.ndarray | None = None,
    ) -> None:
        """Bytes values ``buf[s:s+n]``; ``owners`` are their record numbers. The header size
        of every picture found is noted in ``sizes`` by its start (for the detection checks,
        which would otherwise read it again). ``keys`` (one per value) let the value counter
        sample the values it counts."""
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
            vals = [buf[s : s + n] for s, n in zip(s_l, n_l)]
            self._count_plain(Counter(vals))
            if keys is not None:
                self.values.sample(keys, vals)
            return
        idx = np.flatnonzero(plain)
        s_l, n_l = starts[idx].tolist(), lengths[idx].tolist()
        vals = [buf[s : s + n] for s, n in zip(s_l, n_l)]
        self._count_plain(Counter(vals))
        others: Counter[bytes] = Counter()
        counted: list[int] = []
        for j in np.flatnonzero(~plain).tolist():
            s, n = int(starts[j]), int(lengths[j])
            v = buf[s : s + n]
            if cand[j] and self._image(v, int(owners[j]), decode_images, sizes, s):
                continue
            if n <= _TEXT_MAX:
                others[v] += 1
                counted.append(j)
                vals.append(v)
            else:
                self.long_values += 1
                if is_text(v[:_TEXT_MAX]):
                    self.text_values += 1
                else:
                    self.binary_values += 1
                    audio = sniff_audio(v)
                    if audio is not None:
                        self.audio_formats[audio] += 1
        self._count_plain(others)
        if keys is not None:
            self.values.sample(keys[np.concatenate([idx, np.array(counted, np.int64)])], vals)

    def _count_plain(self, counts: Counter[bytes]) -> None:
        if not counts:
            return
        for v, c in counts.items():
            if is_text(v):
                self.text_values += c
            else:
                self.binary_values += c
        self.values.update(counts)

    def _image(
        self,
        v: bytes,
        record: int,
        decode_images: bool,
        sizes: dict[int, tuple[str, int, int] | None] | None = None,
        start: int = 0,
    ) -> bool:
        magic = image_magic(v)
        if magic is None:
            return False
        self.image_formats[magic.format] += 1
        found = image_size(v)
        if sizes is not None:
            sizes[start] = found
        ok = found is not None and image_complete(magic.format, v)
        if ok and decode_images:
            ok = image_decodes(v)
        if not ok:
            self.undecodable.add(np.array([record], np.int64))
        if found is not None:
            wh = (found[1], found[2])
            if admits(self.image_sizes, wh, self.sizes_cut):
                self.image_sizes[wh] += 1
                self.sizes_cut, dropped = settle(self.image_sizes, _IMAGE_SIZES_CAP, self.sizes_cut)
                self.image_sizes_other += sum(dropped)
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
            else:
                self.len_records[k] = capped.copy()
        self.len_cut, _ = narrow(self.len_records, self.len_cut, o.len_cut)
        self.len_cut, _ = settle(self.len_records, _LEN_TRACKED, self.len_cut)
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
        self.audio_formats.update(o.audio_formats)
        self.image_sizes.update(o.image_sizes)
        self.image_sizes_other += o.image_sizes_other
        self.sizes_cut, dropped = narrow(self.image_sizes, self.sizes_cut, o.sizes_cut)
        self.sizes_cut, more = settle(self.image_sizes, _IMAGE_SIZES_CAP, self.sizes_cut)
        self.image_sizes_other += sum(dropped) + sum(more)
        self.undecodable.merge(o.undecodable)

    def shift(self, by: int) -> None:
        """Renumber the records: every record number plus ``by``."""
        for capped in self.len_records.values():
            capped.shift(by)
        for recs in self.type_records:
            recs.shift(by)
        self.missing.shift(by)
        self.undecodable.shift(by)

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
        tracked = smallest(self.len_records, _LEN_TRACKED)
        parts = [c.array() for k, c in tracked.items() if k != usual]
        recs = np.unique(np.concatenate(parts)) if parts else np.empty(0, np.int64)
        return {
            "usual_len": usual,
            "count": total - n,
            "records": [int(x) for x in recs[:RECORD_CAP]],
        }

    def sizes(self) -> list[tuple[tuple[int, int], int]]:
        """Picture sizes with their counts, most common first (ties: smaller size first)."""
        counted = smallest(self.image_sizes, _IMAGE_SIZES_CAP)
        return sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))

    def numeric(self) -> NumericStats | None:
        if not self.floats.count and not self.ints.count:
            return None
        if not self.floats.count:
            return self.ints
        if not self.ints.count:
            return self.floats
        out = NumericStats()  # both types (drift): one histogram over both
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
                "top": [[show_bytes(v), c] for v, c in self.values.top(top)],
            }
        if self.audio_formats:
            d["audio"] = {
                "count": sum(self.audio_formats.values()),
                "formats": dict(sorted(self.audio_formats.items(), key=lambda kv: (-kv[1], kv[0]))),
            }
        if self.image_formats:
            d["images"] = {
                "count": sum(self.image_formats.values()),
                "formats": dict(sorted(self.image_formats.items(), key=lambda kv: (-kv[1], kv[0]))),
                "sizes": [[w, h, c] for (w, h), c in self.sizes()[:top]],
                "undecodable": self.undecodable.count,
                "undecodable_records": self.undecodable.tolist(),
            }
        return d


def show_bytes(v: Any) -> str:
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
        self.missing = RecordList()
        self.steps = FeatureStats(name)

    def add_steps(self, count: int) -> None:
        self.present += 1
        self.steps_sum += count
        self.steps_min = count if self.steps_min is None else min(self.steps_min, count)
        self.steps_max = count if self.steps_max is None else max(self.steps_max, count)

    def shift(self, by: int) -> None:
        self.missing.shift(by)
        self.steps.shift(by)

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
