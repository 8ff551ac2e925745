"""TFRecordFile: a memory-mapped, random-access TFRecord reader that trusts nothing.

Opening is instant whatever the size: the index of record offsets grows by header-only scans
as records are asked for, and is saved to a cache so the next open of an unchanged file does not
scan at all. GZIP and ZLIB files are inflated once into a cache file that is then memory-mapped.
Every record read checks its data CRC; damage becomes :class:`~codec.framing.Problem` values
and the reader keeps going past it.

The reader reads records; beside it are what it delegates: the byte source
(:mod:`codec.sources`), the index (:mod:`codec.record_index`, saved by
:mod:`codec.saved_index`), which records are recovered (:mod:`codec.recovered`), jumps into
the bytes (:mod:`codec.landing`), text indexes (:mod:`codec.text_index`) and the records'
digest (:mod:`codec.identity`).
"""

from __future__ import annotations

import bisect
import itertools
import os
import struct
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import crc32c as _crc32c
import numpy as np

from .byte_source import ByteSource
from .errors import CorruptRecordError, ReaderClosedError
from .framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    OVERHEAD,
    Problem,
    failing_data_crcs,
    header_ok,
    mask_crc,
    read_at,
)
from .identity import FileIdentity, index_digest
from .kinds import DATA_CRC, Compression
from .landing import Landing, land_ahead, landed_in_index
from .locations import shown
from .record_index import RecordIndex
from .recovered import first_recovered
from .saved_index import IndexCache
from .settings import default_cache_dir, given_inflate_limit
from .sources import open_stream, sniff_compression
from .text_index import checked_index, write_text_index
from .values import plural

_U32 = struct.Struct("<I")
_SCAN_STEP = 1 << 18  # records per incremental scan step
_FIRST_STEP = 1 << 10  # the first step is small, so the first page shows at once
_RELEASE_EVERY = 64 << 20  # drop verified pages from RSS after this many bytes
_VERIFY_BLOCK = 8 << 20  # verify in blocks this size; measured best for 4 MiB records on 2 cores
_THREADED_RECORD_SIZE = 64 << 10  # verify on two threads when records average this or more


@dataclass
class VerifyReport:
    """The result of checking every CRC of one file."""

    path: str
    compression: str
    records: int  # intact records: CRCs check, reached through an unbroken chain of lengths
    damaged: int  # records whose framing is intact but whose data CRC fails
    bytes: int  # size of the (decompressed) stream
    problems: list[Problem] = field(default_factory=list)
    recovered: int = 0  # records whose CRCs check, found by resynchronising after damage

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def skipped_bytes(self) -> int:
        return sum(p.skipped for p in self.problems)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "compression": self.compression,
            "records": self.records,
            "recovered": self.recovered,
            "bytes": self.bytes,
            "problems": [p.to_json() for p in self.problems],
        }


@dataclass(frozen=True)
class RecordInfo:
    """One record as iteration over a damaged file sees it: the payload when intact, the
    problem otherwise."""

    index: int
    offset: int
    length: int
    data: bytes | None
    problem: Problem | None = None


class TFRecordFile(Sequence[bytes]):
    """A TFRecord file as a sequence of payloads.

    >>> with TFRecordFile("train.tfrecord") as f:   # doctest: +SKIP
    ...     first, last = f[0], f[-1]

    ``f[i]`` returns the payload of record ``i`` (bytes, a copy: safe after close) after checking
    its data CRC, raising :class:`CorruptRecordError` when it fails. ``len(f)`` needs the whole
    index; ``f.indexed`` tells how many records are known so far without scanning further.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        compression: str = "auto",
        check_crc: bool = True,
        cache_dir: str | os.PathLike[str] | None = None,
        use_cache: bool = True,
        progress: Callable[[int, int], None] | None = None,
        max_inflate: int | None = None,
        anon: bool = False,
        expect: FileIdentity | None = None,
    ) -> None:
        self.path = shown(os.fspath(path))  # a URL as it may be shown: never a credential
        self.check_crc = check_crc
        cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._closed = False
        opened = open_stream(
            os.fspath(path),
            compression,
            cache,
            use_cache,
            progress=progress,
            max_inflate=max_inflate,
            anon=anon,
            expect=expect,
        )
        self.url = os.fspath(path) if opened.stat is None else None  # as given, for workers
        self.anon = anon  # how it was opened, for workers that open it again
        self.max_inflate = given_inflate_limit(max_inflate)  # the same (None: the default)
        self.stat = opened.stat
        self.identity = opened.identity
        self.file_size = opened.file_size
        self.compression: Compression = opened.compression
        self._source: ByteSource = opened.source
        self._need = self._source.need
        self.remote = self._source.remote
        self._read_since_release = 0
        self._last: tuple[int, bytes, bool] | None = None  # the last record read (see read)
        self._index = RecordIndex(
            self._source,
            self.path,
            self.compression,
            opened.problems,
            self.identity,
            IndexCache(cache) if use_cache else None,
        )

    @property
    def size(self) -> int:
        """The size of the (decompressed) stream; of a compressed remote object still being
        inflated, the part inflated so far (see :attr:`codec.byte_source.ByteSource.complete`)."""
        return self._source.size

    @property
    def _buf(self) -> Any:
        """The stream's bytes (a remote source maps its block file on first use)."""
        return b"" if self._closed else self._source.buffer

    # -- index -----------------------------------------------------------------------------

    @property
    def _offsets(self) -> array:
        return self._index.offsets

    @property
    def _lengths(self) -> array:
        return self._index.lengths

    @property
    def stream_problems(self) -> list[Problem]:
        """What opening the stream found (inflating it; of a stream inflated in the
        background, known once it is complete)."""
        return self._index.stream_problems

    def index_more(self, max_records: int = _SCAN_STEP) -> bool:
        """Scan up to ``max_records`` more headers; return whether the index is complete."""
        self._check_open()
        return self._index.step(max_records)

    @property
    def recovered_from(self) -> int | None:
        """The number of the first record reached by resynchronising after damage, or ``None``:
        every record from there on is *recovered* (see :mod:`codec.recovered`). Based on the
        part of the file indexed so far."""
        return self._index.recovered_from()

    def is_recovered(self, i: int) -> bool:
        """Whether record ``i`` is recovered (see :attr:`recovered_from`)."""
        first = self.recovered_from
        return first is not None and i >= first

    def _ensure(self, n: int) -> None:
        """Index at least ``n`` records, or all of them if there are fewer."""
        while len(self._offsets) < n and not self._index.done:
            step = _FIRST_STEP if not self._offsets else _SCAN_STEP
            self.index_more(max(step, n - len(self._offsets)))

    def build_index(self) -> None:
        """Scan the whole file (the header-only scan), if not done yet."""
        while not self._index.done:
            self.index_more(1 << 22)

    @property
    def indexed(self) -> int:
        """How many records are indexed so far (no scanning)."""
        return len(self._offsets)

    @property
    def index_complete(self) -> bool:
        return self._index.done

    @property
    def index_progress(self) -> float:
        """Fraction of the stream the index covers, 0.0 to 1.0."""
        return 1.0 if self._index.done or not self.size else self._index.next / self.size

    @property
    def problems(self) -> list[Problem]:
        """Damage found so far: by the header scan, and data-CRC failures met on reading.
        Complete once :meth:`verify` has run."""
        return self._index.problems()

    # -- sequence protocol -----------------------------------------------------------------

    def __len__(self) -> int:
        self._check_open()
        self.build_index()
        return len(self._offsets)

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> list[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | list[bytes]:
        if isinstance(i, slice):
            return [self.read(j) for j in range(*i.indices(len(self)))]
        return self.read(i)

    def _resolve(self, i: int) -> int:
        self._check_open()
        if not isinstance(i, int):
            raise TypeError(f"record indices must be integers, not {type(i).__name__}")
        if i < 0:
            self.build_index()
            i += len(self._offsets)
            if i < 0:
                have = plural(len(self._offsets), "record")
                raise IndexError(f"record index out of range ({have})")
        elif i >= len(self._index.offsets):  # the hot path (indexed already) asks once
            self._ensure(i + 1)
            if i >= len(self._offsets):
                have = plural(len(self._offsets), "record")
                raise IndexError(f"record index {i} out of range ({have})")
        return i

    def span(self, i: int) -> tuple[int, int]:
        """``(offset, length)`` of record ``i``: its header's byte offset in the (decompressed)
        stream and its payload length. The record occupies ``length + 16`` bytes."""
        i = self._resolve(i)
        return self._offsets[i], self._lengths[i]

    def spans(self, start: int = 0, stop: int | None = None) -> tuple[Any, Any]:
        """Header offsets and payload lengths of records ``start..stop`` as two int64 numpy
        arrays (copies), indexing as far as needed: for bulk work over many records."""
        self._check_open()
        if stop is None:
            self.build_index()
            stop = len(self._offsets)
        else:
            self._ensure(stop)
            stop = min(stop, len(self._offsets))
        start = max(0, min(start, stop))
        offs = np.frombuffer(self._offsets, np.uint64)[start:stop].astype(np.int64)
        lens = np.frombuffer(self._lengths, np.uint64)[start:stop].astype(np.int64)
        return offs, lens

    def read_span(self, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of the (decompressed) stream as they are, framing included
        and no CRC checked: for copying runs of records that were checked another way."""
        self._check_open()
        if not 0 <= start <= end <= self.size:
            raise IndexError(
                f"{self.path}: span {start}..{end} is outside the {self.size}-byte stream"
            )
        self._need(start, end)
        return bytes(self._buf[start:end])

    def read(self, i: int, *, check_crc: bool | None = None) -> bytes:
        """The payload of record ``i``, its data CRC checked unless told otherwise. The last
        record read is kept, so the views of one page asking for the same record again (the
        table, the record view, a sample) do not copy and check it again."""
        i = self._resolve(i)
        checked = self.check_crc if check_crc is None else check_crc
        last = self._last
        if last is not None and last[0] == i and (last[2] or not checked):
            return last[1]
        index = self._index
        off = index.offsets[i]
        n = index.lengths[i]
        start = off + HEADER_SIZE
        self._need(off, start + n + FOOTER_SIZE)
        buf = self._buf
        data = buf[start : start + n]
        self._read_since_release += n
        if self._read_since_release > _RELEASE_EVERY:
            # Paging through a file far larger than memory must not keep it all resident.
            self._read_since_release = 0
            self._release(0, self.size)
        if checked:
            (stored,) = _U32.unpack_from(buf, start + n)
            if mask_crc(_crc32c.crc32c(data)) != stored:
                problem = index.data_crc_problem(i)
                raise CorruptRecordError(problem.message, path=self.path, offset=off)
        payload = bytes(data)
        self._last = (i, payload, checked)
        return payload

    def is_damaged(self, i: int) -> Problem | None:
        """The problem of record ``i`` if its data CRC is known to fail (after a read or
        :meth:`verify`), else ``None``."""
        return self._index.damaged.get(i)

    def index_digest(self) -> str:
        """A digest of every record's offset, length and stored data CRC (indexing the whole
        file): it changes when any record is moved, resized or rewritten, even when the size
        and modification time were set back."""
        self.build_index()
        self._need(0, self.size)
        return index_digest(self._buf, self._offsets, self._lengths)

    def record_at(self, offset: int) -> int | None:
        """The number of the first record whose header starts at or after ``offset`` (the
        record a problem at ``offset`` belongs to, or the one after a skipped region); ``None``
        when there is none. Indexes the whole file."""
        self.build_index()
        return self._index.number_at(offset)

    def stream_view(self) -> tuple[Any, Callable[[int, int], None]]:
        """The (decompressed) stream's buffer and its ``need(start, end)`` (see
        :mod:`codec.framing`): for work that walks the bytes itself, such as a task that
        checks one byte range of a large file (:mod:`codec.jobs`)."""
        self._check_open()
        return self._buf, self._need

    def known_number(self, offset: int) -> int | None:
        """The record number of the record whose header is at ``offset``, when the index
        already reaches it (no scanning); ``None`` otherwise, or when no record starts there."""
        return self._index.known_number(offset)

    def land(self, target: int, count: int = 20) -> Landing:
        """Records at byte ``target`` of the stream, without indexing up to it: the indexed
        ones where the index reaches ``target``, else those from the first record boundary
        after it, numbered by estimate (see :mod:`codec.landing`); :meth:`known_number`
        tells their numbers once the index reaches them."""
        self._check_open()
        target = max(0, min(int(target), self.size))
        if target < self._index.next or self._index.done:
            i = bisect.bisect_left(self._offsets, target)
            self._ensure(i + count)
            return landed_in_index(target, i, self._offsets, self._lengths, count)
        return land_ahead(
            self._buf,
            self.size,
            self._need,
            target,
            count,
            max_bytes=self._index.step_bytes,
            path=self.path,
            indexed=len(self._offsets),
            indexed_to=self._index.next,
        )

    def read_at(self, offset: int) -> bytes:
        """The payload of the record whose header is at ``offset`` (found by :meth:`land`),
        both CRCs checked: :class:`CorruptRecordError` / ``TruncatedRecordError`` otherwise."""
        self._check_open()
        self._need(offset, offset + HEADER_SIZE)
        if offset + HEADER_SIZE <= self.size and header_ok(self._buf, offset):
            (n,) = struct.unpack_from("<Q", self._buf, offset)
            self._need(offset, min(self.size, offset + OVERHEAD + n))
        got = read_at(self._buf, offset, self.size, path=self.path)
        if got is None:
            raise IndexError(f"{self.path}: no record at byte {offset} (the end of the stream)")
        return got[0]

    def note_damage(self, problem: Problem) -> None:
        """Adopt a data-CRC failure found elsewhere (e.g. by a verify in another process), so
        :meth:`is_damaged` and :attr:`problems` know it without reading the record again."""
        if problem.kind == DATA_CRC and problem.offset is not None:
            self.build_index()
            self._index.note_damage(problem)

    def __iter__(self) -> Iterator[bytes]:
        """Payloads of the intact records, in order; damaged ones are skipped and recorded
        in :attr:`problems`."""
        for info in self.records():
            if info.data is not None:
                yield info.data

    def records(self, start: int = 0, stop: int | None = None) -> Iterator[RecordInfo]:
        """Every indexed record from ``start``, intact or not, as :class:`RecordInfo`."""
        i = start
        while stop is None or i < stop:
            self._ensure(i + 1)
            if i >= len(self._offsets):
                return
            try:
                data: bytes | None = self.read(i)
                problem = None
            except CorruptRecordError:
                data, problem = None, self._index.damaged[i]
            yield RecordInfo(i, self._offsets[i], self._lengths[i], data, problem)
            i += 1

    # -- verification ----------------------------------------------------------------------

    def verify(
        self, progress: Callable[[int, int], None] | None = None, *, threads: int | None = None
    ) -> VerifyReport:
        """Check every length and data CRC of the file.

        Records are checked in blocks of about 8 MiB whose pages are released when done.
        Where records are large (crc32c then runs without the GIL, and most of the time goes
        into mapping pages), blocks are checked on ``threads`` threads (default: up to 2)."""
        self._check_open()
        self.build_index()
        n = len(self._offsets)
        offsets = np.frombuffer(self._offsets, np.uint64)
        bounds = np.searchsorted(offsets, np.arange(0, self.size, _VERIFY_BLOCK, dtype=np.uint64))
        edges = [*dict.fromkeys(int(b) for b in bounds), n]
        blocks = [(a, b) for a, b in itertools.pairwise(edges) if b > a]
        if threads is None:
            large = n and self.size / n >= _THREADED_RECORD_SIZE
            threads = min(2, os.cpu_count() or 1) if large and len(blocks) > 1 else 1
        bad: list[int] = []
        checked = _check_blocks(
            self._buf, self._offsets, self._lengths, blocks, threads, self._need
        )
        for found, start, end in checked:
            self._release(start, end)
            bad.extend(found)
            if progress:
                progress(end, self.size)
        for i in bad:
            self._index.data_crc_problem(i)
        index = self._index
        return report_of(
            self.path, self.compression, self.size, index.offsets, index.found, index.damaged, bad
        )

    def _release(self, start: int, end: int) -> None:
        self._source.release(start, end)

    # -- interop: the text index of NVIDIA DALI and the `tfrecord` package -----------------

    def write_text_index(self, target: str | os.PathLike[str]) -> None:
        """Write ``"<offset> <total size>"`` per record (total = payload + 16), atomically."""
        self.build_index()
        write_text_index(target, self._offsets, self._lengths)

    def load_text_index(
        self, source: str | os.PathLike[str] | bytes, *, sample: int | None = None
    ) -> int:
        """Adopt an index in the DALI / ``tfrecord`` text format (a file, or its bytes)
        instead of scanning; returns how many entries were adopted.

        By default every entry is checked against its header, the entries are used up to the
        first one that does not match, and the file is scanned as usual from there.
        ``sample=N`` (for a remote object, where every header would cost a block read) uses
        the index whole or not at all (:func:`codec.text_index.checked_index`), and does not
        save it as the file's index; every record's data CRC is still checked when read."""
        self._check_open()
        need = self._need if self.remote else None  # a memory map has every byte
        found = checked_index(source, self._buf, self.size, need, path=self.path, sample=sample)
        if found is None:
            return 0
        self._index.adopt(found, save=sample is None)
        return len(found.offsets)

    # -- lifetime --------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ReaderClosedError(f"{self.path}: the reader is closed")

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._last = None
        self._source.close()

    def __enter__(self) -> TFRecordFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{plural(self.indexed, 'record')} indexed"
        return f"<TFRecordFile {self.path!r} {self.compression} {state}>"


def report_of(
    path: str,
    compression: str,
    size: int,
    offsets: Sequence[int],
    problems: Sequence[Problem],
    damaged: dict[int, Problem],
    bad: Sequence[int],
) -> VerifyReport:
    """The verify report of a completely indexed stream: its record ``offsets``, the
    ``problems`` of its framing (and inflation), ``damaged`` (record number → problem, for
    every record in ``bad`` and those whose length the scan corrected) and ``bad``, the
    records whose data CRC fails (:func:`report_from`, with what it needs of ``offsets``)."""
    first = first_recovered(offsets, [*problems, *damaged.values()], size)
    return report_from(path, compression, size, len(offsets), problems, damaged, bad, first)


def report_from(
    path: str,
    compression: str,
    size: int,
    records: int,
    problems: Sequence[Problem],
    damaged: dict[int, Problem],
    bad: Sequence[int],
    first: int | None,
) -> VerifyReport:
    """The verify report of a stream of ``records`` records (see :func:`report_of`), given
    ``first``, the number of the first record reached by resynchronising after one of the
    problems (:func:`first_recovered`). One function, whether one reader checked the file or
    tasks checked ranges of it (:mod:`codec.jobs`)."""
    found = [*problems, *damaged.values()]
    recovered = 0 if first is None else (records - first) - sum(1 for i in bad if i >= first)
    return VerifyReport(
        path=path,
        compression=compression,
        records=records - len(bad) - recovered,
        damaged=len(bad),
        bytes=size,
        problems=sorted(found, key=lambda p: -1 if p.offset is None else p.offset),
        recovered=recovered,
    )


def _check_block(
    buf: Any, offsets: array, lengths: array, block: tuple[int, int]
) -> tuple[list[int], int, int]:
    """Data-CRC check of records ``block[0]..block[1]``: the failing record numbers, and the
    byte range the block spans."""
    lo, hi = block
    end = offsets[hi - 1] + HEADER_SIZE + lengths[hi - 1]
    return failing_data_crcs(buf, offsets, lengths, lo, hi), offsets[lo], end + FOOTER_SIZE


def _check_blocks(
    buf: Any,
    offsets: array,
    lengths: array,
    blocks: Sequence[tuple[int, int]],
    threads: int,
    need: Callable[[int, int], None],
) -> Iterator[tuple[list[int], int, int]]:
    """:func:`_check_block` of every block in order, on ``threads`` threads, each block's
    bytes asked for with ``need`` first."""

    def check(block: tuple[int, int]) -> tuple[list[int], int, int]:
        lo, hi = block
        need(offsets[lo], offsets[hi - 1] + lengths[hi - 1] + OVERHEAD)
        return _check_block(buf, offsets, lengths, block)

    if threads > 1:
        from concurrent.futures import ThreadPoolExecutor  # here: most verifies use one thread

        with ThreadPoolExecutor(threads) as pool:
            yield from pool.map(check, blocks)
        return
    for block in blocks:
        yield check(block)


def read_records(path: str | os.PathLike[str], **kwargs: Any) -> Iterator[bytes]:
    """Iterate over the intact payloads of one file, closing it at the end."""
    with TFRecordFile(path, **kwargs) as f:
        yield from f


__all__ = [
    "Landing",
    "RecordInfo",
    "TFRecordFile",
    "VerifyReport",
    "read_records",
    "sniff_compression",
]
