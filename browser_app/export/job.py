"""An export as a job of :mod:`codec.jobs`: one task per piece of the output (a shard of a
sharded output, else the whole output), on any executor.

Each task (:meth:`ExportJob.task`) gets its :class:`~browser_app.export.plan.Portion` of the
records as plain data, reads the source records itself, writes its piece with the format's
exporter into temporary files beside the destination, syncs and reads them back (uploading
a remote destination's to a temporary name beside it), and sends back a small report
(:class:`~browser_app.export.staging.Written`). The client commits nothing until every task
has; on any failure or cancellation it removes every temporary output
(:meth:`~browser_app.export.staging.ExportRun.discard`).

Run in the client's own process (the inline executor), a task reads through the plan's open
files and reports progress from inside (:class:`~browser_app.export.staging.Hooks`), so a long
piece can be followed and cancelled as it is written.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from browser_app.errors import ExportError, exit_code
from browser_app.export.base import ExportReport
from browser_app.export.plan import Portion
from browser_app.export.staging import (
    ExportRun,
    Hooks,
    JobProgress,
    PieceRun,
    Stopped,
    Written,
    write_failure,
)
from codec import jobs
from codec.errors import JobCancelled
from codec.jobs.executors import worker_died
from codec.locations import shown

if TYPE_CHECKING:
    from browser_app.export.exporter import Exporter

__all__ = ["ExportJob", "ExportTask", "TaskError", "run_pieces"]


class TaskError(ExportError):
    """What a task raised, as it crosses to the client: its message and exit code (an
    error pickled to another process keeps both, whatever its class needs to be made);
    ``original`` is the error itself when the task ran in the client's process."""

    def __init__(self, message: str, code: int, original: BaseException | None = None) -> None:
        super().__init__(message)
        self.exit_code = code
        self.original = original

    def __reduce__(self) -> tuple[Any, ...]:
        return (TaskError, (str(self), self.exit_code))


@dataclass(frozen=True)
class ExportTask(jobs.Task):
    """One piece of an export: its ``portion`` of the records, written to ``dsts`` (``file``
    is the piece's number, ``path`` its first destination as shown, ``end`` the payload
    bytes it reads)."""

    portion: Portion | None = field(default=None, compare=False)
    dsts: tuple[str, ...] = ()


_HERE: dict[str, Hooks] = {}  # the hooks of the exports running in this process, by token


@contextlib.contextmanager
def _hosting(hooks: Hooks) -> Iterator[str]:
    token = secrets.token_hex(8)
    _HERE[token] = hooks
    try:
        yield token
    finally:
        del _HERE[token]


@dataclass
class ExportJob:
    """An export as a :class:`codec.jobs.Job`: plain data (the format's ``exporter`` with its
    options, the client's ``run``, ``verify``, ``anon``), pickled to the workers with each
    task. ``token`` finds the client's :class:`Hooks` when a task runs in its process."""

    exporter: Exporter
    run: str
    verify: bool = True
    anon: bool = False
    token: str = ""
    name: str = "export"

    def task(self, task: jobs.Task) -> Written:
        """Write one piece (see the module docstring)."""
        assert isinstance(task, ExportTask) and task.portion is not None
        portion = task.portion
        hooks = _HERE.get(self.token)
        portion.share(hooks.files if hooks is not None else None)
        job = PieceRun(
            portion,
            ExportReport(self.exporter.name),
            run=self.run,
            dsts=task.dsts,
            verify=self.verify,
            anon=self.anon,
            hooks=hooks,
        )
        try:
            self.exporter.write(job)
            return job.hand_back()
        except Exception as exc:
            job.discard()
            failure = write_failure(exc)
            raise TaskError(str(failure), exit_code(failure), failure) from None
        except BaseException:
            job.discard()
            raise
        finally:
            job.release()
            portion.close()

    def merge(self, parts: list[Written], rerun: Callable[[jobs.Task], Any]) -> list[Written]:
        """The pieces, in order: the client commits them (see
        :func:`browser_app.export.running.run`)."""
        return parts

    def records(self, part: Written) -> int:
        return part.report.records


def run_pieces(
    exporter: Exporter,
    job: ExportRun,
    executor: jobs.Executor | jobs.ExecutorSpec | str | None,
    *,
    job_progress: JobProgress | None = None,
    cancel: threading.Event | None = None,
) -> list[Written]:
    """Write the pieces of ``job`` (its ``pieces``) on ``executor``; the outputs they staged,
    in order. Raises what a task raised (the error itself when it ran here), or
    :class:`~codec.errors.JobCancelled`."""
    plan = job.plan
    bounds = [p.start for p in job.pieces] + [job.pieces[-1].stop] if job.pieces else [0]
    tasks = [
        ExportTask(
            file=k,
            path=shown(piece.dsts[0]) if piece.dsts else "",
            end=portion.payload_bytes,
            anon=job.anon,
            portion=portion,
            dsts=piece.dsts,
        )
        for k, (piece, portion) in enumerate(zip(job.pieces, plan.portions(bounds)))
    ]
    hooks = Hooks(plan.files, plan.total, job.progress, job_progress, cancel)
    with _hosting(hooks) as token:
        ejob = ExportJob(exporter, job.run or "", job.verify, job.anon, token)
        try:
            parts: list[Written] = jobs.run(
                ejob, tasks, executor, progress=hooks.on_job, cancel=cancel
            )
        except TaskError as exc:
            raise (exc.original or exc) from None
        except Stopped:
            done = hooks.last.tasks_done if hooks.last is not None else 0
            raise JobCancelled(ejob.name, done, len(tasks)) from None
        except Exception as exc:
            if worker_died(exc):
                raise ExportError(
                    "the export failed, nothing written: a worker process writing it died"
                    " every time (killed, or out of memory)"
                ) from None
            raise
    if any(part.abandoned for part in parts):  # only if the run was given up meanwhile
        raise JobCancelled(ejob.name, len(parts), len(tasks))
    return parts
