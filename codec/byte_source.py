"""The one interface of byte sources, below every kind of source: what a reader may ask of
any of them, with the answer of a source that has nothing special to say.

A reader's stream is a :class:`ByteSource`: a memory map of a local file
(:class:`codec.sources.MmapSource`), a remote object read in blocks
(:class:`codec.remote.RemoteSource`) or a compressed one inflated in the background
(:class:`codec.inflating.InflatingSource`). Each kind declares only what it does differently.
"""

from __future__ import annotations

import mmap
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .framing import Problem

__all__ = ["ByteSource", "drop_pages"]


class ByteSource:
    """A read-only stream of ``size`` bytes.

    ``buffer`` supports the buffer protocol over the whole stream (slicing, ``memoryview``,
    ``numpy.frombuffer``, ``struct.unpack_from``); ``read`` copies a range out; ``release``
    tells the source a range will not be needed soon (so its pages can leave memory);
    ``need`` is called before a range of ``buffer`` is looked at (a remote source fetches it
    then; a memory map has every byte already)."""

    remote: bool = False  # whether the bytes come over the network
    block: int = 0  # the bytes a source fetches at a time (0: every byte is there)
    # What reading the stream found once it is ``complete``, for a source that finds its
    # own (one inflated in the background); None: its problems came with opening it.
    problems: list[Problem] | None = None

    @property
    def size(self) -> int:
        raise NotImplementedError

    @property
    def buffer(self) -> Any:
        raise NotImplementedError

    @property
    def complete(self) -> bool:
        """Whether ``size`` is final (only a stream inflated in the background grows)."""
        return True

    @property
    def requests(self) -> int:
        """Requests made over the network for the bytes so far (0 for a local file)."""
        return 0

    @property
    def bytes_read(self) -> int:
        """Bytes read over the network so far (0 for a local file)."""
        return 0

    def read(self, start: int, end: int) -> bytes:
        raise NotImplementedError

    def need(self, start: int, end: int) -> None:
        """Every byte is there unless a source says otherwise."""

    def release(self, start: int, end: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


def drop_pages(m: mmap.mmap, start: int, end: int, mapped: int) -> None:
    """Let the kernel drop the whole pages of ``[start, end)`` of the map ``m`` (``mapped``
    bytes long): for every byte source mapped from a file, whose pages come back from the
    file when read again."""
    if end <= start:
        return
    page = mmap.PAGESIZE
    start -= start % page
    end = min(end - end % page, mapped - mapped % page)
    if end > start and hasattr(mmap, "MADV_DONTNEED"):
        try:
            m.madvise(mmap.MADV_DONTNEED, start, end - start)
        except (OSError, ValueError):
            pass
