"""Records of a file fed to a schema builder: a range read in vectorised batches (the raw
spans, their CRCs checked at once), or record by record (the exact route, for picked records
and files without raw spans); shared by the one-process inference and the schema job."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import crc32c as _crc32c
import numpy as np

from ..errors import CorruptRecordError
from ..framing import mask_crcs
from ..kinds import EXAMPLE
from ..reader import TFRecordFile
from .builder import SchemaBuilder

__all__ = ["ProgressFn", "feed_spans", "file_kind", "scan_range", "scan_slow"]

_CHUNK = 65_536  # records per vectorised batch

ProgressFn = Callable[[int, int], None]


def _bulk(f: Any) -> tuple[Callable[[int, int], bytes], np.ndarray, np.ndarray] | None:
    """The reader's raw-span reader and its index as arrays, when the reader has them."""
    if not isinstance(f, TFRecordFile):
        return None
    offsets, lengths = f.spans()
    return f.read_span, offsets, lengths


def scan_range(
    f: Any,
    builder: SchemaBuilder,
    start: int,
    stop: int,
    base: int,
    kind: str,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Feed records ``start..stop`` of reader ``f`` (numbered from ``base``) to ``builder``."""
    bulk = _bulk(f) if kind == EXAMPLE else None
    if bulk is None:
        scan_slow(f, builder, range(start, stop), base, progress)
        return
    read_span, offsets, lengths = bulk

    def damaged(i: int) -> None:
        if f.is_damaged(start + i) is None:
            _note_damage(f, start + i)  # records the problem in the reader

    offsets, lengths = offsets[start:stop], lengths[start:stop]
    feed_spans(read_span, offsets, lengths, builder, base + start, damaged, progress)


def feed_spans(
    read_span: Callable[[int, int], bytes],
    offsets: np.ndarray,
    lengths: np.ndarray,
    builder: SchemaBuilder,
    first: int,
    damaged: Callable[[int], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Feed the records whose headers are at ``offsets`` (payloads of ``lengths`` bytes) of a
    stream read with ``read_span(start, end)`` to ``builder``, numbered from ``first``, their
    data CRCs checked: a failing one is added as damaged (and ``damaged(i)`` told, ``i`` its
    position in ``offsets``)."""
    crc = _crc32c.crc32c
    for c0 in range(0, len(offsets), _CHUNK):
        c1 = min(len(offsets), c0 + _CHUNK)
        off = offsets[c0:c1]
        ln = lengths[c0:c1]
        lo = int(off[0])
        hi = int(off[-1] + ln[-1] + 16)
        raw = read_span(lo, hi) + bytes(16)
        b = np.frombuffer(raw, np.uint8)
        rs = off - lo + 12
        re_ = rs + ln
        mv = memoryview(raw)
        got = np.fromiter(
            (crc(mv[s:e]) for s, e in zip(rs.tolist(), re_.tolist())), np.uint32, len(rs)
        )
        stored = b[re_[:, None] + np.arange(4)].copy().view("<u4").ravel()
        mv.release()
        numbers = np.arange(c0, c1, dtype=np.int64) + first
        intact = mask_crcs(got) == stored
        if not intact.all():
            for i in np.flatnonzero(~intact).tolist():
                if damaged is not None:
                    damaged(c0 + i)
                builder.add_damaged(int(numbers[i]))
            builder._add_buffer(b, rs[intact], re_[intact], numbers[intact], got[intact])
        else:
            builder._add_buffer(b, rs, re_, numbers, got)
        if progress:
            progress(c1 - c0)


def _note_damage(f: Any, i: int) -> None:
    try:
        f.read(i)
    except CorruptRecordError:
        pass


def scan_slow(
    f: Any,
    builder: SchemaBuilder,
    indices: Iterable[int],
    base: int,
    progress: Callable[[int], None] | None = None,
    batch: int = 4096,
) -> None:
    """Feed records by number through ``f.read`` (CRC checked) and the exact decoder."""
    payloads: list[bytes] = []
    numbers: list[int] = []

    def flush() -> None:
        if payloads:
            builder.add_payloads(payloads, numbers)
            if progress:
                progress(len(payloads))
            payloads.clear()
            numbers.clear()

    for i in indices:
        try:
            p = f.read(i)
        except CorruptRecordError:
            flush()
            builder.add_damaged(base + i)
            if progress:
                progress(1)
            continue
        payloads.append(p)
        numbers.append(base + i)
        if len(payloads) >= batch:
            flush()
    flush()


def file_kind(f: Any) -> str:
    from ..example import detect_file_kind

    def firsts() -> Iterator[bytes]:
        for info in f.records(0, 64):
            if info.data is not None:
                yield info.data

    return detect_file_kind(firsts())
