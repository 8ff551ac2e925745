"""JSON output: a flat table (see :mod:`browser_app.export.table`) as an array of row
objects, one per line.

int64 as JSON numbers up to ±(2**53 − 1), strings beyond (JavaScript readers lose such
integers; ``int64_as_string=True`` writes all as strings); float32 as its shortest round-trip
number, ``"NaN"``, ``"Infinity"``, ``"-Infinity"``; bytes as a string when they are text, else
``{"$base64": "..."}``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

from browser_app.export.base import JSON
from browser_app.export.table import (
    Cell,
    Column,
    TableExporter,
    base64_text,
    cell,
    float_json,
    json_list,
)
from codec.example import Record
from codec.kinds import FLOAT, INT64
from codec.values import is_text

__all__ = ["JS_SAFE_INT", "JsonTableExporter"]

JS_SAFE_INT = (1 << 53) - 1  # the largest integer a JavaScript number holds exactly


def _base64_object(b: bytes) -> str:
    return '{"$base64": "' + base64_text(b) + '"}'


def _value_text(t: str, v: Any, int64_as_string: bool) -> str:
    if t == INT64:
        if int64_as_string or abs(v) > JS_SAFE_INT:
            return f'"{v}"'
        return str(v)
    if t == FLOAT:
        return float_json(v)
    if is_text(v):
        return json.dumps(v.decode("utf-8"), ensure_ascii=False)
    return _base64_object(v)


def _cell_text(col: Column, value: Cell, int64_as_string: bool) -> str:
    if value is None:
        return "null"
    if col.section == "index":
        return str(value)
    if col.section == "raw":
        return _base64_object(value)
    text = functools.partial(_value_text, col.type, int64_as_string=int64_as_string)
    if col.section == "features" and col.scalar:
        return text(value[0])
    return json_list(value, text, nested=col.section == "feature_lists")


def _count_rows(path: str) -> int:
    # Rows are written one per line between "[" and "]"; each must parse on its own.
    n = 0
    with open(path, encoding="utf-8") as f:
        first = f.readline()
        if first.strip() not in ("[", "[]"):
            raise ValueError("not a JSON array")
        if first.strip() == "[]":
            return 0
        for line in f:
            s = line.rstrip("\n")
            if s == "]":
                break
            json.loads(s[:-1] if s.endswith(",") else s)
            n += 1
    return n


class JsonTableExporter(TableExporter):
    """One object per record, one member per column, in a JSON array (a row a line)."""

    name = JSON
    label = "JSON (an array of rows)"
    suffix = ".json"
    extensions = (".json",)

    def write_rows(self, path: str, cols: list[Column], rows: Iterator[tuple[int, Record]]) -> None:
        keys = [json.dumps(c.title, ensure_ascii=False) for c in cols]
        with open(path, "w", encoding="utf-8") as out:
            out.write("[")
            for n, (pos, rec) in enumerate(rows, start=1):
                cells = (
                    f"{k}: {_cell_text(c, cell(c, pos, rec), self.int64_as_string)}"
                    for k, c in zip(keys, cols)
                )
                out.write(("\n" if n == 1 else ",\n") + "{" + ", ".join(cells) + "}")
            out.write("\n]\n")

    def count_rows(self, path: str) -> int:
        return _count_rows(path)
