"""CSV output: a flat table (see :mod:`browser_app.export.table`) whose cells are text a
person can read and an edit can take back exactly.

int64 as decimal digits; float32 as its shortest round-trip text (``nan``, ``inf``, ``-inf``);
bytes as text when they are UTF-8 (and cannot be mistaken for a ``hex:``/``base64:``/``text:``
value), else ``base64:...``; an empty bytes value is ``base64:`` (an empty cell is a missing
value). A list cell is a JSON array; a raw record's ``_raw`` cell is always ``base64:...``.
"""

from __future__ import annotations

import csv
import functools
import json
from collections.abc import Iterator
from typing import Any

from browser_app.edits import render_value
from browser_app.export.base import CSV
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

__all__ = ["CsvExporter"]


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
    """One row per record, one column per feature, as CSV (UTF-8, ``\\n`` line ends)."""

    name = CSV
    label = "CSV (one row per record)"
    suffix = ".csv"
    extensions = (".csv",)

    def write_rows(self, path: str, cols: list[Column], rows: Iterator[list[Cell]]) -> None:
        with open(path, "w", encoding="utf-8", newline="") as out:
            w = csv.writer(out, lineterminator="\n")
            w.writerow([c.title for c in cols])
            for cells in rows:
                w.writerow([_cell_text(c, v) for c, v in zip(cols, cells)])

    def read_back(self, path: str) -> ReadBack:
        limit = csv.field_size_limit(1 << 30)  # a cell may hold a 1 MiB value as base64
        try:
            with open(path, encoding="utf-8", newline="") as f:
                reader = csv.reader(f)
                titles = next(reader)
                values = [0] * len(titles)
                rows = 0
                for row in reader:
                    if len(row) != len(titles):
                        raise ValueError(f"row {rows + 1} has {len(row)} cells, not {len(titles)}")
                    rows += 1
                    for k, text in enumerate(row):
                        values[k] += text != ""  # an empty cell is a missing value
        finally:
            csv.field_size_limit(limit)
        return ReadBack(titles, rows, values)
