"""The exporter interface: one class per output format, and the one way an export runs.

An :class:`Exporter` only writes: it asks the job (:class:`~browser_app.export.staging.Job`)
for staged outputs and writes the planned records into them; :func:`run` plans, stages,
verifies and commits around it, the same for every format.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from browser_app.errors import ExportError
from browser_app.export.base import ExportFormat, ExportOptions, ExportReport
from browser_app.export.index_map import index_map_path, write_index_map
from browser_app.export.plan import ExportSource
from browser_app.export.staging import Job, exporting

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Exporter", "run"]


class Exporter(ABC):
    """One output format. An instance holds one destination and the format's options; the
    class attributes describe the format to the registry and to people."""

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

    def index_map_path(self, job: Job) -> str:
        """Where the export's index map goes: beside the destination (for shards, beside
        the name theirs are made from; over the source, beside the source)."""
        return index_map_path(self.destination or job.report.outputs[0])

    @abstractmethod
    def write(self, job: Job) -> None:
        """Write the job's planned records to files the job staged (see
        :meth:`~browser_app.export.staging.Job.reserve`) and name the outputs in
        ``job.report.outputs``. Raises :class:`~browser_app.errors.ExportError` for an
        export that cannot be done as asked."""


def run(exporter: Exporter, source: ExportSource, **options: Unpack[ExportOptions]) -> ExportReport:
    """Export ``source`` with ``exporter`` (see :func:`~browser_app.export.staging.exporting`),
    with its index map beside it unless ``index_map`` is false."""
    with_map = options.pop("index_map", True)
    with exporting(
        source,
        exporter.name,
        selection=options.get("selection"),
        include_added=options.get("include_added", True),
        verify=options.get("verify", True),
        progress=options.get("progress"),
        anon=options.get("anon", False),
    ) as job:
        exporter.write(job)
        if with_map:
            write_index_map(job, exporter.index_map_path(job))
    return job.report
