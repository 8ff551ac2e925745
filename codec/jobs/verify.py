"""Verify as a job: tasks of whole files or byte ranges, each returning a small partial result,
merged into the very report :meth:`codec.TFRecordFile.verify` gives (one function builds both:
:func:`codec.reader.report_of`)."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..reader import TFRecordFile, VerifyReport, data_crc_problem, report_of
from .plan import Task
from .walk import RangeWalk, walk_range

__all__ = ["VerifyPart", "merge_verify", "verify_task"]


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
        if ranges[0].report is not None:
            reports.append(ranges[0].report)
            continue
        reports.append(_merge_file(stitch(ranges, rerun)))
    return reports


def stitch(ranges: Sequence[VerifyPart], rerun: Callable[[Task], VerifyPart]) -> list[VerifyPart]:
    """The ranges of one file, each walked from where the one before it left (walking again
    those that entered elsewhere)."""
    out: list[VerifyPart] = []
    for part in ranges:
        if out:
            before = out[-1].walk
            assert before is not None and part.walk is not None
            entered = part.walk.entry if part.walk.entry is not None else part.size
            if entered != before.exit:
                last = before.last
                prev = last if last is not None else part.task.prev
                part = rerun(part.task.resumed(before.exit, prev))
        out.append(part)
    return out


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
