"""Several TFRecord files (a list, a glob, a shard pattern) opened as one dataset.

Global record numbers run across the files in order and map back to ``(file, local index)``
here and nowhere else (prefix sums over the files' record counts, and a bisect). Files are
indexed lazily, in order, as far as the record asked for. A page of the dataset comes as
:class:`Slot` values: records, intact or damaged, and the skipped regions between them.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from .errors import CorruptRecordError, ReaderClosedError
from .expand import expand_paths
from .framing import OVERHEAD, Problem
from .kinds import DATA_CRC
from .landing import Landing
from .reader import TFRecordFile, VerifyReport
from .values import plural


@dataclass(frozen=True)
class Slot:
    """One place on a page of a dataset: a record (intact or damaged) or a skipped region.

    ``index`` is the global record number (``None`` for a skipped region) and ``local`` its
    number within its file; ``offset`` the byte offset of the record's header (or of the
    skipped region) in the file's (decompressed) stream; ``length`` the payload length (or the
    number of bytes skipped); ``payload`` the CRC-checked bytes, ``None`` when damaged."""

    index: int | None
    path: str
    offset: int | None
    length: int
    payload: bytes | None = None
    problem: Problem | None = None
    local: int | None = None
    recovered: bool = False

    @property
    def status(self) -> str:
        """``intact``, ``recovered``, ``damaged`` or ``skipped``. A record is *recovered* when
        its CRCs check but it was reached by searching past damage (see
        :attr:`TFRecordFile.recovered_from <codec.reader.TFRecordFile.recovered_from>`)."""
        if self.index is None:
            return SKIPPED
        if self.payload is None:
            return DAMAGED
        return RECOVERED if self.recovered else INTACT


INTACT = "intact"
RECOVERED = "recovered"
DAMAGED = "damaged"
SKIPPED = "skipped"


class TFRecordDataset(Sequence[bytes]):
    """Many files as one sequence of payloads, with global record numbers.

    A record has a *global number* (its position in the dataset, counting across the files in
    order) and a *local number* (its position in its own file); :meth:`locate` and
    :meth:`global_index` convert between them, and are the only place that does. Files are
    indexed lazily, in order, as far as the record asked for.

    ``source`` is anything :func:`expand_paths` takes, or already open
    :class:`~codec.reader.TFRecordFile` objects (one or a list), which the dataset then uses
    but does not close."""

    def __init__(
        self,
        source: (
            str
            | os.PathLike[str]
            | TFRecordFile
            | Sequence[str | os.PathLike[str]]
            | Sequence[TFRecordFile]
        ),
        **reader_options: Any,
    ) -> None:
        self._closed = False
        given: list[TFRecordFile] | None = None
        if isinstance(source, TFRecordFile):
            given = [source]
        elif (
            isinstance(source, (list, tuple))
            and source
            and all(isinstance(f, TFRecordFile) for f in source)
        ):
            given = list(source)
        self._owned = given is None
        if given is not None:
            self.files: list[TFRecordFile] = given
            self.paths = [f.path for f in given]
        else:
            anon = bool(reader_options.get("anon", False))
            self.paths = expand_paths(source, anon=anon)  # type: ignore[arg-type]
            self.files = []
            try:
                for p in self.paths:
                    self.files.append(TFRecordFile(p, **reader_options))
            except BaseException:
                self.close()
                raise
        # _starts[k] is the global number of file k's first record, for the files before
        # the first one whose index is incomplete (and one more: the total of those).
        self._starts = [0]

    # -- numbering ---------------------------------------------------------------------------

    def _complete_starts(self) -> list[int]:
        """Prefix sums of record counts over the leading run of completely indexed files."""
        starts = self._starts
        while len(starts) <= len(self.files) and self.files[len(starts) - 1].index_complete:
            starts.append(starts[-1] + self.files[len(starts) - 1].indexed)
        return starts

    def locate(self, i: int) -> tuple[int, int]:
        """``(file number, local index)`` of global record ``i`` (negative counts from the
        end). Raises ``IndexError`` when there is no such record."""
        self._check_open()
        if i < 0:
            i += len(self)
            if i < 0:
                raise IndexError("record index out of range")
        starts = self._complete_starts()
        if i < starts[-1]:
            k = bisect.bisect_right(starts, i) - 1
            return k, i - starts[k]
        base = starts[-1]
        for k in range(len(starts) - 1, len(self.files)):
            f = self.files[k]
            f._ensure(i - base + 1)
            if i - base < f.indexed:
                return k, i - base
            base += f.indexed
        raise IndexError(f"record index {i} out of range ({plural(base, 'record')})")

    def global_index(self, file_number: int, local: int) -> int:
        """The global number of record ``local`` of file ``file_number`` (indexing the files
        before it)."""
        starts = self._complete_starts()
        if file_number >= len(starts):
            for f in self.files[len(starts) - 1 : file_number]:
                f.build_index()
            starts = self._complete_starts()
        return starts[file_number] + local

    def __len__(self) -> int:
        self._check_open()
        return sum(len(f) for f in self.files)

    @property
    def indexed(self) -> int:
        """Records known so far, counting only complete files and the first incomplete one."""
        total = 0
        for f in self.files:
            total += f.indexed
            if not f.index_complete:
                break
        return total

    @property
    def index_complete(self) -> bool:
        return all(f.index_complete for f in self.files)

    @property
    def index_progress(self) -> float:
        sizes = [max(f.size, 1) for f in self.files]
        done = sum(s * f.index_progress for s, f in zip(sizes, self.files))
        return done / sum(sizes) if sizes else 1.0

    def index_more(self, max_records: int = 1 << 18) -> bool:
        for f in self.files:
            if not f.index_complete:
                f.index_more(max_records)
                break
        return self.index_complete

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> list[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | list[bytes]:
        if isinstance(i, slice):
            return [self.read(j) for j in range(*i.indices(len(self)))]
        return self.read(i)

    def read(self, i: int) -> bytes:
        k, j = self.locate(i)
        return self.files[k].read(j)

    def span(self, i: int) -> tuple[str, int, int]:
        """``(path, offset, length)`` of global record ``i``."""
        k, j = self.locate(i)
        off, n = self.files[k].span(j)
        return self.files[k].path, off, n

    def __iter__(self) -> Iterator[bytes]:
        for f in self.files:
            yield from f

    @property
    def problems(self) -> list[Problem]:
        return [p for f in self.files for p in f.problems]

    def record_at(self, path: str, offset: int) -> int | None:
        """The global number of the first record of file ``path`` whose header is at or after
        ``offset`` (the record a problem at ``offset`` belongs to, or the one after a skipped
        region); ``None`` when there is none."""
        for k, f in enumerate(self.files):
            if f.path == path:
                local = f.record_at(offset)
                return None if local is None else self.global_index(k, local)
        return None

    # -- jumps -------------------------------------------------------------------------------

    def land(self, fraction: float, count: int = 20) -> DatasetLanding:
        """Records at ``fraction`` (0.0 to 1.0) of the dataset's bytes, without indexing up to
        there (see :meth:`TFRecordFile.land`). The global number of the first is exact when
        every file before it and its own index reach it, else an estimate."""
        self._check_open()
        sizes = [f.size for f in self.files]
        total = sum(sizes)
        target = max(0.0, min(1.0, float(fraction))) * total
        k = 0
        while k < len(sizes) - 1 and target >= sizes[k]:
            target -= sizes[k]
            k += 1
        f = self.files[k]
        local = f.land(int(target), count)
        starts = self._complete_starts()
        before_exact = k < len(starts)
        if before_exact:
            base = starts[k]
        else:
            base = starts[-1]
            per_record = _bytes_per_record(self.files, local)
            for g in self.files[len(starts) - 1 : k]:
                base += _estimated_count(g, per_record)
        first = base + local.first if (before_exact and local.first is not None) else None
        estimate = None if local.estimate is None else base + local.estimate
        return DatasetLanding(k, f.path, local, first, estimate)

    # -- pages -------------------------------------------------------------------------------

    def page(self, start: int, stop: int) -> list[Slot]:
        """Records ``start..stop-1`` (fewer at the end), each intact or damaged, with the
        skipped regions that lie between them in place. Indexes only as far as needed.

        A page that holds no record at all (past the end, or a file without one record)
        shows the skipped regions of the files that have no record instead."""
        slots: list[Slot] = []
        problems_of: dict[int, list[Problem]] = {}
        last: tuple[int, int] | None = None  # (file number, local index) of the previous record
        ended = False
        for i in range(max(0, start), stop):
            try:
                k, j = self.locate(i)
            except IndexError:
                ended = True
                break
            f = self.files[k]
            if k not in problems_of:
                problems_of[k] = f.problems
            off, n = f.span(j)
            if last is not None and last[0] != k:
                self._trailing(last[0], problems_of, slots)
            if j == 0:
                lo = 0
            else:
                poff, pn = f.span(j - 1)
                lo = poff + pn + OVERHEAD
            for p in _regions_between(problems_of[k], lo, off):
                slots.append(Slot(None, f.path, p.offset, p.skipped, None, p))
            try:
                data: bytes | None = f.read(j)
                prob = None
            except CorruptRecordError as exc:
                data = None
                prob = f.is_damaged(j) or Problem(DATA_CRC, off, off, exc.reason, f.path)
            slots.append(Slot(i, f.path, off, n, data, prob, j, f.is_recovered(j)))
            last = (k, j)
        if last is not None:
            k, j = last
            f = self.files[k]
            if f.index_complete and j == f.indexed - 1:
                self._trailing(k, problems_of, slots)
        elif ended or start == 0:
            for f in self.files:
                if f.index_complete and f.indexed == 0:
                    for p in _regions_between(f.problems, 0, None):
                        slots.append(Slot(None, f.path, p.offset, p.skipped, None, p))
        return slots

    def _trailing(self, k: int, problems_of: dict[int, list[Problem]], slots: list[Slot]) -> None:
        f = self.files[k]
        if not f.index_complete or not f.indexed:
            return
        off, n = f.span(f.indexed - 1)
        for p in _regions_between(problems_of.get(k) or f.problems, off + n + OVERHEAD, None):
            slots.append(Slot(None, f.path, p.offset, p.skipped, None, p))

    # -- checks --------------------------------------------------------------------------------

    def verify(
        self, workers: int | None = None, progress: Callable[[int, int], None] | None = None
    ) -> list[VerifyReport]:
        """Verify every file; several files are checked in parallel processes."""
        from .jobs.verify import verify_paths  # the jobs plan over datasets: not at import

        self._check_open()
        return verify_paths(
            [f.url or f.path for f in self.files],  # as given: worker processes open them
            workers=workers,
            progress=progress,
            readers=self.files,
            anon=any(f.anon for f in self.files),
        )

    def _check_open(self) -> None:
        if self._closed:
            raise ReaderClosedError("the dataset is closed")

    def close(self) -> None:
        self._closed = True
        if self._owned:
            for f in self.files:
                f.close()

    def __enter__(self) -> TFRecordDataset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class DatasetLanding:
    """Where a jump into a dataset landed: file ``file`` (``path``), the file's own
    :class:`~codec.landing.Landing`, and the global number of its first record: ``first`` when
    exact, ``estimate`` always (``None`` when no record follows)."""

    file: int
    path: str
    landing: Landing
    first: int | None
    estimate: int | None

    @property
    def exact(self) -> bool:
        return self.first is not None


def _bytes_per_record(files: Sequence[TFRecordFile], landing: Landing) -> float:
    """The average bytes per record of what is indexed so far (or of the landing's
    records when nothing is)."""
    records = sum(f.indexed for f in files)
    if records:
        return sum(f.size * f.index_progress for f in files) / records
    spans = landing.spans
    return sum(n + OVERHEAD for _, n in spans) / len(spans) if spans else 0.0


def _estimated_count(f: TFRecordFile, per_record: float) -> int:
    """About how many records ``f`` holds: those indexed, and its unindexed bytes at
    ``per_record`` bytes each."""
    if f.index_complete or per_record <= 0:
        return f.indexed
    return f.indexed + round(f.size * (1.0 - f.index_progress) / per_record)


def _regions_between(problems: Sequence[Problem], lo: int, hi: int | None) -> list[Problem]:
    """Problems that are not records (bad headers, truncation) starting in ``[lo, hi)``."""
    out = []
    for p in problems:
        if p.kind == DATA_CRC or p.offset is None:
            continue
        if p.offset >= lo and (hi is None or p.offset < hi):
            out.append(p)
    return out
