"""The exporter interface: one class per output format.

An :class:`Exporter` only writes: it says how its work is split (:meth:`Exporter.pieces`:
a piece per shard, or one for the whole output) and writes one piece's records into files
the piece (:class:`~browser_app.export.staging.PieceRun`) staged. Running an export is
:func:`browser_app.export.running.run`'s, the same for every format and every executor.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import ClassVar

from browser_app.errors import ExportError
from browser_app.export.base import ExportFormat
from browser_app.export.index_map import index_map_path
from browser_app.export.staging import ExportRun, Piece, PieceRun

__all__ = ["Exporter"]


class Exporter(ABC):
    """One output format. An instance holds one destination and the format's options (plain
    data: it is sent to the workers that write the pieces); the class attributes describe
    the format to the registry and to people."""

    name: ClassVar[ExportFormat]
    label: ClassVar[str]  # the format in words, for a menu
    suffix: ClassVar[str]  # what a suggested destination ends with
    extensions: ClassVar[tuple[str, ...]]  # destination names that mean this format

    def __init__(self, dst: str | os.PathLike[str] | None) -> None:
        self.destination = None if dst is None else os.fspath(dst)

    @property
    def dst(self) -> str:
        """The destination; an export without one cannot be done."""
        if self.destination is None:
            raise ExportError("no destination given")
        return self.destination

    def outputs(self) -> list[str]:
        """Every path the export writes, known before it writes anything: the destination
        (a sharded output names each shard)."""
        return [self.dst]

    def index_map_path(self, job: ExportRun) -> str:
        """Where the export's index map goes: beside the destination (for shards, beside
        the name theirs are made from; over the source, beside the source)."""
        return index_map_path(self.destination or job.report.outputs[0])

    def pieces(self, job: ExportRun) -> list[Piece]:
        """How the export is split into tasks, decided on the client before anything is
        written: by default one piece, every record, to :meth:`outputs`. A format whose
        output is split into files (shards) gives a piece per file."""
        return [Piece(0, job.total, tuple(self.outputs()))]

    @abstractmethod
    def write(self, job: PieceRun) -> None:
        """Write the piece's records (``job.plan``: its portion of them) to files the
        piece staged (see :meth:`~browser_app.export.staging.Stage.reserve`) and name the
        outputs in ``job.report.outputs``. Runs where the piece's task runs (this process, a
        pool worker, a Dask worker). Raises :class:`~browser_app.errors.ExportError` for an
        export that cannot be done as asked."""
