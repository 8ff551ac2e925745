"""Inflated copies of GZIP/ZLIB files in the cache folder, and how large they may grow.

A GZIP/ZLIB file is read through an inflated copy under ``<cache>/inflated``, one per file
identity (nothing is ever written next to a source file: it may be read-only, or someone
else's data). A file inflates only as far as :func:`inflate_limit` lets it; the copies
together stay under a total size (:func:`~codec.settings.inflated_cap`): adding one removes
the least recently used others (a copy's access time, set at each open) until they fit. A copy
that is open is never removed (:mod:`codec.locks`): its disk space would not come back before
it is closed anyway, and the next reader of the same file would have to inflate it again.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import settings
from .framing import Problem
from .identity import FileIdentity
from .inflate import inflate
from .kinds import COMPRESSION, Compression
from .locks import hold, share, unless_open

__all__ = [
    "INFLATE_MARGIN",
    "InflatedCopy",
    "InflatedUsage",
    "NewCopy",
    "abandon_copy",
    "begin_copy",
    "cache_room",
    "cached_copy",
    "commit_copy",
    "evict_inflated",
    "inflate_limit",
    "inflate_to_cache",
    "inflated_copies",
    "inflated_usage",
]

INFLATE_MARGIN = 1 << 30  # never inflate into the last GiB of the cache disk's free space
_ABANDONED_AFTER = 600  # seconds: an unlocked partial copy this old was left by a crash


def _size_text(n: int) -> str:
    """``n`` bytes as the shortest ``--max-inflate`` value not below it: ``8G``, ``300M``."""
    for unit, scale in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            return f"{-(-n // scale)}{unit}"
    return str(n)


def cache_room(cache_dir: Path) -> int | None:
    """Bytes the cache disk can still take while keeping its last :data:`INFLATE_MARGIN`
    free (0 at least), or None when that cannot be told."""
    probe = cache_dir
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    try:
        return max(0, shutil.disk_usage(probe).free - INFLATE_MARGIN)
    except OSError:
        return None


def inflate_limit(compressed: int, cache_dir: Path, limit: int | None = None) -> tuple[int, str]:
    """How far a compressed file of ``compressed`` bytes may inflate into the cache, and why:
    ``limit`` when given (or ``$TFRECORD_BROWSER_MAX_INFLATE``, a size such as ``10G``), else
    the smaller of :data:`~codec.settings.INFLATE_RATIO` times its size (1 MiB at least) and
    the cache disk's free space less :data:`INFLATE_MARGIN`. The reason says how to raise it."""
    limit = settings.given_inflate_limit(limit)
    env = settings.MAX_INFLATE_ENV
    if limit is not None:
        how = f"raise it with --max-inflate larger than {_size_text(limit)}, or {env}"
        return limit, f"the limit set ({how})"
    ratio = settings.INFLATE_RATIO * max(compressed, 1 << 20)
    free = cache_room(cache_dir)
    if free is not None and free < ratio:
        return free, (
            "the free space on the cache disk less 1 GiB (free some space, or point"
            f" {settings.CACHE_ENV} at a larger disk)"
        )
    how = f"raise it with --max-inflate {_size_text(4 * ratio)}, say, or {env}"
    return ratio, f"{settings.INFLATE_RATIO} times its compressed size ({how})"


def _open_copy(target: Path) -> int | None:
    """A read-only descriptor of the cached copy ``target``, marked in use and as just used;
    None when there is none (or it was removed while being opened)."""
    try:
        fd = os.open(target, os.O_RDONLY)
    except OSError:
        return None
    share(fd)
    if os.fstat(fd).st_nlink == 0:  # removed between the open and the lock
        os.close(fd)
        return None
    _used(target, fd)
    return fd


def _used(target: Path, fd: int) -> None:
    """Mark the copy as used now: its access time is its last use (set here, to the
    nanosecond, whatever the file system does with reads)."""
    with contextlib.suppress(OSError):
        os.utime(target, ns=(time.time_ns(), os.fstat(fd).st_mtime_ns))


@dataclass(frozen=True)
class InflatedCopy:
    """One inflated copy in the cache: its path, size and last use (``time.time()`` seconds)."""

    path: Path
    size: int
    used: float


def inflated_copies(cache_dir: Path) -> list[InflatedCopy]:
    """The inflated copies in the cache, least recently used first."""
    out = []
    try:
        with os.scandir(cache_dir / "inflated") as it:
            for e in it:
                if e.name.startswith(".") or not e.name.endswith(".tfrecord"):
                    continue
                with contextlib.suppress(OSError):
                    st = e.stat(follow_symlinks=False)
                    out.append(InflatedCopy(Path(e.path), st.st_size, st.st_atime))
    except OSError:
        return []
    out.sort(key=lambda c: (c.used, c.path.name))
    return out


@dataclass(frozen=True)
class InflatedUsage:
    """What the inflated copies take: ``bytes`` in ``copies`` files, ``open`` of them open
    now (never removed), and the ``cap`` they are kept under."""

    bytes: int
    copies: int
    open: int
    cap: int


def inflated_usage(cache_dir: Path, cap: int | None = None) -> InflatedUsage:
    """The size of the inflated copies in the cache, and the cap they are kept under."""
    copies = inflated_copies(cache_dir)
    return InflatedUsage(
        sum(c.size for c in copies),
        len(copies),
        sum(not unless_open(c.path) for c in copies),  # kept: open, or unreadable
        settings.inflated_cap() if cap is None else cap,
    )


def evict_inflated(cache_dir: Path, cap: int | None = None) -> list[Path]:
    """Remove the least recently used inflated copies, never an open one, until the rest fit
    in ``cap`` (default :func:`~codec.settings.inflated_cap`); also remove partial copies
    that a crash left. Returns the copies removed."""
    cap = settings.inflated_cap() if cap is None else cap
    copies = inflated_copies(cache_dir)
    total = sum(c.size for c in copies)
    removed = []
    for c in copies:
        if total <= cap:
            break
        if unless_open(c.path, c.path.unlink):
            total -= c.size
            removed.append(c.path)
            with contextlib.suppress(OSError):
                c.path.with_suffix(".problems").unlink(missing_ok=True)
    cutoff = time.time() - _ABANDONED_AFTER
    with contextlib.suppress(OSError):
        for tmp in (cache_dir / "inflated").glob(".inflate-*"):
            with contextlib.suppress(OSError):
                if tmp.stat().st_mtime < cutoff:
                    unless_open(tmp, tmp.unlink)
    return removed


@dataclass
class NewCopy:
    """An inflated copy being made: the temporary file written, the name it takes when done,
    its problems note, and whether it lives in the cache (else it is private and removed as
    soon as it is open)."""

    fd: int
    tmp_name: str
    target: Path
    note: Path
    in_cache: bool


def _copy_names(
    ident: FileIdentity, compression: Compression, cache_dir: Path
) -> tuple[Path, Path]:
    key = ident.digest(f"{compression}:v2")  # v2: every inflated byte kept, problems as JSON
    cache = cache_dir / "inflated"
    return cache / f"{key}.tfrecord", cache / f"{key}.problems"


def cached_copy(
    ident: FileIdentity, compression: Compression, cache_dir: Path, shown: str
) -> tuple[int, list[Problem]] | None:
    """A descriptor of the finished inflated copy of this file and its problems, if the
    cache has one (marked in use and as just used); ``None`` otherwise."""
    target, note = _copy_names(ident, compression, cache_dir)
    cached = _open_copy(target)
    if cached is None:
        return None
    problems = []
    with contextlib.suppress(OSError, ValueError):
        for message in json.loads(note.read_text()) if note.exists() else []:
            problems.append(Problem(COMPRESSION, None, None, str(message), shown))
    return cached, problems


def begin_copy(ident: FileIdentity, compression: Compression, cache_dir: Path) -> NewCopy:
    """A new temporary file for an inflated copy, locked as being written (so it is not taken
    for a partial copy left by a crash)."""
    target, note = _copy_names(ident, compression, cache_dir)
    in_cache = True
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".inflate-")
    except OSError:
        # No cache to write to: a private temporary file, removed as soon as it is open.
        fd, tmp_name = tempfile.mkstemp(prefix="tfrecord-browser-inflate-")
        target = Path(tmp_name + ".tfrecord")
        in_cache = False
    hold(fd)
    return NewCopy(fd, tmp_name, target, note, in_cache)


def abandon_copy(copy: NewCopy) -> None:
    """Close and remove a copy that will not be finished (a failure, a limit, a stop)."""
    with contextlib.suppress(OSError):
        os.close(copy.fd)
    with contextlib.suppress(OSError):
        os.unlink(copy.tmp_name)


def commit_copy(copy: NewCopy, problems: list[Problem], cache_dir: Path) -> int:
    """Sync the finished copy, give it its name, note its problems, make room under the cap;
    a read-only descriptor of it, marked in use. Closes the writing descriptor."""
    try:
        os.fsync(copy.fd)
        os.replace(copy.tmp_name, copy.target)
        copy_fd = os.open(copy.target, os.O_RDONLY)
    except BaseException:
        abandon_copy(copy)
        raise
    os.close(copy.fd)
    if not copy.in_cache:
        with contextlib.suppress(OSError):
            os.unlink(copy.target)
        return copy_fd
    share(copy_fd)
    _used(copy.target, copy_fd)
    messages = [p.message for p in problems]
    with contextlib.suppress(OSError):
        if messages:
            copy.note.write_text(json.dumps(messages))
        else:
            copy.note.unlink(missing_ok=True)
    evict_inflated(cache_dir)
    return copy_fd


def inflate_to_cache(
    read: Callable[[int, int], bytes],
    ident: FileIdentity,
    compression: Compression,
    cache_dir: Path,
    *,
    use_cache: bool = True,
    progress: Callable[[int, int], None] | None = None,
    shown: str = "",
    max_inflate: int | None = None,
) -> tuple[int, list[Problem]]:
    """Inflate the GZIP/ZLIB stream read by ``read(offset, n)`` into a cache file (once per file
    identity) and return a read-only descriptor of it, with the problems met (see
    :func:`codec.inflate.inflate`: every byte that inflates is kept), naming the file as
    ``shown``. Raises :class:`~codec.errors.LimitError`, leaving nothing in the cache, when
    the file would inflate past :func:`inflate_limit` (``max_inflate`` overrides it).

    The copy stays marked in use while the descriptor (or a memory map of it) is open; a new
    copy makes room for itself by :func:`evict_inflated`. (:class:`codec.inflating.
    InflatingSource` makes the same copy in the background, for a remote object.)"""
    shown = shown or ident.path
    if use_cache and (cached := cached_copy(ident, compression, cache_dir, shown)) is not None:
        return cached
    copy = begin_copy(ident, compression, cache_dir)
    limit, why = inflate_limit(ident.size, cache_dir, max_inflate)
    try:
        with os.fdopen(os.dup(copy.fd), "wb") as out:
            result = inflate(
                read,
                ident.size,
                compression,
                out.write,
                path=shown,
                progress=progress,
                limit=limit,
                why=why,
            )
    except BaseException:
        abandon_copy(copy)
        raise
    return commit_copy(copy, result.problems, cache_dir), result.problems
