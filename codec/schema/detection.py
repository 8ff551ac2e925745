"""Dataset checks for Object Detection data, fed the same columns as the schema.

For every detection layout of the dataset (:func:`codec.detection.layouts`: any prefix under
which the four ``bbox/{xmin,ymin,xmax,ymax}`` lists occur) the checks collect, with the
records involved:

- ``object_lengths``: a record with boxes lists (any of the four) whose object lists no
  layout explains (:func:`codec.detection.object_lengths`, the rule a record's view uses
  too): N values per object list, N·K per keypoint list with K the dataset's (the value most
  records have), N PNGs or N·H·W numbers for ``mask``, the sum of ``densepose/num`` for
  DensePose points; a list that records with boxes lists have elsewhere in the dataset
  counts as empty where it is absent. Predictions (``image/detection/``) are a layout of
  their own, with their own N. The first such record is given in words (``example``);
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
each other is kept aside, by the lists it has and its K, until the end, when the dataset's
lists and K are known).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..detection import (
    BBOX,
    FACTORS,
    NORMALIZED_SHARE,
    Layout,
    factor_lists,
    layout_kind,
    layout_of,
    layout_rank,
    list_kind,
    object_lengths,
)
from ..values import image_size
from .counters import RecordList, admits, narrow, settle, smallest
from .stats import BYTES_CODE, FLOAT_CODE, INT64_CODE
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
_Key = tuple[frozenset[str], tuple[tuple[str, int], ...]]  # lists, K (C) by kind
_PAIRS_CAP = 10_000  # distinct (label, text) pairs whose records are kept (the smallest)
_SIDES = tuple(f"bbox/{s}" for s in BBOX)


class _PrefixChecks:
    """The checks of one prefix holding some bbox list (a layout once the dataset has all
    four)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.seen: set[str] = set()  # lists under the prefix in records with boxes lists
        # Records whose lists agree, by the lists they have and their K (C): flagged at the
        # end when the dataset has more lists, or another K (C) in most records; with the
        # first such record and its N.
        self.pending: dict[_Key, RecordList] = {}
        self.pending_first: dict[_Key, tuple[int, int]] = {}
        self.first: tuple[int, str] | None = None  # the first record flagged, in words
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

    def note(self, example: tuple[int, str]) -> None:
        """Keep ``(record, problem)`` when it is the first record flagged so far."""
        if self.first is None or example < self.first:
            self.first = example

    def hold(self, key: _Key, records: np.ndarray, first: int, objects: int) -> None:
        """Keep ``records`` aside under ``key``; ``first`` of them has ``objects`` objects."""
        self.pending.setdefault(key, RecordList()).add(records)
        held = self.pending_first.get(key)
        if held is None or (first, objects) < held:
            self.pending_first[key] = (first, objects)

    def shift(self, by: int) -> None:
        if by and self.first is not None:
            self.first = (self.first[0] + by, self.first[1])
        self.pending_first = {k: (r + by, n) for k, (r, n) in self.pending_first.items()}
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
        for key, recs in o.pending.items():
            held = self.pending.get(key)
            if held is None:
                self.pending[key] = recs.copy()
            else:
                held.merge(recs)
        for held_key, first in o.pending_first.items():
            known = self.pending_first.get(held_key)
            if known is None or first < known:
                self.pending_first[held_key] = first
        if o.first is not None:
            self.note(o.first)
        for c in CHECKS:
            self.lists[c].merge(o.lists[c])
        self.outside_01.merge(o.outside_01)
        self.outside_image.merge(o.outside_image)
        self.coords += o.coords
        self.coords_01 += o.coords_01
        self.boxes += o.boxes
        self.records += o.records
        self.pairs.update(o.pairs)
        for pair, recs in o.pair_records.items():
            mine = self.pair_records.get(pair)
            if mine is None:
                self.pair_records[pair] = recs.copy()
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
            example = None
            if c == "object_lengths":
                recs, example = self._object_lengths()
            if c == "label_text" and label_map is None:
                continue
            if recs.count:
                checks[c] = {"count": recs.count, "records": recs.tolist()}
                if example is not None:
                    checks[c]["example"] = {"record": example[0], "problem": example[1]}
        out: dict[str, Any] = {
            "kind": self.kind,
            "normalized": self.normalized,
            "records": self.records,
            "boxes": self.boxes,
            "checks": checks,
        }
        factors = self.factors()
        if factors:
            out["factors"] = factors
        if label_map is None:
            texts = self._label_texts()
            if texts:
                out["label_texts"] = texts
        return out

    @property
    def kind(self) -> str:
        return layout_kind(self.prefix, self.seen)

    def factors(self) -> dict[str, int]:
        """K (C) of the dataset, by kind: the value most records that agree with themselves
        have (ties: the smaller)."""
        votes: dict[str, Counter[int]] = {}
        for (_names, factors), recs in self.pending.items():
            for kind, value in factors:
                votes.setdefault(kind, Counter())[value] += recs.count
        return {
            kind: min(counts, key=lambda v: (-counts[v], v))
            for kind, counts in sorted(votes.items())
        }

    def _object_lengths(self) -> tuple[RecordList, tuple[int, str] | None]:
        """The records whose object lists no layout explains, and the first of them in words:
        those flagged on the way, those lacking a list other records have, and those whose
        K (C) is not the dataset's."""
        recs = RecordList()
        recs.merge(self.lists["object_lengths"])
        examples = [self.first] if self.first is not None else []
        factors = self.factors()
        for key, more in sorted(self.pending.items(), key=lambda kv: self.pending_first[kv[0]]):
            names, own = key
            missing = sorted(self.seen - names)
            off = [(k, v) for k, v in own if factors.get(k, v) != v]
            if not missing and not off:
                continue
            recs.merge(more)
            first, objects = self.pending_first[key]
            examples.append((first, self._pending_problem(names, objects, missing, off, factors)))
        return recs, min(examples) if examples else None

    def _pending_problem(
        self,
        names: frozenset[str],
        objects: int,
        missing: list[str],
        off: list[tuple[str, int]],
        factors: Mapping[str, int],
    ) -> str:
        """A held record's problem in words: a list it lacks, or a list whose K (C) is not
        the dataset's (``image/object/keypoint/x has 30 values; expected N·K = 2·17 = 34``)."""
        layout = layout_of(self.prefix, names | set(missing))
        lengths = {b: np.array([objects]) for b in layout.boxes}
        for name in missing:
            lengths[name] = np.zeros(1, np.int64)
        for kind, value in off:
            first = factor_lists(layout, names, kind)[0]
            lengths[first] = np.array([objects * value])
        got = object_lengths(layout, lengths, factors=factors)
        problems = got.problems(0)
        text = problems[0] if problems else f"the {self.prefix}* lists differ from other records'"
        if off and not missing:
            kind, _value = off[0]
            text += f" ({FACTORS[kind]} = {factors[kind]} in most records)"
        return text

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
        """Each layout's checks, ground truth first (``image/object/`` first of all), then
        predictions (``image/detection/`` first), as :func:`codec.detection.layouts` orders
        them."""
        found = [pc for pc in self.prefixes.values() if pc.is_layout]
        found.sort(key=lambda pc: layout_rank(pc.prefix, pc.kind))
        return {pc.prefix: pc.to_json(self.label_map) for pc in found}

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
        self._lengths(pc, layout, c, fids, records[boxed], {n: lengths[n] for n in names}, boxed)
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

    def _lengths(
        self,
        pc: _PrefixChecks,
        layout: Layout,
        c: Columns,
        fids: Mapping[str, int],
        recs: np.ndarray,
        lengths: Mapping[str, tuple[np.ndarray, np.ndarray]],
        boxed: np.ndarray,
    ) -> None:
        """The object lists of the records with boxes lists (``recs``), checked by what they
        are (:func:`codec.detection.object_lengths`): the records no layout explains are
        flagged now; the others are kept aside by the lists they have and their K (C) until
        the dataset's are known."""
        sub = {n: lens[boxed] for n, (lens, _ids) in lengths.items()}
        numeric = {}
        for n, (_lens, ids) in lengths.items():
            if list_kind(layout, n) == "mask":
                mine = ids[boxed]
                kinds = c.kind[np.maximum(mine, 0)]
                numeric[n] = (mine >= 0) & ((kinds == FLOAT_CODE) | (kinds == INT64_CODE))
        width = self._scalar(c, fids.get(layout.width), recs)
        height = self._scalar(c, fids.get(layout.height), recs)
        points = self._sums(c, lengths.get(f"{layout.prefix}densepose/num"), boxed)
        got = object_lengths(layout, sub, numeric=numeric, pixels=width * height, points=points)
        bad = got.bad
        if bad.any():
            pc.lists["object_lengths"].add(recs[bad])
            i = int(np.flatnonzero(bad)[0])
            pc.note((int(recs[i]), got.problems(i)[0]))
        agree = ~bad & (got.n > 0)
        if not agree.any():
            return
        kinds = sorted(got.factors)
        held, objects = recs[agree], got.n[agree]
        table = np.array([got.factors[k][agree] for k in kinds], np.int64).reshape(
            len(kinds), len(held)
        )
        rows, which = np.unique(table.T, axis=0, return_inverse=True)
        which = np.asarray(which).reshape(-1)
        for u, row in enumerate(rows.tolist()):
            mine = which == u
            key = (frozenset(lengths), tuple(zip(kinds, row)))
            pc.hold(key, held[mine], int(held[mine][0]), int(objects[mine][0]))

    @staticmethod
    def _sums(
        c: Columns, found: tuple[np.ndarray, np.ndarray] | None, boxed: np.ndarray
    ) -> np.ndarray | None:
        """The sum of an int64 list per record (``found``: its lengths and entries); -1 where
        absent or not int64; None without the list."""
        if found is None:
            return None
        ids = found[1][boxed]
        out = np.full(len(ids), -1.0)
        have = (ids >= 0) & (c.kind[np.maximum(ids, 0)] == INT64_CODE)
        if have.any():
            entries = ids[have]
            mask = np.isin(c.int_owner, entries)
            uniq, inv = np.unique(c.int_owner[mask], return_inverse=True)
            totals = np.bincount(
                np.asarray(inv).reshape(-1),
                weights=c.ints[mask].astype(np.float64),
                minlength=len(uniq),
            )
            pos = np.minimum(np.searchsorted(uniq, entries), max(len(uniq) - 1, 0))
            hit = (pos < len(uniq)) & (uniq[pos] == entries) if len(uniq) else pos < 0
            out[have] = np.where(hit, totals[pos] if len(uniq) else 0.0, 0.0)
        return out

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
