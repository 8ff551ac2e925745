"""Duplicate pictures as a job: each task fingerprints the main picture of every record it owns
(:mod:`codec.perceptual`), the merge puts the fingerprints in dataset order and groups them
(:func:`codec.duplicates.find_groups`), on any executor.

A record's picture is THE picture of :func:`codec.roles.main_picture` (the photo by its key
and header, never the first in byte order). A task reads whole files record by record, or a
byte range from its first record boundary (:mod:`.walk`, every data CRC checked); it returns
its records' fingerprints, numbered from 0. The merge stitches the ranges of each file
(:func:`.walk.stitch`), puts the files one after the other — sources (datasets, splits) in the
order given, their files in order — and groups once: the fingerprints of a record depend on
that record alone and the grouping on the records in dataset order, so the answer is the same,
byte for byte, whatever the split and wherever the tasks ran.

A record whose data CRC fails, that is not an Example (nor a tensor picture), that holds no
picture, or whose picture cannot be decoded is counted with its reason and left out; a file
that cannot be read at all is named with why. Nothing stops the job.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .. import duplicates as dup
from ..errors import CodecError
from ..example import decode
from ..images import find_images
from ..kinds import RAW
from ..locations import shown
from ..perceptual import hashes_of
from ..reader import TFRecordFile
from ..roles import main_picture
from .filter import range_payloads
from .plan import Task, tasks_of
from .spec import ExecutorSpec
from .verify import failure_text
from .walk import RangeEnds, stitch, walk_task

__all__ = [
    "DuplicatesJob",
    "DuplicatesPart",
    "DuplicatesResult",
    "Source",
    "fingerprint",
    "source_tasks",
]

_FIRST = 5  # record numbers named per reason a record was left out


@dataclass(frozen=True)
class Source:
    """One dataset or split searched: ``label`` (how a person calls it: a split's name, the
    spec given), its first file's number among every file of the job and how many files it
    has; ``across``: on the other side of a leakage search (``--across``)."""

    label: str
    first_file: int
    files: int
    across: bool = False


def _digest(*parts: bytes) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        h.update(p)
    return h.digest()


def fingerprint(payload: bytes | None, embedding: tuple[str, int] | None = None) -> tuple[int, Any]:
    """One record's ``(status, facts)``: the status a number of :data:`codec.duplicates.STATUS`;
    facts ``(picture feature, payload digest, width, height, hashes or None, vector or None)``
    when it has a picture (and, with ``embedding`` — the feature and its length —, a vector of
    that length)."""
    if payload is None:
        return dup.DAMAGED, None
    try:
        record = decode(payload)
    except CodecError:
        return dup.NOT_EXAMPLE, None
    ref = main_picture(record, find_images(record))
    if ref is None:
        return (dup.NOT_EXAMPLE if record.kind == RAW else dup.NO_PICTURE), None
    shape = f"{ref.source} {ref.format} {ref.height} {ref.width} {ref.depth} {ref.dtype};"
    digest = _digest(shape.encode(), ref.data)
    vector = None
    if embedding is not None:
        feat = record.features.get(embedding[0])
        if feat is None or feat.type != "float" or len(feat.values) != embedding[1]:
            return dup.NO_EMBEDDING, None
        vector = np.asarray(feat.values, np.float32)
        return dup.OK, (ref.feature, digest, ref.width, ref.height, None, vector)
    try:
        img = ref.image(cmap=None)
        hashes = hashes_of(img)
    except (CodecError, OSError, ValueError):
        return dup.UNDECODABLE, None
    return dup.OK, (ref.feature, digest, img.width, img.height, hashes, None)


def _fingerprints(
    payloads: Iterable[tuple[int, bytes | None]], n: int, embedding: tuple[str, int] | None
) -> dup.Fingerprints:
    fp = dup.Fingerprints.empty(n, None if embedding is None else embedding[1])
    for i, payload in payloads:
        status, facts = fingerprint(payload, embedding)
        fp.status[i] = status
        if facts is None:
            continue
        feature, digest, w, h, hashes, vector = facts
        fp.picture[i] = feature
        fp.payload[i] = np.frombuffer(digest, np.uint8)
        fp.size[i] = (w, h)
        if hashes is not None:
            fp.pixels[i] = np.frombuffer(hashes.pixels, np.uint8)
            fp.phash[i] = hashes.phash
            fp.dhash[i] = hashes.dhash
            fp.phash_mirrored[i] = hashes.phash_mirrored
            fp.dhash_mirrored[i] = hashes.dhash_mirrored
        if vector is not None and fp.embedding is not None:
            fp.embedding[i] = vector
    return fp


def source_tasks(
    named: Sequence[tuple[str, Sequence[TFRecordFile], bool]],
    *,
    executor: ExecutorSpec | str | None = None,
    compression: str = "auto",
) -> tuple[list[Source], list[Task]]:
    """The sources and tasks of a search over ``named`` — ``(label, open files, across)`` per
    dataset or split, in order —: every file's tasks at once (:func:`codec.jobs.tasks_of`),
    the sources saying which files are whose."""
    sources: list[Source] = []
    files: list[TFRecordFile] = []
    for label, fs, across in named:
        sources.append(Source(label, len(files), len(fs), across))
        files.extend(fs)
    return sources, tasks_of(files, executor=executor, compression=compression)


@dataclass
class DuplicatesPart:
    """A task's answer: the fingerprints of the ``records`` records it owns (numbered from 0),
    its file's shown path, for a range where its walk entered and left, and for a task that
    could not be read, why."""

    task: Task
    records: int
    path: str
    fingerprints: dup.Fingerprints | None = None
    walk: RangeEnds | None = None
    error: str = ""


@dataclass(frozen=True)
class DuplicatesResult:
    """The groups found (:class:`codec.duplicates.Group`; members by their number among
    every record of the job) over ``sources``; ``files``: each file read (shown path, records);
    ``unreadable``: files that could not be read (shown path, why); ``fingerprints`` of every
    record; the search's settings."""

    groups: list[dup.Group]
    sources: list[Source]
    files: list[tuple[str, int]]
    unreadable: list[tuple[str, str]]
    fingerprints: dup.Fingerprints
    threshold: int
    mirror: bool
    embedding: str | None
    cosine: float | None
    read: list[int] = field(default_factory=list)  # each file's number among the job's files

    @property
    def records(self) -> int:
        return len(self.fingerprints)

    @cached_property
    def _layout(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per file read: its first record among the job's, its number among the job's files,
        its source; and per source, its first record."""
        counts = np.array([n for _, n in self.files], np.int64)
        bases = np.concatenate([[0], np.cumsum(counts)])
        numbers = np.array(self.read if self.read else range(len(self.files)), np.int64)
        firsts = np.array([s.first_file for s in self.sources], np.int64)
        src = np.searchsorted(firsts, numbers, "right") - 1
        return bases, numbers, src

    def sides(self) -> np.ndarray:
        """Per record, its source's number."""
        bases, _, src = self._layout
        return np.repeat(src, np.diff(bases))

    def where(self, record: int) -> tuple[int, int, int, int]:
        """A record's ``(source, file among the job's, local index in its file, number in its
        source)``."""
        bases, numbers, src = self._layout
        k = int(np.searchsorted(bases, record, "right")) - 1
        s = int(src[k])
        first_of_source = int(np.searchsorted(src, s, "left"))
        local = record - int(bases[k])
        return s, int(numbers[k]), local, record - int(bases[first_of_source])

    def file_path(self, file_no: int) -> str:
        """The shown path of file ``file_no`` (its number among the job's files)."""
        return self.files[int(np.searchsorted(self._layout[1], file_no))][0]

    def left_out(self) -> dict[str, dict[str, Any]]:
        """Records left out, by reason: how many, and the first (source and number in it)."""
        out: dict[str, dict[str, Any]] = {}
        status = self.fingerprints.status
        for code, why in enumerate(dup.STATUS):
            if not code:
                continue
            idx = np.flatnonzero(status == code)
            if idx.size:
                first = []
                for r in idx[:_FIRST].tolist():
                    src, _, _, number = self.where(r)
                    first.append({"source": self.sources[src].label, "record": number})
                out[why] = {"count": int(idx.size), "first": first}
        return out

    def member_json(self, m: dup.Member) -> dict[str, Any]:
        src, file_no, local, number = self.where(m.record)
        fp = self.fingerprints
        path = self.file_path(file_no)
        out: dict[str, Any] = {
            "source": self.sources[src].label,
            "record": number,
            "file": path,
            "index_in_file": local,
            "picture": fp.picture[m.record],
            "width": int(fp.size[m.record][0]),
            "height": int(fp.size[m.record][1]),
            "relation": m.relation or "first",
        }
        if m.relation:
            out["distance"] = m.distance
        if m.phash is not None:
            out["phash_bits"] = m.phash
            out["dhash_bits"] = m.dhash
            out["mirrored"] = m.mirrored
        if m.cosine is not None:
            out["cosine"] = m.cosine
        if fp.embedding is None:
            out["phash"] = f"{int(fp.phash[m.record]):016x}"
            out["dhash"] = f"{int(fp.dhash[m.record]):016x}"
        return out

    def to_json(self) -> dict[str, Any]:
        """Plain data: the search, the records and groups, what was left out."""
        kinds: dict[str, int] = {}
        for g in self.groups:
            kinds[g.kind] = kinds.get(g.kind, 0) + 1
        return {
            "search": {
                "by": f"embedding {self.embedding}" if self.embedding else "phash+dhash",
                "threshold_bits": None if self.embedding else self.threshold,
                "cosine": self.cosine if self.embedding else None,
                "mirrored": self.mirror and not self.embedding,
                "across": any(s.across for s in self.sources),
            },
            "sources": [
                {"label": s.label, "across": s.across, "records": self._source_records(i)}
                for i, s in enumerate(self.sources)
            ],
            "records": {
                "total": self.records,
                "fingerprinted": int((self.fingerprints.status == dup.OK).sum()),
                "left_out": self.left_out(),
            },
            "groups": [
                {
                    "kind": g.kind,
                    "sources": sorted({self.sources[self.where(r)[0]].label for r in g.records}),
                    "members": [self.member_json(m) for m in g.members],
                }
                for g in self.groups
            ],
            "group_kinds": kinds,
            "duplicate_records": sum(len(g.members) - 1 for g in self.groups),
            "unreadable": [{"path": p, "why": w} for p, w in self.unreadable],
        }

    def _source_records(self, i: int) -> int:
        bases, _, src = self._layout
        return int(np.diff(bases)[src == i].sum())


@dataclass
class DuplicatesJob:
    """Duplicate pictures over ``sources`` (their files' tasks one after the other, from
    :func:`codec.jobs.tasks_of` of every source's files at once), as a job (see
    :mod:`codec.jobs`): groups at ``threshold`` bits of pHash and dHash (``mirror``: mirrored
    copies too), or, with ``embedding`` (a float feature and its length), at ``cosine``
    distance of the vectors; the files read as ``compression``."""

    sources: list[Source] = field(default_factory=list)
    threshold: int = dup.DEFAULT_THRESHOLD
    mirror: bool = True
    embedding: tuple[str, int] | None = None
    cosine: float | None = None
    compression: str = "auto"
    name: str = field(default="duplicates", init=False)

    def __post_init__(self) -> None:
        if not 0 <= self.threshold <= dup.MAX_THRESHOLD:
            raise ValueError(
                f"a Hamming threshold is from 0 to {dup.MAX_THRESHOLD} bits, not {self.threshold}"
            )
        if self.cosine is not None and not 0 <= self.cosine <= 2:
            raise ValueError(f"a cosine distance is from 0 to 2, not {self.cosine}")

    def task(self, task: Task) -> DuplicatesPart:
        """Run one task where the data is (this process, a pool worker, a Dask worker)."""
        with task.open(self.compression) as f:
            if task.whole:
                n = len(f)
                payloads = ((r.index, r.data) for r in f.records(0, n))
                return DuplicatesPart(task, n, f.path, _fingerprints(payloads, n, self.embedding))
            walk = walk_task(f, task)
            n = len(walk.offsets)
            fp = _fingerprints(range_payloads(f, walk, True), n, self.embedding)
            return DuplicatesPart(task, n, f.path, fp, walk.ends)

    def records(self, part: DuplicatesPart) -> int:
        return part.records

    def combine(self, parts: list[DuplicatesPart]) -> list[DuplicatesPart]:
        """Answers of tasks run together travel as they are (a few dozen bytes a record)."""
        return parts

    def failed(self, task: Task, error: BaseException) -> DuplicatesPart:
        """The answer of a task that kept failing: its file could not be read."""
        return DuplicatesPart(task, 0, shown(task.path), error=failure_text(error, task.path))

    def merge(
        self,
        parts: Sequence[DuplicatesPart],
        rerun: Callable[[Task], DuplicatesPart] | None = None,
    ) -> DuplicatesResult:
        """The groups from the answers of all the tasks, in any order. A range whose walk did
        not enter where the previous one left is walked again from there with ``rerun``
        (default: this process)."""
        again = rerun if rerun is not None else self.task
        by_file: dict[int, list[DuplicatesPart]] = {}
        for part in parts:
            by_file.setdefault(part.task.file, []).append(part)
        chain: list[DuplicatesPart] = []
        files: list[tuple[str, int]] = []
        read: list[int] = []
        unreadable: list[tuple[str, str]] = []
        for k in sorted(by_file):
            ranges = sorted(by_file[k], key=lambda p: p.task.start)
            failed = next((p for p in ranges if p.error), None)
            got: list[DuplicatesPart] = []
            if failed is None:
                got = ranges[:1] if ranges[0].task.whole else stitch(ranges, again)
                failed = next((p for p in got if p.error), None)
            if failed is not None:
                unreadable.append((failed.path, failed.error))
                continue
            chain.extend(got)
            files.append((got[0].path, sum(p.records for p in got)))
            read.append(k)
        fps = [p.fingerprints for p in chain if p.fingerprints is not None]
        fp = dup.Fingerprints.concat(fps)
        if fp.embedding is None and self.embedding is not None:
            fp.embedding = np.zeros((0, self.embedding[1]), np.float32)
        result = DuplicatesResult(
            [],
            list(self.sources) or [Source("", 0, len(by_file))],
            files,
            unreadable,
            fp,
            self.threshold,
            self.mirror,
            self.embedding[0] if self.embedding else None,
            self.cosine if self.embedding else None,
            read,
        )
        sides = None
        if any(s.across for s in result.sources):
            across = np.array([s.across for s in result.sources], np.int8)
            sides = across[result.sides()]
        groups = dup.find_groups(
            fp, self.threshold, mirror=self.mirror, cosine=self.cosine, sides=sides
        )
        return DuplicatesResult(
            groups,
            result.sources,
            files,
            unreadable,
            fp,
            self.threshold,
            self.mirror,
            result.embedding,
            result.cosine,
            read,
        )
