"""Inference over files: ranges of records, the fast and exact routes, processes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import crc32c as _crc32c
import numpy as np

from ..dataset import TFRecordDataset
from ..errors import CorruptRecordError
from ..framing import mask_crcs
from ..kinds import DATA_CRC, EXAMPLE
from ..reader import TFRecordFile
from .builder import SchemaBuilder, merge_all
from .result import Schema, ShardInfo

_CHUNK = 65_536  # records per vectorised batch
_PARALLEL_MIN = 200_000  # records below which one process is faster than two

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
        _scan_slow(f, builder, range(start, stop), base, progress)
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


def _scan_slow(
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


def infer_schema(
    source: Any,
    *,
    sample: int | None = None,
    progress: ProgressFn | None = None,
    workers: int = 1,
    seed: int = 0,
    decode_images: bool = False,
    label_map: Mapping[int, str] | None = None,
    detection: bool = True,
    per_shard: bool = True,
    **reader_options: Any,
) -> Schema:
    """Infer the schema of every record of ``source``: a path, a list of paths/globs/shard
    patterns, a :class:`codec.TFRecordFile`, a list of them or a
    :class:`codec.TFRecordDataset` (files given open are left open).

    ``sample=N`` looks at N records picked at random (``seed``) instead, and the result says
    so (:attr:`Schema.is_sample`). ``progress(done, total)`` is called as records are read.
    ``workers > 1`` spreads large files over processes (opened by path). ``decode_images``
    fully decodes every image to find the undecodable ones (default: header and end-marker
    checks only). ``label_map`` (``{id: name}``) turns on the label checks of detection data
    (:mod:`codec.schema.detection`); ``detection=False`` leaves the detection checks out."""

    ds = (
        source if isinstance(source, TFRecordDataset) else TFRecordDataset(source, **reader_options)
    )
    try:
        built = {"decode_images": decode_images, "label_map": label_map, "detection": detection}
        return _infer(ds, sample, progress, workers, seed, built, per_shard)
    finally:
        if ds is not source:
            ds.close()  # closes only the files it opened itself


def _infer(
    ds: TFRecordDataset,
    sample: int | None,
    progress: ProgressFn | None,
    workers: int,
    seed: int,
    built: dict[str, Any],
    per_shard: bool,
) -> Schema:
    files = ds.files
    counts = [len(f) for f in files]
    total = sum(counts)
    firsts = np.array([ds.global_index(k, 0) for k in range(len(files))] + [total], np.int64)
    infos = [ShardInfo(f.path, int(firsts[k]), counts[k]) for k, f in enumerate(files)]
    problems = sum(len([p for p in f.problems if p.kind != DATA_CRC]) for f in files)
    done = 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total if sample is None else min(sample, total))

    builders: list[SchemaBuilder] = []
    if sample is not None:
        n = max(0, min(sample, total))
        picked = np.sort(np.random.default_rng(seed).choice(total, size=n, replace=False))
        for k, f in enumerate(files):
            lo, hi = np.searchsorted(picked, [firsts[k], firsts[k + 1]])
            b = SchemaBuilder(**built)
            local = (picked[lo:hi] - firsts[k]).tolist()
            _scan_slow(f, b, local, int(firsts[k]), step)
            builders.append(b)
    elif workers > 1 and total >= _PARALLEL_MIN:
        from ..jobs.schema import infer_on_workers

        return infer_on_workers(files, total, progress, workers, built, per_shard)
    else:
        for k, f in enumerate(files):
            b = SchemaBuilder(**built)
            if counts[k]:
                scan_range(f, b, 0, counts[k], int(firsts[k]), file_kind(f), step)
            builders.append(b)
    shards: dict[str, Schema] = {}
    if per_shard and len(files) > 1:
        for k, b in enumerate(builders):
            shards[files[k].path] = Schema(
                b, total=counts[k], sample=None if sample is None else b.records
            )
    total_b = merge_all(builders, SchemaBuilder(**built), keep=bool(shards))
    if progress and sample is None:
        progress(total, total)
    return Schema(
        total_b,
        total=total,
        sample=None if sample is None else total_b.records + total_b.damaged.count,
        files=infos,
        shards=shards,
        problems=problems,
    )
