"""One side of a diff as a dataset job: tasks of whole files or byte ranges of large plain
files, each returning the statistics and per-record digests of the records it owns, merged
into the very :class:`codec.diff.DiffSide` one process gives, whatever the split.

A task feeds its records to a :class:`codec.diff.DigestBuilder` (the schema's statistics
and, per intact record, a 64-bit digest of every feature and the key features' values),
numbered from 0, its data CRCs checked (a damaged record is counted, never read). The merge
walks again the ranges that entered elsewhere (:func:`.walk.stitch`), renumbers each part
after the records before it, merges the builders in dataset order and concatenates the
digest tables (rows by record number, columns by name): every piece merges exactly, so the
answer does not depend on the split nor on the order the tasks finished in.

    side_a = run(DiffJob(), tasks_of(files_a), executor)
    side_b = run(DiffJob(), tasks_of(files_b), executor)
    diff = codec.diff.compare(side_a, side_b, key="image/source_id")

:func:`diff_datasets` does both and the comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..diff import DEFAULT_KEYS, DatasetDiff, DiffSide, DigestBuilder, DigestTable, compare, side_of
from ..kinds import DATA_CRC
from ..locations import shown
from ..schema.scan import feed_spans, file_kind, scan_range
from .plan import Task
from .verify import failure_text
from .walk import RangeEnds, stitch, walk_task

__all__ = ["DiffJob", "DiffPart", "diff_datasets"]


@dataclass
class DiffPart:
    """A diff task's answer: the builder of the records it owns (numbered from 0) and their
    digests, how many records that is (intact or damaged), the framing problems it owns, the
    file's shown path and, for a range, where its walk entered and left."""

    task: Task
    builder: DigestBuilder
    table: DigestTable
    records: int
    problems: int
    path: str
    walk: RangeEnds | None = None
    error: str = ""  # why its file could not be read (then it holds nothing)


@dataclass
class DiffJob:
    """What a diff needs of one dataset, as a job (see :mod:`codec.jobs`): the statistics of
    every feature and the digests of every intact record, with the values of the key
    features ``keys`` (:data:`codec.diff.DEFAULT_KEYS` and the one a person named). Files
    read with ``compression`` when it is forced (plan with the same)."""

    keys: tuple[str, ...] = DEFAULT_KEYS
    compression: str = "auto"
    name: str = field(default="diff", init=False)

    def __post_init__(self) -> None:
        self.keys = tuple(dict.fromkeys(self.keys))

    def task(self, task: Task) -> DiffPart:
        """Run one task where the data is (this process, a pool worker, a Dask worker)."""
        builder = DigestBuilder(self.keys)
        with task.open(self.compression) as f:
            if task.whole:
                n = len(f)
                if n:
                    scan_range(f, builder, 0, n, 0, file_kind(f))
                problems = sum(1 for p in f.problems if p.kind != DATA_CRC)
                return DiffPart(task, builder, builder.take_table(), n, problems, f.path)
            walk = walk_task(f, task, check_data=False)  # the feed checks every data CRC
            n = len(walk.offsets)
            if n:
                offsets = np.frombuffer(walk.offsets, np.uint64).astype(np.int64)
                lengths = np.frombuffer(walk.lengths, np.uint64).astype(np.int64)
                feed_spans(f.read_span, offsets, lengths, builder, 0)
            problems = sum(1 for p in walk.problems if p.kind != DATA_CRC)
            table = builder.take_table()
            return DiffPart(task, builder, table, n, problems, f.path, walk.ends)

    def records(self, part: DiffPart) -> int:
        return part.records

    def failed(self, task: Task, error: BaseException) -> DiffPart:
        """The answer of a task that kept failing: its file could not be read (said, and
        left out of every figure)."""
        empty = DigestBuilder(self.keys)
        return DiffPart(
            task,
            empty,
            empty.take_table(),
            0,
            0,
            shown(task.path),
            error=failure_text(error, task.path),
        )

    def combine(self, parts: list[DiffPart]) -> list[DiffPart]:
        """Answers of tasks run together travel as they are."""
        return parts

    def merge(
        self, parts: Sequence[DiffPart], rerun: Callable[[Task], DiffPart] | None = None
    ) -> DiffSide:
        """The side from the answers of all the tasks, in any order (their builders are
        renumbered and merged: the parts are used up). A range whose walk did not enter where
        the previous one left is walked again from there with ``rerun`` (default: this
        process)."""
        again = rerun if rerun is not None else self.task
        by_file: dict[int, list[DiffPart]] = {}
        for part in parts:
            by_file.setdefault(part.task.file, []).append(part)
        total = DigestBuilder(self.keys)
        tables: list[DigestTable] = []
        files: list[tuple[str, int]] = []
        unreadable: list[tuple[str, str]] = []
        first = problems = 0
        for k in sorted(by_file):
            ranges = sorted(by_file[k], key=lambda p: p.task.start)
            failed = next((p for p in ranges if p.error), None)
            if failed is not None:
                unreadable.append((failed.path, failed.error))
                continue
            chain = ranges[:1] if ranges[0].task.whole else stitch(ranges, again)
            count = 0
            for part in chain:
                part.builder.shift(first + count)
                part.table.shift(first + count)
                total.merge(part.builder)
                tables.append(part.table)
                count += part.records
                problems += part.problems
            files.append((chain[0].path, count))
            first += count
        side = side_of(total, DigestTable.concat(tables), first, problems, files)
        side.unreadable = unreadable
        return side


def diff_datasets(
    tasks_a: Sequence[Task],
    tasks_b: Sequence[Task],
    *,
    key: str | None = None,
    categorical: Collection[str] = (),
    compression: str = "auto",
    runner: Callable[[DiffJob, Sequence[Task]], Any] | None = None,
) -> DatasetDiff:
    """Both sides as jobs (``runner(job, tasks)``: by default :func:`codec.jobs.run` on a
    process per core) and their comparison (:func:`codec.diff.compare`)."""
    if runner is None:
        from .run import run

        def runner(job: DiffJob, tasks: Sequence[Task]) -> Any:
            return run(job, tasks)

    keys = (*DEFAULT_KEYS, key) if key else DEFAULT_KEYS
    job = DiffJob(keys, compression)
    a: DiffSide = runner(job, tasks_a)
    b: DiffSide = runner(job, tasks_b)
    return compare(a, b, key=key, categorical=categorical)
