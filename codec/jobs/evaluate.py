"""Detection evaluation as a job: the ground truth and a model's predictions of every record,
matched as pycocotools' COCOeval matches them (:mod:`codec.evaluate`), on any executor.

The Object Detection API's keys are read (:mod:`codec.detection` names them): ground truth
under ``image/object/`` (``bbox/{xmin,ymin,xmax,ymax}``, ``class/label`` or ``class/text``,
``is_crowd``, ``difficult``), predictions under ``image/detection/`` as
``infer_detections.py`` writes them (``bbox/*``, ``label``, ``score``). Any other prefix may
be named.

**Predictions in the same records** (:class:`EvaluateJob`): each task reads its records in
vectorised batches (:func:`codec.schema.scan.feed_spans`, every data CRC checked), takes both
sides of each record and runs COCOeval's per-image evaluation on them
(:func:`codec.evaluate.match`), returning compact per-image match lists. The merge stitches
the ranges of a file (:func:`.walk.stitch`), numbers the records, renumbers the classes into
the dataset's sorted class list and concatenates the lists in record order
(:func:`codec.evaluate.merge_matches`); one :func:`codec.evaluate.accumulate` gives the
figures. Matching is per image, so the answer is the same, byte for byte, whatever the split
and wherever the tasks ran.

**Predictions in a second dataset** (:func:`evaluate_apart`): each dataset's objects are
read by a job of their own (:class:`SideJob`), the records joined by ``image/source_id``
when every record of both has one, else by ``image/filename``, else by record number, and
the joined pictures evaluated here. The join's misses (records of either side with no
partner, keys repeated) are counted and the first keys named.

Classes: a record's ``label`` when it has one; else its ``text``, turned into the label the
label map gives it when one is given (so ground truth that names classes by text meets
predictions that number them); else the text itself. Classes are sorted (labels by number,
then texts), which is COCOeval's category order.

A record is left out, and counted with the first numbers, when its data CRC fails, when it
is not an Example, when the object lists of a side disagree in length (or predictions have
no scores), when a coordinate or score is not a finite number, or when its boxes would need
its picture's size (one side normalised, the other in pixels) and it has none. A record
without boxes is evaluated (it has no objects) and counted.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .. import evaluate as ev
from .. import mistakes
from ..detection import BBOX, OBJECTS, PREDICTIONS, decide_normalized, layout_root, layouts
from ..detection import coordinates as box_coordinates
from ..locations import shown
from ..mistakes import Mistakes
from ..schema.scan import feed_spans, file_kind, scan_range
from ..schema.stats import BYTES_CODE, FLOAT_CODE, INT64_CODE, NONE_CODE
from ..schema.walk import ColumnFeed, Columns
from .plan import Task
from .run import Progress, run
from .verify import failure_text
from .walk import RangeEnds, stitch, walk_task

__all__ = [
    "LEFT_OUT",
    "PREDICTIONS_PREFIX",
    "TRUTH_PREFIX",
    "ClassKey",
    "EvaluateJob",
    "EvaluatePart",
    "EvaluationResult",
    "JoinReport",
    "Looked",
    "SideJob",
    "SideTable",
    "class_key_sort",
    "evaluate_apart",
    "look",
]

TRUTH_PREFIX = "image/object/"
PREDICTIONS_PREFIX = "image/detection/"
_FIRST = 5  # record numbers (or join keys) named per reason

# Why a record is left out; 0: it is evaluated.
LEFT_OUT = (
    "",
    "its data CRC fails",
    "it is not an Example",
    "its object lists disagree in length (or predictions have no scores)",
    "a coordinate or score is not a finite number",
    "it has no picture size to put normalised boxes in pixels",
    "it has no partner in the other dataset",
    "its masks are missing, cannot be decoded or are not one per object (segm)",
)
OK, DAMAGED, NOT_EXAMPLE, LISTS, NOT_FINITE, NO_SIZE, UNJOINED, NO_MASKS = range(len(LEFT_OUT))

ClassKey = tuple[int, int, str]
"""A class: ``(0, label, "")`` by number, ``(1, 0, text)`` by text, ``(2, 0, "")`` for
objects with neither."""
_NO_CLASS: ClassKey = (2, 0, "")


def class_key_sort(keys: Sequence[ClassKey]) -> list[ClassKey]:
    """Classes in COCOeval's category order: labels by number, then texts, then none."""
    return sorted(set(keys))


# -- one side's objects ------------------------------------------------------------------------


@dataclass
class SideTable:
    """One side's objects of ``records`` records (numbered from 0 in the table), one row each:
    ``rec``, ``index`` (its place in the record's lists), corners ``box`` (``(n, 4)`` xmin,
    ymin, xmax, ymax as stored), ``cls`` (into ``keys``), ``crowd``, ``difficult`` and
    ``score``. Per record: ``status`` (a number of :data:`LEFT_OUT`), ``count`` (objects),
    ``size`` (width, height; NaN unknown) and, for a join, ``source_id`` and ``filename``
    (None: absent); ``present``, whether the side's boxes are in the record at all (even
    empty). ``texts``: per label, how often each class text stood beside it; ``text``, when
    the reader keeps it, each object's class text (None: none); ``masks``, when the reader
    reads them, each object's mask (:data:`codec.evaluate.Mask`)."""

    records: int
    rec: np.ndarray
    index: np.ndarray
    box: np.ndarray
    cls: np.ndarray
    crowd: np.ndarray
    difficult: np.ndarray
    score: np.ndarray
    keys: list[ClassKey]
    status: np.ndarray
    count: np.ndarray
    size: np.ndarray
    texts: dict[int, Counter[str]] = field(default_factory=dict)
    source_id: list[bytes | None] | None = None
    filename: list[bytes | None] | None = None
    present: np.ndarray | None = None
    text: np.ndarray | None = None
    masks: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.rec)

    @classmethod
    def empty(cls, records: int = 0, keyed: bool = False) -> SideTable:
        e = np.zeros(0, np.int64)
        return cls(
            records,
            e,
            e,
            np.zeros((0, 4)),
            e,
            np.zeros(0, bool),
            np.zeros(0, bool),
            np.zeros(0),
            [],
            np.zeros(records, np.int8),
            np.zeros(records, np.int64),
            np.full((records, 2), np.nan),
            {},
            [None] * records if keyed else None,
            [None] * records if keyed else None,
            np.zeros(records, bool),
        )

    def rows(self, keep: np.ndarray) -> SideTable:
        """The table with only the object rows ``keep`` (a mask, or row numbers in the
        order wanted)."""
        return SideTable(
            self.records,
            self.rec[keep],
            self.index[keep],
            self.box[keep],
            self.cls[keep],
            self.crowd[keep],
            self.difficult[keep],
            self.score[keep],
            self.keys,
            self.status,
            self.count,
            self.size,
            self.texts,
            self.source_id,
            self.filename,
            self.present,
            None if self.text is None else self.text[keep],
            None if self.masks is None else self.masks[keep],
        )

    @staticmethod
    def concat(parts: Sequence[SideTable]) -> SideTable:
        """The tables of consecutive records, one after the other (records renumbered, class
        keys put into one list)."""
        keyed = any(p.source_id is not None for p in parts)
        if not parts:
            return SideTable.empty(keyed=keyed)
        keys: list[ClassKey] = []
        where: dict[ClassKey, int] = {}
        for p in parts:
            for k in p.keys:
                if k not in where:
                    where[k] = len(keys)
                    keys.append(k)
        bases = list(itertools.accumulate((p.records for p in parts), initial=0))
        texts: dict[int, Counter[str]] = {}
        for p in parts:
            for label, c in p.texts.items():
                texts.setdefault(label, Counter()).update(c)

        def mapped(p: SideTable) -> np.ndarray:
            m = np.array([where[k] for k in p.keys], np.int64)
            return m[p.cls] if len(p.cls) else np.zeros(0, np.int64)

        def listed(name: str) -> list[bytes | None] | None:
            if not keyed:
                return None
            out: list[bytes | None] = []
            for p in parts:
                got = getattr(p, name)
                out.extend(got if got is not None else [None] * p.records)
            return out

        return SideTable(
            bases[-1],
            np.concatenate([p.rec + b for p, b in zip(parts, bases)]),
            np.concatenate([p.index for p in parts]),
            np.concatenate([p.box for p in parts]),
            np.concatenate([mapped(p) for p in parts]),
            np.concatenate([p.crowd for p in parts]),
            np.concatenate([p.difficult for p in parts]),
            np.concatenate([p.score for p in parts]),
            keys,
            np.concatenate([p.status for p in parts]),
            np.concatenate([p.count for p in parts]),
            np.concatenate([p.size for p in parts]),
            texts,
            listed("source_id"),
            listed("filename"),
            _cat_all([p.present for p in parts], bool),
            _cat_all([p.text for p in parts], object),
            _cat_all([p.masks for p in parts], object),
        )


@dataclass(frozen=True)
class _Side:
    """The keys of one side: ground truth (``truth``) or predictions under ``prefix``, and
    whether its masks (``<prefix>mask``) are read."""

    prefix: str
    truth: bool
    masks: bool = False

    @property
    def boxes(self) -> list[str]:
        return [f"{self.prefix}bbox/{s}" for s in BBOX]

    @property
    def labels(self) -> list[str]:
        """The class label lists, the first a record has winning (``image/detection/label``
        as ``infer_detections.py`` writes it, before ``class/label``)."""
        own = [] if self.truth else [f"{self.prefix}label"]
        return [*own, f"{self.prefix}class/label"]

    @property
    def text(self) -> str:
        return f"{self.prefix}class/text"

    @property
    def scores(self) -> list[str]:
        return [f"{self.prefix}score", f"{self.prefix}scores"]

    @property
    def root(self) -> str:
        return layout_root(self.prefix)


@dataclass
class _Column:
    """One feature of the records of a batch: per record its length (-1: absent) and type
    code; its numbers (float64, or int64 for labels) and the record of each, in order."""

    length: np.ndarray
    kind: np.ndarray
    values: np.ndarray
    ints: np.ndarray
    owner: np.ndarray  # record position of each of ``values``
    int_owner: np.ndarray


def _column(c: Columns, fids: Mapping[str, int], name: str, n: int) -> _Column:
    length = np.full(n, -1, np.int64)
    kind = np.full(n, NONE_CODE, np.int64)
    f = fids.get(name)
    e64 = np.zeros(0, np.int64)
    if f is None or not len(c.fid):
        return _Column(length, kind, np.zeros(0), e64, e64, e64)
    ents = np.flatnonzero(c.fid == f)
    pos = np.searchsorted(c.records, c.rec[ents])
    length[pos] = c.length[ents]
    kind[pos] = c.kind[ents]
    mine = np.zeros(len(c.fid), bool)
    mine[ents] = True
    entry_pos = np.zeros(len(c.fid), np.int64)
    entry_pos[ents] = pos
    fsel = mine[c.float_owner] if len(c.float_owner) else np.zeros(0, bool)
    isel = mine[c.int_owner] if len(c.int_owner) else np.zeros(0, bool)
    f_own = entry_pos[c.float_owner[fsel]]
    i_own = entry_pos[c.int_owner[isel]]
    ints = c.ints[isel]
    values = np.concatenate([c.floats[fsel].astype(np.float64), ints.astype(np.float64)])
    owner = np.concatenate([f_own, i_own])
    order = np.argsort(owner, kind="stable")
    return _Column(length, kind, values[order], ints, owner[order], i_own)


def _bytes_column(
    c: Columns, fids: Mapping[str, int], name: str, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A bytes feature of the records of a batch: per record its length (-1: absent) and
    type code; the start and length in ``c.buf`` of each value, and its record position."""
    length = np.full(n, -1, np.int64)
    kind = np.full(n, NONE_CODE, np.int64)
    f = fids.get(name)
    e64 = np.zeros(0, np.int64)
    if f is None or not len(c.fid):
        return length, kind, e64, e64.reshape(0, 2)
    ents = np.flatnonzero(c.fid == f)
    pos = np.searchsorted(c.records, c.rec[ents])
    length[pos] = c.length[ents]
    kind[pos] = c.kind[ents]
    mine = np.zeros(len(c.fid), bool)
    mine[ents] = True
    entry_pos = np.zeros(len(c.fid), np.int64)
    entry_pos[ents] = pos
    sel = mine[c.b_owner] if len(c.b_owner) else np.zeros(0, bool)
    spans = np.stack([c.b_start[sel], c.b_len[sel]], 1).astype(np.int64)
    return length, kind, entry_pos[c.b_owner[sel]], spans


def _first_bytes(c: Columns, fids: Mapping[str, int], name: str, n: int) -> list[bytes | None]:
    """Per record, the first value of a bytes feature (None: absent or empty)."""
    _length, kind, owner, spans = _bytes_column(c, fids, name, n)
    out: list[bytes | None] = [None] * n
    seen = np.zeros(n, bool)
    for r, (s, ln) in zip(owner.tolist(), spans.tolist()):
        if not seen[r] and kind[r] == BYTES_CODE:
            seen[r] = True
            out[r] = c.buf[s : s + ln]
    return out


def _read_masks(
    c: Columns,
    fids: Mapping[str, int],
    side: _Side,
    n: int,
    count: np.ndarray,
    has: np.ndarray,
    rec: np.ndarray,
    status: np.ndarray,
) -> np.ndarray:
    """Each object's mask (``rec``: the record position of each object row), read as
    :mod:`codec.layers` reads them for drawing: ``<prefix>mask`` as one PNG per object or as
    N·H·W floats (H, W from ``<root>height`` / ``<root>width``), > 0 inside. A record with
    objects whose masks are absent, not one per object or not decodable gets
    :data:`NO_MASKS` in ``status``."""
    from ..layers import _cut, _decoded_cut

    out = np.empty(len(rec), object)
    name = f"{side.prefix}mask"
    b_len, b_kind, b_owner, b_spans = _bytes_column(c, fids, name, n)
    fcol = _column(c, fids, name, n)
    heights = _scalar(_column(c, fids, f"{side.root}height", n), n)
    widths = _scalar(_column(c, fids, f"{side.root}width", n), n)
    first = np.searchsorted(rec, np.arange(n))
    bad = np.zeros(n, bool)
    png = has & (b_kind == BYTES_CODE) & (b_len == count)
    for r, (s, ln) in zip(b_owner.tolist(), b_spans.tolist()):
        if not png[r]:
            continue
        got = _decoded_cut(c.buf[s : s + ln])
        if isinstance(got, str):
            bad[r] = True
            continue
        k = int(first[r])
        first[r] += 1
        out[k] = got
    floats = has & ~png & (fcol.kind == FLOAT_CODE)
    for r in np.flatnonzero(floats).tolist():
        h, w, m = heights[r], widths[r], int(count[r])
        if not (np.isfinite(h) and np.isfinite(w)) or fcol.length[r] != m * int(h) * int(w):
            bad[r] = True
            continue
        lo = int(np.searchsorted(fcol.owner, r))
        stack = fcol.values[lo : lo + fcol.length[r]].reshape(m, int(h), int(w)) > 0
        k = int(np.searchsorted(rec, r))
        for i in range(m):
            out[k + i] = _cut(stack[i])
    bad |= has & ~png & ~floats
    status[bad & (status == OK)] = NO_MASKS
    return out


def _scalar(col: _Column, n: int) -> np.ndarray:
    """Per record, the one number of a feature holding exactly one (NaN otherwise)."""
    out = np.full(n, np.nan)
    one = np.flatnonzero(col.length == 1)
    if one.size:
        first = np.searchsorted(col.owner, one)
        out[one] = col.values[first]
    return out


class _Reader(ColumnFeed):
    """What a task reads of its records: the tables of one or both sides, built from payload
    batches as :func:`codec.schema.scan.feed_spans` and ``scan_slow`` hand them to a schema
    builder (this stands in for one: ``_add_buffer``, ``add_payloads``, ``add_damaged``)."""

    def __init__(
        self,
        sides: Sequence[_Side],
        label_map: Mapping[int, str] | None,
        keyed: bool,
        sizes: bool,
        keep_text: bool = False,
    ) -> None:
        self.sides = sides
        self.keep_text = keep_text
        self.names = {v: k for k, v in (label_map or {}).items()}
        self.keyed = keyed
        self.sizes = sizes
        super().__init__()
        self.odd: list[int] = []  # not Examples
        self.batches: list[tuple[np.ndarray, list[SideTable]]] = []

    def _not_example(self, number: int) -> None:
        self.odd.append(number)

    def _take(self, c: Columns) -> None:
        n = len(c.records)
        if not n:
            return
        fids = {name: i for i, name in enumerate(c.names)}
        self.batches.append((c.records.copy(), [self._side(c, fids, s, n) for s in self.sides]))

    def _side(self, c: Columns, fids: Mapping[str, int], side: _Side, n: int) -> SideTable:
        cols = [_column(c, fids, name, n) for name in side.boxes]
        lens = np.stack([np.maximum(col.length, 0) for col in cols])
        numeric = np.stack(
            [
                (col.kind == FLOAT_CODE) | (col.kind == INT64_CODE) | (col.length <= 0)
                for col in cols
            ]
        )
        count = lens[0]
        good = (lens == count).all(axis=0) & numeric.all(axis=0)
        # class labels: the first list a record has
        label_cols = [_column(c, fids, name, n) for name in side.labels]
        label_len = np.full(n, -1, np.int64)
        label_from = np.full(n, -1, np.int64)
        for j, col in enumerate(label_cols):
            take = (label_len < 0) & (col.length >= 0)
            label_len[take] = col.length[take]
            label_from[take] = j
            good &= ~take | (col.kind == INT64_CODE) | (col.length == 0)
        t_len, t_kind, t_owner, t_spans = _bytes_column(c, fids, side.text, n)
        good &= (label_len < 0) | (label_len == count)
        good &= (t_len < 0) | (t_len == count)
        good &= (t_len <= 0) | (t_kind == BYTES_CODE)
        flags = []
        if side.truth:
            for name in (f"{side.prefix}is_crowd", f"{side.prefix}difficult"):
                col = _column(c, fids, name, n)
                good &= (col.length < 0) | (col.length == count)
                flags.append(col)
            score_col = alt = None
        else:
            score_col = _column(c, fids, side.scores[0], n)
            alt = _column(c, fids, side.scores[1], n)
            scored = np.where(score_col.length < 0, alt.length, score_col.length)
            good &= (scored == count) | ((scored < 0) & (count == 0))
        status = np.where(good, OK, LISTS).astype(np.int8)
        ok = status == OK
        has = ok & (count > 0)
        # the objects of the good records, lists aligned row for row
        coords = [col.values[has[col.owner]] for col in cols]
        rec = cols[0].owner[has[cols[0].owner]]
        box = np.stack(coords, 1) if len(rec) else np.zeros((0, 4))
        starts = np.searchsorted(rec, np.arange(n))
        index = np.arange(len(rec)) - starts[rec] if len(rec) else np.zeros(0, np.int64)
        m = len(rec)
        labels = np.full(m, -1, np.int64)
        has_label = np.zeros(m, bool)
        for j, col in enumerate(label_cols):
            row_has = (label_from == j) & has & (label_len > 0)
            sel = row_has[col.int_owner]
            if sel.any():
                at = np.flatnonzero(row_has[rec])
                labels[at] = col.ints[sel]
                has_label[at] = True
        texts: list[str | None] = [None] * m
        t_rows = has & (t_len > 0) & (t_kind == BYTES_CODE)
        sel = t_rows[t_owner]
        if sel.any():
            buf = c.buf
            for row, (s, ln) in zip(np.flatnonzero(t_rows[rec]).tolist(), t_spans[sel].tolist()):
                texts[row] = buf[s : s + ln].decode("utf-8", "replace")
        keys: list[ClassKey] = []
        where: dict[ClassKey, int] = {}
        cls = np.empty(m, np.int64)
        tally: dict[int, Counter[str]] = {}
        names = self.names
        for row, (lab, hl, text) in enumerate(zip(labels.tolist(), has_label.tolist(), texts)):
            if hl:
                key: ClassKey = (0, lab, "")
                if text is not None:
                    tally.setdefault(lab, Counter())[text] += 1
            elif text is not None:
                mapped = names.get(text)
                key = (0, mapped, "") if mapped is not None else (1, 0, text)
            else:
                key = _NO_CLASS
            k = where.get(key)
            if k is None:
                k = where[key] = len(keys)
                keys.append(key)
            cls[row] = k
        crowd = np.zeros(m, bool)
        difficult = np.zeros(m, bool)
        for col, out in zip(flags, (crowd, difficult)):
            rows = has & (col.length == count)
            sel = rows[col.owner]
            out[np.flatnonzero(rows[rec])] = col.values[sel] != 0
        score = np.full(m, np.nan)
        if score_col is not None and alt is not None:
            for col in (score_col, alt):
                rows = has & (col.length == count)
                if col is alt:
                    rows &= score_col.length < 0
                sel = rows[col.owner]
                score[np.flatnonzero(rows[rec])] = col.values[sel]
        finite = np.isfinite(box).all(axis=1)
        if score_col is not None:
            finite &= np.isfinite(score)
        if not finite.all():
            status[np.unique(rec[~finite])] = NOT_FINITE
        present = cols[0].length >= 0
        if score_col is not None:
            present |= score_col.length >= 0
        size = np.full((n, 2), np.nan)
        if self.sizes:
            size[:, 0] = _scalar(_column(c, fids, f"{side.root}width", n), n)
            size[:, 1] = _scalar(_column(c, fids, f"{side.root}height", n), n)
        masks = None
        if side.masks:
            masks = _read_masks(c, fids, side, n, count, has, rec, status)
        table = SideTable(
            n,
            rec,
            index,
            box,
            cls,
            crowd,
            difficult,
            score,
            keys,
            status,
            np.where(ok, count, 0).astype(np.int64),
            size,
            tally,
            present=present,
            text=np.array(texts, object) if self.keep_text else None,
            masks=masks,
        )
        if self.keyed:
            table.source_id = _first_bytes(c, fids, f"{side.root}source_id", n)
            table.filename = _first_bytes(c, fids, f"{side.root}filename", n)
        return table

    def tables(self, records: int) -> list[SideTable]:
        """Each side's table of the ``records`` records read (numbered from 0), in record
        order; damaged and odd records have no objects and their status."""
        out = []
        order = sorted(range(len(self.batches)), key=lambda i: int(self.batches[i][0][0]))
        for j, _side in enumerate(self.sides):
            whole = SideTable.empty(records, keyed=self.keyed)
            parts = [self.batches[i][1][j] for i in order]
            numbers = [self.batches[i][0] for i in order]
            if parts:
                cat = SideTable.concat(parts)
                where = np.concatenate(numbers)  # the record number of each table row's record
                whole.rec = where[cat.rec]
                whole.index, whole.box, whole.cls = cat.index, cat.box, cat.cls
                whole.crowd, whole.difficult, whole.score = cat.crowd, cat.difficult, cat.score
                whole.keys, whole.texts = cat.keys, cat.texts
                whole.status[where] = cat.status
                whole.count[where] = cat.count
                whole.size[where] = cat.size
                assert whole.present is not None and cat.present is not None
                whole.present[where] = cat.present
                whole.text = cat.text
                whole.masks = cat.masks
                if self.keyed and cat.source_id is not None and cat.filename is not None:
                    assert whole.source_id is not None and whole.filename is not None
                    for r, s, f in zip(where.tolist(), cat.source_id, cat.filename):
                        whole.source_id[r] = s
                        whole.filename[r] = f
                order_rows = np.argsort(whole.rec, kind="stable")
                whole = whole.rows(order_rows)
            whole.status[self.damaged] = DAMAGED
            whole.status[self.odd] = NOT_EXAMPLE
            out.append(whole)
        return out


def _read(
    task: Task,
    compression: str,
    sides: Sequence[_Side],
    label_map: Mapping[int, str] | None,
    *,
    keyed: bool,
    sizes: bool,
) -> tuple[list[SideTable], int, str, RangeEnds | None]:
    """The tables of ``sides`` of a task's records, how many records it owns, its file's shown
    path and, for a range, where its walk entered and left."""
    reader = _Reader(sides, label_map, keyed, sizes)
    sink = cast(Any, reader)  # stands in for a schema builder (see _Reader)
    with task.open(compression) as f:
        if task.whole:
            n = len(f)
            if n:
                scan_range(f, sink, 0, n, 0, file_kind(f))
            return reader.tables(n), n, f.path, None
        walk = walk_task(f, task, check_data=False)  # the feed checks every data CRC
        n = len(walk.offsets)
        if n:
            offsets = np.frombuffer(walk.offsets, np.uint64).astype(np.int64)
            lengths = np.frombuffer(walk.lengths, np.uint64).astype(np.int64)
            feed_spans(f.read_span, offsets, lengths, sink, 0)
        return reader.tables(n), n, f.path, walk.ends


# -- matching tables ---------------------------------------------------------------------------


def _classes(truth: SideTable, preds: SideTable) -> tuple[list[ClassKey], np.ndarray, np.ndarray]:
    """The classes of both tables, sorted, and each table's class numbers in that list."""
    keys = class_key_sort([*truth.keys, *preds.keys])
    where = {k: i for i, k in enumerate(keys)}

    def numbers(t: SideTable) -> np.ndarray:
        m = np.array([where[k] for k in t.keys], np.int64)
        return m[t.cls] if len(t.cls) else np.zeros(0, np.int64)

    return keys, numbers(truth), numbers(preds)


def _scaled(table: SideTable, size: np.ndarray, images: np.ndarray) -> np.ndarray:
    """A normalised table's corners in pixels of its images' ``size`` (width, height)."""
    wh = size[images]
    return table.box * np.concatenate([wh, wh], 1)


def _masks_of(table: SideTable, rows: np.ndarray) -> np.ndarray:
    """The masks of a table's ``rows`` (a table read without any record has none)."""
    if table.masks is None:
        return np.full(len(rows), None, object)
    return table.masks[rows]


def _match_tables(
    truth: SideTable,
    preds: SideTable,
    pred_image: np.ndarray,
    status: np.ndarray,
    job: EvaluateJob,
) -> tuple[ev.Matches, list[ClassKey], Mistakes | None]:
    """COCOeval's per-image evaluation of ``truth`` (its records are the images) against
    ``preds`` (the image of each row: ``pred_image``), the records whose ``status`` is not
    :data:`OK` left out (``status`` is updated for those lacking a picture size); and, when
    the job asks for them, the objects' likely mistakes (:func:`codec.mistakes.find`), row
    for row with the matches' outcomes."""
    tn, pn = job.normalized
    t_box, p_box = truth.box, preds.box
    if tn != pn:
        size = truth.size.copy()
        missing = ~np.isfinite(size).all(axis=1)
        if preds.records == truth.records and len(preds.size) == len(size):
            size[missing] = preds.size[missing]
        unknown = ~np.isfinite(size).all(axis=1) | (size <= 0).any(axis=1)
        needs = np.zeros(len(status), bool)
        needs[truth.rec] = True
        needs[pred_image] = True
        status[unknown & needs & (status == OK)] = NO_SIZE
        size = np.where(unknown[:, None], 1.0, size)
        if tn:
            t_box = _scaled(truth, size, truth.rec)
        else:
            p_box = _scaled(preds, size, pred_image)
    keys, t_cls, p_cls = _classes(truth, preds)
    t_keep = status[truth.rec] == OK
    p_keep = status[pred_image] == OK
    t_rows = np.flatnonzero(t_keep)
    p_rows = np.flatnonzero(p_keep)
    tb, pb = t_box[t_rows], p_box[p_rows]
    segm = job.iou_type == "segm"
    gt = ev.Truth.of(
        truth.rec[t_rows],
        ev.xywh(tb[:, 0], tb[:, 1], tb[:, 2], tb[:, 3]),
        t_cls[t_rows],
        truth.crowd[t_rows],
        truth.difficult[t_rows],
        truth.index[t_rows],
        masks=_masks_of(truth, t_rows) if segm else None,
    )
    dt = ev.Predictions.of(
        pred_image[p_rows],
        ev.xywh(pb[:, 0], pb[:, 1], pb[:, 2], pb[:, 3]),
        p_cls[p_rows],
        preds.score[p_rows],
        preds.index[p_rows],
        masks=_masks_of(preds, p_rows) if segm else None,
    )
    matches = ev.match(
        gt,
        dt,
        images=len(status),
        classes=len(keys),
        iou=job.iou,
        agnostic=job.agnostic,
        max_dets=job.max_dets,
        iou_type=job.iou_type,
    )
    found = mistakes.find(gt, dt, images=len(status)) if job.mistakes else None
    return matches, keys, found


# -- the job -----------------------------------------------------------------------------------


@dataclass
class EvaluatePart:
    """An evaluation task's answer: how many records it owns, where its walk entered and left
    (a range), each record's ``status`` and object counts, the sorted classes its matches
    number, the class texts seen per label, and the matches; or ``error`` when its file
    could not be read. A :class:`SideJob` task's answer holds its ``table`` instead."""

    task: Task
    records: int
    path: str
    walk: RangeEnds | None = None
    status: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    truth_count: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    predictions_count: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    classes: list[ClassKey] = field(default_factory=list)
    texts: dict[int, Counter[str]] = field(default_factory=dict)
    matches: ev.Matches | None = None
    table: SideTable | None = None
    error: str = ""
    mistakes: Mistakes | None = None


@dataclass(frozen=True)
class JoinReport:
    """How the records of two datasets were joined: ``by`` (``image/source_id``,
    ``image/filename`` or ``record number``), how many pairs, and per side the records left
    without a partner (``truth_alone``, ``predictions_alone``) and those whose key repeats an
    earlier record's (``repeated``), each with the first keys."""

    by: str
    joined: int
    truth_alone: int
    predictions_alone: int
    repeated: int
    first_truth_alone: tuple[str, ...] = ()
    first_predictions_alone: tuple[str, ...] = ()
    first_repeated: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "joined": self.joined,
            "truth_alone": {"count": self.truth_alone, "first": list(self.first_truth_alone)},
            "predictions_alone": {
                "count": self.predictions_alone,
                "first": list(self.first_predictions_alone),
            },
            "repeated": {"count": self.repeated, "first": list(self.first_repeated)},
        }


@dataclass
class EvaluationResult:
    """The evaluation of a dataset: the figures (``evaluation``), the matches with every
    object's outcome (``matches``; ``image`` is the ground truth's record number), the
    classes (``keys``, their ``names`` and ``labels``), per record its ``status`` (a number
    of :data:`LEFT_OUT`) and object counts, the files read (shown path, records) and those
    that could not be (shown path, why), the ``join`` of a second dataset (its record
    joined to each record: ``partner``, -1 none), and the options."""

    evaluation: ev.Evaluation
    matches: ev.Matches
    keys: list[ClassKey]
    names: list[str]
    labels: list[int | None]
    status: np.ndarray
    truth_count: np.ndarray
    predictions_count: np.ndarray
    files: list[tuple[str, int]]
    unreadable: list[tuple[str, str]]
    iou: float
    agnostic: bool
    max_dets: int
    coordinates: tuple[str, str]
    join: JoinReport | None = None
    partner: np.ndarray | None = None
    prediction_files: list[tuple[str, int]] = field(default_factory=list)
    mistakes: Mistakes | None = None
    iou_type: str = "bbox"

    @property
    def records(self) -> int:
        return len(self.status)

    def record_fields(self) -> dict[str, np.ndarray]:
        """Per record, the numbers of :data:`RECORD_FIELDS` (float64; NaN for a record left
        out, and for a mistakenness where no object was matched): ``tp`` (ground-truth
        objects found), ``fp`` (predictions matching nothing), ``fn`` (objects missed) at the
        evaluation's IoU, and the likely mistakes' figures (:func:`codec.mistakes.per_record`)
        when they were computed. Sort keys, facets, the filter's names."""
        n = self.records
        t, p = self.matches.truth, self.matches.predictions
        out: dict[str, np.ndarray] = {
            "tp": np.bincount(t.image[t.outcome == ev.TP], minlength=n).astype(np.float64),
            "fp": np.bincount(p.image[p.outcome == ev.FP], minlength=n).astype(np.float64),
            "fn": np.bincount(t.image[t.outcome == ev.FN], minlength=n).astype(np.float64),
        }
        if self.mistakes is not None:
            for name, values in mistakes.per_record(self.mistakes, t.image, p.image, n).items():
                out[name] = values.astype(np.float64)
        left = self.status != OK
        for values in out.values():
            values[left] = np.nan
        return out

    def left_out(self) -> dict[str, dict[str, Any]]:
        """Per reason (:data:`LEFT_OUT`), how many records and the first numbers."""
        out: dict[str, dict[str, Any]] = {}
        for code, why in enumerate(LEFT_OUT):
            if code == OK:
                continue
            recs = np.flatnonzero(self.status == code)
            if recs.size:
                out[why] = {"count": int(recs.size), "first": recs[:_FIRST].tolist()}
        return out

    def to_json(self) -> dict[str, Any]:
        """The figures as plain data: ``classes`` (per class ``name``, ``label``, ``ap``,
        ``ap50``, ``ap75``, ``ar100``, ``gt``, ``tp``, ``fp``, ``fn``; ``None`` for a figure
        a class without ground truth has not; one row, "any class", when class-agnostic),
        ``map``, ``map50``, ``map75``, ``mar100``; and what they were computed on: ``iou``,
        ``agnostic``, ``max_detections``, ``coordinates`` (each side's), ``records`` (total,
        evaluated, left out by reason with the first numbers, without ground truth or
        predictions), ``objects`` (per side, ignored, unevaluated), ``confusion`` (class
        names then "background"; rows: truth, columns: prediction), ``curves`` (the 101
        recall points, and per class with ground truth the interpolated precision and the
        score there, at ``iou``), ``files``; ``iou_type`` when it is not ``"bbox"``;
        ``unreadable`` files, and ``join`` with ``prediction_files`` for predictions in a
        second dataset."""
        e = self.evaluation
        m = self.matches
        rows: list[tuple[str, int | None]] = (
            [("any class", None)] if e.agnostic else list(zip(self.names, self.labels))
        )
        classes = []
        for k, (name, label) in enumerate(rows):
            classes.append(
                {
                    "name": name,
                    "label": label,
                    "ap": _num(e.ap[k]),
                    "ap50": _num(e.ap50[k]),
                    "ap75": _num(e.ap75[k]),
                    "ar100": _num(e.ar100[k]),
                    "gt": int(e.gt[k]),
                    "tp": int(e.tp[k]),
                    "fp": int(e.fp[k]),
                    "fn": int(e.fn[k]),
                }
            )
        chosen = e.chosen
        curves = [
            {
                "name": name,
                "label": label,
                "precision": [_num(v) for v in e.precision[chosen, :, k]],
                "score": [_num(v) for v in e.scores[chosen, :, k]],
            }
            for k, (name, label) in enumerate(rows)
            if e.gt[k] > 0
        ]
        evaluated = int(np.count_nonzero(self.status == OK))
        t_out = m.truth.outcome
        p_out = m.predictions.outcome
        doc: dict[str, Any] = {
            "classes": classes,
            "map": _num(e.map),
            "map50": _num(e.map50),
            "map75": _num(e.map75),
            "mar100": _num(e.mar100),
            "iou": self.iou,
            **({"iou_type": self.iou_type} if self.iou_type != "bbox" else {}),
            "agnostic": self.agnostic,
            "max_detections": self.max_dets,
            "coordinates": {"truth": self.coordinates[0], "predictions": self.coordinates[1]},
            "records": {
                "total": self.records,
                "evaluated": evaluated,
                "left_out": self.left_out(),
                "without_truth": int(
                    np.count_nonzero((self.truth_count == 0) & (self.status == OK))
                ),
                "without_predictions": int(
                    np.count_nonzero((self.predictions_count == 0) & (self.status == OK))
                ),
            },
            "objects": {
                "truth": len(t_out),
                "truth_ignored": int(np.count_nonzero(t_out == ev.IGNORED)),
                "predictions": len(p_out),
                "predictions_ignored": int(np.count_nonzero(p_out == ev.IGNORED)),
                "predictions_unevaluated": int(np.count_nonzero(p_out == ev.UNEVALUATED)),
            },
            "confusion": {
                "classes": [*(n for n, _ in zip(self.names, self.labels)), "background"],
                "rows": m.confusion.tolist(),
            },
            "curves": {"recall": [float(r) for r in ev.RECALLS], "classes": curves},
            "files": [{"path": p, "records": n} for p, n in self.files],
        }
        if self.unreadable:
            doc["unreadable"] = [{"path": p, "why": w} for p, w in self.unreadable]
        if self.join is not None:
            doc["join"] = self.join.to_json()
            doc["prediction_files"] = [{"path": p, "records": n} for p, n in self.prediction_files]
        return doc


def _num(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def _names(
    keys: Sequence[ClassKey], texts: Mapping[int, Counter[str]], label_map: Mapping[int, str] | None
) -> tuple[list[str], list[int | None]]:
    """Each class's name and label: the label map's name, else the text most objects with
    that label carry (ties: the first alphabetically), else the label; a class by text is named by
    it."""
    names: list[str] = []
    labels: list[int | None] = []
    for kind, label, text in keys:
        if kind == 0:
            labels.append(label)
            if label_map is not None and label in label_map:
                names.append(label_map[label])
            elif texts.get(label):
                names.append(min(texts[label].items(), key=lambda kv: (-kv[1], kv[0]))[0])
            else:
                names.append(str(label))
        elif kind == 1:
            labels.append(None)
            names.append(text)
        else:
            labels.append(None)
            names.append("(no class)")
    return names, labels


def _chains(
    parts: Sequence[EvaluatePart], rerun: Callable[[Task], EvaluatePart]
) -> tuple[list[EvaluatePart], list[tuple[str, int]], list[tuple[str, str]]]:
    """The answers in dataset order, each file's ranges stitched; the files read (shown path,
    records) and those that could not be (shown path, why: their answers left out)."""
    by_file: dict[int, list[EvaluatePart]] = {}
    for part in parts:
        by_file.setdefault(part.task.file, []).append(part)
    chain: list[EvaluatePart] = []
    files: list[tuple[str, int]] = []
    unreadable: list[tuple[str, str]] = []
    for k in sorted(by_file):
        ranges = sorted(by_file[k], key=lambda p: p.task.start)
        failed = next((p for p in ranges if p.error), None)
        if failed is None:
            got = ranges[:1] if ranges[0].task.whole else stitch(ranges, rerun)
            failed = next((p for p in got if p.error), None)
        if failed is not None:
            unreadable.append((failed.path, failed.error))
            continue
        chain.extend(got)
        files.append((got[0].path, sum(p.records for p in got)))
    return chain, files, unreadable


@dataclass
class EvaluateJob:
    """The evaluation of a dataset whose records hold both the ground truth (under
    ``truth``) and the predictions (under ``predictions``), as a job (see
    :mod:`codec.jobs`): COCOeval's figures with per-object outcomes at ``iou``, class by class
    or ``agnostic``, at most ``max_dets`` detections per image (and class). ``label_map``
    (id → name) names the classes and turns class texts into labels; ``normalized`` says
    whether each side's boxes are normalised (truth, predictions): when they differ, the
    normalised side is put in pixels of the picture's size; the files are read as
    ``compression``. ``iou_type`` is COCOeval's: ``"bbox"``, or ``"segm"`` for the IoU of
    the objects' masks (``<prefix>mask`` of both sides; a record with objects whose masks
    cannot be read is left out, :data:`NO_MASKS`). With ``mistakes``, the tasks also find
    each object's likely annotation mistakes (:mod:`codec.mistakes`: a second,
    class-agnostic match at IoU 0.5), kept in the result's ``mistakes``. Tasks come from
    :func:`codec.jobs.plan` or :func:`codec.jobs.tasks_of`."""

    iou: float = 0.5
    agnostic: bool = False
    truth: str = TRUTH_PREFIX
    predictions: str = PREDICTIONS_PREFIX
    label_map: Mapping[int, str] | None = None
    normalized: tuple[bool, bool] = (True, True)
    max_dets: int = ev.MAX_DETS
    compression: str = "auto"
    mistakes: bool = False
    iou_type: str = "bbox"
    name: str = field(default="evaluate", init=False)

    def __post_init__(self) -> None:
        ev.thresholds_for(self.iou)  # a bad threshold fails here, not on every worker
        if self.iou_type not in ev.IOU_TYPES:
            raise ValueError(f"the IoU type is 'bbox' or 'segm', not {self.iou_type!r}")
        if self.max_dets < 1:
            raise ValueError(f"max_dets must be at least 1, not {self.max_dets}")
        if self.label_map is not None:
            self.label_map = dict(self.label_map)  # plain data, pickled to workers

    def _sides(self) -> tuple[_Side, _Side]:
        segm = self.iou_type == "segm"
        return _Side(self.truth, True, segm), _Side(self.predictions, False, segm)

    def _sizes(self) -> bool:
        return self.normalized[0] != self.normalized[1]

    def task(self, task: Task) -> EvaluatePart:
        """Run one task where the data is (this process, a pool worker, a Dask worker)."""
        (truth, preds), n, path, walk = _read(
            task, self.compression, self._sides(), self.label_map, keyed=False, sizes=self._sizes()
        )
        status = np.maximum(truth.status, preds.status)
        matches, keys, found = _match_tables(truth, preds, preds.rec, status, self)
        texts: dict[int, Counter[str]] = {}
        for t in (truth.texts, preds.texts):
            for label, c in t.items():
                texts.setdefault(label, Counter()).update(c)
        return EvaluatePart(
            task,
            n,
            path,
            walk,
            status,
            truth.count,
            preds.count,
            keys,
            texts,
            matches,
            mistakes=found,
        )

    def records(self, part: EvaluatePart) -> int:
        return part.records

    def combine(self, parts: list[EvaluatePart]) -> list[EvaluatePart]:
        """Answers of tasks run together travel as they are (match lists, compact)."""
        return parts

    def failed(self, task: Task, error: BaseException) -> EvaluatePart:
        """The answer of a task that kept failing: its file could not be read."""
        return EvaluatePart(task, 0, shown(task.path), error=failure_text(error, task.path))

    def merge(
        self, parts: Sequence[EvaluatePart], rerun: Callable[[Task], EvaluatePart] | None = None
    ) -> EvaluationResult:
        """The evaluation from the answers of all the tasks, in any order. A range whose walk
        did not enter where the previous one left is walked again from there with ``rerun``
        (default: this process)."""
        chain, files, unreadable = _chains(parts, rerun if rerun is not None else self.task)
        keys = class_key_sort([k for p in chain for k in p.classes])
        where = {k: i for i, k in enumerate(keys)}
        maps = [np.array([where[k] for k in p.classes], np.int64) for p in chain]
        bases = list(itertools.accumulate((p.records for p in chain), initial=0))
        total = bases[-1]
        texts: dict[int, Counter[str]] = {}
        for p in chain:
            for label, c in p.texts.items():
                texts.setdefault(label, Counter()).update(c)
        found = [p.matches for p in chain if p.matches is not None]
        if found:
            matches = ev.merge_matches(found, bases[:-1], maps, len(keys), total)
        else:
            matches = _no_matches(self, len(keys), total)
        likely = None
        if self.mistakes:
            likely = Mistakes.concat(
                [p.mistakes for p in chain if p.mistakes is not None],
                [m for p, m in zip(chain, maps) if p.mistakes is not None],
            )
        return self._result(
            matches,
            keys,
            texts,
            _cat([p.status for p in chain], np.int8),
            _cat([p.truth_count for p in chain], np.int64),
            _cat([p.predictions_count for p in chain], np.int64),
            files,
            unreadable,
            likely=likely,
        )

    def _result(
        self,
        matches: ev.Matches,
        keys: list[ClassKey],
        texts: Mapping[int, Counter[str]],
        status: np.ndarray,
        truth_count: np.ndarray,
        predictions_count: np.ndarray,
        files: list[tuple[str, int]],
        unreadable: list[tuple[str, str]],
        join: JoinReport | None = None,
        partner: np.ndarray | None = None,
        prediction_files: list[tuple[str, int]] | None = None,
        likely: Mistakes | None = None,
    ) -> EvaluationResult:
        names, labels = _names(keys, texts, self.label_map)
        how = tuple("normalised" if n else "pixels" for n in self.normalized)
        return EvaluationResult(
            ev.accumulate(matches),
            matches,
            keys,
            names,
            labels,
            status,
            truth_count,
            predictions_count,
            files,
            unreadable,
            self.iou,
            self.agnostic,
            self.max_dets,
            (how[0], how[1]),
            join,
            partner,
            prediction_files or [],
            likely,
            self.iou_type,
        )

    def side(self, which: str) -> SideJob:
        """The job that reads one side (``"truth"`` or ``"predictions"``) of a dataset, for
        predictions in a second dataset (:func:`evaluate_apart`)."""
        if which not in ("truth", "predictions"):
            raise ValueError(f"a side is 'truth' or 'predictions', not {which!r}")
        return SideJob(self, which)


def _cat_all(arrays: Sequence[np.ndarray | None], dtype: Any) -> np.ndarray | None:
    """The arrays one after the other, or None when one of them is None."""
    if any(a is None for a in arrays):
        return None
    return _cat([a for a in arrays if a is not None], dtype)


def _cat(arrays: Sequence[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype)


def _no_matches(job: EvaluateJob, classes: int, images: int) -> ev.Matches:
    e = ev.Truth.of([], np.zeros((0, 4)), [])
    d = ev.Predictions.of([], np.zeros((0, 4)), [], [])
    return ev.match(e, d, images=images, classes=classes, iou=job.iou, agnostic=job.agnostic)


@dataclass
class SideJob:
    """One side of :class:`EvaluateJob`'s records read as a job: a :class:`SideTable` of the
    dataset, with each record's ``image/source_id`` and ``image/filename`` for the join."""

    job: EvaluateJob
    which: str
    name: str = field(default="evaluate", init=False)

    def _side(self) -> _Side:
        truth, preds = self.job._sides()
        return truth if self.which == "truth" else preds

    def task(self, task: Task) -> EvaluatePart:
        (table,), n, path, walk = _read(
            task,
            self.job.compression,
            [self._side()],
            self.job.label_map,
            keyed=True,
            sizes=self.job._sizes(),
        )
        return EvaluatePart(task, n, path, walk, table=table)

    def records(self, part: EvaluatePart) -> int:
        return part.records

    def combine(self, parts: list[EvaluatePart]) -> list[EvaluatePart]:
        return parts

    def failed(self, task: Task, error: BaseException) -> EvaluatePart:
        return EvaluatePart(task, 0, shown(task.path), error=failure_text(error, task.path))

    def merge(
        self, parts: Sequence[EvaluatePart], rerun: Callable[[Task], EvaluatePart] | None = None
    ) -> tuple[SideTable, list[tuple[str, int]], list[tuple[str, str]]]:
        """The side's table of the whole dataset, the files read and those that could not
        be."""
        chain, files, unreadable = _chains(parts, rerun if rerun is not None else self.task)
        tables = [p.table for p in chain if p.table is not None]
        return SideTable.concat(tables), files, unreadable


def _key_text(key: bytes | int) -> str:
    if isinstance(key, int):
        return str(key)
    return key.decode("utf-8", "backslashreplace")


def join_tables(truth: SideTable, preds: SideTable) -> tuple[np.ndarray, JoinReport]:
    """The prediction record joined to each ground-truth record (-1: none), by
    ``image/source_id`` when every readable record of both sides has one (a damaged record,
    or one that is no Example, has none to give: it joins nothing), else ``image/filename``
    likewise, else by record number; and the report of the join. A key repeated on one side
    joins its first record only."""
    tk: Sequence[bytes | int | None] | None = None
    pk: Sequence[bytes | int | None] | None = None
    by = "record number"

    def readable(t: SideTable) -> list[int]:
        return np.flatnonzero((t.status != DAMAGED) & (t.status != NOT_EXAMPLE)).tolist()

    rt, rp = readable(truth), readable(preds)
    for name in ("source_id", "filename"):
        a, b = getattr(truth, name), getattr(preds, name)
        if a is None or b is None or not (rt or rp):
            continue
        if all(a[i] for i in rt) and all(b[j] for j in rp):
            tk, pk, by = a, b, f"image/{name}"
            break
    if tk is None or pk is None:
        tk, pk = list(range(truth.records)), list(range(preds.records))
    first: dict[bytes | int, int] = {}
    repeated: list[str] = []
    for i, key in enumerate(pk):
        if key is None:
            continue
        if key in first:
            repeated.append(_key_text(key))
        else:
            first[key] = i
    partner = np.full(truth.records, -1, np.int64)
    seen: set[bytes | int] = set()
    truth_alone: list[str] = []
    for i, key in enumerate(tk):
        if key is None:
            continue
        if key in seen:
            repeated.append(_key_text(key))
            continue
        seen.add(key)
        j = first.get(key)
        if j is None:
            truth_alone.append(_key_text(key))
        else:
            partner[i] = j
    used = np.zeros(preds.records, bool)
    used[partner[partner >= 0]] = True
    preds_alone = []
    for j in np.flatnonzero(~used).tolist():
        key = pk[j]
        if key is not None and first.get(key) == j:  # a repeated key is counted as such
            preds_alone.append(_key_text(key))
    report = JoinReport(
        by,
        int(np.count_nonzero(partner >= 0)),
        len(truth_alone),
        len(preds_alone),
        len(repeated),
        tuple(truth_alone[:_FIRST]),
        tuple(preds_alone[:_FIRST]),
        tuple(repeated[:_FIRST]),
    )
    return partner, report


def evaluate_apart(
    job: EvaluateJob,
    truth_tasks: Sequence[Task],
    prediction_tasks: Sequence[Task],
    executor: Any = None,
    *,
    progress: Callable[[Progress], None] | None = None,
    cancel: Any = None,
    runner: Callable[[Any, Sequence[Task]], Any] | None = None,
) -> EvaluationResult:
    """The evaluation of the ground truth of one dataset (``truth_tasks``) against the
    predictions of another (``prediction_tasks``), joined record to record
    (:func:`join_tables`): each side read as a job, the joined pictures matched here. The
    jobs run with ``runner(job, tasks)`` when given (a command's own way of running jobs),
    else with :func:`codec.jobs.run` on ``executor`` with ``progress`` and ``cancel``. A
    ground-truth record without a partner is left out (:data:`UNJOINED`); the join's misses
    are in the result's ``join``."""

    def go(side: SideJob, tasks: Sequence[Task]) -> Any:
        if runner is not None:
            return runner(side, tasks)
        return run(side, tasks, executor, progress=progress, cancel=cancel)

    truth, files, unreadable = go(job.side("truth"), truth_tasks)
    preds, p_files, p_unreadable = go(job.side("predictions"), prediction_tasks)
    partner, report = join_tables(truth, preds)
    status = truth.status.copy()
    status[(partner < 0) & (status == OK)] = UNJOINED
    joined = partner >= 0
    # the predictions record's own problems leave its ground-truth record out too
    p_status = np.zeros(len(status), np.int8)
    p_status[joined] = preds.status[partner[joined]]
    status = np.where((status == OK) & (p_status != OK), p_status, status).astype(np.int8)
    image_of = np.full(preds.records, -1, np.int64)
    image_of[partner[joined]] = np.flatnonzero(joined)
    keep = image_of[preds.rec] >= 0 if len(preds.rec) else np.zeros(0, bool)
    moved = preds.rows(keep)
    pred_image = image_of[moved.rec]
    # sizes of the prediction records, by ground-truth record, when the truth has none
    sized = SideTable.empty(len(status))
    sized.size[joined] = preds.size[partner[joined]]
    moved.size = sized.size
    moved.records = len(status)
    matches, keys, found = _match_tables(truth, moved, pred_image, status, job)
    texts: dict[int, Counter[str]] = {}
    for t in (truth.texts, preds.texts):
        for label, c in t.items():
            texts.setdefault(label, Counter()).update(c)
    p_count = np.zeros(len(status), np.int64)
    p_count[joined] = preds.count[partner[joined]]
    return job._result(
        matches,
        keys,
        texts,
        status,
        truth.count,
        p_count,
        files,
        unreadable + p_unreadable,
        report,
        partner,
        p_files,
        found,
    )


# -- what the first records say ----------------------------------------------------------------


@dataclass(frozen=True)
class Looked:
    """What the first records of a dataset hold: the ground truth's prefix and the
    predictions' (None: none found), whether each side's boxes look normalised, and whether
    each side's classes come as labels, as texts, or both (``"label"``, ``"text"``,
    ``"both"``, ``""``); and whether a record has masks (``<prefix>mask``) on each side."""

    truth: str | None
    predictions: str | None
    truth_normalized: bool
    predictions_normalized: bool
    truth_classes: str
    predictions_classes: str
    records: int
    truth_masks: bool = False
    predictions_masks: bool = False


def look(payloads: Sequence[bytes | None] | Any) -> Looked:
    """The layouts of a dataset's first records (payloads; None for a damaged one): the
    first ground-truth and prediction layouts (:func:`codec.detection.layouts`), whether
    their coordinates are normalised (:func:`codec.detection.decide_normalized`) and how
    they name classes."""
    from ..example import decode

    found: dict[str, Any] = {OBJECTS: None, PREDICTIONS: None}
    coords: dict[str, list[float]] = {OBJECTS: [], PREDICTIONS: []}
    classes: dict[str, set[str]] = {OBJECTS: set(), PREDICTIONS: set()}
    masked: dict[str, bool] = {OBJECTS: False, PREDICTIONS: False}
    count = 0
    for payload in payloads:
        count += 1
        if payload is None:
            continue
        try:
            rec = decode(payload)
        except Exception:  # a record that does not decode says nothing about the layout
            continue
        for lay in layouts(rec.features):
            if found[lay.kind] is None:
                found[lay.kind] = lay.prefix
            if lay.prefix != found[lay.kind]:
                continue
            coords[lay.kind].extend(box_coordinates(rec.features, lay))
            side = _Side(lay.prefix, lay.kind == OBJECTS)
            if any(len(getattr(rec.features.get(k), "values", [])) for k in side.labels):
                classes[lay.kind].add("label")
            f = rec.features.get(side.text)
            if f is not None and len(f.values):
                classes[lay.kind].add("text")
            if len(getattr(rec.features.get(f"{lay.prefix}mask"), "values", [])):
                masked[lay.kind] = True

    def how(kind: str) -> str:
        got = classes[kind]
        return "both" if len(got) == 2 else next(iter(got), "")

    return Looked(
        found[OBJECTS],
        found[PREDICTIONS],
        decide_normalized(coords[OBJECTS]),
        decide_normalized(coords[PREDICTIONS]),
        how(OBJECTS),
        how(PREDICTIONS),
        count,
        masked[OBJECTS],
        masked[PREDICTIONS],
    )


# -- a record's evaluation, for the filter language ----------------------------------------------

CLASS_FIELDS = ("tp_class", "fp_class", "fn_class")
RECORD_FIELDS = ("tp", "fp", "fn", *CLASS_FIELDS, *mistakes.RECORD_FIELDS)
"""The names a record's evaluation gives the filter language (:func:`payload_fields`), and
:meth:`EvaluationResult.record_fields` the numbers of."""
_LOOK_AT = 32  # records of a batch whose layouts decide the batch's prefixes
_FIELDS_BATCH = 256  # records read at once

ClassValue = tuple[int | None, str | None]
"""An object's class as the filter sees it: its label and its class text (None: none)."""


def payload_fields(
    payloads: Sequence[bytes | None], label_map: Mapping[int, str] | None = None
) -> list[dict[str, list[Any]] | None]:
    """What each record (a payload; None for a damaged one) holds of :data:`RECORD_FIELDS`,
    as ``tfrecord-browser evaluate`` counts them with its defaults (predictions in the same
    records, IoU 0.5 class by class, 100 detections per class): ``tp``, ``fp``, ``fn`` (one
    int each); ``tp_class`` and ``fn_class`` (the ground-truth objects found and missed),
    ``fp_class`` (the predictions matching nothing), each a list of :data:`ClassValue`, in
    the record's order; and the likely mistakes (``mistakenness`` and ``mistakenness_loc``:
    one float, or none when no object was matched; ``possible_missing``,
    ``possible_spurious``: one int). None for a record without predictions (no
    ``image/detection/`` boxes or scores at all) and for one the evaluation leaves out
    (:data:`LEFT_OUT`).

    The prefixes and whether each side's boxes are normalised are decided from the first
    records of the batch (:func:`look`), as the command decides them from a dataset's
    first records; matching is per record, so a record's values depend on nothing else.
    ``label_map`` (label → name) reads classes as ``evaluate --names`` does: ground truth
    naming its classes by text meets predictions numbering them through it."""
    n = len(payloads)
    seen = look([p for p in payloads if p is not None][:_LOOK_AT])
    if seen.predictions is None:
        return [None] * n
    job = EvaluateJob(
        truth=seen.truth or TRUTH_PREFIX,
        predictions=seen.predictions,
        label_map=dict(label_map) if label_map is not None else None,
        normalized=(seen.truth_normalized, seen.predictions_normalized),
        mistakes=True,
    )
    reader = _Reader(job._sides(), job.label_map, keyed=False, sizes=job._sizes(), keep_text=True)
    good = [i for i, p in enumerate(payloads) if p is not None]
    for i in range(n):
        if payloads[i] is None:
            reader.add_damaged(i)
    if good:
        reader.add_payloads([cast(bytes, payloads[i]) for i in good], good)
    truth, preds = reader.tables(n)
    status = np.maximum(truth.status, preds.status)
    matches, keys, found = _match_tables(truth, preds, preds.rec, status, job)
    t_rows = np.flatnonzero(status[truth.rec] == OK)
    p_rows = np.flatnonzero(status[preds.rec] == OK)

    def values(table: SideTable, rows: np.ndarray, outcomes: ev.Outcomes) -> list[ClassValue]:
        texts = table.text[rows] if table.text is not None else [None] * len(rows)
        out: list[ClassValue] = []
        for k, text in zip(outcomes.cls.tolist(), texts):
            kind, label, key_text = keys[k]
            if kind == 0:
                out.append((label, text))
            else:
                out.append((None, key_text if kind == 1 else None))
        return out

    t_class = values(truth, t_rows, matches.truth)
    p_class = values(preds, p_rows, matches.predictions)
    per = (
        mistakes.per_record(found, matches.truth.image, matches.predictions.image, n)
        if found is not None
        else {}
    )
    by_record: list[dict[str, list[Any]] | None] = []
    t_image, t_out = matches.truth.image, matches.truth.outcome
    p_image, p_out = matches.predictions.image, matches.predictions.outcome
    t_at = np.searchsorted(t_image, np.arange(n + 1))
    p_at = np.searchsorted(p_image, np.arange(n + 1))
    present = preds.present if preds.present is not None else np.ones(n, bool)
    for i in range(n):
        if status[i] != OK or not present[i]:
            by_record.append(None)
            continue
        ta, tb = int(t_at[i]), int(t_at[i + 1])
        pa, pb = int(p_at[i]), int(p_at[i + 1])
        tos, pos = t_out[ta:tb].tolist(), p_out[pa:pb].tolist()
        got: dict[str, list[Any]] = {
            "tp": [tos.count(ev.TP)],
            "fp": [pos.count(ev.FP)],
            "fn": [tos.count(ev.FN)],
            "tp_class": [c for c, o in zip(t_class[ta:tb], tos) if o == ev.TP],
            "fp_class": [c for c, o in zip(p_class[pa:pb], pos) if o == ev.FP],
            "fn_class": [c for c, o in zip(t_class[ta:tb], tos) if o == ev.FN],
        }
        for name, column in per.items():
            v = float(column[i])
            got[name] = [] if np.isnan(v) else [int(v) if column.dtype.kind == "i" else v]
        by_record.append(got)
    return by_record


# -- the objects of records read in order, for other formats -------------------------------------


@dataclass
class ObjectTables:
    """Both sides' objects of records read in order (numbered from 0): the tables
    (:class:`SideTable`, sizes read from ``image/width`` and ``image/height``), each record's
    ``status`` (a number of :data:`LEFT_OUT`), the classes sorted as the evaluation sorts them
    (``keys``, their ``names`` and ``labels``) and each object's class number among them
    (``truth_cls``, ``prediction_cls``)."""

    truth: SideTable
    predictions: SideTable
    status: np.ndarray
    keys: list[ClassKey]
    names: list[str]
    labels: list[int | None]
    truth_cls: np.ndarray
    prediction_cls: np.ndarray

    @property
    def records(self) -> int:
        return len(self.status)


def read_objects(payloads: Iterable[bytes | None], job: EvaluateJob) -> ObjectTables:
    """The objects of ``payloads`` (None: a damaged record) as ``job`` reads them (its
    prefixes and label map), a batch of records at a time, with the rules of the evaluation
    (a record whose lists disagree, or with a value that is not finite, is left out: its
    status says why)."""
    reader = _Reader(job._sides(), job.label_map, keyed=False, sizes=True)
    n = 0
    it = iter(payloads)
    while batch := list(itertools.islice(it, _FIELDS_BATCH)):
        numbers = [n + i for i, p in enumerate(batch) if p is not None]
        for i, p in enumerate(batch):
            if p is None:
                reader.add_damaged(n + i)
        if numbers:
            reader.add_payloads([cast(bytes, p) for p in batch if p is not None], numbers)
        n += len(batch)
    truth, preds = reader.tables(n)
    status = np.maximum(truth.status, preds.status).astype(np.int8)
    keys, t_cls, p_cls = _classes(truth, preds)
    texts: dict[int, Counter[str]] = {}
    for t in (truth.texts, preds.texts):
        for label, c in t.items():
            texts.setdefault(label, Counter()).update(c)
    names, labels = _names(keys, texts, job.label_map)
    return ObjectTables(truth, preds, status, keys, names, labels, t_cls, p_cls)


def label_map_of(names: Mapping[str, Any], truth: str, predictions: str) -> dict[int, str] | None:
    """The class names (``{feature: ClassNames}``) bound to the ground truth's label list,
    else to the predictions', else to any box class label list, as ``{label: name}``: the
    label map an evaluation of those prefixes names its classes with."""
    keys = [f"{truth}class/label", f"{predictions}label", f"{predictions}class/label"]
    for key in [*keys, *sorted(k for k in names if k.endswith("class/label"))]:
        if key in names:
            return dict(names[key].names)
    return None
