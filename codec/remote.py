"""Remote objects as byte sources: blocks fetched with parallel ranged requests, read ahead,
and kept in an on-disk block cache, so the one reader (:mod:`codec.reader`) pages, scans and
verifies an ``s3://`` / ``gs://`` / ``https://`` object as it does a local file.

The block cache is a sparse file per object version under ``<cache>/remote/`` (only fetched
blocks take disk space) and a map of which blocks are there; the reader's buffer is a read-only
memory map of that file, and :meth:`RemoteSource.need` fetches the blocks of a range before any
byte of it is looked at. Entries are keyed by URL (as shown), size and the object's version
(ETag / generation), so a new version never meets an old version's bytes; every ranged read is
pinned to the version seen at open (HTTP and S3: ``If-Match``; Google Cloud Storage: the
generation; elsewhere the version is asked again after each read), so a read never returns
bytes of a newer one — the object changing raises :class:`~codec.errors.ObjectChangedError`
instead. The cache stays under a size cap (``TFRECORD_BROWSER_REMOTE_CACHE_CAP``, default
4 GiB): least recently used objects go first, then the least recently used blocks of the one
being read.

Transient faults (dropped connections, timeouts, 5xx, throttling) are retried with backoff and
then reported as one :class:`~codec.errors.RemoteError` naming the URL and the bytes.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import mmap
import os
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import crc32c as _crc32c

from .byte_source import ByteSource, drop_pages
from .errors import ObjectChangedError, RemoteError
from .locations import (
    RemoteStat,
    changed_error,
    describe,
    filesystem,
    protocol,
    remote_errors,
    remote_stat,
    shown,
    version_of,
)
from .locks import LOCKING, share, unless_open, unused
from .settings import CACHE_FILE_MODE, block_size, remote_cache_cap

__all__ = [
    "NoRangesError",
    "RemoteObject",
    "RemoteSource",
    "object_reader",
    "read_range",
    "remote_usage",
]

FETCHERS = 8  # parallel ranged requests per object
READ_AHEAD = 8  # blocks fetched ahead of a sequential reader, at most
FIRST_AHEAD = 1  # ... at first, doubled as reading goes on: the first page or a jump does
# not share the link with megabytes nobody asked for yet
TRIES = 6  # 0.25 + 0.5 + 1 + 2 + 4 s of backoff: throttling gets time to pass
BACKOFF = 0.25  # seconds before the second try; doubled after each


# --------------------------------------------------------------------------------------------
# One object, read by ranges


# How a ranged read is pinned to the version seen at open, by protocol: an http(s) read sends
# If-Match; s3fs sends the ETag its file opened with as IfMatch (a 412 when it moved); a GCS
# read asks for the generation (404 once that generation is gone). Any other file system
# (Azure, ...) reads the newest bytes: there the version is asked again after every read.
_IF_MATCH = ("http", "https", "s3", "s3a")
_GENERATION = ("gs", "gcs")
# gcsfs sends a read's generation from this release on; older ones drop it without a word.
_GCSFS_PINS_FROM = (2026, 7)


def _gcsfs_pins() -> bool:
    try:
        import gcsfs

        release = tuple(int(x) for x in str(gcsfs.__version__).split(".")[:2])
    except (ImportError, ValueError):
        return False
    return release >= _GCSFS_PINS_FROM


class RemoteObject:
    """A remote object pinned to one version: ranged reads with retries.

    ``stat`` is the size and version seen at open. Reads run on any thread; each thread keeps
    its own open handle (fsspec file objects are not shared across threads)."""

    def __init__(self, url: str, *, anon: bool = False, stat: RemoteStat | None = None) -> None:
        self.url = url
        self.shown = shown(url)
        self.anon = anon
        self.fs, self.path = filesystem(url, anon=anon)
        self.stat = stat if stat is not None else remote_stat(url, anon=anon)
        self.size = self.stat.size
        self.version = self.stat.version
        proto = protocol(url) or ""
        # A generation is a number; a GCS object listed without one, or a gcsfs that drops
        # it, is asked for its version after each read instead.
        self._generation = proto in _GENERATION and self.version.isdigit() and _gcsfs_pins()
        self._check_after = bool(self.version) and not (proto in _IF_MATCH or self._generation)
        self._local = threading.local()
        self.requests = 0
        self.bytes_read = 0
        self._count = threading.Lock()

    def _handle(self) -> Any:
        f = getattr(self._local, "f", None)
        if f is not None:
            return f
        kwargs: dict[str, Any] = {"cache_type": "none", "block_size": 1 << 20}
        if protocol(self.url) in ("http", "https") and self.version:
            kwargs["headers"] = {"If-Match": self.version}
            # Every read is pinned by If-Match, so the size seen at open is enough: without
            # it each thread's first read would wait for a HEAD request of its own.
            kwargs["size"] = self.size
        f = self.fs.open(self.path, "rb", **kwargs)
        details = getattr(f, "details", None) or {}
        now = version_of(details) if isinstance(details, dict) else ""
        if self.version and now and now != self.version:
            with contextlib.suppress(Exception):
                f.close()
            raise ObjectChangedError(self.shown, "its version is no longer the one opened")
        size = details.get("size") if isinstance(details, dict) else None
        if size is not None and int(size) != self.size:
            with contextlib.suppress(Exception):
                f.close()
            raise ObjectChangedError(
                self.shown, f"it was {self.size:,} bytes and is now {int(size):,}"
            )
        self._local.f = f
        return f

    def _drop_handle(self) -> None:
        f = getattr(self._local, "f", None)
        self._local.f = None
        if f is not None:
            with contextlib.suppress(Exception):
                f.close()

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of the object, exactly; transient faults are retried with
        backoff, then raised as :class:`RemoteError`. The object changing raises
        :class:`ObjectChangedError` at once."""
        end = min(end, self.size)
        if end <= start:
            return b""
        delay = BACKOFF
        last: BaseException | None = None
        for attempt in range(TRIES):
            try:
                data = self._read(start, end)
                if len(data) != end - start:
                    raise RemoteError(
                        f"{self.shown}: the server sent {len(data):,} of the {end - start:,}"
                        f" bytes asked for at byte {start:,}"
                    )
                with self._count:
                    self.requests += 1
                    self.bytes_read += len(data)
                return bytes(data)
            except ObjectChangedError:
                self._drop_handle()
                raise
            except (FileNotFoundError, PermissionError) as exc:
                self._drop_handle()
                if self._generation and isinstance(exc, FileNotFoundError) and self._replaced():
                    raise ObjectChangedError(self.shown) from None
                with remote_errors(self.url):
                    raise exc
            except Exception as exc:
                self._drop_handle()
                if changed_error(exc):
                    raise ObjectChangedError(self.shown) from None
                if _no_ranges(exc):
                    raise NoRangesError(self.shown) from None
                last = exc
                if attempt + 1 < TRIES:
                    time.sleep(delay)
                    delay *= 2
        assert last is not None
        raise RemoteError(
            f"{self.shown}: reading bytes {start:,}–{end:,} failed {TRIES} times"
            f" ({describe(last, self.url)}); check the connection and try again"
        ) from None

    def _read(self, start: int, end: int) -> bytes:
        if self._generation:  # the generation seen at open, or a 404
            return bytes(self.fs.cat_file(self.path, start=start, end=end, generation=self.version))
        f = self._handle()
        f.seek(start)
        data = f.read(end - start)
        if self._check_after and self._replaced():
            raise ObjectChangedError(self.shown)
        return data

    def stream(self) -> Any:
        """A file object reading the object from its start, for a server that answers no
        ranged request (it is read once, forward); pinned to the version opened where the
        server says one."""
        kwargs: dict[str, Any] = {"block_size": 0}
        if protocol(self.url) in ("http", "https") and self.version:
            kwargs["headers"] = {"If-Match": self.version}
        with remote_errors(self.url, "reading"):
            return self.fs.open(self.path, "rb", **kwargs)

    def _replaced(self) -> bool:
        """Whether the server now has another version (or size) of the object; ``False`` when
        it has none at all (a missing object is said as missing)."""
        try:
            now = remote_stat(self.url, anon=self.anon, fresh=True)
        except FileNotFoundError:
            return False
        return now.moved_from(self.size, self.version)

    def close(self) -> None:
        self._drop_handle()


# --------------------------------------------------------------------------------------------
# The block cache on disk


class NoRangesError(RemoteError):
    """The server answers no ranged request (Python's ``http.server``, say): the object can
    only be read from its start."""

    def __init__(self, url: str) -> None:
        super().__init__(f"{url}: the server does not answer ranged requests")


def _no_ranges(exc: BaseException) -> bool:
    """Whether ``exc`` is fsspec's word that an HTTP server ignored a ``Range`` header."""
    return isinstance(exc, ValueError) and "support range requests" in str(exc)


def _cache_key(url: str, stat: RemoteStat, block: int) -> str:
    # v2: blocks carry their CRC32C in the map (an older cache's map is not trusted)
    ident = f"v2\0{shown(url)}\0{stat.size}\0{stat.version}\0{block}"
    return hashlib.sha256(ident.encode("utf-8", "surrogateescape")).hexdigest()[:32]


_FALLOC_PUNCH: Any = None


def _punch(fd: int, offset: int, length: int) -> bool:
    """Free the disk blocks of ``[offset, offset+length)`` of a file (a hole reads as
    zeros); whether it could."""
    global _FALLOC_PUNCH
    if _FALLOC_PUNCH is None:
        try:
            import ctypes
            import ctypes.util

            libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            fn = libc.fallocate
            fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
            fn.restype = ctypes.c_int
            _FALLOC_PUNCH = fn
        except (OSError, AttributeError):
            _FALLOC_PUNCH = False
    if not _FALLOC_PUNCH:
        return False
    # FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE
    return bool(_FALLOC_PUNCH(fd, 0x01 | 0x02, offset, length) == 0)


def remote_usage(cache_dir: Path) -> tuple[int, int]:
    """``(bytes on disk, objects)`` of the remote block cache."""
    total = n = 0
    with contextlib.suppress(OSError), os.scandir(cache_dir / "remote") as it:
        for e in it:
            if e.name.endswith(".blocks"):
                with contextlib.suppress(OSError):
                    total += e.stat().st_blocks * 512
                    n += 1
    return total, n


def _evict_objects(folder: Path, keep: Path, over: int) -> int:
    """Remove whole cached objects, least recently used first, never ``keep`` nor one open
    elsewhere, until ``over`` bytes are freed; the bytes freed."""
    entries = []
    with contextlib.suppress(OSError), os.scandir(folder) as it:
        for e in it:
            if e.name.endswith(".blocks") and e.path != str(keep):
                with contextlib.suppress(OSError):
                    st = e.stat()
                    entries.append((st.st_atime, e.path, st.st_blocks * 512))
    freed = 0
    for _, path, size in sorted(entries):
        if freed >= over:
            break
        p = Path(path)

        def remove(p: Path = p) -> None:
            p.unlink()
            p.with_suffix(".map").unlink(missing_ok=True)

        if unless_open(p, remove):
            freed += size
    return freed


class _Blocks:
    """One object version's blocks on disk: a sparse data file of the object's size, memory
    mapped read-only, and a map with an entry per block: whether it is there, and the
    CRC32C of its bytes.

    A block is there only once its bytes are written whole and synced, and it is trusted
    in a process only once its bytes match the CRC noted with it (checked on first use): a
    block cut short by a full disk, or damaged since, is fetched again, never read as the
    object's. The map is read into memory and written with ``pwrite``, never through a
    memory map: a write that finds the disk full is an error to handle, not a SIGBUS."""

    ENTRY = 5  # bytes of a map entry: 1 (there) and the CRC32C, little-endian

    def __init__(self, folder: Path | None, key: str, size: int, block: int) -> None:
        self.size = size
        self.block = block
        self.count = (size + block - 1) // block
        self.path: Path | None = None
        self.map_fd = -1
        if folder is not None:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                self.path = folder / f"{key}.blocks"
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, CACHE_FILE_MODE)
                self.map_fd = os.open(
                    self.path.with_suffix(".map"), os.O_RDWR | os.O_CREAT, CACHE_FILE_MODE
                )
            except OSError:
                self.path = None
        if self.path is None:  # no cache folder: a private file, gone once closed
            import tempfile

            fd, name = tempfile.mkstemp(prefix="tfrecord-browser-remote-")
            os.unlink(name)
        self.fd = fd
        share(fd)  # in use: never removed by another process's eviction
        if os.fstat(fd).st_size != size:
            os.ftruncate(fd, size)  # sparse: nothing is allocated until a block is written
        self.present = bytearray(self.count)
        self.crcs = [0] * self.count
        self.trusted = bytearray(self.count)  # checked against its CRC in this process
        if self.map_fd >= 0:
            self._load_map()
        self.data: Any = mmap.mmap(fd, size, access=mmap.ACCESS_READ) if size else b""
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.utime(self.path)
        self.lru: OrderedDict[int, None] = OrderedDict()

    def _load_map(self) -> None:
        try:
            raw = os.pread(self.map_fd, self.count * self.ENTRY, 0)
        except OSError:
            raw = b""
        for k in range(len(raw) // self.ENTRY):
            there, crc = struct.unpack_from("<BI", raw, k * self.ENTRY)
            if there == 1:
                self.present[k], self.crcs[k] = 1, crc

    def _note(self, k: int, there: bool, crc: int = 0) -> None:
        """Write block ``k``'s map entry (kept in memory only when the map cannot be
        written: the block is then fetched again by another process)."""
        self.present[k] = 1 if there else 0
        self.crcs[k] = crc
        if self.map_fd >= 0:
            with contextlib.suppress(OSError):
                os.pwrite(self.map_fd, struct.pack("<BI", 1 if there else 0, crc), k * self.ENTRY)

    def has(self, k: int) -> bool:
        """Whether block ``k`` is there, its bytes checked against its CRC once in this
        process (a block that fails the check is dropped: it is fetched again)."""
        if not self.present[k]:
            return False
        if self.trusted[k]:
            return True
        start = k * self.block
        got = _crc32c.crc32c(self.data[start : min(self.size, start + self.block)])
        if got != self.crcs[k]:
            self.drop(k)
            return False
        self.trusted[k] = 1
        return True

    def write(self, k: int, data: bytes) -> int:
        """Write block ``k``'s bytes whole and sync them (any thread, no lock needed: a block
        being fetched is neither read nor evicted), and return their CRC32C; :meth:`put`
        then marks the block there. A write cut short (a full disk) frees what it wrote and
        raises ``OSError``."""
        start = k * self.block
        done = 0
        try:
            while done < len(data):
                n = os.pwrite(self.fd, data[done:], start + done)
                if n <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                done += n
            os.fdatasync(self.fd)
        except OSError:
            _punch(self.fd, start, len(data))
            raise
        return int(_crc32c.crc32c(data))

    def put(self, k: int, crc: int) -> None:
        self._note(k, True, crc)
        self.trusted[k] = 1
        self.touch(k)

    def drop(self, k: int) -> None:
        """Forget block ``k`` and free its disk blocks."""
        self._note(k, False)
        self.trusted[k] = 0
        self.lru.pop(k, None)
        start = k * self.block
        _punch(self.fd, start, min(self.block, self.size - start))

    def touch(self, k: int) -> None:
        self.lru[k] = None
        self.lru.move_to_end(k)

    def on_disk(self) -> int:
        try:
            return os.fstat(self.fd).st_blocks * 512
        except OSError:
            return 0

    def alone(self) -> bool:
        """Whether no other process has this object's blocks open."""
        if not LOCKING or self.path is None:
            return self.path is None
        if not unused(self.fd):
            return False
        share(self.fd)  # back to in use, as any open object is
        return True

    def drop_oldest(self, over: int, keep: set[int]) -> int:
        """Punch out the least recently used blocks (never those in ``keep``) until ``over``
        bytes are freed; the bytes freed."""
        freed = 0
        earlier = [k for k in range(self.count) if self.present[k] and k not in self.lru]
        for k in [*earlier, *self.lru]:  # kept by an earlier process first: not used here
            if freed >= over:
                break
            if k in keep or not self.present[k]:
                continue
            self.drop(k)
            freed += min(self.block, self.size - k * self.block)
        return freed

    def close(self) -> None:
        with contextlib.suppress(BufferError, AttributeError):
            if not isinstance(self.data, bytes):
                self.data.close()
        for fd in (self.fd, self.map_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)


# --------------------------------------------------------------------------------------------
# The byte source


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The threads that fetch blocks, shared by every remote source of the process."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(FETCHERS, thread_name_prefix="tfrecord-remote")
        return _POOL


class RemoteSource(ByteSource):
    """A remote object as a :class:`~codec.byte_source.ByteSource`.

    ``buffer`` is the memory map of the object's block file; a range must be asked for with
    :meth:`need` before its bytes are looked at (the reader and the framing code do).
    Sequential reads are followed by read-ahead of :data:`READ_AHEAD` blocks."""

    remote = True

    def __init__(
        self,
        url: str,
        cache_dir: Path | None,
        *,
        anon: bool = False,
        use_cache: bool = True,
        block: int | None = None,
        cap: int | None = None,
        stat: RemoteStat | None = None,
    ) -> None:
        self.object = RemoteObject(url, anon=anon, stat=stat)
        self.url = url
        self.shown = self.object.shown
        self._size = self.object.size
        self.stat = self.object.stat
        self.block = block or block_size()
        self.cap = cap if cap is not None else remote_cache_cap()
        self._key = _cache_key(url, self.stat, self.block)
        self._folder = cache_dir / "remote" if (cache_dir is not None and use_cache) else None
        self._blocks_: _Blocks | None = None  # opened on first use: a dataset of many
        self._lock = threading.RLock()  # shards opens only the ones it reads
        self._stream: Any = None  # the object read forward, from a server without ranges
        self._stream_at = 0  # where that stream is
        self._stream_lock = threading.Lock()
        self.streaming = False
        self._inflight: dict[int, Future[None]] = {}
        self._ahead = 0  # blocks read ahead of a sequential reader, now
        self._front = -1  # the furthest block it has reached
        self._since_check = 0
        self._closed = False
        self.failed: BaseException | None = None  # the last read-ahead failure, if any

    @property
    def _blocks(self) -> _Blocks:
        if self._blocks_ is None:
            with self._lock:
                if self._blocks_ is None:
                    self._blocks_ = _Blocks(self._folder, self._key, self.size, self.block)
        return self._blocks_

    # -- the ByteSource interface ----------------------------------------------------------

    @property
    def size(self) -> int:
        return self._size

    @property
    def buffer(self) -> Any:
        return self._blocks.data

    def read(self, start: int, end: int) -> bytes:
        self.need(start, end)
        return bytes(self._blocks.data[start:end])

    def release(self, start: int, end: int) -> None:
        data = self._blocks.data
        if not isinstance(data, bytes):
            drop_pages(data, start, end, self.size)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._lock:
            pending = list(self._inflight.values())
        for fut in pending:
            fut.cancel()
        for fut in pending:
            with contextlib.suppress(BaseException):
                fut.result()
        if self._stream is not None:
            with contextlib.suppress(Exception):
                self._stream.close()
        self.object.close()
        if self._blocks_ is not None:
            self._blocks_.close()

    # -- fetching --------------------------------------------------------------------------

    @property
    def requests(self) -> int:
        return self.object.requests

    @property
    def bytes_read(self) -> int:
        return self.object.bytes_read

    def cached(self, start: int, end: int) -> bool:
        """Whether every block of ``[start, end)`` is on disk already."""
        b = self.block
        last = (max(end, start + 1) - 1) // b
        return all(self._blocks.has(k) for k in range(start // b, last + 1))

    def need(self, start: int, end: int) -> None:
        """Make sure bytes ``[start, end)`` (clipped to the object) are in the block file:
        fetch the missing blocks in parallel, and read ahead when reading runs forward.

        Read-ahead starts small (:data:`FIRST_AHEAD` blocks) and doubles each time the
        reader reaches a block further on, up to :data:`READ_AHEAD`; a read that lands away
        from everything read so far (a jump) starts it over."""
        start = max(0, start)
        end = min(end, self.size)
        if end <= start:
            return
        b = self.block
        first, last = start // b, (end - 1) // b
        waits: list[tuple[int, Future[None], bool]] = []
        with self._lock:
            blocks = self._blocks
            missed = False
            for k in range(first, last + 1):
                if blocks.has(k):
                    blocks.touch(k)
                    continue
                missed = True
                fut = self._inflight.get(k)
                earlier = fut is not None
                if fut is None:
                    fut = self._fetch_async(k)
                waits.append((k, fut, earlier))
            follows = first == 0 or blocks.has(first - 1) or (first - 1) in self._inflight
            if missed and not follows:  # a jump: nothing read ahead until reading goes on
                self._ahead, self._front = 0, last
            elif follows:
                if last > self._front or missed:  # reading goes on (here or elsewhere)
                    self._front = last
                    self._ahead = min(READ_AHEAD, max(FIRST_AHEAD, 2 * self._ahead))
                for k in range(last + 1, min(blocks.count, last + 1 + self._ahead)):
                    if not blocks.has(k) and k not in self._inflight:
                        self._fetch_async(k)
        for k, fut, earlier in waits:
            try:
                fut.result()  # raises the fetch's error (after its retries)
            except ObjectChangedError:
                raise
            except Exception:
                if not earlier:
                    raise
                # A fetch started before this call (read ahead, perhaps while the network was
                # down) failed: this call is a new attempt, so it fetches the block again.
                with self._lock:
                    again = self._inflight.get(k) or self._fetch_async(k)
                again.result()

    def _fetch_async(self, k: int) -> Future[None]:
        fut = _pool().submit(self._fetch, k)
        self._inflight[k] = fut
        return fut

    def _fetch(self, k: int) -> None:
        try:
            if self._closed:
                return
            start = k * self.block
            if self.streaming:
                self._fetch_forward(k)
                return
            try:
                data = self.object.read(start, min(self.size, start + self.block))
            except NoRangesError:
                self.streaming = True  # read it once, forward, from now on
                self._fetch_forward(k)
                return
            # Kept even when the source closed meanwhile (close waits for this fetch before
            # it closes the block file): bytes fetched are bytes a later reader need not.
            crc = self._write(k, data)  # outside the lock: a slow disk stalls no other block
            with self._lock:
                self._blocks.put(k, crc)
                self._since_check += len(data)
                if self._since_check >= 16 * self.block:
                    self._since_check = 0
                    self._keep_under_cap(k)
        except BaseException as exc:
            self.failed = exc
            raise
        finally:
            with self._lock:
                self._inflight.pop(k, None)

    def _fetch_forward(self, k: int) -> None:
        """Block ``k`` from a server that answers no ranged request: the object is read
        forward, once, and every block passed on the way is kept (a later block asked for
        costs the bytes before it once, not on every request). A block behind the stream
        that is no longer kept starts it again from the object's start."""
        with self._stream_lock:
            if self._blocks.has(k):
                return
            start = k * self.block
            if self._stream is None or self._stream_at > start:
                if self._stream is not None:
                    with contextlib.suppress(Exception):
                        self._stream.close()
                self._stream, self._stream_at = self.object.stream(), 0
            while self._stream_at <= start and self._stream_at < self.size:
                j = self._stream_at // self.block
                want = min(self.block, self.size - self._stream_at)
                with remote_errors(self.url, "reading"):
                    data = _read_exactly(self._stream, want)
                if len(data) != want:
                    raise RemoteError(
                        f"{self.shown}: the server ended the object at byte"
                        f" {self._stream_at + len(data):,} of {self.size:,}"
                    )
                with self.object._count:
                    self.object.requests += 0 if self._stream_at else 1
                    self.object.bytes_read += len(data)
                if not self._blocks.has(j):
                    crc = self._write(j, data)
                    with self._lock:
                        self._blocks.put(j, crc)
                self._stream_at += want

    def _write(self, k: int, data: bytes) -> int:
        """Write block ``k`` into the block file; when the disk is full, make room by
        removing whole objects no process has open, and try once more; then a
        :class:`RemoteError` saying the cache folder is full. (This object's own blocks are
        not punched out here: a reader may be reading one through the memory map.)"""
        try:
            return self._blocks.write(k, data)
        except OSError as exc:
            first = exc
        with self._lock:
            if self._folder is not None and self._blocks.path is not None:
                _evict_objects(self._folder, self._blocks.path, 4 * len(data))
        try:
            return self._blocks.write(k, data)
        except OSError:
            where = self._folder if self._folder is not None else "the temporary folder"
            raise RemoteError(
                f"{self.shown}: cannot keep what was read: the cache folder {where} has no"
                f" room ({first.strerror or first}); free space there, or set"
                " TFRECORD_BROWSER_CACHE to a folder with room"
            ) from None

    def _keep_under_cap(self, current: int) -> None:
        """Keep the block cache under its cap: whole objects not in use first (least
        recently used), then this object's least recently used blocks."""
        if self._folder is None:
            return
        used, _ = remote_usage(self._folder.parent)
        over = used - self.cap
        if over <= 0:
            return
        assert self._blocks.path is not None
        over -= _evict_objects(self._folder, self._blocks.path, over)
        if over > 0 and self._blocks.alone():
            recent = set(range(current - 2 * READ_AHEAD, current + 2 * READ_AHEAD))
            self._blocks.drop_oldest(over, recent | set(self._inflight))

    def check_version(self) -> None:
        """Ask the server whether the object is still the version opened; raise
        :class:`ObjectChangedError` when it is not (size or version moved)."""
        if remote_stat(self.url, anon=self.object.anon, fresh=True).moved_from(
            self.size, self.stat.version
        ):
            raise ObjectChangedError(self.shown)


def _read_exactly(f: Any, n: int) -> bytes:
    """``n`` bytes from the stream ``f`` (fewer at its end)."""
    parts = []
    while n > 0:
        got = f.read(n)
        if not got:
            break
        parts.append(got)
        n -= len(got)
    return b"".join(parts)


def read_range(url: str, start: int, end: int, *, anon: bool = False) -> bytes:
    """Bytes ``[start, end)`` of a remote object (a small read: a header, a text index)."""
    with remote_errors(url, "reading"):
        return RemoteObject(url, anon=anon).read(start, end)


def object_reader(url: str, *, anon: bool = False) -> Callable[[int, int], bytes]:
    """``read(offset, n)`` over a remote object, for streaming work such as inflating."""
    obj = RemoteObject(url, anon=anon)
    return lambda offset, n: obj.read(offset, offset + n)
