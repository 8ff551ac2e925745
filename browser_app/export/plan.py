"""The records an export writes, in which order, and where each one's bytes come from.

The order is the edited dataset's (:meth:`Journal.order`: source records that are not
deleted, each followed by the records added after it), or the part of it a selection asks for.
An untouched source record is read from its file with its data CRC checked; an edited or new
record is the journal's effective record. Source record numbers map to files through
:meth:`codec.TFRecordDataset.locate`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal, TypeAlias

import codec
from browser_app.edits import Journal, RecordRef
from browser_app.errors import ExportError
from browser_app.export.base import ExportReport
from browser_app.export.remote import same_place
from codec import example as ex
from codec.errors import CorruptRecordError
from codec.example import Record
from codec.framing import Problem
from codec.kinds import DATA_CRC
from codec.values import plural

__all__ = ["ExportSource", "Plan"]

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

    def payload(self, ref: RecordRef) -> tuple[bytes | None, How, Problem | None]:
        """``(payload, how, problem)``: how is ``copied``, ``edited`` or ``added``; a damaged
        source record gives ``(None, "copied", problem)``."""
        j = self.journal
        if j is not None and j.is_touched(ref):
            payload = j.effective_payload(ref)
            return payload, "added" if isinstance(ref, str) else "edited", None
        if isinstance(ref, str):
            assert j is not None  # only a journal plans new records
            return j.effective_payload(ref), "added", None
        k, local = self.dataset.locate(ref)
        f = self.files[k]
        try:
            return f.read(local), "copied", None
        except CorruptRecordError as exc:
            prob = f.is_damaged(local) or Problem(
                DATA_CRC, exc.offset, exc.offset, exc.reason, f.path
            )
            return None, "copied", prob

    def records(self, report: ExportReport) -> Iterator[tuple[int, RecordRef, bytes]]:
        """``(position, ref, payload)`` of every record to write, counting into ``report``
        (damaged source records go to its ``skipped``, and to ``damaged``: those of the last
        pass, for a format that reads the records twice)."""
        self.damaged = {}
        for pos, ref in self.items():
            payload, how, problem = self.payload(ref)
            if payload is None:
                if problem is not None:
                    report.skipped.append(problem)
                    self.damaged[ref] = problem
                continue
            setattr(report, how, getattr(report, how) + 1)
            report.records += 1
            yield pos, ref, payload

    def decoded(self, report: ExportReport) -> Iterator[tuple[int, Record]]:
        """``(position, record)`` of every record to write, decoded (see :meth:`records`)."""
        j = self.journal
        for pos, ref, payload in self.records(report):
            if j is not None and j.is_touched(ref):
                rec = j.effective_record(ref)
                assert rec is not None  # a deleted record has no payload to write
                yield pos, rec
            else:
                yield pos, ex.decode(payload)

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
