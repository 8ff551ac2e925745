"""The exporter interface: one class per output format, and the one way an export runs.

An :class:`Exporter` only writes: it says how its work is split (:meth:`Exporter.pieces`:
a piece per shard, or one for the whole output) and writes one piece's records into files
the piece's job (:class:`~browser_app.export.staging.Job`) staged. :func:`run` plans the
records, runs the pieces as a job of :mod:`codec.jobs` on the executor asked for (this
process by default), then stages the index map and commits every output together, the same
for every format and every executor.
"""

from __future__ import annotations

import os
import secrets
import time
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from browser_app.errors import ExportError
from browser_app.export.base import ExportFormat, ExportOptions, ExportReport
from browser_app.export.index_map import index_map_path, write_index_map
from browser_app.export.job import run_pieces
from browser_app.export.plan import ExportSource, Plan
from browser_app.export.staging import ExportRun, Job, Piece, staged
from codec import jobs
from codec.locations import protocol

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["DEFAULT_EXECUTOR", "Exporter", "run"]

DEFAULT_EXECUTOR = "inline"  # where an export runs unless told: this process


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
    def write(self, job: Job) -> None:
        """Write the job's records (``job.plan``: the piece's portion of them) to files the
        job staged (see :meth:`~browser_app.export.staging.Stage.reserve`) and name the
        outputs in ``job.report.outputs``. Runs where the piece's task runs (this process, a
        pool worker, a Dask worker). Raises :class:`~browser_app.errors.ExportError` for an
        export that cannot be done as asked."""


def run(exporter: Exporter, source: ExportSource, **options: Unpack[ExportOptions]) -> ExportReport:
    """Export ``source`` with ``exporter``: plan the records, write the exporter's pieces as
    a job on ``options["executor"]`` (default :data:`DEFAULT_EXECUTOR`), then stage the index
    map beside them (unless ``index_map`` is false), verify it and commit every output
    together (see :mod:`~browser_app.export.staging`). Damage that is not a record is added to
    the report's ``skipped`` when the whole dataset is exported; a journal whose edits were
    written over the source is set aside."""
    t0 = time.perf_counter()
    anon = options.get("anon", False)
    plan = Plan(source, options.get("selection"), options.get("include_added", True), anon=anon)
    report = ExportReport(exporter.name, deleted=plan.deleted)
    run_name = secrets.token_hex(8)
    try:
        job = ExportRun(
            plan,
            report,
            run=run_name,
            verify=options.get("verify", True),
            progress=options.get("progress"),
            anon=anon,
        )
        with staged(job):
            job.pieces = exporter.pieces(job)
            for piece in job.pieces:
                for dst in piece.dsts:
                    job.prepare(dst)
            executor = _executor(options.get("executor"), plan, job)
            parts = run_pieces(
                exporter,
                job,
                executor,
                job_progress=options.get("job_progress"),
                cancel=options.get("cancel"),
            )
            job.take(parts)
            if options.get("index_map", True):
                write_index_map(job, exporter.index_map_path(job))
        if report.backup is not None and plan.journal is not None:
            plan.journal.discard()  # its edits are part of the source file now
    finally:
        plan.close()
        report.seconds = time.perf_counter() - t0
    report.skipped.extend(plan.region_problems())
    return report


_IN_PROCESS = frozenset({"memory"})  # fsspec file systems that exist only in this process


def _executor(
    executor: jobs.Executor | str | None, plan: Plan, job: ExportRun
) -> jobs.Executor | str | None:
    """The executor to run on: ``executor``, or this process when a source or destination
    is a file system that only this process has (``memory://``)."""
    places = [f.path for f in plan.files] + [d for p in job.pieces for d in p.dsts]
    local_only = any(protocol(p) in _IN_PROCESS for p in places)
    if executor is None or isinstance(executor, str):
        return "inline" if local_only or executor is None else executor
    if local_only and not isinstance(executor, jobs.InlineExecutor):
        raise ExportError(
            "memory:// exists only in this process: export it with the inline executor"
        )
    return executor
