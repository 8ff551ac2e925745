"""A filter as a job: tasks of whole files or byte ranges of large plain files, each returning
the records it owns that match, merged into the very :class:`codec.filters.FilterRun` that
:func:`codec.filters.run_filter` gives in one process.

A task evaluates the filter over its records with :func:`codec.filters.look` (the one
evaluation of the language), numbered from 0: a record's number in the dataset is only known
once every task before it has counted its records. A filter that uses ``index`` is decided
for each record with the number unknown; only the records whose match depends on it come
back ``pending`` (with the features the filter names), and the merge decides them with
their numbers. A task stops once ``limit`` records match: the merge keeps the first ``limit``
of the dataset, which are never after that. The merge walks again the ranges that entered
elsewhere (:func:`.walk.stitch`, as for verify), numbers the parts, and reports the feature
names of the records up to the last match kept, as the one-process run does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..filters import ClassNamesLike, Filter, FilterRun, Looked, compile_filter, look
from ..framing import FOOTER_SIZE, HEADER_SIZE
from ..reader import TFRecordFile
from .plan import Task
from .walk import RangeEnds, RangeWalk, stitch, walk_task

__all__ = ["FilterJob", "FilterPart", "range_payloads"]

_CHUNK = 8 << 20  # bytes of payloads read at once by a range task


@dataclass
class FilterPart:
    """A filter task's answer: what :func:`codec.filters.look` found in the records it owns
    (numbered from 0), how many records that is, and, for a range, where its walk entered
    and left."""

    task: Task
    found: Looked
    records: int
    walk: RangeEnds | None = None


@dataclass
class FilterJob:
    """The records of a dataset that match ``expression`` (see :mod:`codec.filters`), as a
    job (see :mod:`codec.jobs`): the first ``limit`` of them when given, the files read with
    ``compression`` (plan with the same: ``plan(paths, sizes=...)``). The merge raises
    :class:`~codec.filters.UnknownFeatureError` for a name no record has, on a complete run,
    as :func:`~codec.filters.run_filter` does; a bad expression raises
    :class:`~codec.filters.FilterSyntaxError` when the job is made. ``names``: the class
    names bound to features (``label == "cat"``; see :func:`~codec.filters.compile_filter`),
    carried to the workers."""

    expression: str
    limit: int | None = None
    compression: str = "auto"
    names: Mapping[str, ClassNamesLike] | None = None
    name: str = field(default="filter", init=False)

    def __post_init__(self) -> None:
        self._compile()  # a bad expression fails here, not on every worker

    def _compile(self) -> Filter:
        return compile_filter(self.expression, self.names)

    def task(self, task: Task) -> FilterPart:
        """Run one task where the data is (this process, a pool worker, a Dask worker)."""
        flt = self._compile()
        with task.open(self.compression) as f:
            if task.whole:
                whole = ((r.index, r.data) for r in f.records(0, len(f)))
                return FilterPart(task, self._look(flt, whole), len(f))
            walk = walk_task(f, task)
            payloads = range_payloads(f, walk, flt.uses_features())
            return FilterPart(task, self._look(flt, payloads), len(walk.offsets), walk.ends)

    def _look(self, flt: Filter, payloads: Iterable[tuple[int, bytes | None]]) -> Looked:
        return look(flt, payloads, limit=self.limit, numbered=False)

    def combine(self, parts: list[FilterPart]) -> list[FilterPart]:
        """Answers of tasks run together travel as they are (only matches, and records whose
        answer waits for their number)."""
        return parts

    def records(self, part: FilterPart) -> int:
        return part.records

    def merge(
        self,
        parts: Sequence[FilterPart],
        rerun: Callable[[Task], FilterPart] | None = None,
    ) -> FilterRun:
        """The run from the answers of all the tasks, in any order. A range whose walk did
        not enter where the previous one left is walked again from there with ``rerun``
        (default: this process)."""
        flt = self._compile()
        again = rerun if rerun is not None else self.task
        by_file: dict[int, list[FilterPart]] = {}
        for part in parts:
            by_file.setdefault(part.task.file, []).append(part)
        chain: list[FilterPart] = []
        for k in sorted(by_file):
            ranges = sorted(by_file[k], key=lambda p: p.task.start)
            chain.extend(ranges[:1] if ranges[0].task.whole else stitch(ranges, again))
        total = sum(p.records for p in chain)
        matches: list[int] = []
        cut: int | None = None  # the number of the last match kept, when limit cut the run
        base = 0
        for part in chain:
            for i in _matching(flt, part.found, base):
                matches.append(i)
                if self.limit is not None and len(matches) >= self.limit:
                    cut = i
                    break
            if cut is not None:
                break
            assert part.found.stop is None, "a task stops only after enough matches"
            base += part.records
        seen = _names(chain, cut)
        complete = cut is None or cut + 1 >= total
        if complete and flt.uses_features():
            flt.check_names(seen)
        counts: dict[int, int] = {}
        for part in chain:
            counts[part.task.file] = counts.get(part.task.file, 0) + part.records
        return FilterRun(matches, complete, seen, [counts[k] for k in sorted(counts)])


def _matching(flt: Filter, found: Looked, base: int) -> Iterator[int]:
    """The numbers of a part's matching records (its first record numbered ``base``), in
    order: those found, and the pending ones that match with their numbers."""
    pending = iter(found.pending)
    nxt = next(pending, None)
    for i in found.matches:
        while nxt is not None and nxt[0] < i:
            yield from _decided(flt, nxt, base)
            nxt = next(pending, None)
        yield base + i
    while nxt is not None:
        yield from _decided(flt, nxt, base)
        nxt = next(pending, None)


def _decided(flt: Filter, pending: tuple[int, bool, Any], base: int) -> Iterator[int]:
    i, intact, record = pending
    if flt.matches(record, index=base + i, intact=intact):
        yield base + i


def _names(chain: Sequence[FilterPart], cut: int | None) -> set[str]:
    """The feature names of the records up to number ``cut`` (every record when ``None``)."""
    seen: set[str] = set()
    base = 0
    for part in chain:
        if cut is not None and base > cut:
            break
        seen.update(n for n, i in part.found.names.items() if cut is None or base + i <= cut)
        base += part.records
    return seen


def range_payloads(
    f: TFRecordFile, walk: RangeWalk, needs_payloads: bool
) -> Iterator[tuple[int, bytes | None]]:
    """``(position, payload or None when its data CRC fails)`` of every record a range's walk
    owns; payloads are read a few MiB at a time, and not at all when the filter does not
    look at them (``b""`` stands for an intact record then)."""
    offsets, lengths, bad = walk.offsets, walk.lengths, set(walk.bad)
    n = len(offsets)
    i = 0
    while i < n:
        lo = offsets[i]
        j = i + 1
        while j < n and offsets[j] + lengths[j] + FOOTER_SIZE + HEADER_SIZE - lo <= _CHUNK:
            j += 1
        raw = b""
        if needs_payloads:
            hi = min(f.size, offsets[j - 1] + HEADER_SIZE + lengths[j - 1] + FOOTER_SIZE)
            raw = f.read_span(lo, hi)
        for k in range(i, j):
            if k in bad:
                yield k, None
            elif needs_payloads:
                s = offsets[k] - lo + HEADER_SIZE
                yield k, raw[s : s + lengths[k]]
            else:
                yield k, b""
        i = j
