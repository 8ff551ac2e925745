"""Byte sources: where a reader's (decompressed) stream comes from, behind one small interface.

The reader never touches a file itself; it asks its :class:`ByteSource` for bytes. Today there
is one kind, :class:`MmapSource`, a read-only memory map of a local file (the file itself, or
the inflated copy of a GZIP/ZLIB file in the cache).
"""

from __future__ import annotations

import mmap
import os
from typing import Any, Protocol

__all__ = ["ByteSource", "MmapSource"]


class ByteSource(Protocol):
    """A read-only stream of ``size`` bytes.

    ``buffer`` supports the buffer protocol over the whole stream (slicing, ``memoryview``,
    ``numpy.frombuffer``, ``struct.unpack_from``); ``read`` copies a range out; ``release``
    tells the source a range will not be needed soon (so its pages can leave memory)."""

    size: int

    @property
    def buffer(self) -> Any: ...

    def read(self, start: int, end: int) -> bytes: ...

    def release(self, start: int, end: int) -> None: ...

    def close(self) -> None: ...


class MmapSource:
    """A read-only memory map of an open file descriptor (which it then owns and closes).

    An empty file has no map (``mmap`` refuses length 0): its buffer is ``b""``."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.size = os.fstat(fd).st_size
        self._mm: mmap.mmap | None = None
        if self.size:
            self._mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)

    @property
    def buffer(self) -> Any:
        return self._mm if self._mm is not None else b""

    def read(self, start: int, end: int) -> bytes:
        return bytes(self.buffer[start:end])

    def release(self, start: int, end: int) -> None:
        """Let the kernel drop the pages of ``[start, end)``: clean file pages, nothing is
        lost, and scanning a file far larger than memory keeps the resident set small."""
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
