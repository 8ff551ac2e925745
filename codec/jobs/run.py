"""A job run on an executor: every task submitted, answers collected as they come (with
progress and cancellation), then merged.

A job is any object with the :class:`Job` methods and plain data (it is pickled to the
workers with its tasks). Its ``merge`` gets the answers in task order, whatever order they
finished in, so the result does not depend on the executor or its timing. A job with a
``combine`` method has its small tasks run in groups on executors of other processes
(:func:`codec.jobs.plan.group`): one call per group, whose answers ``combine`` may fold
together before they travel back; a group that fails runs again task by task. A task that still
fails after the executor's retries becomes ``job.failed(task, error)`` — an answer that
reports the problem for its input — when the job has that method; otherwise its error is
raised. The executor failing (a Dask scheduler lost) raises
:class:`~codec.errors.SchedulerError` or :class:`~codec.errors.ExecutorError`; cancelling
raises :class:`~codec.errors.JobCancelled`.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import JobCancelled, ObjectChangedError
from .executors import Batch, Executor, Finished, InlineExecutor, executor
from .plan import Task, group
from .spec import ExecutorSpec, parse_executor

__all__ = ["Job", "Progress", "run"]

POLL = 0.1  # seconds between looks at the cancel event while tasks run
BEAT = 0.5  # seconds between progress calls while no task finishes (elapsed time moves on)


class Job(Protocol):
    """What :func:`run` needs of a job. ``task`` runs on a worker (so the job must pickle);
    ``merge`` makes the result from every task's answer (in task order) and may run a task
    again with ``rerun``; ``records`` counts an answer's records, for progress.

    A job may also have ``failed(task, error) -> answer``: the answer of a task that kept
    failing (a shard that cannot be read), which reports the problem instead of failing the
    job; ``combine(answers) -> answers``: the answers of consecutive tasks run together
    on one worker, as its ``merge`` will take them (the same, or fewer standing for them);
    and ``merger(rerun)``: its merge as an object fed the answers in task order as they
    come (``add(answers)``, then ``result()``), so a merge that costs the client time is
    done while the later tasks run, not after the last one."""

    @property
    def name(self) -> str: ...  # a field of the job (read-only for a frozen one)

    def task(self, task: Task) -> Any: ...

    def merge(self, parts: list[Any], rerun: Callable[[Task], Any]) -> Any: ...

    def records(self, part: Any) -> int: ...


@dataclass(frozen=True)
class Progress:
    """How far a job is: tasks and their bytes done of all, records in the answers so far,
    tasks reported as failed, and seconds since it started."""

    job: str
    tasks_done: int
    tasks_total: int
    bytes_done: int
    bytes_total: int
    records: int
    elapsed: float
    failed: int = 0

    @property
    def records_per_s(self) -> float:
        return self.records / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def fraction(self) -> float:
        """Done, from 0 to 1 (by bytes; by tasks when the tasks have no size)."""
        if self.bytes_total > 0:
            return self.bytes_done / self.bytes_total
        return self.tasks_done / self.tasks_total if self.tasks_total else 1.0


def run(
    job: Job,
    tasks: Sequence[Task],
    executor: Executor | ExecutorSpec | str | None = None,
    *,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Any:
    """Run ``job`` over ``tasks`` on ``executor`` (an :class:`Executor`, an
    :class:`~codec.jobs.ExecutorSpec` or its text, or ``None``: a process per core, at most
    one per task) and return its merged result. ``progress`` is called once at the start and
    after each task; it is also called every ``BEAT`` seconds while no task finishes, so a
    caller that stops a job by raising from the callback (a Streamlit page being rerun) is
    never kept waiting for a long task. Setting ``cancel`` stops the job
    (:class:`~codec.errors.JobCancelled`). An executor made here is closed before returning;
    one passed in is left running."""
    tasks = list(tasks)
    own = not isinstance(executor, Executor)
    ex = _make(executor, len(tasks)) if own else executor
    assert isinstance(ex, Executor)
    try:
        result = _Run(job, ex, tasks, progress, cancel).go()
    except JobCancelled:
        if own:
            ex.close(wait=False)
        raise
    finally:
        if own:
            ex.close()
    return result


def _make(spec: ExecutorSpec | str | Executor | None, n: int) -> Executor:
    assert not isinstance(spec, Executor)
    return executor(parse_executor(spec).fit(n))


@dataclass(frozen=True)
class _Group:
    """A group of consecutive tasks of ``job``, run as one on a worker: their answers, as
    ``job.combine`` gives them."""

    job: Any

    def __call__(self, tasks: tuple[Task, ...]) -> list[Any]:
        return list(self.job.combine([self.job.task(t) for t in tasks]))


class _Run:
    def __init__(
        self,
        job: Job,
        ex: Executor,
        tasks: list[Task],
        progress: Callable[[Progress], None] | None,
        cancel: threading.Event | None,
    ) -> None:
        self.job = job
        self.ex = ex
        self.tasks = tasks
        self.progress = progress
        self.cancel = cancel
        self.start = time.monotonic()
        self.done = 0
        self.failed = 0
        self.bytes = 0
        self.records = 0
        self.bytes_total = sum(t.bytes for t in tasks)
        self.reported = self.start

    def go(self) -> Any:
        n = len(self.tasks)
        answers: dict[int, list[Any]] = {}  # by the first task of the unit that gave them
        spans: dict[int, int] = {}  # how many tasks each of those answered for
        units: dict[int, range] = {}  # submitted, by key
        make = getattr(self.job, "merger", None)
        merging = make(self.rerun) if make is not None else None
        fed = 0  # tasks whose answers the merger has had (all those before the first missing)
        keys = itertools.count()
        batch = self.ex.batch()
        finished = False
        one, many = self.job.task, _Group(self.job)  # the same two functions for every unit

        def submit(unit: range) -> None:
            key = next(keys)
            units[key] = unit
            if len(unit) == 1:
                batch.submit(key, one, self.tasks[unit.start])
            else:
                batch.submit(key, many, tuple(self.tasks[i] for i in unit))

        try:
            for unit in self._units():
                self._check(batch)
                submit(unit)
            self._report()
            while self.done < n:
                self._check(batch)
                finished_now = batch.wait(POLL)
                for fin in finished_now:
                    unit = units.pop(fin.key)
                    if len(unit) > 1 and fin.error is not None:
                        for i in unit:  # the group again task by task: a failing one alone
                            submit(range(i, i + 1))
                        continue
                    if len(unit) == 1:
                        got = [self._settle(self.tasks[unit.start], fin)]
                    else:
                        got = list(fin.value)
                    answers[unit.start] = got
                    if merging is not None:
                        spans[unit.start] = len(unit)
                        while fed in answers:  # the next ones, in task order
                            parts = answers.pop(fed)
                            fed += spans.pop(fed)
                            merging.add(parts)
                    self.done += len(unit)
                    self.bytes += sum(self.tasks[i].bytes for i in unit)
                    self.records += sum(self.job.records(part) for part in got)
                    self._report()
                if not finished_now and time.monotonic() - self.reported >= BEAT:
                    self._report()  # a caller that can only stop inside a callback gets one
            self._check(batch)
            finished = True
        finally:
            if not finished:
                batch.cancel()
        if merging is not None:
            return merging.result()  # every answer has been added (in order, as they came)
        parts = [part for first in sorted(answers) for part in answers[first]]
        return self.job.merge(parts, self.rerun)

    def _units(self) -> list[range]:
        """The tasks as they are submitted: in groups (:func:`.plan.group`) when the job can
        take them so and the workers are other processes; else one by one."""
        if getattr(self.job, "combine", None) is None or isinstance(self.ex, InlineExecutor):
            return [range(i, i + 1) for i in range(len(self.tasks))]
        return group(self.tasks, self.ex.workers)

    def rerun(self, task: Task) -> Any:
        """``task`` run again on the same executor (for a job's merge), its final answer."""
        batch = self.ex.batch()
        batch.submit(0, self.job.task, task)
        try:
            while True:
                self._check(batch)
                for fin in batch.wait(POLL):
                    return self._settle(task, fin)
        finally:
            batch.cancel()

    def _settle(self, task: Task, fin: Finished) -> Any:
        if fin.error is None:
            return fin.value
        failed = getattr(self.job, "failed", None)
        if failed is None or isinstance(fin.error, ObjectChangedError):
            # A file replaced since the job was planned is no problem of the file's to
            # report: the job's answer would mix two versions, so there is none.
            raise fin.error
        self.failed += 1
        return failed(task, fin.error)

    def _check(self, batch: Batch) -> None:
        if self.cancel is not None and self.cancel.is_set():
            batch.cancel()
            raise JobCancelled(self.job.name, self.done, len(self.tasks))

    def _report(self) -> None:
        self.reported = time.monotonic()
        if self.progress is None:
            return
        self.progress(
            Progress(
                job=self.job.name,
                tasks_done=self.done,
                tasks_total=len(self.tasks),
                bytes_done=self.bytes,
                bytes_total=self.bytes_total,
                records=self.records,
                elapsed=time.monotonic() - self.start,
                failed=self.failed,
            )
        )
