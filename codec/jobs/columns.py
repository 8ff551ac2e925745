"""The columnar index of a dataset as a job: every record's facts and its scalar and
short-list features as Arrow columns (:mod:`codec.columns_index` says what the index holds,
stores it and reads it back).

Each task reads a range of records in vectorised batches (:func:`codec.schema.scan.feed_spans`,
every data CRC checked; :func:`codec.schema.walk.walk_columns`, records it declines decoded
exactly) and returns an Arrow table of them, numbered from 0: per record its status, payload
size, ground-truth boxes and their classes, and per feature a list column of its values, the
feature's type, longest list and longest value noted. A feature too long to index (a list
longer than :data:`MAX_LIST` values, a value longer than :data:`MAX_VALUE_BYTES` bytes) or of
two types is noted, its values not kept.

The merge stitches the ranges of each file (:func:`.walk.stitch`), decides per file what each
feature is (kept with its type, or left out and why) from the notes of all its ranges, casts
the ranges' columns to that, and concatenates them in record order: the same table, byte for
byte, whatever the split and wherever the tasks ran. Records after damage reached by
resynchronising are ``recovered`` (:func:`codec.recovered.first_recovered`, the one rule).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..dataset import DAMAGED, INTACT, RECOVERED
from ..detection import BBOX, class_caption, layout_rank
from ..framing import Problem
from ..identity import FileIdentity
from ..locations import shown
from ..recovered import first_recovered
from ..schema.scan import feed_spans, file_kind, scan_range
from ..schema.stats import BYTES_CODE, FLOAT_CODE, INT64_CODE, NONE_CODE
from ..schema.walk import ColumnFeed, Columns
from ..values import plural
from ..wire import ranges
from .plan import Task
from .verify import failure_text
from .walk import RangeEnds, stitch, walk_task

__all__ = [
    "FACT_COLUMNS",
    "FEATURE_PREFIX",
    "FORMAT",
    "MAX_LIST",
    "MAX_VALUE_BYTES",
    "STATUSES",
    "ColumnsJob",
    "ColumnsPart",
    "ColumnsResult",
    "FeatureNote",
    "FileColumns",
]

MAX_LIST = 64  # values a list may hold to be indexed (longer: left out, said)
MAX_VALUE_BYTES = 1024  # bytes a bytes value may hold to be indexed (pictures are left out)
FORMAT = 1  # the layout of a file's table; a cached table of another layout is made again
FEATURE_PREFIX = "f:"  # a feature's column in a file's table: "f:" + its name
STATUSES = (INTACT, RECOVERED, DAMAGED)
FACT_COLUMNS = ("local", "status", "bytes", "boxes", "classes")
_KIND_NAMES = {INT64_CODE: "int64", FLOAT_CODE: "float", BYTES_CODE: "bytes"}
_BOX_SUFFIX = "bbox/xmin"
_CLASS_LISTS = ("class/text", "class/label")  # read whatever their length, for captions


@dataclass(frozen=True)
class FeatureNote:
    """What a feature is in a file (or a range of one): its value ``kinds`` (type codes of
    :mod:`codec.schema.stats`, empty lists not counted), ``longest`` list, ``widest`` bytes
    value. :meth:`left_out` says why it is not indexed, if it is not."""

    kinds: frozenset[int] = frozenset()
    longest: int = 0
    widest: int = 0

    def __or__(self, other: FeatureNote) -> FeatureNote:
        return FeatureNote(
            self.kinds | other.kinds,
            max(self.longest, other.longest),
            max(self.widest, other.widest),
        )

    @property
    def kind(self) -> str:
        """``int64``, ``float``, ``bytes``; ``none`` when no record holds a value."""
        if len(self.kinds) != 1:
            return "none" if not self.kinds else "mixed"
        return _KIND_NAMES[next(iter(self.kinds))]

    def left_out(self) -> str:
        """Why the feature is not indexed ("" when it is)."""
        if len(self.kinds) > 1:
            names = " and ".join(sorted(_KIND_NAMES[k] for k in self.kinds))
            return f"its values are of two types in different records: {names}"
        if self.longest > MAX_LIST:
            return (
                f"lists of up to {plural(self.longest, 'value')} (the index keeps up to {MAX_LIST})"
            )
        if self.widest > MAX_VALUE_BYTES:
            return (
                f"values of up to {self.widest:,} bytes (the index keeps bytes values of up to"
                f" {MAX_VALUE_BYTES:,})"
            )
        if not self.kinds:
            return "no record holds a value"
        return ""


# -- reading a task's records ------------------------------------------------------------------


@dataclass
class _Chunk:
    """One feature in one batch: its records (task numbers), list lengths, type codes and
    values (int64, float64, or bytes as ``(data, lengths)``; None when not gathered)."""

    rec: np.ndarray
    length: np.ndarray
    values: Any
    kind: np.ndarray

    @property
    def numeric(self) -> np.ndarray:
        return (self.kind == FLOAT_CODE) | (self.kind == INT64_CODE)


class _Reader(ColumnFeed):
    """What a task reads of its records, fed as :func:`codec.schema.scan.feed_spans` and
    ``scan_slow`` feed a schema builder (``_add_buffer``, ``add_payloads``, ``add_damaged``);
    a record that is not an Example keeps its facts only."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: dict[str, FeatureNote] = {}
        self.chunks: dict[str, list[_Chunk]] = {}
        self.box_rec: list[np.ndarray] = []
        self.box_count: list[np.ndarray] = []
        self.captions: list[list[str | None]] = []

    def _take(self, c: Columns) -> None:
        if not len(c.records) or not len(c.fid):
            return
        order = np.argsort(c.fid, kind="stable")  # entries by feature, in record order
        fids, starts = np.unique(c.fid[order], return_index=True)
        bounds = [*starts.tolist(), len(order)]
        buf = np.frombuffer(c.buf, np.uint8)
        got: dict[str, _Chunk] = {}
        for j, f in enumerate(fids.tolist()):
            ents = order[bounds[j] : bounds[j + 1]]
            name = c.names[f]
            chunk, note = _chunk(c, buf, ents, name.endswith(_CLASS_LISTS))
            now = self.notes[name] = self.notes.get(name, FeatureNote()) | note
            got[name] = chunk
            if not now.left_out() or not now.kinds:
                self.chunks.setdefault(name, []).append(chunk)
        self._boxes(c, got)

    def _boxes(self, c: Columns, got: Mapping[str, _Chunk]) -> None:
        """The ground-truth boxes of a batch's records and the class of each, as
        :func:`codec.detection.record_boxes` reads them under every ``objects`` layout."""
        prefixes = sorted(
            {
                name[: -len(_BOX_SUFFIX)]
                for name in got
                if name.endswith(_BOX_SUFFIX)
                and all(f"{name[: -len(_BOX_SUFFIX)]}bbox/{s}" in got for s in BBOX)
            },
            key=lambda p: layout_rank(p, "objects"),
        )
        if not prefixes:
            return
        n = len(c.records)
        total = np.zeros(n, np.int64)
        per_prefix: list[tuple[str, np.ndarray]] = []
        for prefix in prefixes:
            if prefix.endswith("detection/"):
                continue  # a model's predictions, not the record's objects
            count = np.full(n, np.iinfo(np.int64).max)
            for s in BBOX:
                ch = got[f"{prefix}bbox/{s}"]
                lens = np.zeros(n, np.int64)
                pos = np.searchsorted(c.records, ch.rec)
                numeric = ch.numeric
                lens[pos[numeric]] = ch.length[numeric]
                count = np.minimum(count, lens)
            if not prefix.endswith("object/"):
                for s in ("score", "scores"):
                    ch_s = got.get(prefix + s)
                    if ch_s is not None:
                        count[np.searchsorted(c.records, ch_s.rec)] = 0  # predictions
            total += count
            per_prefix.append((prefix, count))
        has = np.flatnonzero(total)
        if not has.size:
            return
        captions: list[str | None] = []
        lists = {
            prefix: (
                _per_record(got.get(f"{prefix}class/text"), c.records, BYTES_CODE),
                _per_record(got.get(f"{prefix}class/label"), c.records, INT64_CODE),
            )
            for prefix, _ in per_prefix
        }
        for r in has.tolist():
            for prefix, count in per_prefix:
                k = int(count[r])
                if not k:
                    continue
                texts, labels = lists[prefix]
                tv = texts.get(r, ())
                lv = labels.get(r, ())
                for i in range(k):
                    text = (
                        bytes(tv[i]).decode("utf-8", "replace") if i < len(tv) else None  # type: ignore[arg-type]
                    )
                    label = int(lv[i]) if i < len(lv) else None  # type: ignore[arg-type]
                    captions.append(class_caption(text, label) or None)
        self.box_rec.append(c.records[has])
        self.box_count.append(total[has])
        self.captions.append(captions)

    def table(self, n: int, lengths: np.ndarray) -> tuple[pa.Table, dict[str, FeatureNote]]:
        """The table of the task's ``n`` records (payload ``lengths``): facts, then a list
        column per feature kept (by name), and the notes of every feature seen."""
        status = np.zeros(n, np.int8)
        status[self.damaged] = STATUSES.index(DAMAGED)
        boxes = np.zeros(n, np.int64)
        caption_count = np.zeros(n, np.int64)
        if self.box_rec:
            rec = np.concatenate(self.box_rec)
            cnt = np.concatenate(self.box_count)
            flat = [x for part in self.captions for x in part]
            order = np.argsort(rec, kind="stable")
            starts = np.cumsum(cnt) - cnt
            picks = ranges(starts[order], cnt[order])
            boxes[rec] = cnt
            caption_count[rec] = cnt
            values = pa.array([flat[i] for i in picks.tolist()], pa.string())
        else:
            values = pa.array([], pa.string())
        offsets = np.concatenate([[0], np.cumsum(caption_count)]).astype(np.int32)
        classes = pa.ListArray.from_arrays(pa.array(offsets), values)
        columns: dict[str, pa.Array] = {
            "local": pa.array(np.arange(n, dtype=np.int64)),
            "status": pa.array(status),
            "bytes": pa.array(np.asarray(lengths, np.int64)),
            "boxes": pa.array(boxes),
            "classes": classes,
        }
        for name in sorted(self.notes):
            note = self.notes[name]
            if note.left_out() and note.kinds:
                continue
            columns[FEATURE_PREFIX + name] = _list_column(self.chunks.get(name, []), n, note)
        return pa.table(columns), dict(self.notes)


def _chunk(c: Columns, buf: np.ndarray, ents: np.ndarray, long: bool) -> tuple[_Chunk, FeatureNote]:
    """One feature's entries ``ents`` of a batch: its chunk (values gathered unless the
    feature cannot be indexed; lists of any length with ``long``) and its note."""
    kind = c.kind[ents]
    length = np.where(kind == NONE_CODE, 0, c.length[ents])
    kinds = frozenset(np.unique(kind[kind != NONE_CODE]).tolist())
    longest = int(length.max()) if len(length) else 0
    rec = c.rec[ents]
    widest = 0
    values: Any = None
    if len(kinds) == 1:
        k = next(iter(kinds))
        if k == BYTES_CODE:
            first = np.searchsorted(c.b_owner, ents)
            at = ranges(first, length)
            lens = c.b_len[at]
            widest = int(lens.max()) if len(lens) else 0
            if widest <= MAX_VALUE_BYTES and (long or longest <= MAX_LIST):
                starts = c.b_start[at]
                values = (buf[ranges(starts, lens)], lens)
        elif long or longest <= MAX_LIST:
            owner = c.float_owner if k == FLOAT_CODE else c.int_owner
            source = c.floats if k == FLOAT_CODE else c.ints
            first = np.searchsorted(owner, ents)
            got = source[ranges(first, length)]
            values = got.astype(np.float64) if k == FLOAT_CODE else got.astype(np.int64)
    note = FeatureNote(cast(frozenset[int], kinds), longest, widest)
    return _Chunk(rec, length, values, kind), note


def _per_record(ch: _Chunk | None, records: np.ndarray, code: int) -> dict[int, Sequence[Any]]:
    """A batch's values of one feature by record position (records of type ``code`` only)."""
    if ch is None or ch.values is None:
        return {}
    kind = ch.kind
    out: dict[int, Sequence[Any]] = {}
    pos = np.searchsorted(records, ch.rec).tolist()
    starts = (np.cumsum(ch.length) - ch.length).tolist()
    if code == BYTES_CODE:
        data, lens = ch.values
        vstarts = (np.cumsum(lens) - lens).tolist()
        raw = data.tobytes()
        for j, (p, s, ln) in enumerate(zip(pos, starts, ch.length.tolist())):
            if kind[j] != code:
                continue
            out[p] = [raw[vstarts[i] : vstarts[i] + int(lens[i])] for i in range(s, s + ln)]
        return out
    vals = ch.values
    for j, (p, s, ln) in enumerate(zip(pos, starts, ch.length.tolist())):
        if kind[j] != code:
            continue
        out[p] = vals[s : s + ln].tolist()
    return out


_ARROW = {INT64_CODE: pa.int64(), FLOAT_CODE: pa.float64(), BYTES_CODE: pa.binary()}


def _list_column(chunks: Sequence[_Chunk], n: int, note: FeatureNote) -> pa.Array:
    """A feature's list column over a task's ``n`` records (null where a record lacks it)."""
    code = next(iter(note.kinds)) if len(note.kinds) == 1 else None
    item = _ARROW[code] if code is not None else pa.null()
    if not chunks:
        return pa.nulls(n, pa.list_(item))
    rec = np.concatenate([ch.rec for ch in chunks])
    length = np.concatenate([ch.length for ch in chunks])
    order = np.argsort(rec, kind="stable")
    starts = np.cumsum(length) - length
    picks = ranges(starts[order], length[order])
    lengths = np.zeros(n, np.int64)
    present = np.zeros(n, bool)
    lengths[rec] = length
    present[rec] = True
    offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
    if code is None:
        values: pa.Array = pa.nulls(int(lengths.sum()), pa.null())
    elif code == BYTES_CODE:
        datas = [ch.values[0] for ch in chunks if ch.values is not None]
        lens = np.concatenate([ch.values[1] for ch in chunks if ch.values is not None])
        data = np.concatenate(datas) if datas else np.zeros(0, np.uint8)
        vstarts = np.cumsum(lens) - lens
        lens_o = lens[picks]
        data_o = data[ranges(vstarts[picks], lens_o)]
        voff = np.concatenate([[0], np.cumsum(lens_o)]).astype(np.int32)
        values = pa.Array.from_buffers(
            pa.binary(), len(lens_o), [None, pa.py_buffer(voff), pa.py_buffer(data_o.tobytes())]
        )
    else:
        got = np.concatenate([ch.values for ch in chunks if ch.values is not None])
        values = pa.array(got[picks], item)
    return pa.ListArray.from_arrays(offsets, values, mask=pa.array(~present))


# -- answers -----------------------------------------------------------------------------------


@dataclass
class ColumnsPart:
    """A task's answer: its records' table (numbered from 0) and the notes of the features
    it saw; its file's shown path and stream size; for a range, where its walk entered and
    left, its records' offsets and framing problems (whether later records are recovered is
    decided at the merge); for a whole file, its first recovered record; or ``error``."""

    task: Task
    records: int
    path: str
    table: pa.Table | None = None
    notes: dict[str, FeatureNote] = field(default_factory=dict)
    size: int = 0
    walk: RangeEnds | None = None
    offsets: np.ndarray | None = None
    problems: list[Problem] = field(default_factory=list)
    recovered_from: int | None = None
    error: str = ""


@dataclass
class FileColumns:
    """One file's part of the index: its ``table`` (columns :data:`FACT_COLUMNS`, ``status``
    as text, then ``f:<name>`` per feature kept, in name order) and ``notes`` (per feature
    seen: its type — ``int64``, ``float``, ``bytes`` or ``string`` (bytes that are all
    UTF-8) —, its longest list, and why it is left out when it is)."""

    path: str
    identity: FileIdentity | None
    table: pa.Table
    notes: dict[str, dict[str, Any]]
    number: int = 0  # the file's number among the job's tasks (``Task.file``)

    @property
    def records(self) -> int:
        return self.table.num_rows

    def metadata(self) -> dict[bytes, bytes]:
        """What a stored table carries besides its columns."""
        doc = {"format": FORMAT, "path": self.path, "features": self.notes}
        return {b"tfrecord-browser": json.dumps(doc, sort_keys=True).encode()}


@dataclass
class ColumnsResult:
    """The index's tables of the files read, in dataset order, and the files that could
    not be read (shown path, why)."""

    files: list[FileColumns]
    unreadable: list[tuple[str, str]] = field(default_factory=list)


def _read(task: Task, compression: str) -> ColumnsPart:
    reader = _Reader()
    sink = cast(Any, reader)  # stands in for a schema builder (see _Reader)
    with task.open(compression) as f:
        if task.whole:
            n = len(f)
            _offsets, lengths = f.spans()
            if n:
                scan_range(f, sink, 0, n, 0, file_kind(f))
            table, notes = reader.table(n, np.asarray(lengths, np.int64))
            return ColumnsPart(
                task, n, f.path, table, notes, f.size, recovered_from=f.recovered_from
            )
        walk = walk_task(f, task, check_data=False)  # the feed checks every data CRC
        n = len(walk.offsets)
        offsets = np.frombuffer(walk.offsets, np.uint64).astype(np.int64)
        lengths = np.frombuffer(walk.lengths, np.uint64).astype(np.int64)
        if n:
            feed_spans(f.read_span, offsets, lengths, sink, 0)
        table, notes = reader.table(n, lengths)
        return ColumnsPart(
            task,
            n,
            f.path,
            table,
            notes,
            f.size,
            walk.ends,
            offsets,
            [*walk.problems, *walk.damaged],
        )


# -- the job -----------------------------------------------------------------------------------


@dataclass
class ColumnsJob:
    """The columnar index of a dataset's records, as a job (see :mod:`codec.jobs`): the files
    read as ``compression``; tasks from :func:`codec.jobs.tasks_of` or :func:`codec.jobs.plan`."""

    compression: str = "auto"
    name: str = field(default="index", init=False)

    def task(self, task: Task) -> ColumnsPart:
        """Run one task where the data is (this process, a pool worker, a Dask worker)."""
        return _read(task, self.compression)

    def records(self, part: ColumnsPart) -> int:
        return part.records

    def combine(self, parts: list[ColumnsPart]) -> list[ColumnsPart]:
        """Answers of tasks run together travel as they are (Arrow tables)."""
        return parts

    def failed(self, task: Task, error: BaseException) -> ColumnsPart:
        """The answer of a task that kept failing: its file could not be read."""
        return ColumnsPart(task, 0, shown(task.path), error=failure_text(error, task.path))

    def merge(
        self, parts: Sequence[ColumnsPart], rerun: Callable[[Task], ColumnsPart] | None = None
    ) -> ColumnsResult:
        """The index of every file from the answers of all the tasks, in any order. A range
        whose walk did not enter where the previous one left is walked again from there with
        ``rerun`` (default: this process)."""
        again = rerun if rerun is not None else self.task
        by_file: dict[int, list[ColumnsPart]] = {}
        for part in parts:
            by_file.setdefault(part.task.file, []).append(part)
        files: list[FileColumns] = []
        unreadable: list[tuple[str, str]] = []
        for k in sorted(by_file):
            ranges_ = sorted(by_file[k], key=lambda p: p.task.start)
            failed = next((p for p in ranges_ if p.error), None)
            if failed is None:
                got = ranges_[:1] if ranges_[0].task.whole else stitch(ranges_, again)
                failed = next((p for p in got if p.error), None)
            if failed is not None:
                unreadable.append((failed.path, failed.error))
                continue
            files.append(_file(got))
        return ColumnsResult(files, unreadable)


def _file(chain: Sequence[ColumnsPart]) -> FileColumns:
    """One file's table from its parts in stream order."""
    first = chain[0]
    notes: dict[str, FeatureNote] = {}
    for p in chain:
        for name, note in p.notes.items():
            notes[name] = notes.get(name, FeatureNote()) | note
    # which records are recovered: one rule over the whole file's walk
    if first.task.whole:
        recovered = first.recovered_from
    else:
        offsets = [int(x) for p in chain for x in (p.offsets if p.offsets is not None else ())]
        problems = [q for p in chain for q in p.problems]
        recovered = first_recovered(offsets, problems, first.size)
    kept: dict[str, pa.DataType] = {}
    for name in sorted(notes):
        note = notes[name]
        if note.left_out():
            continue
        kept[name] = pa.list_(_ARROW[next(iter(note.kinds))])
    tables = []
    base = 0
    for p in chain:
        t = p.table
        assert t is not None
        cols: dict[str, pa.Array] = {
            "local": pc.add(t.column("local"), base).combine_chunks(),
            "status": t.column("status").combine_chunks(),
            "bytes": t.column("bytes").combine_chunks(),
            "boxes": t.column("boxes").combine_chunks(),
            "classes": t.column("classes").combine_chunks(),
        }
        for name, typ in kept.items():
            col = FEATURE_PREFIX + name
            if col in t.column_names:
                cols[col] = t.column(col).combine_chunks().cast(typ)
            else:
                cols[col] = pa.nulls(t.num_rows, typ)
        tables.append(pa.table(cols))
        base += p.records
    table = pa.concat_tables(tables) if tables else pa.table({})
    status = np.asarray(table.column("status").to_numpy(zero_copy_only=False), np.int8)
    if recovered is not None:
        later = np.arange(len(status)) >= recovered
        status = np.where(later & (status == 0), STATUSES.index(RECOVERED), status).astype(np.int8)
    words = pa.array(np.asarray(STATUSES, dtype=object)[status].tolist(), pa.string())
    table = table.set_column(table.column_names.index("status"), "status", words)
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(notes):
        note = notes[name]
        why = note.left_out()
        kind = note.kind
        if not why and kind == "bytes":
            col = FEATURE_PREFIX + name
            try:  # UTF-8 checked as Arrow casts it
                text = table.column(col).cast(pa.list_(pa.string()))
            except pa.ArrowInvalid:
                pass
            else:
                kind = "string"
                table = table.set_column(table.column_names.index(col), col, text)
        out[name] = {"type": kind, "longest": note.longest, "left_out": why}
    fc = FileColumns(first.path, first.task.identity, table.combine_chunks(), out, first.task.file)
    fc.table = fc.table.replace_schema_metadata(fc.metadata())
    return fc
