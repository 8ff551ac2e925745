"""Tasks of a dataset job: whole files, or byte ranges of large uncompressed ones.

A GZIP/ZLIB file is one task (its bytes can only be read from the start). An uncompressed
file larger than ``split`` bytes is cut into ranges of about ``split`` bytes; each range's task
finds its first record itself (:mod:`codec.jobs.walk`), so planning reads nothing but sizes.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..expand import expand_paths
from ..identity import FileIdentity
from ..reader import TFRecordFile
from ..sources import probe
from .spec import ExecutorSpec, parse_executor

__all__ = [
    "DEFAULT_SPLIT",
    "GROUPS_PER_WORKER",
    "MIN_SPLIT",
    "Task",
    "group",
    "plan",
    "tasks_of",
]

DEFAULT_SPLIT = 64 << 20  # bytes per range task of a large file
MIN_SPLIT = 8 << 20  # bytes: the smallest range made to give every worker a task
GROUPS_PER_WORKER = 4  # groups of small tasks made per worker at least (for an even spread)


@dataclass(frozen=True)
class Task:
    """One piece of work: file ``file`` (number in the dataset) at ``path`` (as given: a
    worker opens it itself), bytes ``[start, end)`` of its stream, or the whole file. ``entry``
    and ``prev`` are set when a range is walked again from a known record. ``anon`` and
    ``max_inflate`` are how the client opened the file (anonymous access, the inflate limit
    a person set for it): a worker opens it the same way, whatever its own environment."""

    file: int
    path: str
    start: int = 0
    end: int = 0
    whole: bool = True
    anon: bool = False
    max_inflate: int | None = None
    entry: int | None = None
    prev: tuple[int, int] | None = None
    identity: FileIdentity | None = None

    @property
    def bytes(self) -> int:
        return self.end - self.start

    def open(self, compression: str = "auto") -> TFRecordFile:
        """The file, opened where the task runs as the client opened it (anonymously or not,
        with its inflate limit), and the very file the client planned on: a local file
        replaced since, or a remote object of another version, raises
        :class:`~codec.errors.ObjectChangedError` (remote reads are pinned to the version the
        client opened), so a job never mixes two versions of a file."""
        return TFRecordFile(
            self.path,
            compression=compression,
            anon=self.anon,
            max_inflate=self.max_inflate,
            expect=self.identity,
        )

    def resumed(self, entry: int, prev: tuple[int, int] | None) -> Task:
        """This range walked from the record at ``entry`` (``prev`` the record before it)."""
        return replace(self, entry=entry, prev=prev)


def plan(
    paths: Sequence[str] | str,
    *,
    split: int = DEFAULT_SPLIT,
    anon: bool = False,
    sizes: Sequence[tuple[int, str]] | None = None,
    at_least: int = 1,
    max_inflate: int | None = None,
) -> list[Task]:
    """The tasks of a job over ``paths`` (anything :func:`codec.expand_paths` takes): a task
    per file, and a task per ``split`` bytes of an uncompressed file larger than that.
    ``sizes`` gives each file's ``(size, compression)`` when known (else they are read from
    each file's size and first bytes: :func:`codec.sources.probe`). With fewer tasks than
    ``at_least`` (the executor's workers), uncompressed files are cut smaller — down to
    ``MIN_SPLIT`` bytes a range — so that every worker has one. ``anon`` and ``max_inflate``
    (None: the default limit) travel with every task."""
    files = expand_paths(paths, anon=anon)
    if sizes is None:
        sizes = [probe(p, anon=anon) for p in files]
    n = len(files)
    return _cut(files, sizes, [anon] * n, [max_inflate] * n, split, at_least)


def tasks_of(
    files: Sequence[TFRecordFile],
    *,
    executor: ExecutorSpec | str | None = None,
    compression: str = "auto",
    split: int = DEFAULT_SPLIT,
) -> list[Task]:
    """The tasks of a job over ``files`` (open: their sizes and compressions are known, and
    nothing is listed or probed again): the one way open files become tasks, for the
    library, the commands and the app. A worker opens each file again by the URL or path as
    given (a signed URL's query included, never the shown form), the way it was opened here:
    anonymously or not, with the inflate limit it was opened with (a raised one too), read as
    ``compression`` says (``"auto"``: as detected), and only as the version opened here
    (:meth:`Task.open`). A large plain file is cut into at least
    as many ranges as ``executor`` has workers."""
    paths = [f.url or f.path for f in files]
    sizes = [(f.file_size, f.compression if compression == "auto" else compression) for f in files]
    workers = parse_executor(executor).planned_workers
    anons = [f.anon for f in files]
    limits = [f.max_inflate for f in files]
    return _cut(paths, sizes, anons, limits, split, workers, [f.identity for f in files])


def _cut(
    files: Sequence[str],
    sizes: Sequence[tuple[int, str]],
    anons: Sequence[bool],
    limits: Sequence[int | None],
    split: int,
    at_least: int,
    identities: Sequence[FileIdentity | None] | None = None,
) -> list[Task]:
    if split > 0 and _count(sizes, split) < at_least:
        plain = sum(size for size, compression in sizes if compression == "none")
        split = min(split, max(MIN_SPLIT, -(-plain // at_least)))
    tasks: list[Task] = []
    for k, (path, (size, compression)) in enumerate(zip(files, sizes)):
        how = {
            "anon": anons[k],
            "max_inflate": limits[k],
            "identity": identities[k] if identities is not None else None,
        }
        if compression != "none" or size <= split or split <= 0:
            tasks.append(Task(k, path, 0, size, True, **how))  # type: ignore[arg-type]
            continue
        n = -(-size // split)
        edges = [size * i // n for i in range(n + 1)]
        for a, b in itertools.pairwise(edges):
            tasks.append(Task(k, path, a, b, False, **how))  # type: ignore[arg-type]
    return tasks


def _count(sizes: Sequence[tuple[int, str]], split: int) -> int:
    """How many tasks ``plan`` makes of files of ``sizes`` with ranges of ``split`` bytes."""
    return sum(
        -(-size // split) if compression == "none" and size > split else 1
        for size, compression in sizes
    )


def group(tasks: Sequence[Task], workers: int, most: int = DEFAULT_SPLIT) -> list[range]:
    """Runs of consecutive tasks that one worker can take at once (their numbers in
    ``tasks``): small shards together, up to ``most`` bytes a group, so that what a task
    costs the executor itself (a few milliseconds on Dask) and what its answer costs the
    client are paid once per group, not once per shard. Never fewer groups than
    ``GROUPS_PER_WORKER`` per worker (nor than tasks), so every worker stays busy to the end;
    a task of ``most`` bytes or more is a group of its own."""
    n = len(tasks)
    want = min(n, max(1, workers) * GROUPS_PER_WORKER)
    total = sum(t.bytes for t in tasks)
    limit = max(1, min(most, total // want if want else most))
    per = -(-n // want) if want else 1  # tasks a group, at most (sizes may be unknown: 0)
    out: list[range] = []
    start = size = 0
    for i, t in enumerate(tasks):
        left = n - i  # tasks from this one on: enough for one group each of those missing?
        if i > start and (size + t.bytes > limit or i - start >= per or left < want - len(out)):
            out.append(range(start, i))
            start, size = i, 0
        size += t.bytes
    if n:
        out.append(range(start, n))
    return out
