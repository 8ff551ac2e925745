"""What every export shares: the formats' names, the report an export returns, the progress
callback, and the small interface each output format implements.

An :class:`Exporter` only writes: it asks its piece of the export
(:class:`~browser_app.export.staging.PieceRun`) for temporary files beside its destinations and
fills them with the planned records. Planning the records, verifying what was written and
moving it into place are the export run's, the same for every format.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict

from browser_app.edits import RecordRef
from codec.framing import Problem
from codec.locations import shown
from codec.values import format_bytes, plural

if TYPE_CHECKING:
    from codec import jobs
    from codec.jobs import Executor, ExecutorSpec

__all__ = [
    "COCO",
    "CSV",
    "FORMULA_RECORDS_SHOWN",
    "IMAGES",
    "JSON",
    "JSONL",
    "PARQUET",
    "TFRECORD",
    "ExportFormat",
    "ExportOptions",
    "ExportProgress",
    "ExportReport",
    "FormulaCells",
    "UnconvertedPicture",
]

ExportFormat = Literal["tfrecord", "jsonl", "json", "csv", "parquet", "images", "coco"]
TFRECORD: ExportFormat = "tfrecord"
JSONL: ExportFormat = "jsonl"  # one proto3 JSON record per line; read back by import_jsonl
JSON: ExportFormat = "json"  # a flat table as a JSON array of row objects
CSV: ExportFormat = "csv"
PARQUET: ExportFormat = "parquet"
IMAGES: ExportFormat = "images"  # the pictures of the records, in a folder or a .zip
COCO: ExportFormat = "coco"  # instances.json, results.json and the pictures, in a new folder

ExportProgress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: ``stage`` is ``"scan"`` (a flat table's first pass over
the records), ``"write"`` (records) or ``"verify"`` (outputs)."""


class ExportOptions(TypedDict, total=False):
    """What every export takes besides its format's own options.

    ``selection``: the records to export (global indices, new records' ids; default: all, in
    the edited dataset's order); ``include_added``: records added after a selected record
    come with it (default true); ``verify``: read the outputs back before they are moved into
    place (default true); ``progress``: see :data:`ExportProgress`; ``index_map``: write the old →
    new index map beside the output (default true; see :mod:`browser_app.export.index_map`);
    ``anon``: read and write ``s3://``, ``gs://``, ``az://`` URLs without credentials.

    Where the work runs (see :func:`browser_app.export.registry.export`): ``executor``, a
    :class:`codec.jobs.Executor`, or a :class:`codec.jobs.ExecutorSpec` or its text
    (``"inline"``, ``"processes[:N]"``, ``"dask:local[:N]"``, ``"dask:tcp://host:port"``;
    default ``"inline"``, this process); ``job_progress``, called with a
    :class:`codec.jobs.Progress` as the output pieces are written; ``cancel``, an event that
    stops the export (raising :class:`codec.errors.JobCancelled`, nothing written)."""

    selection: Iterable[RecordRef] | None
    include_added: bool
    verify: bool
    progress: ExportProgress | None
    index_map: bool
    anon: bool
    executor: Executor | ExecutorSpec | str | None
    job_progress: Callable[[jobs.Progress], None] | None
    cancel: threading.Event | None


@dataclass(frozen=True)
class UnconvertedPicture:
    """A picture the images export could not write: the ``index``-th value of ``feature`` in
    the record at ``record`` (its position in the export), and why."""

    record: int
    feature: str
    index: int
    reason: str

    def describe(self) -> str:
        return f"record {self.record}: {self.feature}[{self.index}]: {self.reason}"


FORMULA_RECORDS_SHOWN = 5  # record numbers a report names for its formula cells


@dataclass
class FormulaCells:
    """The text cells of a CSV output that a spreadsheet would run as formulas (see
    :func:`browser_app.export.csv.runs_as_formula`): ``cells`` in the rows, in ``rows``
    records, the first :data:`FORMULA_RECORDS_SHOWN` of which are ``records`` (positions in
    the export); ``titles`` among the column titles. ``neutralized`` when they were written
    with a leading ``'``, which spreadsheets show as text."""

    neutralized: bool = False
    cells: int = 0
    rows: int = 0
    records: list[int] = field(default_factory=list)
    titles: int = 0
    _last: int = field(default=-1, repr=False)

    def count(self, position: int) -> None:
        """One more such cell, in the record at ``position`` (positions come in order)."""
        self.cells += 1
        if position != self._last:
            self._last = position
            self.rows += 1
            if len(self.records) < FORMULA_RECORDS_SHOWN:
                self.records.append(position)

    def __bool__(self) -> bool:
        return bool(self.cells or self.titles)

    def describe(self) -> str:
        """The cells in words: how many, what they start with, where."""
        n = self.cells + self.titles
        what = f"{n:,} text cell{'s' if n != 1 else ''}"
        start = f"start{'s' if n == 1 else ''} with =, +, -, @, a tab or a carriage return"
        where = []
        if self.records:
            shown = ", ".join(str(r) for r in self.records)
            hidden = self.rows - len(self.records)
            more = f" and {hidden:,} more" if hidden else ""
            where.append(f"record{'s' if self.rows != 1 else ''} {shown}{more}")
        if self.titles:
            where.append(f"{self.titles} column title{'s' if self.titles != 1 else ''}")
        at = f" ({'; '.join(where)})"
        them, formulas = ("it", "a formula") if n == 1 else ("them", "formulas")
        if self.neutralized:
            return (
                f"{what} that {start}, written with a leading ' so that no spreadsheet"
                f" runs {them}{at}"
            )
        return f"{what} {start} and would run as {formulas} in a spreadsheet{at}"


@dataclass
class ExportReport:
    """What an export did. ``records`` were written: ``copied`` byte for byte, ``edited``
    re-encoded with their changes, ``added`` new, ``reencoded`` written from another form
    (an import from JSON Lines); ``deleted`` were left out as the journal asks; ``skipped``
    lists damaged source records and regions that were not exported, and ``unconverted`` the
    pictures the images export could not convert. ``inexact`` counts records whose bytes the
    output cannot give back exactly, by reason (``{"a NaN's sign or payload": 3}``).
    ``formulas`` (CSV) counts the text cells a spreadsheet would run as formulas.
    ``index_map`` is the file that maps every source record to its place in the output
    (or says why it is not there). ``cleaned`` counts the temporary outputs and lock files
    that killed exports had left in the destination's folder and that this one removed
    first, ``cleaned_bytes`` their size."""

    format: ExportFormat
    outputs: list[str] = field(default_factory=list)
    records: int = 0
    copied: int = 0
    edited: int = 0
    added: int = 0
    deleted: int = 0
    images: int = 0
    bytes: int = 0  # bytes written on disk, all outputs
    skipped: list[Problem] = field(default_factory=list)
    unconverted: list[UnconvertedPicture] = field(default_factory=list)
    reencoded: int = 0
    inexact: dict[str, int] = field(default_factory=dict)
    verified: bool = False
    backup: str | None = None
    seconds: float = 0.0
    cleaned: int = 0  # temporary outputs (and locks) of killed exports removed beforehand
    cleaned_bytes: int = 0  # their size
    formulas: FormulaCells | None = None  # CSV only
    index_map: str | None = None  # where every record went (see export.index_map)

    @property
    def ok(self) -> bool:
        """Nothing was left out: no damaged record, no picture that could not be written."""
        return not self.skipped and not self.unconverted

    def left_out(self) -> list[str]:
        """One line for every damaged record or region and every unconverted picture."""
        return [p.describe() for p in self.skipped] + [p.describe() for p in self.unconverted]

    def formula_warning(self) -> str | None:
        """The CSV cells that a spreadsheet would run as formulas, in words, unless there are
        none or they were neutralised."""
        if self.formulas and not self.formulas.neutralized:
            return self.formulas.describe()
        return None

    def summary(self) -> str:
        """One sentence: what was written where, how, and what was left out."""
        where = shown(self.outputs[0]) if len(self.outputs) == 1 else f"{len(self.outputs)} files"
        what = f"{plural(self.images, 'image')} from " if self.format == IMAGES else ""
        parts = [f"wrote {what}{plural(self.records, 'record')} to {where} ({self.format})"]
        detail = []
        if self.copied:
            how = "copied byte for byte" if self.format == TFRECORD else "unchanged"
            detail.append(f"{self.copied:,} {how}")
        if self.edited:
            detail.append(f"{self.edited:,} edited")
        if self.added:
            detail.append(f"{self.added:,} added")
        if self.deleted:
            detail.append(f"{self.deleted:,} deleted left out")
        if self.reencoded:
            detail.append(f"{self.reencoded:,} encoded from their JSON form")
        if detail:
            parts.append("; ".join(detail))
        if self.inexact:
            why = "; ".join(f"{why}: {n:,}" for why, n in sorted(self.inexact.items()))
            total = sum(self.inexact.values())
            parts.append(f"{plural(total, 'record')} not exactly as in the source ({why})")
        if not self.ok:
            # The sentence has always counted unconverted pictures with the damage.
            left_out = len(self.skipped) + len(self.unconverted)
            parts.append(
                plural(left_out, "damaged record or region", "damaged records or regions")
                + " skipped"
            )
        if self.formulas:
            parts.append(self.formulas.describe())
        if self.verified:
            parts.append("verified")
        if self.index_map:
            parts.append(f"where each record went is in {shown(self.index_map)}")
        if self.backup:
            parts.append(f"the previous file is kept as {self.backup}")
        if self.cleaned:
            files = plural(self.cleaned, "leftover temporary file")
            parts.append(
                f"removed {files} of an interrupted export ({format_bytes(self.cleaned_bytes)})"
            )
        return ", ".join(parts)
