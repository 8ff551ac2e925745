"""Running an export: the one way every format's export runs.

:func:`run` plans the records, runs the exporter's pieces as a job of :mod:`codec.jobs`
(:mod:`~browser_app.export.job`) on the executor asked for (this process by default), then
stages the index map and commits every output together (:mod:`~browser_app.export.staging`),
the same for every format and every executor.
"""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING

from browser_app.errors import ExportError
from browser_app.export.base import ExportOptions, ExportReport
from browser_app.export.exporter import Exporter
from browser_app.export.index_map import write_index_map
from browser_app.export.job import run_pieces
from browser_app.export.plan import ExportSource, Plan
from browser_app.export.staging import ExportRun, staged
from codec import jobs
from codec.locations import protocol

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["DEFAULT_EXECUTOR", "run"]

DEFAULT_EXECUTOR = "inline"  # where an export runs unless told: this process


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
    executor: jobs.Executor | jobs.ExecutorSpec | str | None, plan: Plan, job: ExportRun
) -> jobs.Executor | jobs.ExecutorSpec | str | None:
    """The executor to run on: ``executor``, or this process when a source or destination
    is a file system that only this process has (``memory://``)."""
    places = [f.path for f in plan.files] + [d for p in job.pieces for d in p.dsts]
    local_only = any(protocol(p) in _IN_PROCESS for p in places)
    if executor is None or isinstance(executor, (str, jobs.ExecutorSpec)):
        return "inline" if local_only or executor is None else executor
    if local_only and not isinstance(executor, jobs.InlineExecutor):
        raise ExportError(
            "memory:// exists only in this process: export it with the inline executor"
        )
    return executor
