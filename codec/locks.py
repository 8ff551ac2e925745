"""The lock that keeps a cached file while it is open: a file some reader has open (an
inflated copy, a remote object's blocks) is never removed from the cache, by this process or
another.

A reader holds a shared ``flock`` on the file for as long as it has it open (:func:`share`);
a file being written is held exclusively (:func:`hold`); whoever cleans the cache removes a
file only after taking it exclusively without waiting (:func:`unless_open`), so the file's
disk space is not lost under a reader and the next reader does not have to make it again.
Where there are no locks (:data:`LOCKING` false) an open file cannot be removed anyway, and
the removal says so.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

try:
    import fcntl as _fcntl
except ImportError:  # not on Windows
    _fcntl = None  # type: ignore[assignment]

__all__ = ["LOCKING", "hold", "share", "unless_open", "unused"]

LOCKING = _fcntl is not None  # whether this platform has file locks


def share(fd: int) -> None:
    """Mark the file open on ``fd`` as in use (a shared lock, released when every
    descriptor of this open file, a memory map's included, is closed)."""
    if _fcntl is not None:
        with contextlib.suppress(OSError):
            _fcntl.flock(fd, _fcntl.LOCK_SH)


def hold(fd: int) -> None:
    """Hold the file open on ``fd`` as being written (an exclusive lock, waited for), so that
    it is not taken for one a crash left."""
    if _fcntl is not None:
        with contextlib.suppress(OSError):
            _fcntl.flock(fd, _fcntl.LOCK_EX)


def unused(fd: int) -> bool:
    """Whether no reader has the file open on ``fd`` open as well: then ``fd`` holds it
    locked until it is closed (or :func:`share` gives the lock back), so that no reader takes
    it meanwhile."""
    if _fcntl is None:  # no locks: an open file cannot be removed there, the removal says it
        return True
    try:
        _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
    except OSError:  # held by a reader (or no lock can be taken: then it is kept)
        return False
    return True


def unless_open(path: Path, then: Callable[[], object] = lambda: None) -> bool:
    """Run ``then`` with ``path`` locked, unless a reader has it open (or it cannot be
    opened); whether it ran."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        if not unused(fd):
            return False
        then()
    except OSError:
        return False
    finally:
        os.close(fd)
    return True
