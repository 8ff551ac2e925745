"""Parquet output: a flat table (see :mod:`browser_app.export.table`) with typed columns.

int64 as ``int64``, float32 as ``float``, bytes as ``string`` when every value of the column
is UTF-8, else ``binary``; list columns as ``list<...>`` (feature lists ``list<list<...>>``).
pyarrow is imported only when a Parquet file is written or read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from browser_app.export.base import PARQUET
from browser_app.export.table import Cell, Column, ReadBack, TableExporter
from codec.kinds import BYTES, FLOAT, INT64, NONE

__all__ = ["ParquetExporter"]

_ROW_BATCH = 8192  # rows per Parquet row group batch


def _arrow_type(col: Column) -> Any:
    import pyarrow as pa

    base = {
        INT64: pa.int64(),
        FLOAT: pa.float32(),
        BYTES: pa.string() if col.utf8 else pa.binary(),
        NONE: pa.null(),
    }[col.type]
    if col.section == "index":
        return pa.int64()
    if col.section == "raw":
        return pa.binary()
    if col.section == "features":
        return base if col.scalar else pa.list_(base)
    return pa.list_(pa.list_(base))


def _arrow_value(col: Column, value: Cell) -> Cell:
    if value is None or col.section in ("index", "raw"):
        return value
    utf8 = col.type == BYTES and col.utf8
    if col.section == "features":
        if utf8:
            value = [v.decode("utf-8") for v in value]
        return value[0] if col.scalar else value
    if utf8:
        return [None if s is None else [v.decode("utf-8") for v in s] for s in value]
    return value


class ParquetExporter(TableExporter):
    """One row per record, one typed column per feature, as Parquet."""

    name = PARQUET
    label = "Parquet (one row per record)"
    suffix = ".parquet"
    extensions = (".parquet", ".pq")

    def write_rows(self, path: str, cols: list[Column], rows: Iterator[list[Cell]]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pa.schema([pa.field(c.title, _arrow_type(c)) for c in cols])
        with pq.ParquetWriter(path, schema) as writer:
            batch: list[list[Any]] = [[] for _ in cols]
            n = 0

            def flush() -> None:
                arrays = [pa.array(b, type=f.type) for b, f in zip(batch, schema)]
                writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
                for b in batch:
                    b.clear()

            for n, cells in enumerate(rows, start=1):
                for b, c, v in zip(batch, cols, cells):
                    b.append(_arrow_value(c, v))
                if n % _ROW_BATCH == 0:
                    flush()
            if batch[0] or n == 0:
                flush()

    def read_back(self, path: str) -> ReadBack:
        import pyarrow.parquet as pq

        f = pq.ParquetFile(path)
        titles = list(f.schema_arrow.names)
        values = [0] * len(titles)
        rows = 0
        for batch in f.iter_batches():
            rows += batch.num_rows
            for k in range(batch.num_columns):
                column = batch.column(k)
                values[k] += len(column) - column.null_count
        return ReadBack(titles, rows, values)
