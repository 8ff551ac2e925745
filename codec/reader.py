"""TFRecordFile: a memory-mapped, random-access TFRecord reader that trusts nothing.

Opening is instant whatever the size: the index of record offsets grows by header-only scans
as records are asked for, and is saved to a cache so the next open of an unchanged file does not
scan at all. GZIP and ZLIB files are inflated once into a cache file that is then memory-mapped.
Every record read checks its data CRC; damage becomes :class:`~codec.framing.Problem` values
and the reader keeps going past it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import mmap
import os
import struct
import tempfile
import threading
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import crc32c as _crc32c

from .errors import CorruptRecordError, ReaderClosedError
from .framing import (
    DATA_CRC,
    FOOTER_SIZE,
    HEADER_SIZE,
    OVERHEAD,
    Problem,
    header_ok,
    mask_crc,
    scan,
)

COMPRESSIONS = ("none", "gzip", "zlib")
_ZLIB_HEADERS = {b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda"}
_INDEX_MAGIC = b"TFBIDX01"
_INDEX_HEAD = struct.Struct("<8sQQQQQ")  # magic, size, mtime_ns, ino, count, problems-json length
_U32 = struct.Struct("<I")
_SCAN_STEP = 1 << 18  # records per incremental scan step
_FIRST_STEP = 1 << 10  # the first step is small, so the first page shows at once
_SCAN_BYTES = 128 << 20  # and no step maps more than this much of the file
_RELEASE_EVERY = 64 << 20  # drop verified pages from RSS after this many bytes
_VERIFY_BLOCK = 8 << 20  # verify in blocks this size; measured best for 4 MiB records on 2 cores
_THREADED_RECORD_SIZE = 64 << 10  # verify on two threads when records average this or more


def sniff_compression(head: bytes) -> str:
    """``gzip``, ``zlib`` or ``none`` from the first bytes of a file.

    An uncompressed TFRecord starts with a little-endian length, so ``1f 8b`` (GZIP) or a valid
    zlib header (``78 01/5e/9c/da``) there would be a record of absurd size whose length CRC would
    fail anyway."""
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head[:2] in _ZLIB_HEADERS:
        return "zlib"
    return "none"


def default_cache_dir() -> Path:
    """Where indexes and inflated streams are kept: ``$TFRECORD_BROWSER_CACHE``, else the XDG
    cache directory. Never next to the source, which may be read-only."""
    env = os.environ.get("TFRECORD_BROWSER_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tfrecord-browser"


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _cache_key(path: str, st: os.stat_result, what: str) -> str:
    ident = f"{os.path.realpath(path)}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0{what}"
    return hashlib.sha256(ident.encode("utf-8", "surrogateescape")).hexdigest()[:32]


@dataclass
class VerifyReport:
    """The result of checking every CRC of one file."""

    path: str
    compression: str
    records: int  # intact records
    damaged: int  # records whose framing is intact but whose data CRC fails
    bytes: int  # size of the (decompressed) stream
    problems: list[Problem] = field(default_factory=list)

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
    ) -> None:
        self.path = os.fspath(path)
        self.check_crc = check_crc
        self._cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._use_cache = use_cache
        self._lock = threading.RLock()
        self._closed = False
        self._mm: mmap.mmap | None = None
        self._buf: Any = b""
        self._fd = -1
        fd = os.open(self.path, os.O_RDONLY)
        try:
            st = os.fstat(fd)
            head = os.pread(fd, 2, 0)
        except BaseException:
            os.close(fd)
            raise
        self.stat = st
        self.file_size = st.st_size
        if compression == "auto":
            compression = sniff_compression(head)
        if compression not in COMPRESSIONS:
            os.close(fd)
            raise ValueError(f"compression must be one of auto, {', '.join(COMPRESSIONS)}")
        self.compression = compression
        self.stream_problems: list[Problem] = []
        if compression == "none":
            self._fd = fd
        else:
            try:
                self._fd = self._inflate(fd, st, progress)
            finally:
                os.close(fd)
        self.size = os.fstat(self._fd).st_size
        if self.size:
            self._mm = mmap.mmap(self._fd, 0, access=mmap.ACCESS_READ)
            self._buf = self._mm
        self._offsets = array("Q")
        self._lengths = array("Q")
        self._problems: list[Problem] = list(self.stream_problems)
        self._next = 0
        self._done = self.size == 0
        self._damaged: dict[int, Problem] = {}
        self._read_since_release = 0
        if not self._done and use_cache:
            self._load_index_cache()

    # -- opening ---------------------------------------------------------------------------

    def _inflate(
        self, fd: int, st: os.stat_result, progress: Callable[[int, int], None] | None
    ) -> int:
        """Inflate a GZIP/ZLIB stream into a cache file (once) and return a descriptor of it.

        Memory stays bounded by the chunk size whatever the file's size. A damaged compressed
        stream keeps what inflated cleanly and is reported as a problem."""
        cache = self._cache_dir / "inflated"
        key = _cache_key(self.path, st, self.compression)
        target = cache / f"{key}.tfrecord"
        note = cache / f"{key}.problem"
        if self._use_cache and target.exists():
            if note.exists():
                self.stream_problems.append(
                    Problem("compression", None, None, note.read_text(), self.path)
                )
            return os.open(target, os.O_RDONLY)
        wbits = 16 + zlib.MAX_WBITS if self.compression == "gzip" else zlib.MAX_WBITS
        try:
            cache.mkdir(parents=True, exist_ok=True)
            tmp_fd, tmp_name = tempfile.mkstemp(dir=cache, prefix=".inflate-")
        except OSError:
            tmp_fd, tmp_name = tempfile.mkstemp(prefix="tfrecord-browser-inflate-")
            target = Path(tmp_name + ".tfrecord")
        problem: str | None = None
        try:
            with os.fdopen(tmp_fd, "wb") as out:
                d = zlib.decompressobj(wbits)
                pos = 0
                while True:
                    chunk = os.pread(fd, 1 << 20, pos)
                    if not chunk:
                        break
                    pos += len(chunk)
                    try:
                        out.write(d.decompress(chunk))
                        # A GZIP file may hold several members back to back.
                        while d.eof and d.unused_data and self.compression == "gzip":
                            rest = d.unused_data
                            d = zlib.decompressobj(wbits)
                            out.write(d.decompress(rest))
                    except zlib.error as exc:
                        problem = (
                            f"{self.compression} stream is damaged near compressed byte {pos}:"
                            f" {exc}; records after that point are lost"
                        )
                        break
                    if progress:
                        progress(pos, st.st_size)
                if problem is None:
                    try:
                        out.write(d.flush())
                    except zlib.error as exc:  # pragma: no cover - flush rarely fails
                        problem = f"{self.compression} stream is damaged: {exc}"
                    if problem is None and not d.eof:
                        problem = (
                            f"{self.compression} stream ends early (at compressed byte {pos}):"
                            " the file is truncated"
                        )
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp_name, target)
        except BaseException:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
            raise
        if problem:
            self.stream_problems.append(Problem("compression", None, None, problem, self.path))
            try:
                note.write_text(problem)
            except OSError:
                pass
        return os.open(target, os.O_RDONLY)

    # -- index -----------------------------------------------------------------------------

    def _index_cache_path(self) -> Path:
        return self._cache_dir / "index" / f"{_cache_key(self.path, self.stat, 'index')}.idx"

    def _load_index_cache(self) -> None:
        try:
            blob = self._index_cache_path().read_bytes()
        except OSError:
            return
        try:
            magic, size, mtime, ino, count, plen = _INDEX_HEAD.unpack_from(blob, 0)
            if magic != _INDEX_MAGIC or (size, mtime, ino) != _identity(self.stat):
                return
            pos = _INDEX_HEAD.size
            probs = json.loads(blob[pos : pos + plen])
            pos += plen
            if len(blob) != pos + 16 * count:
                return
            offsets = array("Q", blob[pos : pos + 8 * count])
            lengths = array("Q", blob[pos + 8 * count :])
        except (struct.error, ValueError):
            return
        self._offsets, self._lengths = offsets, lengths
        self._problems = list(self.stream_problems) + [
            Problem(p["kind"], p["offset"], p["end"], p["message"], self.path) for p in probs
        ]
        self._next = self.size
        self._done = True

    def _save_index_cache(self) -> None:
        if not self._use_cache:
            return
        probs = [
            {"kind": p.kind, "offset": p.offset, "end": p.end, "message": p.message}
            for p in self._problems
            if p.kind != "compression"
        ]
        pj = json.dumps(probs).encode()
        head = _INDEX_HEAD.pack(_INDEX_MAGIC, *_identity(self.stat), len(self._offsets), len(pj))
        target = self._index_cache_path()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".idx-")
            with os.fdopen(fd, "wb") as f:
                f.write(head)
                f.write(pj)
                f.write(self._offsets.tobytes())
                f.write(self._lengths.tobytes())
            os.replace(tmp, target)
        except OSError:
            pass  # a cache we cannot write only costs a rescan next time

    def index_more(self, max_records: int = _SCAN_STEP) -> bool:
        """Scan up to ``max_records`` more headers; return whether the index is complete."""
        self._check_open()
        with self._lock:
            if self._done:
                return True
            start = self._next
            chunk = scan(
                self._buf,
                start,
                self.size,
                max_records=max_records,
                max_bytes=_SCAN_BYTES,
                path=self.path,
            )
            self._offsets.extend(chunk.offsets)
            self._lengths.extend(chunk.lengths)
            self._problems.extend(chunk.problems)
            self._next = chunk.next_offset
            self._release(start, self._next)
            if chunk.done:
                self._done = True
                self._save_index_cache()
            return self._done

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
                raise IndexError(f"record index out of range ({len(self._offsets)} records)")
        else:
            self._ensure(i + 1)
            if i >= len(self._offsets):
                raise IndexError(f"record index {i} out of range ({len(self._offsets)} records)")
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
        return bytes(self._buf[start:end])

    def read(self, i: int, *, check_crc: bool | None = None) -> bytes:
        """The payload of record ``i``, its data CRC checked unless told otherwise."""
        i = self._resolve(i)
        off = self._offsets[i]
        n = self._lengths[i]
        start = off + HEADER_SIZE
        data = self._buf[start : start + n]
        self._read_since_release += n
        if self._read_since_release > _RELEASE_EVERY:
            # Paging through a file far larger than memory must not keep it all resident.
            self._read_since_release = 0
            self._release(0, self.size)
        if self.check_crc if check_crc is None else check_crc:
            (stored,) = _U32.unpack_from(self._buf, start + n)
            if mask_crc(_crc32c.crc32c(data)) != stored:
                problem = self._data_crc_problem(i)
                raise CorruptRecordError(problem.message, path=self.path, offset=off)
        return bytes(data)

    def _data_crc_problem(self, i: int) -> Problem:
        prob = self._damaged.get(i)
        if prob is None:
            off = self._offsets[i]
            prob = Problem(
                DATA_CRC,
                off,
                off,
                f"corrupted record {i}: the data CRC does not match its"
                f" {self._lengths[i]} payload bytes (payload at byte {off + HEADER_SIZE})",
                self.path,
            )
            self._damaged[i] = prob
        return prob

    def is_damaged(self, i: int) -> Problem | None:
        """The problem of record ``i`` if its data CRC is known to fail (after a read or
        :meth:`verify`), else ``None``."""
        return self._damaged.get(i)

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
        if threads > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(threads) as pool:
                for found, end in pool.map(self._verify_block, blocks):
                    bad.extend(found)
                    if progress:
                        progress(end, self.size)
        else:
            for block in blocks:
                found, end = self._verify_block(block)
                bad.extend(found)
                if progress:
                    progress(end, self.size)
        for i in bad:
            self._data_crc_problem(i)
        return VerifyReport(
            path=self.path,
            compression=self.compression,
            records=n - len(bad),
            damaged=len(bad),
            bytes=self.size,
            problems=self.problems,
        )

    def _verify_block(self, block: tuple[int, int]) -> tuple[list[int], int]:
        """Data-CRC check of records ``block[0]..block[1]``; returns the failing record numbers
        and the end of the block, after releasing its pages."""
        lo, hi = block
        buf = self._buf
        offsets, lengths = self._offsets, self._lengths
        crc = _crc32c.crc32c
        unpack = _U32.unpack_from
        bad: list[int] = []
        end = offsets[lo]
        with memoryview(buf) as mv:
            for i in range(lo, hi):
                start = offsets[i] + HEADER_SIZE
                end = start + lengths[i]
                if mask_crc(crc(mv[start:end])) != unpack(buf, end)[0]:
                    bad.append(i)
        end += FOOTER_SIZE
        self._release(offsets[lo], end)
        return bad, end

    def _release(self, start: int, end: int) -> None:
        """Let the kernel drop pages we are done with, so scanning or verifying a file far
        larger than memory keeps the resident set small. Clean file pages: nothing is lost."""
        if self._mm is None or end <= start:
            return
        page = mmap.PAGESIZE
        start -= start % page
        end = min(end - end % page, self.size - self.size % page)
        if end > start and hasattr(mmap, "MADV_DONTNEED"):
            try:
                self._mm.madvise(mmap.MADV_DONTNEED, start, end - start)
            except (OSError, ValueError):
                pass

    # -- interop: the text index of NVIDIA DALI and the `tfrecord` package -----------------

    def write_text_index(self, target: str | os.PathLike[str]) -> None:
        """Write ``"<offset> <total size>"`` per record (total = payload + 16), atomically."""
        self.build_index()
        from .writer import atomic_output

        with atomic_output(target, "w") as f:
            for off, n in zip(self._offsets, self._lengths):
                f.write(f"{off} {n + OVERHEAD}\n")

    def load_text_index(self, source: str | os.PathLike[str]) -> None:
        """Adopt an index in the DALI / ``tfrecord`` text format instead of scanning. Each
        entry is checked against its header's length CRC, and the file is scanned as usual
        where the text index disagrees with it."""
        self._check_open()
        offsets = array("Q")
        lengths = array("Q")
        with open(source, encoding="ascii") as f:
            for line in f:
                parts = line.split()
                if not parts:
                    continue
                if len(parts) != 2:
                    raise ValueError(f"{source}: bad index line {line!r}")
                off, total = int(parts[0]), int(parts[1])
                if total < OVERHEAD or off + total > self.size:
                    break
                (length,) = struct.unpack_from("<Q", self._buf, off)
                if length != total - OVERHEAD or not header_ok(self._buf, off):
                    break
                offsets.append(off)
                lengths.append(length)
        with self._lock:
            self._offsets, self._lengths = offsets, lengths
            self._problems = list(self.stream_problems)
            self._next = offsets[-1] + lengths[-1] + OVERHEAD if offsets else 0
            self._done = self._next >= self.size
            if self._done:
                self._save_index_cache()

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
        self._buf = b""
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:
                pass  # a view is still alive; the map goes when it does
            self._mm = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

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
        state = "closed" if self._closed else f"{self.indexed} records indexed"
        return f"<TFRecordFile {self.path!r} {self.compression} {state}>"


def read_records(path: str | os.PathLike[str], **kwargs: Any) -> Iterator[bytes]:
    """Iterate over the intact payloads of one file, closing it at the end."""
    with TFRecordFile(path, **kwargs) as f:
        yield from f


__all__ = [
    "COMPRESSIONS",
    "RecordInfo",
    "TFRecordFile",
    "VerifyReport",
    "default_cache_dir",
    "read_records",
    "sniff_compression",
]
