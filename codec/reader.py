"""TFRecordFile: a memory-mapped, random-access TFRecord reader that trusts nothing.

Opening is instant whatever the size: the index of record offsets grows by header-only scans
as records are asked for, and is saved to a cache so the next open of an unchanged file does not
scan at all. GZIP and ZLIB files are inflated once into a cache file that is then memory-mapped.
Every record read checks its data CRC; damage becomes :class:`~codec.framing.Problem` values
and the reader keeps going past it.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import os
import struct
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import crc32c as _crc32c

from .byte_source import ByteSource
from .errors import CorruptRecordError, ReaderClosedError
from .framing import (
    FOOTER_SIZE,
    HEADER_SIZE,
    OVERHEAD,
    Problem,
    data_crcs,
    failing_data_crcs,
    find_next_record,
    header_ok,
    mask_crc,
    scan,
)
from .kinds import COMPRESSION, DATA_CRC, NO_COMPRESSION, Compression
from .landing import Landing
from .locations import shown
from .saved_index import IndexCache, SavedIndex
from .settings import default_cache_dir, given_inflate_limit
from .sources import open_stream, sniff_compression
from .values import plural

_U32 = struct.Struct("<I")
_SCAN_STEP = 1 << 18  # records per incremental scan step
_FIRST_STEP = 1 << 10  # the first step is small, so the first page shows at once
_SCAN_BYTES = 128 << 20  # and no step maps more than this much of the file
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
    ) -> None:
        self.path = shown(os.fspath(path))  # a URL as it may be shown: never a credential
        self.check_crc = check_crc
        cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._use_cache = use_cache
        self._index_cache = IndexCache(cache)
        self._lock = threading.RLock()
        self._closed = False
        opened = open_stream(
            os.fspath(path),
            compression,
            cache,
            use_cache,
            progress=progress,
            max_inflate=max_inflate,
            anon=anon,
        )
        self.url = os.fspath(path) if opened.stat is None else None  # as given, for workers
        self.anon = anon  # how it was opened, for workers that open it again
        self.max_inflate = given_inflate_limit(max_inflate)  # the same (None: the default)
        self.stat = opened.stat
        self.identity = opened.identity
        self.file_size = opened.file_size
        self.compression: Compression = opened.compression
        self.stream_problems: list[Problem] = opened.problems
        self._source: ByteSource = opened.source
        self._need = self._source.need
        self.remote = self._source.remote
        # How far one step of the header scan reads: a remote object in a few blocks, so the
        # first page waits for megabytes, not for the 128 MiB a memory map takes at once.
        self._step_bytes = 2 * self._source.block or _SCAN_BYTES
        self._offsets = array("Q")
        self._lengths = array("Q")
        self._problems: list[Problem] = list(self.stream_problems)
        self._next = 0
        self._done = self.size == 0 and self._complete
        self._damaged: dict[int, Problem] = {}
        self._read_since_release = 0
        self._last: tuple[int, bytes, bool] | None = None  # the last record read (see read)
        if not self._done and use_cache:
            self._load_index_cache()

    @property
    def size(self) -> int:
        """The size of the (decompressed) stream; of a compressed remote object still being
        inflated, the part inflated so far (see :attr:`_complete`)."""
        return self._source.size

    @property
    def _complete(self) -> bool:
        """Whether the stream's size is final (only a remote object being inflated grows)."""
        return self._source.complete

    @property
    def _buf(self) -> Any:
        """The stream's bytes (a remote source maps its block file on first use)."""
        return b"" if self._closed else self._source.buffer

    # -- index -----------------------------------------------------------------------------

    def _load_index_cache(self) -> None:
        saved = self._index_cache.load(self.identity, self.path)
        if saved is None:
            return
        self._offsets, self._lengths = saved.offsets, saved.lengths
        self._problems = list(self.stream_problems)
        for p in saved.problems:
            if p.kind == DATA_CRC:  # found by the scan: a record whose length was corrected
                self._adopt_damage(p)
            else:
                self._problems.append(p)
        self._next = self.size
        self._done = True

    def _save_index_cache(self) -> None:
        if self._use_cache:
            scanned = [p for p in self._damaged.values() if p.end != p.offset]
            self._index_cache.save(
                self.identity,
                SavedIndex(self._offsets, self._lengths, [*self._problems, *scanned]),
            )

    def _adopt_damage(self, problem: Problem) -> None:
        i = bisect.bisect_left(self._offsets, problem.offset or 0)
        if i < len(self._offsets) and self._offsets[i] == problem.offset:
            self._damaged[i] = problem

    def index_more(self, max_records: int = _SCAN_STEP) -> bool:
        """Scan up to ``max_records`` more headers; return whether the index is complete."""
        self._check_open()
        with self._lock:
            if self._done:
                return True
            start = self._next
            prev = (self._offsets[-1], self._lengths[-1]) if self._offsets else None
            growing = not self._complete
            if growing:  # wait until the stream is inflated past this step, or ends
                self._need(start, start + self._step_bytes + HEADER_SIZE)
                growing = not self._complete
            size = self.size
            chunk = scan(
                self._buf,
                start,
                size,
                max_records=max_records,
                max_bytes=self._step_bytes,
                path=self.path,
                prev=prev,
                need=self._need,
            )
            if growing and (chunk.done or chunk.problems or chunk.damaged):
                # The walk met the end of what is inflated so far, which is not the end of
                # the stream: wait for more and walk this step again.
                self._need(size, size + self._step_bytes)
                return False
            if chunk.done and self.stream_problems is not self._source_problems():
                self._adopt_stream_problems()
            if chunk.prev_length is not None:
                self._lengths[-1] = chunk.prev_length
            self._offsets.extend(chunk.offsets)
            self._lengths.extend(chunk.lengths)
            self._problems.extend(chunk.problems)
            for p in chunk.damaged:
                self._adopt_damage(p)
            self._next = chunk.next_offset
            self._release(start, self._next)
            if chunk.done:
                self._done = True
                self._explain_no_records()
                self._save_index_cache()
            return self._done

    def _source_problems(self) -> list[Problem]:
        """What the source found itself (a stream inflated in the background), else the
        problems of opening it."""
        found = self._source.problems
        return self.stream_problems if found is None else found

    def _adopt_stream_problems(self) -> None:
        """Take in what inflating found, now that a stream inflated in the background is
        complete (they come first, as for a file inflated at open)."""
        found = self._source_problems()
        self._problems = [*found, *self._problems[len(self.stream_problems) :]]
        self.stream_problems = found

    def _explain_no_records(self) -> None:
        """A compressed file whose inflated stream holds no record at all gets one clear
        message saying so, with the inflated size, instead of a framing message about bytes
        the person never sees."""
        if self._offsets or self.compression == NO_COMPRESSION or not self.size:
            return
        for n, p in enumerate(self._problems):
            if p.offset == 0 and p.kind != COMPRESSION:
                name = self.compression.upper()
                self._problems[n] = Problem(
                    p.kind,
                    p.offset,
                    p.end,
                    f"the {name} file inflates to {self.size:,} bytes that are not TFRecord"
                    " framing: no record starts at the beginning of the inflated data, nor"
                    " anywhere after it",
                    self.path,
                )
                return

    # -- recovered records -------------------------------------------------------------------

    @property
    def recovered_from(self) -> int | None:
        """The number of the first record reached by resynchronising after damage, or ``None``.

        Every record from there on is *recovered*: its own CRCs check out, but it was not
        reached through an unbroken chain of checked lengths from the start of the stream, so
        it might be content of the damaged record before it (a TFRecord stored inside a record
        looks exactly like records of the file). Based on the part of the file indexed so far."""
        return first_recovered(
            self._offsets, [*self._problems, *self._damaged.values()], self.size, self._done
        )

    def is_recovered(self, i: int) -> bool:
        """Whether record ``i`` is recovered (see :attr:`recovered_from`)."""
        first = self.recovered_from
        return first is not None and i >= first

    def _ensure(self, n: int) -> None:
        """Index at least ``n`` records, or all of them if there are fewer."""
        while len(self._offsets) < n and not self._done:
            step = _FIRST_STEP if not self._offsets else _SCAN_STEP
            self.index_more(max(step, n - len(self._offsets)))

    def build_index(self) -> None:
        """Scan the whole file (the header-only scan), if not done yet."""
        while not self._done:
            self.index_more(1 << 22)

    @property
    def indexed(self) -> int:
        """How many records are indexed so far (no scanning)."""
        return len(self._offsets)

    @property
    def index_complete(self) -> bool:
        return self._done

    @property
    def index_progress(self) -> float:
        """Fraction of the stream the index covers, 0.0 to 1.0."""
        return 1.0 if self._done or not self.size else self._next / self.size

    @property
    def problems(self) -> list[Problem]:
        """Damage found so far: by the header scan, and data-CRC failures met on reading.
        Complete once :meth:`verify` has run."""
        if self.stream_problems is not self._source_problems() and self._complete:
            self._adopt_stream_problems()
        found = self._problems + list(self._damaged.values())
        return sorted(found, key=lambda p: -1 if p.offset is None else p.offset)

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
        else:
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
        import numpy as np

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
        off = self._offsets[i]
        n = self._lengths[i]
        start = off + HEADER_SIZE
        self._need(off, start + n + FOOTER_SIZE)
        data = self._buf[start : start + n]
        self._read_since_release += n
        if self._read_since_release > _RELEASE_EVERY:
            # Paging through a file far larger than memory must not keep it all resident.
            self._read_since_release = 0
            self._release(0, self.size)
        if checked:
            (stored,) = _U32.unpack_from(self._buf, start + n)
            if mask_crc(_crc32c.crc32c(data)) != stored:
                problem = self._data_crc_problem(i)
                raise CorruptRecordError(problem.message, path=self.path, offset=off)
        payload = bytes(data)
        self._last = (i, payload, checked)
        return payload

    def _data_crc_problem(self, i: int) -> Problem:
        prob = self._damaged.get(i)
        if prob is None:
            prob = data_crc_problem(self.path, i, self._offsets[i], self._lengths[i])
            self._damaged[i] = prob
        return prob

    def is_damaged(self, i: int) -> Problem | None:
        """The problem of record ``i`` if its data CRC is known to fail (after a read or
        :meth:`verify`), else ``None``."""
        return self._damaged.get(i)

    def index_digest(self) -> str:
        """A digest of every record's offset, length and stored data CRC (indexing the whole
        file): it changes when any record is moved, resized or rewritten, even when the size
        and modification time were set back."""
        import numpy as np

        self.build_index()
        h = hashlib.blake2b(digest_size=16)
        h.update(self._offsets.tobytes())
        h.update(self._lengths.tobytes())
        self._need(0, self.size)
        offs = np.frombuffer(self._offsets, np.uint64).astype(np.int64)
        lens = np.frombuffer(self._lengths, np.uint64).astype(np.int64)
        h.update(data_crcs(self._buf, offs, lens).tobytes())
        return h.hexdigest()

    def record_at(self, offset: int) -> int | None:
        """The number of the first record whose header starts at or after ``offset`` (the
        record a problem at ``offset`` belongs to, or the one after a skipped region); ``None``
        when there is none. Indexes the whole file."""
        self.build_index()
        i = bisect.bisect_left(self._offsets, offset)
        return i if i < len(self._offsets) else None

    def stream_view(self) -> tuple[Any, Callable[[int, int], None]]:
        """The (decompressed) stream's buffer and its ``need(start, end)`` (see
        :mod:`codec.framing`): for work that walks the bytes itself, such as a task that
        checks one byte range of a large file (:mod:`codec.jobs`)."""
        self._check_open()
        return self._buf, self._need

    def known_number(self, offset: int) -> int | None:
        """The record number of the record whose header is at ``offset``, when the index
        already reaches it (no scanning); ``None`` otherwise, or when no record starts there."""
        if offset >= self._next and not self._done:
            return None
        i = bisect.bisect_left(self._offsets, offset)
        return i if i < len(self._offsets) and self._offsets[i] == offset else None

    def land(self, target: int, count: int = 20) -> Landing:
        """Records at byte ``target`` of the stream, without indexing up to it.

        Where the index already reaches ``target`` the records are the indexed ones, with
        their numbers. Otherwise the first record boundary at or after ``target`` is found by
        the same search that resynchronises after damage (its length CRC and data CRC both
        check), the records after it are walked by their lengths, and their numbers are an
        estimate from the average record size so far. Such a boundary could lie inside a
        record that itself holds TFRecord data; :meth:`known_number` tells once the index
        reaches it."""
        self._check_open()
        target = max(0, min(int(target), self.size))
        if target < self._next or self._done:
            i = bisect.bisect_left(self._offsets, target)
            self._ensure(i + count)
            spans = list(zip(self._offsets[i : i + count], self._lengths[i : i + count]))
            first = i if spans else None
            return Landing(target, spans[0][0] if spans else None, spans, first, first, [])
        start = find_next_record(self._buf, target, self.size, self._need)
        if start is None:
            return Landing(target, None, [], None, None, [])
        chunk = scan(
            self._buf,
            start,
            self.size,
            max_records=count,
            max_bytes=self._step_bytes,
            path=self.path,
            need=self._need,
        )
        spans = list(zip(chunk.offsets, chunk.lengths))
        if self._offsets:
            per_record = self._next / len(self._offsets)
        else:
            per_record = sum(n + OVERHEAD for _, n in spans) / max(1, len(spans))
        known = len(self._offsets)
        estimate = known + round((start - self._next) / per_record) if per_record else known
        return Landing(target, start, spans, None, estimate, chunk.problems)

    def read_at(self, offset: int) -> bytes:
        """The payload of the record whose header is at ``offset`` (found by :meth:`land`),
        both CRCs checked: :class:`CorruptRecordError` / ``TruncatedRecordError`` otherwise."""
        from .framing import read_at

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
        if problem.kind != DATA_CRC or problem.offset is None:
            return
        self.build_index()
        i = bisect.bisect_left(self._offsets, problem.offset)
        if i < len(self._offsets) and self._offsets[i] == problem.offset:
            self._damaged.setdefault(i, problem)

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
                data, problem = None, self._damaged[i]
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
        import numpy as np

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
            self._data_crc_problem(i)
        return report_of(
            self.path,
            self.compression,
            self.size,
            self._offsets,
            self._problems,
            self._damaged,
            bad,
        )

    def _release(self, start: int, end: int) -> None:
        self._source.release(start, end)

    # -- interop: the text index of NVIDIA DALI and the `tfrecord` package -----------------

    def write_text_index(self, target: str | os.PathLike[str]) -> None:
        """Write ``"<offset> <total size>"`` per record (total = payload + 16), atomically."""
        self.build_index()
        from .writer import atomic_output

        with atomic_output(target, "w") as f:
            for off, n in zip(self._offsets, self._lengths):
                f.write(f"{off} {n + OVERHEAD}\n")

    def load_text_index(
        self, source: str | os.PathLike[str] | bytes, *, sample: int | None = None
    ) -> int:
        """Adopt an index in the DALI / ``tfrecord`` text format (a file, or its bytes)
        instead of scanning; returns how many entries were adopted.

        By default every entry is checked against its header (length and length CRC), the
        entries are used up to the first one that does not match or does not follow the one
        before, and the file is scanned as usual from there. ``sample=N`` (for a remote
        object, where every header would cost a block read) uses the index only when its
        entries run back to back over the whole stream and ``N`` headers spread over it check
        out (else nothing is adopted), and does not save it as the file's index; every
        record's data CRC is still checked when it is read (see :mod:`codec.text_index`)."""
        import numpy as np

        from .text_index import checked_prefix, parse_text_index, sampled_ok

        self._check_open()
        if isinstance(source, bytes):
            data, name = source, self.path + " (text index)"
        else:
            with open(source, "rb") as fh:
                data, name = fh.read(), os.fspath(source)
        offsets, sizes = parse_text_index(data, name)
        if sample is None:
            need = self._need if self.remote else None  # a memory map has every byte
            n = checked_prefix(self._buf, self.size, need, offsets, sizes)
        else:
            n = (
                len(offsets)
                if sampled_ok(self._buf, self.size, self._need, offsets, sizes, sample)
                else 0
            )
        if not n:
            return 0
        with self._lock:
            self._offsets = array("Q", offsets[:n].astype(np.uint64).tobytes())
            self._lengths = array("Q", (sizes[:n] - OVERHEAD).astype(np.uint64).tobytes())
            self._problems = list(self.stream_problems)
            self._next = int(offsets[n - 1] + sizes[n - 1])
            self._done = self._next >= self.size
            if self._done and sample is None:
                self._save_index_cache()
        return n

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


def first_recovered(
    offsets: Sequence[int], problems: Sequence[Problem], size: int, done: bool = True
) -> int | None:
    """The number of the first record reached by resynchronising after one of ``problems``
    (see :attr:`TFRecordFile.recovered_from`), given the record ``offsets`` indexed so far."""
    resumes = [
        p.end
        for p in problems
        if p.offset is not None and p.end is not None and p.offset < p.end < size
    ]
    if not resumes:
        return None
    i = bisect.bisect_left(offsets, min(resumes))
    return i if i < len(offsets) or not done else None


def data_crc_problem(path: str, i: int, offset: int, length: int) -> Problem:
    """The problem of record ``i`` (header at ``offset``) whose data CRC fails."""
    return Problem(
        DATA_CRC,
        offset,
        offset,
        f"corrupted record {i}: the data CRC does not match its"
        f" {length} payload bytes (payload at byte {offset + HEADER_SIZE})",
        path,
    )


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
        from concurrent.futures import ThreadPoolExecutor

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
