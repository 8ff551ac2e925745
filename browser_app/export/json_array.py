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
    ReadBack,
    TableExporter,
    base64_text,
    float_json,
    json_list,
)
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


def _read_back(path: str) -> ReadBack:
    """Rows are written one per line between "[" and "]"; each must parse on its own, with
    no member named twice (``json`` would keep only the last)."""
    titles: list[str] | None = None
    values: list[int] = []
    rows = 0
    with open(path, encoding="utf-8") as f:
        first = f.readline().strip()
        if first not in ("[", "[]"):
            raise ValueError("not a JSON array")
        for line in f if first == "[" else ():
            s = line.rstrip("\n")
            if s == "]":
                break
            pairs = json.loads(s[:-1] if s.endswith(",") else s, object_pairs_hook=list)
            keys = [k for k, _ in pairs]
            if titles is None:
                titles, values = keys, [0] * len(keys)
            if keys != titles:
                raise ValueError(f"row {rows + 1} does not have the members of the first row")
            rows += 1
            for k, (_key, v) in enumerate(pairs):
                values[k] += v is not None
    return ReadBack(titles, rows, values)  # no titles when there is no row to hold them


class JsonTableExporter(TableExporter):
    """One object per record, one member per column, in a JSON array (a row a line)."""

    name = JSON
    label = "JSON (an array of rows)"
    suffix = ".json"
    extensions = (".json",)

    def write_rows(self, path: str, cols: list[Column], rows: Iterator[list[Cell]]) -> None:
        keys = [json.dumps(c.title, ensure_ascii=False) for c in cols]
        with open(path, "w", encoding="utf-8") as out:
            out.write("[")
            for n, cells in enumerate(rows, start=1):
                members = (
                    f"{k}: {_cell_text(c, v, self.int64_as_string)}"
                    for k, c, v in zip(keys, cols, cells)
                )
                out.write(("\n" if n == 1 else ",\n") + "{" + ", ".join(members) + "}")
            out.write("\n]\n")

    def read_back(self, path: str) -> ReadBack:
        return _read_back(path)
