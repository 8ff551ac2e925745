"""Flat tables, one row per record and one column per feature: the columns and cells that the
CSV, JSON and Parquet outputs share, and the two passes that write them.

The first column, ``_index``, is the record's position in the edited dataset; raw (non-Example)
records go to a ``_raw`` column. A feature with exactly one value in every record that has it
is a scalar column, otherwise a list column (a SequenceExample's feature list: a list of
lists). How each value is written is the format's.

Column titles are unique for any set of feature names, chosen the same way every time:

1. a feature's name, when no other column has the same name (a feature named ``_index`` or
   ``_raw`` shares its name with those columns); an empty name counts as ``(no name)``;
2. else ``name:type`` (``name:list:type`` for a feature list), for a name seen with several
   types or both as a feature and a feature list;
3. a title that is still taken (a feature literally named ``a:int64`` beside ``a`` seen as
   int64 and float...) gets ``~2``, ``~3``... in column order (the first column keeps it),
   skipping any title another column would take by rule 1 or 2.

The verification reads the written file back the way a person's tool would (the ``csv``
module, ``json``, pyarrow) and fails unless it holds exactly these titles, every row, and in
every column exactly as many values as were written; a CSV file's cells must also read back
as exactly the text written.
"""

from __future__ import annotations

import base64
import os
from abc import abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, cast

from browser_app.errors import ExportError
from browser_app.export.base import ExportReport
from browser_app.export.exporter import Exporter
from browser_app.export.staging import PieceRun
from codec.example import Record
from codec.kinds import BYTES, INT64, NONE, RAW, FeatureType
from codec.values import format_float, plural

__all__ = [
    "Cell",
    "Column",
    "ColumnSection",
    "Columns",
    "ReadBack",
    "TableExporter",
    "base64_text",
    "cell",
    "float_json",
    "json_list",
]

ColumnSection = Literal["index", "features", "feature_lists", "raw"]

Cell = Any
"""A column's value in one record: the position (``index``), the payload (``raw``), a list of
values (``features``), a list of steps each a list of values or ``None`` (``feature_lists``),
or ``None`` when the record does not have it."""


@dataclass
class Column:
    """One column: where its values come from (``section``, the feature's ``name`` and
    ``type``), whether every record has at most one value (``scalar``), whether every bytes
    value is UTF-8 (``utf8``), and its ``title``."""

    section: ColumnSection
    name: str
    type: FeatureType
    scalar: bool = True
    utf8: bool = True
    title: str = ""


class Columns:
    """The columns of a flat table, found by a first pass over the records."""

    def __init__(self) -> None:
        self.columns: dict[tuple[ColumnSection, str, FeatureType], Column] = {}
        self.has_raw = False

    def see(self, rec: Record) -> None:
        """Widen the columns to hold ``rec``."""
        if rec.kind == RAW:
            self.has_raw = True
            return
        for name, feat in rec.features.items():
            if feat.type == NONE:
                continue
            col = self._col("features", name, feat.type)
            if len(feat.values) != 1:
                col.scalar = False
            if feat.type == BYTES and col.utf8:
                col.utf8 = all(_utf8(v) for v in feat.values)
        for name, steps in rec.feature_lists.items():
            types = {s.type for s in steps if s.type != NONE} or {NONE}
            for t in types:
                col = self._col("feature_lists", name, t)
                col.scalar = False
                if t == BYTES and col.utf8:
                    col.utf8 = all(_utf8(v) for s in steps if s.type == t for v in s.values)

    def _col(self, section: ColumnSection, name: str, type_: str) -> Column:
        key = (section, name, cast(FeatureType, type_))  # codec's Feature.type is a str
        col = self.columns.get(key)
        if col is None:
            col = self.columns[key] = Column(*key)
        return col

    def finish(self, escape: Callable[[str], str] | None = None) -> list[Column]:
        """The columns in order, with their unique titles (see the module docstring);
        ``escape`` changes each title before the titles are made unique (CSV's titles that a
        spreadsheet would run as formulas)."""
        cols = [Column("index", "_index", INT64)]
        cols.extend(self.columns.values())
        if self.has_raw:
            cols.append(Column("raw", "_raw", BYTES, utf8=False))
        uses: dict[str, int] = {}
        for c in cols:
            uses[c.name] = uses.get(c.name, 0) + 1
        wanted = []
        for c in cols:
            name = c.name or "(no name)"  # an empty title is renamed by every reader
            if c.section in ("index", "raw") or uses[c.name] == 1:
                wanted.append(name)
            elif c.section == "features":
                wanted.append(f"{name}:{c.type}")
            else:
                wanted.append(f"{name}:list:{c.type}")
        if escape is not None:
            wanted = [escape(w) for w in wanted]
        taken: set[str] = set()
        natural = set(wanted)
        for c, title in zip(cols, wanted):
            if title in taken:
                k = 2
                while f"{title}~{k}" in taken or f"{title}~{k}" in natural:
                    k += 1
                title = f"{title}~{k}"
            c.title = title
            taken.add(title)
        return cols


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def cell(col: Column, pos: int, rec: Record) -> Cell:
    """The column's value in ``rec`` (see :data:`Cell`)."""
    if col.section == "index":
        return pos
    if col.section == "raw":
        return rec.raw if rec.kind == RAW else None
    if col.section == "features":
        feat = rec.features.get(col.name)
        if feat is None or feat.type != col.type:
            return None
        return feat.values
    steps = rec.feature_lists.get(col.name)
    if steps is None:
        return None
    if not any(s.type == col.type for s in steps) and not (
        col.type == NONE and all(s.type == NONE for s in steps)
    ):
        return None
    return [s.values if s.type == col.type else None for s in steps]


def float_json(v: float) -> str:
    """A float32 as JSON text: its shortest round-trip digits, or ``"NaN"``,
    ``"Infinity"``, ``"-Infinity"`` as strings (JSON has no such numbers)."""
    s = format_float(v)
    if s == "nan":
        return '"NaN"'
    if s == "inf":
        return '"Infinity"'
    if s == "-inf":
        return '"-Infinity"'
    return s


def json_list(values: Cell, text: Callable[[Any], str], nested: bool = False) -> str:
    """A list of values (``nested``: of steps) as JSON text, each value written by
    ``text``; ``null`` for ``None``."""
    if values is None:
        return "null"
    inner = (json_list(s, text) for s in values) if nested else (text(v) for v in values)
    return "[" + ", ".join(inner) + "]"


def base64_text(b: bytes) -> str:
    """``b`` in base64, as text."""
    return base64.b64encode(b).decode("ascii")


@dataclass
class ReadBack:
    """What a written table holds, read the way a person's tool reads it: the column titles
    (``None`` when the format has nowhere to write them: a JSON array without rows), the
    number of rows and, per column, how many cells hold a value; ``cells``, for a format
    whose cells are text (CSV), a digest of every cell's text, titles included."""

    titles: list[str] | None
    rows: int
    values: list[int]
    cells: str | None = None


class TableExporter(Exporter):
    """A flat table in two passes over the records: the first finds the columns, the
    second writes a row per record. ``int64_as_string`` is for the JSON table."""

    def __init__(
        self, dst: str | os.PathLike[str] | None, *, int64_as_string: bool = False
    ) -> None:
        super().__init__(dst)
        self.int64_as_string = int64_as_string

    def write(self, job: PieceRun) -> None:
        dst = self.dst
        job.guard([dst])
        columns = Columns()
        # The first pass counts into a report of its own: the rows are counted as written.
        scan = ExportReport(self.name)
        for _pos, rec in job.ticking(job.plan.decoded(scan), "scan"):
            columns.see(rec)
        cols = columns.finish(self.escape_title)
        values = [0] * len(cols)

        def rows() -> Iterator[list[Cell]]:
            for pos, rec in job.ticking(job.plan.decoded(job.report)):
                cells = [cell(c, pos, rec) for c in cols]
                for k, v in enumerate(cells):
                    if v is not None:
                        values[k] += 1
                yield cells

        written = ReadBack([c.title for c in cols], 0, values)
        out = job.reserve(dst, lambda path, expected, shown: self._check(path, written, shown))
        written.cells = self.write_rows(out.tmp, cols, rows())
        out.expected = written.rows = job.report.records
        job.tick("write", job.report.records)
        job.report.outputs = [dst]

    def escape_title(self, title: str) -> str:
        """A column's title as the format writes it (see :meth:`Columns.finish`)."""
        return title

    @abstractmethod
    def write_rows(self, path: str, cols: list[Column], rows: Iterator[list[Cell]]) -> str | None:
        """Write the table: its header of ``cols`` titles, then each row of cells. Returns a
        digest of every cell's text as written (see :class:`ReadBack`), or ``None``."""

    @abstractmethod
    def read_back(self, path: str) -> ReadBack:
        """Read the written table back as a person's tool would (raising if it cannot)."""

    def _check(self, path: str, written: ReadBack, shown: str) -> None:
        try:
            got = self.read_back(path)
        except Exception as exc:
            raise ExportError(f"{shown}: the written file cannot be read back: {exc}") from exc
        if got.titles is not None and got.titles != written.titles:
            lost = sorted(set(written.titles or []) - set(got.titles))
            raise ExportError(
                f"{shown}: the columns read back are not the columns written"
                + (f" (missing: {', '.join(lost[:5])})" if lost else "")
            )
        if got.rows != written.rows:
            raise ExportError(
                f"{shown}: {plural(got.rows, 'row')} read back, {written.rows:,} written"
            )
        if written.cells is not None and got.cells != written.cells:
            raise ExportError(f"{shown}: the cells read back are not the cells written")
        if not got.rows:
            return
        for title, have, wrote in zip(written.titles or [], got.values, written.values):
            if have != wrote:
                raise ExportError(
                    f"{shown}: column {title!r} holds {plural(have, 'value')} read back,"
                    f" {wrote:,} written"
                )
