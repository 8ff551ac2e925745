"""One byte range of a stream, walked on its own: which records and problems it owns.

A task that starts at byte ``start`` finds the first record boundary at or after it with the
search that resynchronises after damage (length CRC and data CRC both check), then follows the
chain of lengths exactly as a whole-file scan does. It *owns* every record whose header starts
before ``end``, and every problem its chain meets before the first record at or after ``end``
(its ``exit``). The next range's walk must enter at that same record; when it does not (its
search stopped on a boundary inside a record that itself holds TFRecord data, or on a chance
match), it is walked again from the previous range's exit (:func:`stitch`), so the records and
problems of all the ranges are exactly those of one walk over the whole stream.
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..framing import OVERHEAD, Problem, failing_data_crcs, find_next_record, scan
from .plan import Task

__all__ = ["RangeEnds", "RangeWalk", "stitch", "walk_range", "walk_task"]

_STEP = 8 << 20  # bytes per scan call


@dataclass
class RangeWalk:
    """What the walk of ``[start, end)`` owns: records (header offsets and payload lengths),
    framing problems, records whose length the scan corrected (``damaged``, their data-CRC
    problems), records whose data CRC fails (``bad``, as positions in ``offsets``), where it
    entered (``None``: no record at or after ``start``) and where the chain left the range
    (``exit``: the first record at or after ``end``, or the stream's size)."""

    start: int
    end: int
    entry: int | None
    exit: int
    offsets: array = field(default_factory=lambda: array("Q"))
    lengths: array = field(default_factory=lambda: array("Q"))
    problems: list[Problem] = field(default_factory=list)
    damaged: list[Problem] = field(default_factory=list)
    bad: list[int] = field(default_factory=list)

    @property
    def last(self) -> tuple[int, int] | None:
        """``(offset, length)`` of the last record owned, if any."""
        if not self.offsets:
            return None
        return self.offsets[-1], self.lengths[-1]

    @property
    def ends(self) -> RangeEnds:
        """Where the walk entered and left: what :func:`stitch` needs of it."""
        return RangeEnds(self.entry, self.exit, self.last)


@dataclass(frozen=True)
class RangeEnds:
    """Where a range's walk entered (``None``: no record at or after its start) and left,
    and its last record's ``(offset, length)``: all :func:`stitch` needs of a range's answer."""

    entry: int | None
    exit: int
    last: tuple[int, int] | None


P = TypeVar("P")


def _walk_of(part: Any) -> RangeEnds | RangeWalk:
    """Where an answer's walk entered and left: its ``walk`` (a walk, its ends, or anything
    carrying them as ``ends``)."""
    walk = part.walk
    assert walk is not None, "a range's answer says where its walk went"
    return getattr(walk, "ends", walk)  # type: ignore[no-any-return]


def stitch(
    ranges: Sequence[P],
    rerun: Callable[[Task], P],
    ends: Callable[[P], RangeEnds | RangeWalk] = _walk_of,
) -> list[P]:
    """The answers of one file's ranges (in stream order), each walked from where the one
    before it left: an answer whose walk entered elsewhere is replaced by ``rerun`` of its
    task resumed at the previous range's exit. ``ends(answer)`` tells where an answer's walk
    entered and left (by default its ``walk``); answers carry their task as ``task``."""
    out: list[P] = []
    for part in ranges:
        if out:
            before = ends(out[-1])
            now = ends(part)
            entered = now.entry if now.entry is not None else now.exit
            if entered != before.exit:
                last = before.last
                task: Task = part.task  # type: ignore[attr-defined]
                prev = last if last is not None else task.prev
                part = rerun(task.resumed(before.exit, prev))
        out.append(part)
    return out


def walk_task(f: Any, task: Any, *, check_data: bool = True) -> RangeWalk:
    """The walk of range task ``task`` (a :class:`codec.jobs.Task`) over open reader ``f``:
    from its known entry record when it has one, else from the first boundary at or after
    its start."""
    buf, need = f.stream_view()
    return walk_range(
        buf,
        f.size,
        task.start,
        task.end,
        need,
        path=f.path,
        entry=task.entry,
        prev=task.prev,
        check_data=check_data,
    )


def walk_range(
    buf: Any,
    size: int,
    start: int,
    end: int,
    need: Callable[[int, int], None],
    *,
    path: str = "",
    entry: int | None = None,
    prev: tuple[int, int] | None = None,
    check_data: bool = True,
) -> RangeWalk:
    """Walk the records of ``[start, end)`` of a stream of ``size`` bytes (see the module's
    docstring). ``entry`` and ``prev`` (the record before it) start the walk at a known record
    instead of searching; ``check_data`` also checks the data CRC of every owned record."""
    end = min(end, size)
    searched = entry is None and start != 0
    if entry is None:
        entry = 0 if start == 0 else find_next_record(buf, start, size, need)
    if entry is None:
        return RangeWalk(start, end, None, size)
    walk = RangeWalk(start, end, entry, entry)
    if entry >= end:
        return walk
    offsets, lengths = walk.offsets, walk.lengths
    problems: list[Problem] = []
    damaged: list[Problem] = []
    pos, before, done = entry, prev, False
    while True:
        chunk = scan(
            buf, pos, size, max_records=1 << 20, max_bytes=_STEP, path=path, prev=before, need=need
        )
        if chunk.prev_length is not None and offsets:
            lengths[-1] = chunk.prev_length
        offsets.extend(chunk.offsets)
        lengths.extend(chunk.lengths)
        problems.extend(chunk.problems)
        damaged.extend(chunk.damaged)
        pos, done = chunk.next_offset, chunk.done
        if done or (offsets and offsets[-1] >= end) or pos >= size:
            break
        if offsets:
            before = (offsets[-1], lengths[-1])
    k = bisect.bisect_left(offsets, end)
    walk.exit = offsets[k] if k < len(offsets) else size
    del offsets[k:]
    del lengths[k:]
    walk.problems = [p for p in problems if p.offset is not None and p.offset < walk.exit]
    walk.damaged = [p for p in damaged if p.offset is not None and p.offset < walk.exit]
    if check_data and offsets:
        # The search accepted the entry record only with its data CRC checked: not again
        # (in a range that enters a large record, that is most of a record's bytes).
        first = 1 if searched and offsets[0] == entry else 0
        walk.bad = _failing(buf, offsets, lengths, need, first)
    return walk


def _failing(
    buf: Any, offsets: array, lengths: array, need: Callable[[int, int], None], first: int = 0
) -> list[int]:
    """Positions of the records from ``first`` on whose data CRC fails, checked a few MiB at
    a time."""
    import numpy as np

    if len(offsets) <= first:
        return []
    offs = np.frombuffer(offsets, np.uint64)[first:]
    grid = np.arange(int(offs[0]), int(offs[-1]) + 1, _STEP, dtype=np.uint64)
    edges = [*dict.fromkeys((np.searchsorted(offs, grid) + first).tolist()), len(offsets)]
    bad: list[int] = []
    for i, j in itertools.pairwise(edges):
        need(offsets[i], offsets[j - 1] + lengths[j - 1] + OVERHEAD)
        bad.extend(failing_data_crcs(buf, offsets, lengths, i, j))
    return bad
