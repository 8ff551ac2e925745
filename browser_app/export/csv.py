"""CSV output: a flat table (see :mod:`browser_app.export.table`) whose cells are text a
person can read and an edit can take back exactly.

int64 as decimal digits; float32 as its shortest round-trip text (``nan``, ``inf``, ``-inf``);
bytes as text when they are UTF-8 (and cannot be mistaken for a ``hex:``/``base64:``/``text:``
value), else ``base64:...``; an empty bytes value is ``base64:`` (an empty cell is a missing
value). A list cell is a JSON array; a raw record's ``_raw`` cell is always ``base64:...``.

A text cell (or column title) that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return is run as a formula by a spreadsheet that opens the file (:func:`runs_as_formula`; a
number such as ``-3`` is a number, and number columns are never such cells). They are written
as they are, counted in the report (:class:`~browser_app.export.base.FormulaCells`), or, with
``neutralize_formulas``, written with a leading ``'``, which spreadsheets take as "this is
text"; the file then no longer holds the exact value of those cells.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import itertools
import json
import os
import re
from collections.abc import Iterator
from typing import Any

from browser_app.edits import render_value
from browser_app.export.base import CSV, FormulaCells
from browser_app.export.staging import PieceRun
from browser_app.export.table import (
    Cell,
    Column,
    ReadBack,
    TableExporter,
    base64_text,
    float_json,
    json_list,
)
from codec.kinds import BYTES, FLOAT, INT64
from codec.values import plural

__all__ = ["FORMULA_START", "CsvExporter", "neutralized", "runs_as_formula"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a cell starts with when a spreadsheet runs it as a formula (OWASP's list)."""

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def runs_as_formula(text: str) -> bool:
    """Whether a spreadsheet opening a CSV file would run the cell ``text`` as a formula: it
    starts with one of :data:`FORMULA_START` and is not a plain decimal number (``-3``,
    ``+1.5e3``)."""
    return text.startswith(FORMULA_START) and _NUMBER.fullmatch(text) is None


def neutralized(text: str) -> str:
    """``text`` as a cell no spreadsheet runs: with a leading ``'``."""
    return "'" + text


class _Digest:
    """A digest of every cell's text, row by row: of the rows written, then of the rows read
    back, which must be the same."""

    def __init__(self) -> None:
        self._h = hashlib.blake2b(digest_size=16)

    def add(self, row: list[str]) -> None:
        self._h.update(json.dumps(row).encode("ascii"))
        self._h.update(b"\n")

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def _json_value(t: str, v: Any) -> str:
    """A value in a list cell, as JSON: a number, or the text of a scalar cell as a string."""
    if t == INT64:
        return str(v)
    if t == FLOAT:
        return float_json(v)
    return json.dumps(render_value(BYTES, v), ensure_ascii=False)


def _cell_text(col: Column, value: Cell) -> str:
    if value is None:
        return ""
    if col.section == "index":
        return str(value)
    if col.section == "raw":
        return "base64:" + base64_text(value)
    if col.section == "features" and col.scalar:
        v = value[0]
        if col.type == BYTES and v == b"":
            return "base64:"  # an empty value, not a missing one
        return render_value(col.type, v)
    text = functools.partial(_json_value, col.type)
    return json_list(value, text, nested=col.section == "feature_lists")


class CsvExporter(TableExporter):
    """One row per record, one column per feature, as CSV (UTF-8, ``\\n`` line ends);
    ``neutralize_formulas`` writes the cells a spreadsheet would run as formulas with a
    leading ``'`` (see the module docstring)."""

    name = CSV
    label = "CSV (one row per record)"
    suffix = ".csv"
    extensions = (".csv",)

    def __init__(
        self,
        dst: str | os.PathLike[str] | None,
        *,
        neutralize_formulas: bool = False,
        int64_as_string: bool = False,
    ) -> None:
        super().__init__(dst, int64_as_string=int64_as_string)
        self.neutralize_formulas = neutralize_formulas
        self.formulas = FormulaCells(neutralized=neutralize_formulas)

    def write(self, job: PieceRun) -> None:
        self.formulas = job.report.formulas = FormulaCells(neutralized=self.neutralize_formulas)
        super().write(job)

    def escape_title(self, title: str) -> str:
        if not runs_as_formula(title):
            return title
        self.formulas.titles += 1
        return neutralized(title) if self.neutralize_formulas else title

    def _texts(self, cols: list[Column], cells: list[Cell]) -> list[str]:
        """A row's cells as text, counting (and, if asked, neutralising) the text cells a
        spreadsheet would run as formulas."""
        out = [_cell_text(c, v) for c, v in zip(cols, cells)]
        for k, (col, text) in enumerate(zip(cols, out)):
            if col.type == BYTES and runs_as_formula(text):  # a text cell, not a number
                self.formulas.count(cells[0])  # the first column: the record's position
                if self.neutralize_formulas:
                    out[k] = neutralized(text)
        return out

    def write_rows(self, path: str, cols: list[Column], rows: Iterator[list[Cell]]) -> str:
        digest = _Digest()
        # The csv module quotes a field holding a line end only when that character is in
        # the line terminator: with "\r\n" a lone carriage return is quoted too. Each row's
        # own terminator then becomes "\n".
        line = io.StringIO()
        w = csv.writer(line, lineterminator="\r\n")
        with open(path, "w", encoding="utf-8", newline="") as out:
            texts = itertools.chain([[c.title for c in cols]], (self._texts(cols, r) for r in rows))
            for row in texts:
                w.writerow(row)
                out.write(line.getvalue()[:-2] + "\n")
                line.seek(0)
                line.truncate()
                digest.add(row)
        return digest.hexdigest()

    def read_back(self, path: str) -> ReadBack:
        limit = csv.field_size_limit(1 << 30)  # a cell may hold a 1 MiB value as base64
        try:
            with open(path, encoding="utf-8", newline="") as f:
                reader = csv.reader(f)
                titles = next(reader)
                digest = _Digest()
                digest.add(titles)
                values = [0] * len(titles)
                rows = 0
                for row in reader:
                    if len(row) != len(titles):
                        raise ValueError(
                            f"row {rows + 1} has {plural(len(row), 'cell')}, not {len(titles)}"
                        )
                    rows += 1
                    for k, text in enumerate(row):
                        values[k] += text != ""  # an empty cell is a missing value
                    digest.add(row)
        finally:
            csv.field_size_limit(limit)
        return ReadBack(titles, rows, values, digest.hexdigest())
