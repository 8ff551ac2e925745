"""Inference over files: ranges of records, the fast and exact routes, processes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..dataset import TFRecordDataset
from ..kinds import DATA_CRC
from .builder import SchemaBuilder, merge_all
from .result import Schema, ShardInfo
from .scan import ProgressFn, file_kind, scan_range, scan_slow

_PARALLEL_MIN = 200_000  # records below which one process is faster than two


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
            scan_slow(f, b, local, int(firsts[k]), step)
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
