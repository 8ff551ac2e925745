"""A GZIP/ZLIB remote object inflated as a stream, so its first page does not wait for the
whole object.

:class:`InflatingSource` inflates in a background thread into the same cache copy that
:func:`codec.cache.inflate_to_cache` makes (same name, same problems note, same cap), and is a
:class:`~codec.byte_source.ByteSource` whose ``size`` grows as bytes arrive: :meth:`need` waits
until the inflated stream reaches the end asked for (or ends). ``complete`` says whether the
stream has ended; until then the reader's index takes the end of what has been inflated for
"more to come", never for the end of the file (see :mod:`codec.record_index`). The inflate cap
holds as for a local file: past it, :class:`~codec.errors.LimitError` reaches the next
``need``.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .byte_source import ByteSource, drop_pages
from .cache import abandon_copy, begin_copy, cached_copy, commit_copy, inflate_limit
from .framing import Problem
from .identity import FileIdentity
from .inflate import inflate
from .kinds import Compression
from .locks import share

__all__ = ["InflatingSource"]


class InflatingSource(ByteSource):
    """The inflated stream of a compressed object, growing as a background thread inflates
    it. ``problems`` are those inflation met, known once ``complete``."""

    remote = True
    block = 2 << 20  # the reader's scan steps: a few MiB, so the first page waits for little

    def __init__(
        self,
        read: Callable[[int, int], bytes],
        ident: FileIdentity,
        compression: Compression,
        cache_dir: Path,
        *,
        shown: str,
        max_inflate: int | None = None,
        use_cache: bool = True,
        on_done: Callable[[], None] | None = None,
        origin: ByteSource | None = None,
    ) -> None:
        self.compressed_size = ident.size
        self._origin = origin  # what ``read`` reads from: its requests and bytes read, if told
        self.problems: list[Problem] = []
        self._cond = threading.Condition()
        self._written = 0
        self._done = False
        self._error: BaseException | None = None
        self._stop = False
        self._maps: list[Any] = []
        self._map: Any = b""
        self._mapped = 0
        self._on_done = on_done
        if use_cache and (cached := cached_copy(ident, compression, cache_dir, shown)):
            self._fd, self.problems = cached
            self._written = os.fstat(self._fd).st_size
            self._done = True
            self._thread: threading.Thread | None = None
            if on_done is not None:
                on_done()
            return
        self._copy = begin_copy(ident, compression, cache_dir)
        self._fd = os.dup(self._copy.fd)
        limit, why = inflate_limit(ident.size, cache_dir, max_inflate)
        self._thread = threading.Thread(
            target=self._run,
            args=(read, compression, cache_dir, shown, limit, why),
            name="tfrecord-inflate",
            daemon=True,
        )
        self._thread.start()

    @property
    def requests(self) -> int:
        """Requests made for the compressed bytes (0 when the origin does not count them)."""
        return self._origin.requests if self._origin is not None else 0

    @property
    def bytes_read(self) -> int:
        """Compressed bytes read from the origin so far."""
        return self._origin.bytes_read if self._origin is not None else 0

    def _run(
        self,
        read: Callable[[int, int], bytes],
        compression: Compression,
        cache_dir: Path,
        shown: str,
        limit: int,
        why: str,
    ) -> None:
        fd = self._copy.fd

        def write(data: bytes) -> None:
            if self._stop:
                raise _Stopped
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            with self._cond:
                self._written += len(data)
                self._cond.notify_all()

        try:
            result = inflate(
                read, self.compressed_size, compression, write, path=shown, limit=limit, why=why
            )
            share(self._fd)  # finished: in use (shared), as any open copy is
            os.close(commit_copy(self._copy, result.problems, cache_dir))
            problems = result.problems
            error: BaseException | None = None
        except BaseException as exc:  # handed to the reader at its next need()
            abandon_copy(self._copy)
            problems, error = [], (None if isinstance(exc, _Stopped) else exc)
        with self._cond:
            self.problems = problems
            self._error = error
            self._done = True
            self._cond.notify_all()
        if self._on_done is not None:  # the compressed object is no longer read
            with contextlib.suppress(Exception):
                self._on_done()

    # -- the ByteSource interface ----------------------------------------------------------

    @property
    def size(self) -> int:
        """The bytes inflated so far (the stream's size once ``complete``)."""
        return self._written

    @property
    def complete(self) -> bool:
        """Whether inflation has ended (``size`` is final)."""
        with self._cond:
            if self._error is not None:
                raise self._error
            return self._done

    @property
    def buffer(self) -> Any:
        written = self._written
        if written > self._mapped:
            m = mmap.mmap(self._fd, written, access=mmap.ACCESS_READ)
            if not isinstance(self._map, bytes):
                self._maps.append(self._map)  # views of it may still be alive
            self._map, self._mapped = m, written
        return self._map

    def need(self, start: int, end: int) -> None:
        """Wait until bytes ``[start, end)`` are inflated, or inflation ends; raise what made
        it fail (a :class:`~codec.errors.LimitError`, a remote read error)."""
        with self._cond:
            while self._written < end and not self._done:
                self._cond.wait(0.5)
            if self._error is not None:
                raise self._error

    def read(self, start: int, end: int) -> bytes:
        self.need(start, end)
        return bytes(self.buffer[start:end])

    def release(self, start: int, end: int) -> None:
        if not isinstance(self._map, bytes):
            drop_pages(self._map, start, end, self._mapped)

    def close(self) -> None:
        self._stop = True
        if self._thread is not None:
            self._thread.join()
        for m in [*self._maps, self._map]:
            if not isinstance(m, bytes):
                with contextlib.suppress(BufferError):
                    m.close()
        self._maps, self._map = [], b""
        with contextlib.suppress(OSError):
            os.close(self._fd)


class _Stopped(Exception):
    """The reader closed while inflating: stop, leave nothing behind."""
