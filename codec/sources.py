"""Byte sources: where a reader's (decompressed) stream comes from, behind one small interface
(:class:`~codec.byte_source.ByteSource`).

The reader never touches a file itself; it asks its byte source for bytes. There are two
kinds: :class:`MmapSource`, a read-only memory map of a local file (the file itself, or the
inflated copy of a GZIP/ZLIB file in the cache), and :class:`codec.remote.RemoteSource`, a
remote object read in blocks into an on-disk block cache (a compressed one inflated in the
background by :class:`codec.inflating.InflatingSource`). :func:`open_stream` opens either
from a path or URL, and inflates a compressed one into the cache.
"""

from __future__ import annotations

import errno
import mmap
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .byte_source import ByteSource, drop_pages
from .cache import inflate_to_cache
from .errors import NotAFileError, ObjectChangedError
from .framing import HEADER_SIZE, Problem, header_ok
from .identity import FileIdentity
from .kinds import COMPRESSIONS, NO_COMPRESSION, Compression
from .locations import RemoteStat, is_url, local_path, remote_stat

__all__ = ["MmapSource", "Opened", "open_stream", "probe", "sniff_compression"]

_ZLIB_HEADERS = {b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda"}


class MmapSource(ByteSource):
    """A read-only memory map of an open file descriptor (which it then owns and closes).

    An empty file has no map (``mmap`` refuses length 0): its buffer is ``b""``."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._size = os.fstat(fd).st_size
        self._mm: mmap.mmap | None = None
        if self._size:
            self._mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)

    @property
    def size(self) -> int:
        return self._size

    @property
    def buffer(self) -> Any:
        return self._mm if self._mm is not None else b""

    def read(self, start: int, end: int) -> bytes:
        return bytes(self.buffer[start:end])

    def release(self, start: int, end: int) -> None:
        """Let the kernel drop the pages of ``[start, end)``: clean file pages, nothing is
        lost, and scanning a file far larger than memory keeps the resident set small."""
        if self._mm is not None:
            drop_pages(self._mm, start, end, self.size)

    def close(self) -> None:
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:
                pass  # a view is still alive; the map goes when it does
            self._mm = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def sniff_compression(head: bytes) -> Compression:
    """``gzip``, ``zlib`` or ``none`` from the first 12 bytes of a file.

    A stream that starts with a TFRecord header whose length CRC checks out is uncompressed,
    whatever its first two bytes: a first record of 376 bytes starts ``78 01``, a zlib header,
    and one of 35,615 bytes starts ``1f 8b``, GZIP's magic. Otherwise ``1f 8b`` is GZIP and a
    valid zlib header (``78 01/5e/9c/da``) is ZLIB."""
    if len(head) >= HEADER_SIZE and header_ok(head, 0):
        return "none"
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head[:2] in _ZLIB_HEADERS:
        return "zlib"
    return "none"


@dataclass(frozen=True)
class Opened:
    """A file or object opened for reading: its record stream (itself, or its inflated copy),
    its identity, its stat (``None`` for a remote object), compressed size, compression and
    what inflating it found."""

    source: ByteSource
    identity: FileIdentity
    stat: os.stat_result | None
    file_size: int
    compression: Compression
    problems: list[Problem]


def _check_compression(compression: str, head: Callable[[], bytes]) -> Compression:
    if compression == "auto":
        compression = sniff_compression(head())
    if compression not in COMPRESSIONS:
        raise ValueError(f"compression must be one of auto, {', '.join(COMPRESSIONS)}")
    return compression  # type: ignore[return-value]


def open_stream(
    path: str,
    compression: str,
    cache: Path,
    use_cache: bool,
    *,
    progress: Callable[[int, int], None] | None,
    max_inflate: int | None,
    anon: bool = False,
    expect: FileIdentity | None = None,
) -> Opened:
    """Open ``path`` (a local path or a URL) and its record stream. GZIP and ZLIB are
    recognised from the first bytes and inflated into the cache
    (:func:`~codec.cache.inflate_to_cache`). With ``expect`` (the file as another process
    opened it: a job's worker), what is read is that file or nothing: a local file that is
    no longer it, or a remote object replaced since, raises
    :class:`~codec.errors.ObjectChangedError` (a remote one's reads are pinned to the version
    expected)."""
    if is_url(path):
        return _open_remote(
            path, compression, cache, use_cache, progress, max_inflate, anon, expect
        )
    path = local_path(path)
    # Only a regular file is read (opened without blocking, so a pipe does not wait for a
    # writer, then refused: a pipe or a device could make every later read wait forever).
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", path)
        if not stat.S_ISREG(st.st_mode):
            raise NotAFileError(path)
        ident = FileIdentity.from_stat(path, st)
        if expect is not None and ident.moved_from(expect):
            raise ObjectChangedError(path, "it is not the file the job was planned on", what="file")
        kind = _check_compression(compression, lambda: os.pread(fd, HEADER_SIZE, 0))
        if kind == NO_COMPRESSION:
            return Opened(MmapSource(fd), ident, st, st.st_size, kind, [])
        stream_fd, problems = inflate_to_cache(
            lambda offset, n: os.pread(fd, n, offset),
            ident,
            kind,
            cache,
            use_cache=use_cache,
            progress=progress,
            shown=path,
            max_inflate=max_inflate,
        )
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return Opened(MmapSource(stream_fd), ident, st, st.st_size, kind, problems)


def _open_remote(
    url: str,
    compression: str,
    cache: Path,
    use_cache: bool,
    progress: Callable[[int, int], None] | None,
    max_inflate: int | None,
    anon: bool,
    expect: FileIdentity | None = None,
) -> Opened:
    # Imported here: reading local files (a verify on a worker, say) loads no remote code.
    from .inflating import InflatingSource
    from .remote import RemoteSource

    pinned = None
    if expect is not None:
        pinned = RemoteStat(expect.size, expect.version, expect.mtime_ns)
    source = RemoteSource(url, cache, anon=anon, use_cache=use_cache, stat=pinned)
    try:
        ident = FileIdentity.from_remote(url, source.stat)
        kind = _check_compression(compression, lambda: source.read(0, HEADER_SIZE))
        if kind == NO_COMPRESSION:
            return Opened(source, ident, None, source.size, kind, [])

        def read(offset: int, n: int) -> bytes:
            data = source.read(offset, offset + n)
            source.release(offset, offset + n)
            return data

        # Inflated in the background as far as the reader asks: the first page does not
        # wait for the whole object.
        stream = InflatingSource(
            read,
            ident,
            kind,
            cache,
            shown=source.shown,
            max_inflate=max_inflate,
            use_cache=use_cache,
            on_done=source.close,
            origin=source,
        )
    except BaseException:
        source.close()
        raise
    return Opened(stream, ident, None, source.size, kind, [])


def probe(path: str, *, anon: bool = False) -> tuple[int, Compression]:
    """A file's (or object's) size in bytes and its compression, from its first bytes only:
    nothing is inflated or indexed (for planning work over many files)."""
    if is_url(path):
        from .remote import read_range  # as in _open_remote: local files need none of it

        st = remote_stat(path, anon=anon)
        return st.size, sniff_compression(read_range(path, 0, HEADER_SIZE, anon=anon))
    path = local_path(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        return size, sniff_compression(f.read(HEADER_SIZE))
