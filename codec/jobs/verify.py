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
from ..reader import TFRecordFile, VerifyReport, data_crc_problem, report_of
from .plan import Task
from .walk import RangeWalk, stitch, walk_range

__all__ = ["VerifyJob", "VerifyPart", "merge_verify", "unreadable_report", "verify_task"]


@dataclass
class VerifyPart:
    """A verify task's answer: a whole file's report, or one range's walk (with the file's
    shown path, compression and stream size)."""

    task: Task
    report: VerifyReport | None = None
    walk: RangeWalk | None = None
    path: str = ""
    compression: str = "none"
    size: int = 0
    error: str = ""  # why the task could not read its file (then no report, no walk)


def verify_task(task: Task) -> VerifyPart:
    """Run one verify task where the data is (this process, a pool worker, a Dask worker)."""
    with TFRecordFile(task.path, anon=task.anon) as f:
        if task.whole:
            return VerifyPart(task, report=f.verify())
        buf, need = f.stream_view()
        walk = walk_range(
            buf,
            f.size,
            task.start,
            task.end,
            need,
            path=f.path,
            entry=task.entry,
            prev=task.prev,
        )
        return VerifyPart(task, walk=walk, path=f.path, compression=f.compression, size=f.size)


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
    from array import array

    first = ranges[0]
    offsets: array = array("Q")
    lengths: array = array("Q")
    problems = []
    damaged = {}
    bad: list[int] = []
    for part in ranges:
        walk = part.walk
        assert walk is not None
        base = len(offsets)
        offsets.extend(walk.offsets)
        lengths.extend(walk.lengths)
        problems.extend(walk.problems)
        for p in walk.damaged:
            damaged[base + bisect.bisect_left(walk.offsets, p.offset)] = p
        bad.extend(base + i for i in walk.bad)
    for i in bad:
        if i not in damaged:
            damaged[i] = data_crc_problem(first.path, i, offsets[i], lengths[i])
    return report_of(
        first.path, first.compression, first.size, offsets, problems, damaged, sorted(bad)
    )


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
    :meth:`codec.TFRecordFile.verify` reports it."""

    name: str = "verify"

    def task(self, task: Task) -> VerifyPart:
        return verify_task(task)

    def merge(
        self, parts: list[VerifyPart], rerun: Callable[[Task], VerifyPart]
    ) -> list[VerifyReport]:
        return merge_verify(parts, rerun)

    def records(self, part: VerifyPart) -> int:
        if part.report is not None:
            r = part.report
            return r.records + r.damaged + r.recovered
        return len(part.walk.offsets) if part.walk is not None else 0

    def failed(self, task: Task, error: BaseException) -> VerifyPart:
        """The answer of a task that kept failing: its file could not be read."""
        return VerifyPart(task, path=shown(task.path), error=_why(error, task.path))


def _why(error: BaseException, path: str) -> str:
    """What went wrong, in one line, without credentials."""
    if type(error).__name__ in ("WorkerDied", "KilledWorker"):  # ours, and Dask's
        return "the worker process reading it died every time (killed, or out of memory)"
    if isinstance(error, OSError) and error.strerror:
        text = error.strerror
    else:
        text = " ".join(str(error).split()) or type(error).__name__
        if len(text) > 300:
            text = text[:300] + "…"
    return redact_text(f"{text} ({type(error).__name__})", path)
