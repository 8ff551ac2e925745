"""Verify as a job: tasks of whole files or byte ranges, each returning a small partial result,
merged into the very report :meth:`codec.TFRecordFile.verify` gives (one function builds both:
:func:`codec.reader.report_of`). A file a task could not read at all (gone, refused, its
worker dying on it) gets a report with one ``unreadable`` problem saying why."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..framing import Problem
from ..kinds import UNREADABLE
from ..locations import redact_text, shown
from ..reader import TFRecordFile, VerifyReport, report_from
from ..record_index import data_crc_problem
from .executors import worker_died
from .plan import Task, plan, tasks_of
from .run import Progress, run
from .spec import ExecutorSpec, cores
from .walk import RangeEnds, RangeWalk, stitch, walk_task

__all__ = [
    "RangeCheck",
    "VerifyJob",
    "VerifyPart",
    "failure_text",
    "merge_verify",
    "unreadable_report",
    "verify_paths",
    "verify_task",
]


@dataclass
class RangeCheck:
    """What a range's verify sends back: where its walk entered and left, how many records
    it owns, and only what is wrong with them, so its size does not grow with the range's
    records (their offsets stay on the worker). Record numbers are counted from the range's
    first record: ``damaged`` the data-CRC problems of records whose length the scan
    corrected, ``bad`` ``(number, header offset, payload length)`` of every record whose data
    CRC fails, ``first`` the first record reached by resynchronising after one of its
    ``problems`` or ``damaged`` (``records`` when that is the next range's first)."""

    ends: RangeEnds
    records: int
    problems: list[Problem]
    damaged: list[tuple[int, Problem]]
    bad: list[tuple[int, int, int]]
    first: int | None

    @classmethod
    def of(cls, walk: RangeWalk, size: int) -> RangeCheck:
        """The check of a walk of a stream of ``size`` bytes. A problem's reading resumes at
        a record of this walk or at its exit, never further (the chain goes on from there),
        so its number here is that of the whole file less the records before the range."""
        offsets, lengths = walk.offsets, walk.lengths
        damaged = [(bisect.bisect_left(offsets, p.offset or 0), p) for p in walk.damaged]
        resumes = [
            p.end
            for p in (*walk.problems, *walk.damaged)
            if p.offset is not None and p.end is not None and p.offset < p.end < size
        ]
        return cls(
            walk.ends,
            len(offsets),
            walk.problems,
            damaged,
            [(i, offsets[i], lengths[i]) for i in walk.bad],
            bisect.bisect_left(offsets, min(resumes)) if resumes else None,
        )


@dataclass
class VerifyPart:
    """A verify task's answer: a whole file's report, or one range's check (with the file's
    shown path, compression and stream size)."""

    task: Task
    report: VerifyReport | None = None
    walk: RangeCheck | None = None
    path: str = ""
    compression: str = "none"
    size: int = 0
    error: str = ""  # why the task could not read its file (then no report, no walk)


def verify_task(task: Task, compression: str = "auto") -> VerifyPart:
    """Run one verify task where the data is (this process, a pool worker, a Dask worker),
    the file read as ``compression``."""
    with task.open(compression) as f:
        if task.whole:
            return VerifyPart(task, report=f.verify())
        walk = walk_task(f, task)
        check = RangeCheck.of(walk, f.size)
        return VerifyPart(task, walk=check, path=f.path, compression=f.compression, size=f.size)


def merge_verify(
    parts: Sequence[VerifyPart], rerun: Callable[[Task], VerifyPart] = verify_task
) -> list[VerifyReport]:
    """One report per file, in file order, from the answers of all its tasks (any order).
    A range whose walk did not enter where the previous one left is walked again from there
    with ``rerun`` (see :mod:`codec.jobs.walk`)."""
    by_file: dict[int, list[VerifyPart]] = {}
    for part in parts:
        by_file.setdefault(part.task.file, []).append(part)
    reports = []
    for k in sorted(by_file):
        ranges = sorted(by_file[k], key=lambda p: p.task.start)
        failed = next((p for p in ranges if p.error), None)
        if failed is None and ranges[0].report is not None:
            reports.append(ranges[0].report)
            continue
        if failed is None:
            try:
                reports.append(_merge_file(stitch(ranges, _readable(rerun))))
                continue
            except _Unreadable as exc:
                failed = exc.part
        reports.append(unreadable_report(failed.path, failed.error))
    return reports


class _Unreadable(Exception):
    def __init__(self, part: VerifyPart) -> None:
        self.part = part


def _readable(rerun: Callable[[Task], VerifyPart]) -> Callable[[Task], VerifyPart]:
    """``rerun``, raising :class:`_Unreadable` when the range walked again could not be read."""

    def again(task: Task) -> VerifyPart:
        part = rerun(task)
        if part.error:
            raise _Unreadable(part)
        return part

    return again


def _merge_file(ranges: Sequence[VerifyPart]) -> VerifyReport:
    path = ranges[0].path
    problems: list[Problem] = []
    damaged: dict[int, Problem] = {}
    bad: list[int] = []
    resumed: list[int] = []
    base = 0  # records of the ranges before this one
    for part in ranges:
        check = part.walk
        assert check is not None
        problems.extend(check.problems)
        for i, p in check.damaged:
            damaged[base + i] = p
        for i, offset, length in check.bad:
            bad.append(base + i)
            damaged.setdefault(base + i, data_crc_problem(path, base + i, offset, length))
        if check.first is not None:
            resumed.append(base + check.first)
        base += check.records
    first = min(resumed) if resumed and min(resumed) < base else None
    last = ranges[0]
    return report_from(path, last.compression, last.size, base, problems, damaged, bad, first)


def unreadable_report(path: str, why: str) -> VerifyReport:
    """The report of a file that could not be read at all: no records, one ``unreadable``
    problem saying ``why``."""
    message = f"could not be read: {why} — check that it exists and that every worker can read it"
    problem = Problem(UNREADABLE, None, None, message, path)
    return VerifyReport(path, "unknown", 0, 0, 0, [problem])


@dataclass(frozen=True)
class VerifyJob:
    """Verify as a :class:`codec.jobs.run.Job`: every CRC of every file, one
    :class:`~codec.VerifyReport` per file (in file order), exactly as
    :meth:`codec.TFRecordFile.verify` reports it; the files read as ``compression`` (plan
    with the same: ``plan(paths, sizes=...)``)."""

    name: str = "verify"
    compression: str = "auto"

    def task(self, task: Task) -> VerifyPart:
        return verify_task(task, self.compression)

    def merge(
        self, parts: list[VerifyPart], rerun: Callable[[Task], VerifyPart]
    ) -> list[VerifyReport]:
        return merge_verify(parts, rerun)

    def records(self, part: VerifyPart) -> int:
        if part.report is not None:
            r = part.report
            return r.records + r.damaged + r.recovered
        return part.walk.records if part.walk is not None else 0

    def combine(self, parts: list[VerifyPart]) -> list[VerifyPart]:
        """Answers of tasks run together travel as they are (each is small)."""
        return parts

    def failed(self, task: Task, error: BaseException) -> VerifyPart:
        """The answer of a task that kept failing: its file could not be read."""
        return VerifyPart(task, path=shown(task.path), error=failure_text(error, task.path))


def failure_text(error: BaseException, path: str) -> str:
    """What went wrong, in one line, without credentials."""
    if worker_died(error):
        return "the worker process reading it died every time (killed, or out of memory)"
    if isinstance(error, OSError) and error.strerror:
        text = error.strerror
    else:
        text = " ".join(str(error).split()) or type(error).__name__
        if len(text) > 300:
            text = text[:300] + "…"
    return redact_text(f"{text} ({type(error).__name__})", path)


def verify_paths(
    paths: Sequence[str],
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    readers: Sequence[TFRecordFile] | None = None,
    anon: bool = False,
    compression: str = "auto",
    max_inflate: int | None = None,
) -> list[VerifyReport]:
    """Check every CRC of every file. With more than one file, the files are spread over
    ``workers`` processes (default: every core) as the verify job's whole-file tasks;
    ``readers`` (the files open already; their own way of opening, inflate limit included,
    travels with their tasks) are verified here otherwise, and are told of the damage found
    either way. Files not open are opened with ``anon``, ``compression`` and ``max_inflate``
    (None: the default limit). ``progress(files done, files)``."""
    workers = min(workers or cores(), len(paths))
    if workers > 1:
        if readers is not None:
            tasks = tasks_of(readers, compression=compression, split=0)
        else:
            tasks = plan(list(paths), split=0, anon=anon, max_inflate=max_inflate)

        def step(p: Progress) -> None:
            if progress is not None:
                progress(p.tasks_done, p.tasks_total)

        spec = ExecutorSpec("processes", workers)
        reports: list[VerifyReport] = run(
            VerifyJob(compression=compression), tasks, spec, progress=step
        )
        if readers is not None:
            for f, rep in zip(readers, reports):
                for prob in rep.problems:
                    f.note_damage(prob)
        return reports
    reports = []
    for n, p in enumerate(paths):
        if readers is not None:
            reports.append(readers[n].verify())
        else:
            opened = TFRecordFile(p, anon=anon, compression=compression, max_inflate=max_inflate)
            with opened as f:
                reports.append(f.verify())
        if progress:
            progress(n + 1, len(paths))
    return reports
