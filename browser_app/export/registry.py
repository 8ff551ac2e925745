"""The one table of output formats, and what goes by it: the format a destination's name asks
for, the destination suggested for a source, and :func:`export`, which hands an export to the
format's exporter.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import codec
from browser_app.errors import ExportError
from browser_app.export.base import (
    IMAGES,
    TFRECORD,
    ExportFormat,
    ExportOptions,
    ExportReport,
)
from browser_app.export.coco import CocoExporter
from browser_app.export.csv import CsvExporter
from browser_app.export.exporter import Exporter
from browser_app.export.images import ImagesExporter
from browser_app.export.json_array import JsonTableExporter
from browser_app.export.jsonl import JsonLinesExporter
from browser_app.export.parquet import ParquetExporter
from browser_app.export.plan import ExportSource
from browser_app.export.running import run
from browser_app.export.table import TableExporter
from browser_app.export.tfrecord import (
    COMPRESSION_SUFFIX,
    TFRecordExporter,
    compression_for_name,
    shard_names,
)
from codec.kinds import NO_COMPRESSION, Compression
from codec.locations import is_url

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "EXPORTERS",
    "FORMATS",
    "default_destination",
    "export",
    "export_table",
    "exporter_for",
    "format_for_path",
    "output_paths",
    "shard_names",
]

EXPORTERS: dict[str, type[Exporter]] = {
    cls.name: cls
    for cls in (
        TFRecordExporter,
        JsonLinesExporter,
        JsonTableExporter,
        CsvExporter,
        ParquetExporter,
        ImagesExporter,
        CocoExporter,
    )
}
"""Every output format: its name to its exporter."""

FORMATS: tuple[str, ...] = tuple(EXPORTERS)

_BY_EXTENSION = {ext: cls.name for cls in EXPORTERS.values() for ext in cls.extensions}


def exporter_for(fmt: str) -> type[Exporter]:
    """The exporter of format ``fmt``; :class:`ExportError` for an unknown format."""
    cls = EXPORTERS.get(fmt)
    if cls is None:
        raise ExportError(f"unknown export format {fmt!r} (expected one of {', '.join(FORMATS)})")
    return cls


def format_for_path(path: str | os.PathLike[str]) -> tuple[ExportFormat | None, Compression | None]:
    """``(format, compression)`` suggested by a destination's name: ``x.tfrecord.gz`` gives
    ``("tfrecord", "gzip")``, ``x.csv`` ``("csv", None)``, a folder or an unknown name
    ``(None, None)``."""
    name = os.path.basename(os.fspath(path).rstrip("/\\")).lower()
    compression = compression_for_name(name)
    if compression is not None:
        stem, ext = os.path.splitext(os.path.splitext(name)[0])
        fmt = _BY_EXTENSION.get(ext)
        return (fmt or (TFRECORD if codec.looks_like_tfrecord(stem) else None)), compression
    ext = os.path.splitext(name)[1]
    if ext in _BY_EXTENSION:
        return _BY_EXTENSION[ext], None
    if codec.looks_like_tfrecord(name):
        return TFRECORD, None
    return None, None


# Endings a source's name loses in a suggested destination, in this order.
_SOURCE_ENDINGS = (".gz", ".zlib", ".tfrecords", ".tfrecord", ".records", ".record", ".tfrec")


def _stem(label: str) -> str:
    base = os.path.basename(label.rstrip("/")) or "export"
    for ext in _SOURCE_ENDINGS:
        if base.lower().endswith(ext):
            base = base[: -len(ext)]
    # A glob, a shard set (name@N) and a dataset's split (FOLDER:train) as a file's name.
    base = base.replace("*", "all").replace("@", "-").replace(":", "-")
    return base or "export"


def default_destination(label: str, fmt: str, compression: str = NO_COMPRESSION) -> str:
    """Where an export of the source called ``label`` goes unless told otherwise:
    ``exports/<name>-edited<suffix>``, relative to the root (``compression`` adds its suffix
    to a TFRecord file's name)."""
    suffix = exporter_for(fmt).suffix
    if fmt == TFRECORD:
        suffix += COMPRESSION_SUFFIX.get(compression, "")
    return f"exports/{_stem(label)}-edited{suffix}"


def export(
    source: ExportSource,
    dst: str | os.PathLike[str],
    *,
    format: str | None = None,
    **options: Any,
) -> ExportReport:
    """Export ``source`` to ``dst`` in ``format`` (default: from ``dst``'s name; a name
    without a known extension is a folder of images). ``options`` are those of every export
    (:class:`~browser_app.export.base.ExportOptions`) and the format's (``compression``, ``shards``,
    ``replace_source`` for TFRecord; ``int64_as_string`` for the flat tables).

    The export is a job of :mod:`codec.jobs`: one task per output piece (each shard of a
    sharded TFRecord output; the whole output otherwise), run on ``executor=`` (an
    :class:`codec.jobs.Executor`, left running, or a spec such as ``"inline"`` (the default:
    this process), ``"processes:4"``, ``"dask:local:2"``, ``"dask:tcp://host:8786"``, started
    and closed here). Each task reads its own records from the sources (paths and URLs as
    given; the edited records' payloads are sent with it), writes its piece to a temporary
    name beside the destination, and reads it back; only when every piece is written and
    verified are they moved to their names, so whatever fails (or ``cancel=``, a
    :class:`threading.Event`, set: :class:`codec.errors.JobCancelled`) nothing appears under
    a final name and no temporary output is left. The outputs, the index map and the report
    are the same, byte for byte, on every executor.

    ``progress(stage, done, total)`` reports the export's stages (records written, outputs
    verified); ``job_progress(p)`` gets the job's :class:`codec.jobs.Progress` (pieces done,
    bytes, records per second), at the start, after each piece and at least every half
    second (also from inside a piece written in this process, where raising from it, or
    setting ``cancel``, stops the export)."""
    exporter, common = _exporter(dst, format, options)
    return run(exporter, source, **common)


def output_paths(
    dst: str | os.PathLike[str], *, format: str | None = None, **options: Any
) -> list[str]:
    """Every path an :func:`export` to ``dst`` with these arguments writes (``dst``, or each
    shard's name), without writing anything: what to check before writing over files."""
    return _exporter(dst, format, options)[0].outputs()


def _exporter(
    dst: str | os.PathLike[str], format: str | None, options: dict[str, Any]
) -> tuple[Exporter, dict[str, Any]]:
    """The exporter :func:`export` runs, and the options of every export (taken out of
    ``options``; the rest are the format's)."""
    fmt = format or format_for_path(dst)[0] or IMAGES
    cls = exporter_for(fmt)
    common = {k: options.pop(k) for k in ExportOptions.__annotations__ if k in options}
    # A local destination is made absolute here, on the client: a task on a Dask worker
    # runs in another folder, where a relative name would be somewhere else.
    place = os.fspath(dst)
    if not is_url(place):
        place = os.path.abspath(place)
    return cls(place, **options), common


def export_table(
    source: ExportSource,
    dst: str | os.PathLike[str],
    *,
    format: str | None = None,
    int64_as_string: bool = False,
    **options: Unpack[ExportOptions],
) -> ExportReport:
    """Write a flat table, one row per record and one column per feature: ``csv``,
    ``parquet`` or ``json`` (a JSON array of row objects), chosen by ``format`` or ``dst``'s
    name; ``options`` are :class:`~browser_app.export.base.ExportOptions`. See
    :mod:`browser_app.export.table` and each format's module for how values are written."""
    dst = os.fspath(dst)
    fmt = format or format_for_path(dst)[0]
    cls = EXPORTERS.get(fmt) if fmt is not None else None
    if cls is None or not issubclass(cls, TableExporter):
        raise ExportError(f"{dst}: a flat table is csv, parquet or json, not {fmt}")
    return run(cls(dst, int64_as_string=int64_as_string), source, **options)
