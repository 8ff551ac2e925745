"""Landing: the records at a byte position of a stream, found without indexing up to it, so a
jump to 50 % of a file far larger than memory shows its records at once.

Where the index already reaches the position the records are the indexed ones, with their
numbers (:func:`landed_in_index`). Otherwise (:func:`land_ahead`) the first record boundary at
or after the position is found by the same search that resynchronises after damage (its length
CRC and data CRC both check), the records after it are walked by their lengths, and their
numbers are an estimate from the average record size so far. Such a boundary could lie inside
a record that itself holds TFRecord data; the reader's ``known_number`` tells once its index
reaches it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .framing import OVERHEAD, Problem, find_next_record, scan

__all__ = ["Landing", "land_ahead", "landed_in_index"]


@dataclass(frozen=True)
class Landing:
    """Where a jump to byte ``target`` landed (see :meth:`codec.reader.TFRecordFile.land`).

    ``offset`` is the header offset of the first record found at or after ``target`` (``None``
    when no record follows), ``spans`` the ``(offset, length)`` of the records from there,
    ``first`` the exact number of the first (``None`` until the index reaches it) and
    ``estimate`` its estimated number; ``problems`` is damage met while walking."""

    target: int
    offset: int | None
    spans: list[tuple[int, int]]
    first: int | None
    estimate: int | None
    problems: list[Problem]

    @property
    def exact(self) -> bool:
        return self.first is not None


def landed_in_index(
    target: int, first: int, offsets: Sequence[int], lengths: Sequence[int], count: int
) -> Landing:
    """The landing of ``target`` where the index reaches it: up to ``count`` indexed records
    from record ``first`` (the first whose header is at or after ``target``)."""
    spans = list(zip(offsets[first : first + count], lengths[first : first + count]))
    number = first if spans else None
    return Landing(target, spans[0][0] if spans else None, spans, number, number, [])


def land_ahead(
    buf: Any,
    size: int,
    need: Callable[[int, int], None],
    target: int,
    count: int,
    *,
    max_bytes: int,
    path: str,
    indexed: int,
    indexed_to: int,
) -> Landing:
    """The landing of ``target`` past the end of the index (``indexed`` records, ending at
    byte ``indexed_to``): up to ``count`` records from the first boundary at or after it, their
    walk reading at most ``max_bytes``, numbered by estimate."""
    start = find_next_record(buf, target, size, need)
    if start is None:
        return Landing(target, None, [], None, None, [])
    chunk = scan(buf, start, size, max_records=count, max_bytes=max_bytes, path=path, need=need)
    spans = list(zip(chunk.offsets, chunk.lengths))
    if indexed:
        per_record = indexed_to / indexed
    else:
        per_record = sum(n + OVERHEAD for _, n in spans) / max(1, len(spans))
    estimate = indexed + round((start - indexed_to) / per_record) if per_record else indexed
    return Landing(target, start, spans, None, estimate, chunk.problems)
