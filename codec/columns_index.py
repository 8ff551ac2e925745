"""The columnar index of a dataset: every record's facts and its scalar and short-list
features, one Parquet file per data file in the cache folder, for SQL (:mod:`codec.sql`).

What a record has in the index (the columns of the table ``records``):

- ``record`` (its number in the dataset), ``file`` (its file, as shown), ``local`` (its number
  in that file), ``status`` (``intact``, ``recovered`` — reached by resynchronising after
  damage —, ``damaged``: its data CRC fails, every feature NULL), ``bytes`` (the payload's
  size), ``boxes`` (its ground-truth Object Detection boxes, as the record view counts them:
  :func:`codec.detection.record_boxes` under every ``objects`` layout), ``classes`` (the class
  of each of those boxes as captioned, ``"cat (1)"``, NULL for a box without one), ``mark``
  (the review mark the app supplies: ``passed``, ``flagged``, NULL);
- every feature whose lists hold at most :data:`~codec.jobs.columns.MAX_LIST` values and
  whose bytes values hold at most :data:`~codec.jobs.columns.MAX_VALUE_BYTES` bytes: a
  scalar column when no record holds more than one value (NULL where a record lacks it or
  its list is empty), else a LIST column (NULL where a record lacks it). int64 is BIGINT,
  float DOUBLE (the float32 stored, exactly), bytes VARCHAR when every value is UTF-8, else
  BLOB. A feature named like a fact (or like another feature but for case) is
  ``feature:<name>``. Longer features (pictures, embeddings), and features holding two types
  in different records or files, are left out, and :attr:`ColumnsIndex.left_out` says why.

The index is exact: every record of every file, read as a dataset job
(:class:`codec.jobs.columns.ColumnsJob`) on any executor. Each file's table is stored under
``<cache>/columns`` keyed by its :class:`~codec.identity.FileIdentity`, so a second query of
the same files reads no record, and a changed file (another identity) is read again alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .jobs.columns import FEATURE_PREFIX, FORMAT, ColumnsJob, ColumnsResult, FileColumns
from .jobs.plan import Task, tasks_of
from .reader import TFRecordFile
from .settings import default_cache_dir

__all__ = [
    "FACTS",
    "ColumnsIndex",
    "IndexColumn",
    "IndexFile",
    "columns_index",
    "index_folder",
    "stored_column",
    "stored_columns",
    "stored_index",
    "stored_path",
]

FACTS = ("record", "file", "local", "status", "bytes", "boxes", "classes", "mark")
"""The facts of every record, the first columns of ``records``, in this order."""
_SQL_TYPES = {"int64": "BIGINT", "float": "DOUBLE", "string": "VARCHAR", "bytes": "BLOB"}
_META = b"tfrecord-browser"

Runner = Callable[[ColumnsJob, list[Task]], ColumnsResult]
"""Runs the index job over tasks and returns its merged result (the command line's with its
progress and Ctrl+C, the app's with its progress bar and Cancel button)."""


@dataclass(frozen=True)
class IndexColumn:
    """A feature's column in ``records``: its ``name`` there, the ``feature``, its ``type``
    (``int64``, ``float``, ``string``, ``bytes``) and whether it is ``scalar`` (else a LIST)."""

    name: str
    feature: str
    type: str
    scalar: bool

    @property
    def sql_type(self) -> str:
        """The column's DuckDB type: ``BIGINT``, ``DOUBLE[]``, ..."""
        base = _SQL_TYPES[self.type]
        return base if self.scalar else base + "[]"


@dataclass(frozen=True)
class IndexFile:
    """One data file in the index: its ``path`` as shown, its stored table (``parquet``),
    how many ``records`` it holds, the dataset number of its first (``base``), and per
    feature what its table holds (``notes``: ``type``, ``longest``, ``left_out``)."""

    path: str
    parquet: Path
    records: int
    base: int
    notes: dict[str, dict[str, Any]]


@dataclass
class ColumnsIndex:
    """The index of a dataset's files: the stored ``files`` in dataset order, the feature
    ``columns`` of ``records``, the features ``left_out`` (feature → why), the files that
    could not be read (``unreadable``: shown path, why; their records are not in the index)
    and how many files were read now (``built``) rather than found stored."""

    files: list[IndexFile]
    columns: list[IndexColumn]
    left_out: dict[str, str] = field(default_factory=dict)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    built: int = 0

    @property
    def records(self) -> int:
        return sum(f.records for f in self.files)

    @property
    def complete(self) -> bool:
        """Whether every record of every file is in the index."""
        return not self.unreadable

    @property
    def renamed(self) -> dict[str, str]:
        """Features whose column is not named as they are (feature → column)."""
        return {c.feature: c.name for c in self.columns if c.name != c.feature}


def index_folder(cache_dir: Path | None = None) -> Path:
    """Where the stored tables are: ``<cache>/columns``."""
    return (cache_dir if cache_dir is not None else default_cache_dir()) / "columns"


def stored_path(f: TFRecordFile, cache_dir: Path | None = None) -> Path:
    """Where the table of open file ``f`` is stored (by its identity)."""
    return index_folder(cache_dir) / f"{f.identity.digest(f'columns-{FORMAT}')}.parquet"


def _stored(path: Path) -> tuple[int, dict[str, dict[str, Any]]] | None:
    """The records and feature notes of a stored table, or None when it is missing or not
    of this layout (then it is made again)."""
    try:
        meta = pq.read_metadata(path)
        doc = json.loads((meta.schema.to_arrow_schema().metadata or {})[_META])
    except (OSError, KeyError, ValueError, pa.ArrowException):
        return None
    if doc.get("format") != FORMAT or not isinstance(doc.get("features"), dict):
        return None
    return meta.num_rows, doc["features"]


def _store(fc: FileColumns, path: Path) -> None:
    """Write a file's table atomically (a reader never meets half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".columns-", suffix=".parquet")
    os.close(fd)
    try:
        pq.write_table(fc.table, tmp, compression="zstd")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def stored_index(
    files: Sequence[TFRecordFile], cache_dir: Path | None = None
) -> ColumnsIndex | None:
    """The index of the open ``files`` when every file's table is stored; else None (nothing
    is read; the first missing table ends the look)."""
    paths: list[Path] = []
    found: list[tuple[int, dict[str, dict[str, Any]]] | None] = []
    for f in files:
        paths.append(stored_path(f, cache_dir))
        found.append(_stored(paths[-1]))
        if found[-1] is None:
            return None
    return _assemble(files, paths, found, [], 0)


def columns_index(
    files: Sequence[TFRecordFile],
    *,
    runner: Runner | None = None,
    executor: Any = None,
    compression: str = "auto",
    cache_dir: Path | None = None,
) -> ColumnsIndex:
    """The index of the open ``files`` (a dataset's, in order): each file's stored table
    when there is one for its identity, the others read by the index job (with ``runner``,
    else :func:`codec.jobs.run` on ``executor``) and stored."""
    paths = [stored_path(f, cache_dir) for f in files]
    found = [_stored(p) for p in paths]
    missing = [k for k, got in enumerate(found) if got is None]
    unreadable: list[tuple[str, str]] = []
    if missing:
        tasks = tasks_of([files[k] for k in missing], executor=executor, compression=compression)
        job = ColumnsJob(compression)
        if runner is None:
            from .jobs.run import run

            result: ColumnsResult = run(job, tasks, executor)
        else:
            result = runner(job, tasks)
        for fc in result.files:
            k = missing[fc.number]
            _store(fc, paths[k])
            found[k] = (fc.records, fc.notes)
        unreadable = list(result.unreadable)
    return _assemble(files, paths, found, unreadable, len(missing))


def _assemble(
    files: Sequence[TFRecordFile],
    paths: Sequence[Path],
    found: Sequence[tuple[int, dict[str, dict[str, Any]]] | None],
    unreadable: list[tuple[str, str]],
    built: int,
) -> ColumnsIndex:
    out: list[IndexFile] = []
    base = 0
    for f, path, got in zip(files, paths, found):
        if got is None:
            base += len(f)  # numbered as the dataset numbers it, though not in the index
            continue
        records, notes = got
        out.append(IndexFile(f.path, path, records, base, notes))
        base += records
    columns, left_out = _columns(out)
    return ColumnsIndex(out, columns, left_out, unreadable, built)


def _columns(files: Sequence[IndexFile]) -> tuple[list[IndexColumn], dict[str, str]]:
    """The feature columns of the dataset from its files' notes, and the features left out
    (why): a feature left out of one file is left out of all; one of different types in
    different files too (bytes that are UTF-8 in some files only are BLOB)."""
    seen: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for f in files:
        for name, note in f.notes.items():
            seen.setdefault(name, []).append((f.path, note))
    columns: list[IndexColumn] = []
    left_out: dict[str, str] = {}
    taken = {name.lower() for name in FACTS}
    for name in sorted(seen):
        notes = seen[name]
        why = next(((p, n["left_out"]) for p, n in notes if n.get("left_out")), None)
        if why is not None:
            where = f" (in {why[0]})" if len(files) > 1 else ""
            left_out[name] = f"{why[1]}{where}"
            continue
        types = {n["type"] for _p, n in notes}
        if types == {"string", "bytes"}:
            types = {"bytes"}
        if len(types) != 1 or not types <= set(_SQL_TYPES):
            kinds = " and ".join(sorted(types))
            left_out[name] = f"its values are of two types in different files: {kinds}"
            continue
        scalar = max(int(n.get("longest", 0)) for _p, n in notes) <= 1
        col = name
        if col.lower() in taken:
            col = f"feature:{name}"
            k = 2
            while col.lower() in taken:
                col = f"feature:{name}#{k}"
                k += 1
        taken.add(col.lower())
        columns.append(IndexColumn(col, name, types.pop(), scalar))
    return columns, left_out


def stored_column(feature: str) -> str:
    """A feature's column in a stored table."""
    return FEATURE_PREFIX + feature


def stored_columns(index: ColumnsIndex, names: Sequence[str]) -> list[pa.Table]:
    """Per file of ``index``, in order, the columns ``names`` of its stored table (facts by
    their name, features as :func:`stored_column` names them): a column its table lacks (a
    feature no record of that file holds) is left out of that file's table. Reads only
    those columns."""
    out: list[pa.Table] = []
    for f in index.files:
        have = set(pq.read_schema(f.parquet).names)
        out.append(pq.read_table(f.parquet, columns=[n for n in names if n in have]))
    return out
