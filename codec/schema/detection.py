"""Dataset checks for Object Detection data, fed the same columns as the schema.

For every detection layout of the dataset (:func:`codec.detection.layouts`: any prefix under
which the four ``bbox/{xmin,ymin,xmax,ymax}`` lists occur) the checks collect, with the
records involved:

- ``object_lengths``: a record with boxes lists (any of the four) whose parallel lists (bbox,
  class text, class label, any other ``<prefix>*`` list that records with boxes lists have
  anywhere in the dataset; an absent list counts as empty) have different lengths;
- ``box_not_finite``: a coordinate is NaN or infinite;
- ``box_range``: a coordinate outside [0, 1] when the dataset's coordinates are normalised,
  outside the picture when they are pixels (decided for the whole dataset, see
  :func:`codec.detection.decide_normalized`);
- ``box_inverted``: xmin ≥ xmax or ymin ≥ ymax;
- ``label_map``: a label that is not in the label map (when one is given);
- ``label_text``: a class text that differs from the label map's name for its label, or,
  without a map, from the text most boxes with that label have;
- ``image_size``: ``<root>height`` / ``<root>width`` disagree with the size the encoded picture
  itself declares.

Work is vectorised per batch of records; only class texts and picture headers are read one
by one. Every part merges associatively and commutatively, so the result does not depend on
how the records were split into batches, ranges or processes (a record whose lists agree with
each other but lack one the dataset has elsewhere is kept aside until the end).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..detection import BBOX, NORMALIZED_SHARE, Layout, layout_of
from ..values import image_size
from .counters import RecordList, admits, narrow, settle, smallest
from .stats import BYTES_CODE, INT64_CODE
from .walk import Columns

__all__ = ["CHECKS", "DetectionChecks"]

CHECKS = (
    "object_lengths",
    "box_not_finite",
    "box_range",
    "box_inverted",
    "label_map",
    "label_text",
    "image_size",
)
_PAIRS_CAP = 10_000  # distinct (label, text) pairs whose records are kept (the smallest)
_SIDES = tuple(f"bbox/{s}" for s in BBOX)


class _PrefixChecks:
    """The checks of one prefix holding some bbox list (a layout once the dataset has all
    four)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.seen: set[str] = set()  # lists under the prefix in records with boxes lists
        # Records whose lists agree but are only those of the key: flagged at the end when
        # the dataset has more.
        self.pending: dict[frozenset[str], RecordList] = {}
        self.lists = {c: RecordList() for c in CHECKS}
        self.outside_01 = RecordList()  # coordinate < 0 or > 1 (if normalised)
        self.outside_image = RecordList()  # outside the picture (if pixels)
        self.coords = 0  # finite coordinates seen
        self.coords_01 = 0  # of which in [0, 1]
        self.boxes = 0
        self.records = 0  # records with at least one box
        self.pairs: Counter[tuple[int, str]] = Counter()
        self.pair_records: dict[tuple[int, str], RecordList] = {}  # bounded (settle)
        self.pairs_cut: tuple[int, str] | None = None

    @property
    def is_layout(self) -> bool:
        return all(self.prefix + side in self.seen for side in _SIDES)

    def shift(self, by: int) -> None:
        for recs in [
            *self.lists.values(),
            *self.pending.values(),
            *self.pair_records.values(),
            self.outside_01,
            self.outside_image,
        ]:
            recs.shift(by)

    def merge(self, o: _PrefixChecks) -> None:
        self.seen |= o.seen
        for names, recs in o.pending.items():
            held = self.pending.get(names)
            if held is None:
                self.pending[names] = recs.copy()
            else:
                held.merge(recs)
        for c in CHECKS:
            self.lists[c].merge(o.lists[c])
        self.outside_01.merge(o.outside_01)
        self.outside_image.merge(o.outside_image)
        self.coords += o.coords
        self.coords_01 += o.coords_01
        self.boxes += o.boxes
        self.records += o.records
        self.pairs.update(o.pairs)
        for key, recs in o.pair_records.items():
            mine = self.pair_records.get(key)
            if mine is None:
                self.pair_records[key] = recs.copy()
            else:
                mine.merge(recs)
        self.pairs_cut, _ = narrow(self.pair_records, self.pairs_cut, o.pairs_cut)
        self.pairs_cut, _ = settle(self.pair_records, _PAIRS_CAP, self.pairs_cut)

    @property
    def normalized(self) -> bool:
        return self.coords == 0 or self.coords_01 >= NORMALIZED_SHARE * self.coords

    def to_json(self, label_map: Mapping[int, str] | None) -> dict[str, Any]:
        checks: dict[str, dict[str, Any]] = {}
        for c in CHECKS:
            recs = self.lists[c]
            if c == "box_range":
                recs = self.outside_01 if self.normalized else self.outside_image
            if c == "object_lengths":
                recs = RecordList()
                recs.merge(self.lists[c])
                for key, more in self.pending.items():
                    if key != self.seen:
                        recs.merge(more)
            if c == "label_text" and label_map is None:
                continue
            if recs.count:
                checks[c] = {"count": recs.count, "records": recs.tolist()}
        out: dict[str, Any] = {
            "normalized": self.normalized,
            "records": self.records,
            "boxes": self.boxes,
            "checks": checks,
        }
        if label_map is None:
            texts = self._label_texts()
            if texts:
                out["label_texts"] = texts
        return out

    def _label_texts(self) -> list[dict[str, Any]]:
        """Labels whose boxes carry more than one class text: the usual text and the records
        with another one."""
        by_label: dict[int, Counter[str]] = {}
        for (label, text), n in self.pairs.items():
            by_label.setdefault(label, Counter())[text] = n
        out = []
        tracked = smallest(self.pair_records, _PAIRS_CAP)
        for label, texts in sorted(by_label.items()):
            if len(texts) < 2:
                continue
            usual = max(sorted(texts), key=lambda t: texts[t])
            others = RecordList()
            for text in texts:
                if text != usual and (label, text) in tracked:
                    others.merge(tracked[(label, text)])
            out.append(
                {
                    "label": label,
                    "usual": usual,
                    "others": sorted(t for t in texts if t != usual),
                    "count": others.count,
                    "records": others.tolist(),
                }
            )
        return out


def _per_record(c: Columns, fid: int, records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(lengths, entry ids)`` of feature ``fid`` for each of ``records`` (ascending; 0 / -1
    when absent). Entries of other records are left out."""
    entries = np.flatnonzero(c.fid == fid)
    lengths = np.zeros(len(records), np.int64)
    ids = np.full(len(records), -1, np.int64)
    if entries.size and len(records):
        owners = c.rec[entries]
        at = np.searchsorted(records, owners)
        mine = records[np.minimum(at, len(records) - 1)] == owners  # of these records only
        lengths[at[mine]] = c.length[entries[mine]]
        ids[at[mine]] = entries[mine]
    return lengths, ids


def _numbers(c: Columns, entries: np.ndarray) -> np.ndarray:
    """The float and int64 values of ``entries`` (ascending entry ids) as float64, in order."""
    fmask = np.isin(c.float_owner, entries)
    imask = np.isin(c.int_owner, entries)
    if not imask.any():
        return c.floats[fmask].astype(np.float64)
    owners = np.concatenate([c.float_owner[fmask], c.int_owner[imask]])
    vals = np.concatenate([c.floats[fmask].astype(np.float64), c.ints[imask].astype(np.float64)])
    return vals[np.argsort(owners, kind="stable")]


class DetectionChecks:
    """The checks of every detection layout of a dataset, with an optional label map
    (``{id: name}``)."""

    def __init__(self, label_map: Mapping[int, str] | None = None) -> None:
        self.label_map = dict(label_map) if label_map is not None else None
        self.prefixes: dict[str, _PrefixChecks] = {}

    def merge(self, other: DetectionChecks) -> None:
        for prefix, pc in other.prefixes.items():
            mine = self.prefixes.get(prefix)
            if mine is None:
                mine = self.prefixes[prefix] = _PrefixChecks(prefix)
            mine.merge(pc)

    def shift(self, by: int) -> None:
        for pc in self.prefixes.values():
            pc.shift(by)

    def to_json(self) -> dict[str, Any]:
        return {
            p: pc.to_json(self.label_map) for p, pc in sorted(self.prefixes.items()) if pc.is_layout
        }

    # -- a batch of records ------------------------------------------------------------------

    def add(self, c: Columns) -> None:
        if not len(c.rec):
            return
        present = {c.names[int(f)] for f in np.unique(c.fid)}
        prefixes = {
            name[: -len(side)] for name in present for side in _SIDES if name.endswith(side)
        }
        if not prefixes:
            return
        fids = {n: i for i, n in enumerate(c.names)}
        for prefix in sorted(prefixes):
            pc = self.prefixes.get(prefix)
            if pc is None:
                pc = self.prefixes[prefix] = _PrefixChecks(prefix)
            self._add_layout(pc, layout_of(prefix, present), c, fids)

    def _add_layout(
        self, pc: _PrefixChecks, layout: Layout, c: Columns, fids: Mapping[str, int]
    ) -> None:
        records = c.records
        # Every list under the prefix, one length per record (0 when absent).
        lengths = {
            name: _per_record(c, fids[name], records) for name in layout.parallel if name in fids
        }
        absent = (np.zeros(len(records), np.int64), np.full(len(records), -1, np.int64))
        sides = [lengths.get(name, absent) for name in layout.boxes]
        # Records with boxes lists, and the lists such records have.
        boxed = np.zeros(len(records), bool)
        for _lens, ids in sides:
            boxed |= ids >= 0
        if not boxed.any():
            return
        names = [n for n, (_lens, ids) in lengths.items() if (ids[boxed] >= 0).any()]
        pc.seen.update(names)
        stack = np.stack([lengths[n][0][boxed] for n in names])
        high = stack.max(axis=0)
        uneven = high != stack.min(axis=0)
        pc.lists["object_lengths"].add(records[boxed][uneven])
        agree = records[boxed][~uneven & (high > 0)]
        if agree.size:
            pc.pending.setdefault(frozenset(names), RecordList()).add(agree)
        # A record with boxes but uneven lists still has its first boxes checked.
        n_boxes = np.min([s[0] for s in sides], axis=0)
        has = n_boxes > 0
        if not has.any():
            return
        recs = records[has]
        pc.records += int(has.sum())
        # Coordinates, box by box (the first n_boxes of each list).
        counts = n_boxes[has]
        coords = []
        for lens, ids in sides:
            vals = _numbers(c, np.sort(ids[has]))
            starts = np.cumsum(lens[has]) - lens[has]
            take = np.repeat(starts, counts) + (
                np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
            )
            coords.append(vals[take])
        x0, y0, x1, y1 = coords
        owner = np.repeat(recs, counts)
        pc.boxes += int(counts.sum())
        allc = np.concatenate(coords)
        finite_all = np.isfinite(allc)
        pc.coords += int(finite_all.sum())
        pc.coords_01 += int(((allc >= 0) & (allc <= 1) & finite_all).sum())
        finite = np.isfinite(x0) & np.isfinite(y0) & np.isfinite(x1) & np.isfinite(y1)
        pc.lists["box_not_finite"].add(np.unique(owner[~finite]))
        with np.errstate(invalid="ignore"):
            low = np.minimum(np.minimum(x0, y0), np.minimum(x1, y1))
            high = np.maximum(np.maximum(x0, y0), np.maximum(x1, y1))
            pc.outside_01.add(np.unique(owner[finite & ((low < 0) | (high > 1))]))
            inverted = finite & ((x0 >= x1) | (y0 >= y1))
        pc.lists["box_inverted"].add(np.unique(owner[inverted]))
        # Pixels: the picture's size from <root>width / <root>height.
        width = self._scalar(c, fids.get(layout.width), recs)
        height = self._scalar(c, fids.get(layout.height), recs)
        w_box, h_box = np.repeat(width, counts), np.repeat(height, counts)
        with np.errstate(invalid="ignore"):
            beyond = (np.maximum(x0, x1) > w_box) | (np.maximum(y0, y1) > h_box)
            pc.outside_image.add(np.unique(owner[finite & ((low < 0) | beyond)]))
        self._labels(pc, layout, c, fids, recs, counts, owner)
        self._image_sizes(pc, layout, c, fids, recs, width, height)

    @staticmethod
    def _scalar(c: Columns, fid: int | None, recs: np.ndarray) -> np.ndarray:
        """The first value of an int64 feature per record (NaN when absent)."""
        out = np.full(len(recs), np.nan)
        if fid is None:
            return out
        lens, ids = _per_record(c, fid, recs)
        have = (ids >= 0) & (lens > 0) & (c.kind[np.maximum(ids, 0)] == INT64_CODE)
        if have.any():
            firsts = np.searchsorted(c.int_owner, ids[have])
            out[have] = c.ints[firsts].astype(np.float64)
        return out

    def _labels(
        self,
        pc: _PrefixChecks,
        layout: Layout,
        c: Columns,
        fids: Mapping[str, int],
        recs: np.ndarray,
        counts: np.ndarray,
        owner: np.ndarray,
    ) -> None:
        label_fid = fids.get(layout.label)
        text_fid = fids.get(layout.text)
        labels = np.full(int(counts.sum()), -1, np.int64)
        has_label = np.zeros(int(counts.sum()), bool)
        if label_fid is not None:
            lens, ids = _per_record(c, label_fid, recs)
            use = (ids >= 0) & (lens == counts) & (c.kind[np.maximum(ids, 0)] == INT64_CODE)
            if use.any():
                mask = np.isin(c.int_owner, ids[use])
                box_use = np.repeat(use, counts)
                labels[box_use] = c.ints[mask]
                has_label[box_use] = True
        if self.label_map is not None and has_label.any():
            known = np.fromiter(self.label_map, np.int64, len(self.label_map))
            outside = has_label & ~np.isin(labels, known)
            pc.lists["label_map"].add(np.unique(owner[outside]))
        if text_fid is None or not has_label.any():
            return
        lens, ids = _per_record(c, text_fid, recs)
        use = (ids >= 0) & (lens == counts) & (c.kind[np.maximum(ids, 0)] == BYTES_CODE)
        if not use.any():
            return
        mask = np.isin(c.b_owner, ids[use])
        starts, sizes = c.b_start[mask], c.b_len[mask]
        box_use = np.repeat(use, counts)
        buf = c.buf
        texts = [
            bytes(buf[s : s + n]).decode("utf-8", "replace")
            for s, n in zip(starts.tolist(), sizes.tolist())
        ]
        box_labels = labels[box_use].tolist()
        box_owner = owner[box_use].tolist()
        both = has_label[box_use].tolist()
        if self.label_map is not None:
            names = self.label_map
            wrong = [
                box_owner[k]
                for k, (label, text) in enumerate(zip(box_labels, texts))
                if both[k] and names.get(label, text) != text
            ]
            pc.lists["label_text"].add(np.unique(np.array(wrong, np.int64)))
            return
        owners_of: dict[tuple[int, str], list[int]] = {}
        for k, key in enumerate(zip(box_labels, texts)):
            if both[k]:
                owners_of.setdefault(key, []).append(box_owner[k])
        for key, owners in owners_of.items():
            pc.pairs[key] += len(owners)
            if admits(pc.pair_records, key, pc.pairs_cut):
                lst = pc.pair_records.get(key)
                if lst is None:
                    lst = pc.pair_records[key] = RecordList()
                lst.add(np.unique(np.array(owners, np.int64)))
        pc.pairs_cut, _ = settle(pc.pair_records, _PAIRS_CAP, pc.pairs_cut)

    @staticmethod
    def _image_sizes(
        pc: _PrefixChecks,
        layout: Layout,
        c: Columns,
        fids: Mapping[str, int],
        recs: np.ndarray,
        width: np.ndarray,
        height: np.ndarray,
    ) -> None:
        image_fid = fids.get(layout.image)
        if image_fid is None:
            return
        lens, ids = _per_record(c, image_fid, recs)
        use = (ids >= 0) & (lens == 1) & (c.kind[np.maximum(ids, 0)] == BYTES_CODE)
        use &= np.isfinite(width) | np.isfinite(height)
        if not use.any():
            return
        mask = np.isin(c.b_owner, ids[use])
        view = memoryview(c.buf)
        bad = []
        for rec, s, n, w, h in zip(
            recs[use].tolist(),
            c.b_start[mask].tolist(),
            c.b_len[mask].tolist(),
            width[use].tolist(),
            height[use].tolist(),
        ):
            found = c.image_sizes[s] if s in c.image_sizes else image_size(view[s : s + n])
            if found is None:
                continue  # not a picture it can read: the undecodable check says so
            _fmt, iw, ih = found
            if (w == w and int(w) != iw) or (h == h and int(h) != ih):
                bad.append(rec)
        pc.lists["image_size"].add(np.array(bad, np.int64))
