"""The records an export writes, in which order, and where each one's bytes come from.

The order is the edited dataset's (:meth:`Journal.order`: source records that are not
deleted, each followed by the records added after it), or the part of it a selection asks for.
An untouched source record is read from its file with its data CRC checked; an edited or new
record is the journal's effective record. Source record numbers map to files through
:meth:`codec.TFRecordDataset.locate`.

A :class:`Portion` is a part of the plan as plain data, for a worker that writes it (a shard
of the output): runs of source records it reads from the files itself (paths and URLs as
given), and the payloads of only its own edited and new records.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import codec
from browser_app.edits import Journal, RecordRef
from browser_app.errors import ExportError
from browser_app.export.base import ExportReport
from browser_app.export.remote import same_place
from codec import example as ex
from codec.errors import CorruptRecordError
from codec.example import Record
from codec.framing import Problem
from codec.identity import FileIdentity
from codec.kinds import DATA_CRC
from codec.values import plural

__all__ = ["ExportSource", "Plan", "Portion", "SourceFile"]

ExportSource: TypeAlias = (
    Journal
    | codec.TFRecordDataset
    | codec.TFRecordFile
    | str
    | os.PathLike[str]
    | Sequence[str | os.PathLike[str]]
)
"""What can be exported: a journal (its edits are applied), a dataset, a file or paths."""

How = Literal["copied", "edited", "added"]


class Plan:
    """The records to export: ``(position, ref)`` pairs in the edited dataset's order, and
    how to get each one's payload. ``total`` is how many records the plan holds (damaged
    source records included, which are then skipped); ``deleted`` how many the journal
    leaves out of it. Close the plan to close the files it opened."""

    def __init__(
        self,
        source: ExportSource,
        selection: Iterable[RecordRef] | None = None,
        include_added: bool = True,
        *,
        anon: bool = False,
    ) -> None:
        self.journal: Journal | None = None
        self._owned = False
        if isinstance(source, Journal):
            self.journal = source
            self.dataset: codec.TFRecordDataset = source.source
        elif isinstance(source, codec.TFRecordDataset):
            self.dataset = source
        elif isinstance(source, codec.TFRecordFile):
            self.dataset = codec.TFRecordDataset(source)  # the file stays the caller's
        else:
            self.dataset = codec.TFRecordDataset(source, anon=anon)
            self._owned = True
        self.files: list[codec.TFRecordFile] = list(self.dataset.files)
        self.source_total = len(self.dataset)
        self.whole = selection is None
        self.deleted = 0
        # The damaged records records() skipped (a few; the written ones are counted only).
        self.damaged: dict[RecordRef, Problem] = {}
        self._items: list[tuple[int, RecordRef]] | None = None
        if selection is not None:
            self._items = self._select(selection, include_added)
            self.total = len(self._items)
        elif self.journal is not None:
            self.total = self.journal.count(self.source_total)
            self.deleted = len(self.journal.deleted_records())
        else:
            self.total = self.source_total

    def close(self) -> None:
        if self._owned:
            self.dataset.close()

    def _select(
        self, selection: Iterable[RecordRef], include_added: bool
    ) -> list[tuple[int, RecordRef]]:
        wanted: set[RecordRef] = set()
        for r in selection:
            if isinstance(r, bool) or not isinstance(r, (int, str)):
                raise ExportError(f"{r!r} is not a record index")
            if isinstance(r, int):
                if r < 0:
                    r += self.source_total
                if not 0 <= r < self.source_total:
                    have = plural(self.source_total, "record")
                    raise ExportError(f"record {r} is out of range ({have})")
            wanted.add(r)
        if self.journal is None:
            bad = [r for r in wanted if isinstance(r, str)]
            if bad:
                raise ExportError(f"record {bad[0]!r} does not exist (no journal)")
            return [(int(r), r) for r in sorted(int(r) for r in wanted)]
        j = self.journal
        self.deleted = sum(1 for r in wanted if j.is_deleted(r))
        out: list[tuple[int, RecordRef]] = []
        for pos, ref in enumerate(j.order(self.source_total)):
            if ref in wanted or (
                include_added and isinstance(ref, str) and j.anchor(ref) in wanted
            ):
                out.append((pos, ref))
        return out

    def items(self) -> Iterator[tuple[int, RecordRef]]:
        """``(position, ref)`` of every planned record, in order."""
        if self._items is not None:
            yield from self._items
        elif self.journal is not None:
            yield from enumerate(self.journal.order(self.source_total))
        else:
            yield from ((i, i) for i in range(self.source_total))

    def portions(self, bounds: Sequence[int]) -> list[Portion]:
        """The plan cut into portions (:class:`Portion`) at ``bounds`` (positions in
        :meth:`items`, from 0 to :attr:`total`): portion ``k`` holds items ``bounds[k]`` to
        ``bounds[k + 1]``. Each is plain data a worker can read its records with: runs of
        source records, and the payloads of the edited and new records it holds."""
        j = self.journal
        sources = [SourceFile.of(f) for f in self.files]
        paths = self.source_paths()
        out: list[Portion] = []
        items = enumerate(self.items())
        for k in range(len(bounds) - 1):
            part = Portion(sources, [], {}, bounds[k + 1] - bounds[k], self.whole, paths)
            runs = part.runs
            for _n, (pos, ref) in itertools.islice(items, bounds[k + 1] - bounds[k]):
                if j is not None and (isinstance(ref, str) or j.is_touched(ref)):
                    how: How = "added" if isinstance(ref, str) else "edited"
                    payload = j.effective_payload(ref)
                    record = j.effective_record(ref)
                    assert payload is not None and record is not None  # deleted ones are not here
                    part.touched[ref] = (payload, how, record)
                    part.payload_bytes += len(payload)
                    runs.append((pos, ref, -1, -1, 1))
                    continue
                assert isinstance(ref, int)
                f, local = self.dataset.locate(ref)
                if runs:
                    p0, r0, f0, l0, n0 = runs[-1]
                    if (
                        f0 == f
                        and isinstance(r0, int)
                        and (pos, ref, local) == (p0 + n0, r0 + n0, l0 + n0)
                    ):
                        runs[-1] = (p0, r0, f0, l0, n0 + 1)
                        continue
                runs.append((pos, ref, f, local, 1))
            for _p, _r, f, local, n in runs:
                if f >= 0:
                    part.payload_bytes += int(self.files[f].spans(local, local + n)[1].sum())
            out.append(part)
        return out

    def region_problems(self) -> list[Problem]:
        """Damage that is not a record (bad headers, truncation, broken compression): lost
        data to report when the whole dataset is exported."""
        if not self.whole:
            return []
        return [p for f in self.files for p in f.problems if p.kind != DATA_CRC]

    def source_paths(self) -> list[str]:
        """The source files' real paths (a remote object's URL as shown): what
        :func:`~browser_app.export.staging.guard_sources` compares destinations with."""
        return [same_place(f.path) for f in self.files]


@dataclass(frozen=True)
class SourceFile:
    """A source file as a worker opens it again: ``path`` (a local file's absolute path, or
    the URL as given), ``shown`` (as messages name it), its compression, and its
    ``identity`` when the export planned it (a remote object's version, a local file's size,
    modification time and inode), so that a file that changed since is not read as if it
    had not; opened with the same anonymous access and inflate limit as here."""

    path: str
    shown: str
    compression: str
    anon: bool
    identity: FileIdentity
    max_inflate: int | None = None

    @classmethod
    def of(cls, f: codec.TFRecordFile) -> SourceFile:
        path = f.url if f.url is not None else os.path.abspath(f.path)
        return cls(path, f.path, f.compression, f.anon, f.identity, f.max_inflate)

    def open(self) -> codec.TFRecordFile:
        """The file, opened here as the export planned it: a local file replaced since, or
        a remote object of another version (whose reads are pinned to the one planned),
        raises :class:`~codec.errors.ObjectChangedError`."""
        return codec.TFRecordFile(
            self.path,
            compression=self.compression,
            anon=self.anon,
            max_inflate=self.max_inflate,
            expect=self.identity,
        )


Run = tuple[int, RecordRef, int, int, int]
"""``(position, ref, file, local index, count)``: ``count`` source records whose positions,
numbers and local indices follow each other; or (``file`` -1, ``count`` 1) one edited or new
record, whose payload the portion holds."""


@dataclass
class Portion:
    """A part of a :class:`Plan`, as plain data sent to the worker that writes it: the
    ``sources`` (every file of the dataset, opened only when one of its records is here),
    ``runs`` of records in order (:data:`Run`), the ``touched`` records' ``(payload, how,
    record)`` (edited and new ones: only this portion's), how many records it holds
    (``total``), whether the plan is the whole dataset, and the source files' places
    (:meth:`Plan.source_paths`, which no destination may be). ``payload_bytes`` counts the
    payload bytes it reads. ``damaged`` holds the damaged source records the last pass over
    :meth:`records` skipped."""

    sources: list[SourceFile]
    runs: list[Run]
    touched: dict[RecordRef, tuple[bytes, How, Record]]
    total: int
    whole: bool
    paths: list[str]
    payload_bytes: int = 0
    damaged: dict[RecordRef, Problem] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._files: dict[int, codec.TFRecordFile] = {}
        self._shared: Sequence[codec.TFRecordFile] | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_files"], state["_shared"] = {}, None  # open files stay where they are
        return state

    def share(self, files: Sequence[codec.TFRecordFile] | None) -> None:
        """Read from ``files``, the plan's own open files, when this portion is written in
        the process that planned it (else each file is opened here, see :meth:`close`)."""
        self._shared = files

    def file(self, k: int) -> codec.TFRecordFile:
        """Source file ``k``: the plan's own, or opened here (and checked) on first use."""
        if self._shared is not None:
            return self._shared[k]
        f = self._files.get(k)
        if f is None:
            f = self._files[k] = self.sources[k].open()
        return f

    def close(self) -> None:
        """Close the files this portion opened."""
        files, self._files = self._files, {}
        for f in files.values():
            f.close()

    def items(self) -> Iterator[tuple[int, RecordRef]]:
        """``(position, ref)`` of every record of the portion, in order."""
        for pos, ref, _f, _local, n in self.runs:
            if n == 1 or not isinstance(ref, int):
                yield pos, ref
            else:
                yield from ((pos + i, ref + i) for i in range(n))

    def source_paths(self) -> list[str]:
        """See :meth:`Plan.source_paths`."""
        return self.paths

    def records(self, report: ExportReport) -> Iterator[tuple[int, RecordRef, bytes]]:
        """``(position, ref, payload)`` of every record to write, counting into ``report``
        (damaged source records go to its ``skipped``, and to ``damaged``: those of the last
        pass, for a format that reads the records twice). An untouched source record is read
        from its file with its data CRC checked; an edited or new one is the journal's."""
        self.damaged = {}
        for pos, ref, k, local, n in self.runs:
            if k < 0:
                payload, how, _record = self.touched[ref]
                setattr(report, how, getattr(report, how) + 1)
                report.records += 1
                yield pos, ref, payload
                continue
            f = self.file(k)
            assert isinstance(ref, int)
            for i in range(n):
                try:
                    payload = f.read(local + i)
                except CorruptRecordError as exc:
                    problem = f.is_damaged(local + i) or Problem(
                        DATA_CRC, exc.offset, exc.offset, exc.reason, f.path
                    )
                    report.skipped.append(problem)
                    self.damaged[ref + i] = problem
                    continue
                report.copied += 1
                report.records += 1
                yield pos + i, ref + i, payload

    def decoded(self, report: ExportReport) -> Iterator[tuple[int, Record]]:
        """``(position, record)`` of every record to write, decoded (see :meth:`records`)."""
        for pos, ref, payload in self.records(report):
            touched = self.touched.get(ref)
            yield pos, (touched[2] if touched is not None else ex.decode(payload))
