"""Export a dataset, with its pending edits applied, to TFRecord, JSON Lines, flat tables
(CSV, JSON, Parquet) or picture files; import JSON Lines back into TFRecord.

Every export follows the same steps (:mod:`~browser_app.export.staging`): plan the records
(:mod:`~browser_app.export.plan`: the edited dataset's order, or a selection of it), write
them to temporary files beside the destination (the format's exporter), verify what was
written, and only then rename the files into place. A failure at any step removes the
temporary files and leaves the destination, the source and the journal as they were.
Damaged source records are never copied: they are skipped and listed in the report.

Formats (:data:`FORMATS`, one exporter each, registered in
:mod:`~browser_app.export.registry`): ``tfrecord`` (none, GZIP or ZLIB; optionally sharded),
``jsonl`` (read back by :func:`import_jsonl`), ``json``, ``csv`` and ``parquet`` (one row per
record, one column per feature, every value exact), and ``images`` (a folder or a ``.zip``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from browser_app.errors import ExportError, ImportFormatError
from codec.kinds import COMPRESSIONS
from codec.lazy import lazy_names

if TYPE_CHECKING:
    from browser_app.export.base import (
        ExportFormat,
        ExportProgress,
        ExportReport,
        UnconvertedPicture,
    )
    from browser_app.export.exporter import Exporter
    from browser_app.export.images import export_images, image_file_name
    from browser_app.export.index_map import INDEX_MAP_SUFFIX, index_map_path
    from browser_app.export.jsonl import export_jsonl, import_jsonl
    from browser_app.export.plan import ExportSource
    from browser_app.export.registry import (
        EXPORTERS,
        FORMATS,
        default_destination,
        export,
        export_table,
        exporter_for,
        format_for_path,
        output_paths,
    )
    from browser_app.export.tfrecord import export_tfrecord, shard_names

# name -> the module of this package it comes from (a submodule's name is that submodule)
_WHERE = {
    "EXPORTERS": "registry",
    "ExportFormat": "base",
    "ExportProgress": "base",
    "ExportReport": "base",
    "ExportSource": "plan",
    "Exporter": "exporter",
    "FORMATS": "registry",
    "INDEX_MAP_SUFFIX": "index_map",
    "UnconvertedPicture": "base",
    "default_destination": "registry",
    "export": "registry",
    "export_images": "images",
    "export_jsonl": "jsonl",
    "export_table": "registry",
    "export_tfrecord": "tfrecord",
    "exporter_for": "registry",
    "format_for_path": "registry",
    "image_file_name": "images",
    "import_jsonl": "jsonl",
    "index_map_path": "index_map",
    "output_paths": "registry",
    "shard_names": "tfrecord",
}

__all__ = [
    "COMPRESSIONS",
    "EXPORTERS",
    "FORMATS",
    "INDEX_MAP_SUFFIX",
    "ExportError",
    "ExportFormat",
    "ExportProgress",
    "ExportReport",
    "ExportSource",
    "Exporter",
    "ImportFormatError",
    "UnconvertedPicture",
    "default_destination",
    "export",
    "export_images",
    "export_jsonl",
    "export_table",
    "export_tfrecord",
    "exporter_for",
    "format_for_path",
    "image_file_name",
    "import_jsonl",
    "index_map_path",
    "output_paths",
    "shard_names",
]

__getattr__ = lazy_names(__name__, _WHERE)
