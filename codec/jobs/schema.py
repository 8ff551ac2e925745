"""Schema inference (with the Object Detection checks) as a job: tasks of whole files or byte
ranges of large plain files, each returning a small partial result, merged into the very
:class:`codec.schema.Schema` that :func:`codec.schema.infer_schema` gives in one process.

A task feeds the records it owns to a :class:`codec.schema.SchemaBuilder`, numbered from 0:
a record's number in the dataset is only known once every task before it has counted its
records. The merge walks again the ranges that entered elsewhere (:func:`.walk.stitch`, as
for verify), gives each part its first number (the records of the files and ranges before
it), renumbers its builder (:meth:`codec.schema.SchemaBuilder.shift`) and merges the
builders in dataset order. Every statistic a builder holds merges exactly (counts, min/max,
bounded tables of the smallest keys, samples by record-derived keys, fixed-grid histograms,
the smallest record numbers), so the result does not depend on the split, nor on the order
in which the tasks finished.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..kinds import DATA_CRC
from ..reader import TFRecordFile
from ..schema.builder import SchemaBuilder
from ..schema.result import Schema, ShardInfo
from ..schema.scan import ProgressFn, feed_spans, file_kind, scan_range
from .plan import Task, tasks_of
from .run import Progress, run
from .spec import ExecutorSpec
from .walk import RangeEnds, stitch, walk_task

__all__ = ["SchemaJob", "SchemaMerge", "SchemaPart", "infer_on_workers"]


@dataclass
class SchemaPart:
    """A schema task's answer: the builder of the records it owns (numbered from 0), how many
    records that is (intact or damaged), the framing problems it owns, the file's shown path
    and, for a range, where its walk entered and left."""

    task: Task
    builder: SchemaBuilder
    records: int
    problems: int
    path: str
    walk: RangeEnds | None = None
    files: list[tuple[str, int]] | None = None  # (path, records) of each file it stands for

    def shown_files(self) -> list[tuple[str, int]]:
        """``(shown path, records)`` of each file whose records this part holds."""
        return self.files if self.files is not None else [(self.path, self.records)]


@dataclass
class SchemaJob:
    """The schema of every record of a dataset, as a job (see :mod:`codec.jobs`): the options
    of :func:`codec.schema.infer_schema` (``decode_images``, ``label_map``, ``detection``,
    ``per_shard``) but no sampling, and the files' ``compression`` when it is forced (plan
    with the same: ``plan(paths, sizes=...)``). Tasks come from :func:`codec.jobs.plan`."""

    decode_images: bool = False
    label_map: Mapping[int, str] | None = None
    detection: bool = True
    per_shard: bool = True
    compression: str = "auto"
    name: str = field(default="schema", init=False)

    def __post_init__(self) -> None:
        if self.label_map is not None:
            self.label_map = dict(self.label_map)  # plain data, pickled to workers

    def _builder(self) -> SchemaBuilder:
        return SchemaBuilder(
            decode_images=self.decode_images, label_map=self.label_map, detection=self.detection
        )

    def task(self, task: Task) -> SchemaPart:
        """Run one task where the data is (this process, a pool worker, a Dask worker)."""
        builder = self._builder()
        with task.open(self.compression) as f:
            if task.whole:
                n = len(f)
                if n:
                    scan_range(f, builder, 0, n, 0, file_kind(f))
                problems = sum(1 for p in f.problems if p.kind != DATA_CRC)
                return SchemaPart(task, builder, n, problems, f.path)
            walk = walk_task(f, task, check_data=False)  # the feed checks every data CRC
            n = len(walk.offsets)
            if n:
                offsets = np.frombuffer(walk.offsets, np.uint64).astype(np.int64)
                lengths = np.frombuffer(walk.lengths, np.uint64).astype(np.int64)
                feed_spans(f.read_span, offsets, lengths, builder, 0)
            problems = sum(1 for p in walk.problems if p.kind != DATA_CRC)
            return SchemaPart(task, builder, n, problems, f.path, walk.ends)

    def records(self, part: SchemaPart) -> int:
        return part.records

    def combine(self, parts: list[SchemaPart]) -> list[SchemaPart]:
        """The answers of consecutive tasks run on one worker: the parts of whole files in a
        row folded into one (renumbered one after the other), so the client unpickles and
        merges one builder for them, not one per file; unchanged when each file keeps its own
        statistics (``per_shard``)."""
        if self.per_shard:
            return parts
        out: list[SchemaPart] = []
        for part in parts:
            last = out[-1] if out else None
            if last is None or not (last.task.whole and part.task.whole):
                out.append(part)
                continue
            part.builder.shift(last.records)
            last.builder.merge(part.builder)
            last.files = [*last.shown_files(), (part.path, part.records)]
            last.records += part.records
            last.problems += part.problems
        return out

    def merge(
        self,
        parts: Sequence[SchemaPart],
        rerun: Callable[[Task], SchemaPart] | None = None,
    ) -> Schema:
        """The schema from the answers of all the tasks, in any order (their builders are
        renumbered and merged: the parts are used up). A range whose walk did not enter where
        the previous one left is walked again from there with ``rerun`` (default: this
        process)."""
        merging = self.merger(rerun)
        merging.add(sorted(parts, key=lambda p: (p.task.file, p.task.start)))
        return merging.result()

    def merger(self, rerun: Callable[[Task], SchemaPart] | None = None) -> SchemaMerge:
        """The merge, fed the answers in task order as they come (:func:`codec.jobs.run`
        folds each file in while later tasks still run, so the client's merge does not wait
        for the last task): what :meth:`merge` does in one go."""
        return SchemaMerge(self, rerun if rerun is not None else self.task)


class SchemaMerge:
    """The schema job's merge, fed the answers in task order (:meth:`add`, any number of
    times), a file at a time: once a later file's answer comes, a file's ranges are stitched
    (:func:`.walk.stitch`), renumbered after the records before them and folded into the
    dataset's builder; :meth:`result` closes the last file and makes the
    :class:`codec.schema.Schema`. Each file's builder is kept for its own statistics only
    when the job keeps them (``per_shard``)."""

    def __init__(self, job: SchemaJob, rerun: Callable[[Task], SchemaPart]) -> None:
        self.job = job
        self.rerun = rerun
        self.total = job._builder()  # the dataset's: every file folded in, in order
        self.first = 0  # records of the files folded in so far
        self.files: list[ShardInfo] = []
        self.builders: list[SchemaBuilder] = []  # each file's, when the job keeps them
        self.problems = 0
        self.open: list[SchemaPart] = []  # the answers of the file being fed

    def add(self, parts: Sequence[SchemaPart]) -> None:
        """Take the next answers, in task order (those of one file together, ranges in
        stream order)."""
        for part in parts:
            if self.open and part.task.file != self.open[0].task.file:
                self._close()
            self.open.append(part)

    def _close(self) -> None:
        ranges, self.open = self.open, []
        # a chain is the ranges of one file, or one part for whole files in a row
        chain = ranges[:1] if ranges[0].task.whole else stitch(ranges, self.rerun)
        count = 0
        file_builder: SchemaBuilder | None = None
        for part in chain:
            part.builder.shift(self.first + count)
            count += part.records
            self.problems += part.problems
            if file_builder is None:
                file_builder = part.builder
            else:
                file_builder.merge(part.builder)
        shown = chain[0].shown_files() if len(chain) == 1 else [(chain[0].path, count)]
        for path, n in shown:
            self.files.append(ShardInfo(path, self.first, n))
            self.first += n
        if file_builder is not None:
            self.total.merge(file_builder)  # takes nothing over: it can stand for its file
            if self.job.per_shard:
                self.builders.append(file_builder)

    def result(self) -> Schema:
        """The schema of everything added."""
        if self.open:
            self._close()
        shards: dict[str, Schema] = {}
        if self.job.per_shard and len(self.files) > 1:
            for info, b in zip(self.files, self.builders):
                shards[info.path] = Schema(b, total=info.records)
        return Schema(
            self.total, total=self.first, files=self.files, shards=shards, problems=self.problems
        )


def infer_on_workers(
    files: list[TFRecordFile],
    total: int,
    progress: ProgressFn | None,
    workers: int,
    built: dict[str, Any],
    per_shard: bool,
) -> Schema:
    """Every record of ``files`` (open; ``total`` records) as the schema job on ``workers``
    processes: what :func:`codec.schema.infer_schema` runs with ``workers > 1``. Byte ranges
    of large files, each worker opening its file again the way it was opened here."""
    kinds = {f.compression for f in files}
    job = SchemaJob(
        **built, per_shard=per_shard, compression=kinds.pop() if len(kinds) == 1 else "auto"
    )
    spec = ExecutorSpec("processes", workers)
    tasks = tasks_of(files, executor=spec)

    def step(p: Progress) -> None:
        if progress is not None:
            progress(min(p.records, total), total)

    schema: Schema = run(job, tasks, spec.fit(len(tasks)), progress=step)
    if progress is not None:
        progress(total, total)
    return schema
