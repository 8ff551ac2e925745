"""The cache folder and what lives in it: the one file identity, inflated copies of GZIP/ZLIB
files and saved record indexes.

Nothing is ever written next to a source file (it may be read-only, or someone else's data):
everything goes under :func:`default_cache_dir`, keyed by :class:`FileIdentity`, so a file
that changes on disk never meets a stale index or inflated copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import struct
import tempfile
import time
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import crc32c as _crc32c

try:
    import fcntl as _fcntl
except ImportError:  # not on Windows
    _fcntl = None  # type: ignore[assignment]

from .framing import Problem
from .inflate import inflate
from .kinds import COMPRESSION, Compression

__all__ = [
    "CONTENT_WINDOW",
    "INFLATED_CAP",
    "INFLATED_CAP_ENV",
    "INFLATE_MARGIN",
    "INFLATE_RATIO",
    "MAX_INFLATE_ENV",
    "FileIdentity",
    "IndexCache",
    "InflatedCopy",
    "InflatedUsage",
    "cache_room",
    "default_cache_dir",
    "evict_inflated",
    "given_inflate_limit",
    "inflate_limit",
    "inflate_to_cache",
    "inflated_cap",
    "inflated_copies",
    "inflated_usage",
    "parse_size",
]

CONTENT_WINDOW = 64 * 1024  # bytes at each end of a file whose CRC32C a content identity keeps


def default_cache_dir() -> Path:
    """Where indexes, inflated streams and journals are kept: ``$TFRECORD_BROWSER_CACHE``,
    else the XDG cache directory. Never next to the source, which may be read-only."""
    env = os.environ.get("TFRECORD_BROWSER_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tfrecord-browser"


# --------------------------------------------------------------------------------------------
# Identity


def _real(path: str) -> str:
    """The real path of a local file; a URL as it may be shown."""
    from .locations import is_url, shown

    return shown(path) if is_url(path) else os.path.realpath(path)


@dataclass(frozen=True)
class FileIdentity:
    """What a file is, as far as caches and journals are concerned.

    ``path`` is the real path; ``size``, ``mtime_ns`` and ``ino`` come from ``stat``.
    :meth:`with_content` adds the CRC32C of the first and last 64 KiB (``head_crc`` /
    ``tail_crc``), which journals keep so that a rewrite that restores the size and the
    modification time is still noticed. Hashable: a tuple of identities is a cache key."""

    path: str
    size: int
    mtime_ns: int
    ino: int = 0
    head_crc: int | None = None
    tail_crc: int | None = None
    ctime_ns: int = 0  # the inode-change time: any write moves it, and no one can set it back
    index_digest: str | None = None  # of every record's offset, length and data CRC
    version: str = ""  # a remote object's ETag / generation ("" for a local file)

    @property
    def remote(self) -> bool:
        """Whether this is a remote object's identity (``path`` is its URL as shown)."""
        from .locations import is_url

        return is_url(self.path)

    @classmethod
    def from_remote(cls, url: str, stat: Any) -> FileIdentity:
        """The identity of a remote object: its URL as shown (never a credential), its size,
        last-modified time and version (a :class:`~codec.locations.RemoteStat`)."""
        from .locations import shown

        return cls(shown(url), stat.size, stat.mtime_ns, version=stat.version)

    @classmethod
    def from_stat(cls, path: str | os.PathLike[str], st: os.stat_result) -> FileIdentity:
        return cls(
            os.path.realpath(os.fspath(path)),
            st.st_size,
            st.st_mtime_ns,
            st.st_ino,
            ctime_ns=st.st_ctime_ns,
        )

    @classmethod
    def of(cls, path: str | os.PathLike[str], *, content: bool = False) -> FileIdentity:
        """The identity of ``path`` now (``content=True`` reads the CRCs of both ends).
        Raises ``OSError`` when the file cannot be read."""
        from .locations import is_url

        if is_url(os.fspath(path)):
            return cls._of_remote(os.fspath(path), content)
        if not content:
            return cls.from_stat(path, os.stat(path))
        real = os.path.realpath(os.fspath(path))
        with open(real, "rb") as f:
            st = os.fstat(f.fileno())
            head = f.read(CONTENT_WINDOW)
            if st.st_size > CONTENT_WINDOW:
                f.seek(max(0, st.st_size - CONTENT_WINDOW))
                tail = f.read(CONTENT_WINDOW)
            else:
                tail = head
        return replace(
            cls.from_stat(real, st), head_crc=_crc32c.crc32c(head), tail_crc=_crc32c.crc32c(tail)
        )

    @classmethod
    def _of_remote(cls, url: str, content: bool) -> FileIdentity:
        from .locations import remote_stat
        from .remote import RemoteObject

        st = remote_stat(url)
        ident = cls.from_remote(url, st)
        if not content:
            return ident
        obj = RemoteObject(url, stat=st)
        try:
            head = obj.read(0, CONTENT_WINDOW)
            tail = obj.read(max(0, st.size - CONTENT_WINDOW), st.size)
        finally:
            obj.close()
        return replace(ident, head_crc=_crc32c.crc32c(head), tail_crc=_crc32c.crc32c(tail))

    @classmethod
    def of_paths(cls, paths: Sequence[str | os.PathLike[str]]) -> tuple[FileIdentity, ...]:
        """Identities of several files; a file that cannot be read gets size and mtime -1."""
        out = []
        for p in paths:
            try:
                out.append(cls.of(p))
            except OSError:
                out.append(cls(_real(os.fspath(p)), -1, -1))
        return tuple(out)

    def unchanged(self) -> bool:
        """Whether the file still has this size and modification time (a remote object:
        this size and version, asked of the server at most every few seconds)."""
        if self.remote:
            from .locations import remote_stat

            try:
                now = remote_stat(self.path)
            except OSError:
                return False
            return (now.size, now.version) == (self.size, self.version)
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return (st.st_size, st.st_mtime_ns) == (self.size, self.mtime_ns)

    def changed_since(self, now: FileIdentity) -> bool:
        """Whether the file was written to (or its inode changed) since this identity: the
        inode-change time moved. Journals then compare the records themselves."""
        return bool(self.ctime_ns) and self.ctime_ns != now.ctime_ns

    def digest(self, what: str) -> str:
        """A short hex key for a cache entry of kind ``what`` made from this file (any write
        to the file, which moves its inode-change time, makes a new key)."""
        ident = f"{self.path}\0{self.size}\0{self.mtime_ns}\0{self.ino}\0{self.ctime_ns}\0{what}"
        if self.version:
            ident += f"\0{self.version}"
        return hashlib.sha256(ident.encode("utf-8", "surrogateescape")).hexdigest()[:32]

    # -- the journal's form -------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "head_crc32c": self.head_crc,
            "tail_crc32c": self.tail_crc,
        }
        if self.ctime_ns:
            out["ctime_ns"] = self.ctime_ns
        if self.index_digest is not None:
            out["index_digest"] = self.index_digest
        if self.version:
            out["version"] = self.version
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> FileIdentity:
        return cls(
            obj["path"],
            obj["size"],
            obj["mtime_ns"],
            head_crc=obj["head_crc32c"],
            tail_crc=obj["tail_crc32c"],
            ctime_ns=int(obj.get("ctime_ns", 0)),
            index_digest=obj.get("index_digest"),
            version=str(obj.get("version", "")),
        )

    def differences(self, now: FileIdentity) -> list[str]:
        """What changed from ``self`` (the remembered identity) to ``now``, one line each."""
        out = []
        if self.version != now.version and (self.version or now.version):
            was, then = self.version or "none", now.version or "none"
            out.append(f"{self.path}: the object's version changed ({was} → {then})")
        if self.size != now.size:
            out.append(f"{self.path}: size was {self.size:,} bytes, now {now.size:,}")
        if self.mtime_ns != now.mtime_ns and not self.remote:
            then_s = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.mtime_ns / 1e9))
            now_s = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now.mtime_ns / 1e9))
            out.append(f"{self.path}: modified time was {then_s}, now {now_s}")
        if self.size <= CONTENT_WINDOW and now.size <= CONTENT_WINDOW:
            if self.head_crc != now.head_crc:
                out.append(f"{self.path}: the content differs")
            return out
        if self.head_crc != now.head_crc:
            out.append(f"{self.path}: the first 64 KiB differ")
        if self.tail_crc != now.tail_crc:
            out.append(f"{self.path}: the last 64 KiB differ")
        if (
            not out
            and self.index_digest is not None
            and now.index_digest is not None
            and self.index_digest != now.index_digest
        ):
            out.append(
                f"{self.path}: its records changed (their offsets, lengths or data CRCs differ)"
            )
        return out


# --------------------------------------------------------------------------------------------
# Record indexes


_INDEX_MAGIC = b"TFBIDX01"
_INDEX_HEAD = struct.Struct("<8sQQQQQ")  # magic, size, mtime_ns, ino, count, problems-json length


@dataclass
class SavedIndex:
    """A file's complete record index: header offsets, payload lengths and the problems the
    header scan found."""

    offsets: array
    lengths: array
    problems: list[Problem]


class IndexCache:
    """Complete record indexes saved under ``<cache>/index``, keyed by file identity."""

    def __init__(self, cache_dir: Path) -> None:
        self.folder = cache_dir / "index"

    def _path(self, ident: FileIdentity) -> Path:
        return self.folder / f"{ident.digest('index')}.idx"

    def load(self, ident: FileIdentity, path: str) -> SavedIndex | None:
        """The saved index of this exact file, or ``None`` (missing, stale or unreadable);
        its problems name the file as ``path`` (the name the caller opened it by)."""
        try:
            blob = self._path(ident).read_bytes()
        except OSError:
            return None
        try:
            magic, size, mtime, ino, count, plen = _INDEX_HEAD.unpack_from(blob, 0)
            if magic != _INDEX_MAGIC or (size, mtime, ino) != (
                ident.size,
                ident.mtime_ns,
                ident.ino,
            ):
                return None
            pos = _INDEX_HEAD.size
            probs = json.loads(blob[pos : pos + plen])
            pos += plen
            if len(blob) != pos + 16 * count:
                return None
            offsets = array("Q", blob[pos : pos + 8 * count])
            lengths = array("Q", blob[pos + 8 * count :])
            problems = [
                Problem(p["kind"], p["offset"], p["end"], p["message"], path) for p in probs
            ]
        except (struct.error, ValueError, KeyError, TypeError):
            return None
        return SavedIndex(offsets, lengths, problems)

    def save(self, ident: FileIdentity, index: SavedIndex) -> None:
        """Save atomically; a cache that cannot be written only costs a rescan next time."""
        probs = [
            {"kind": p.kind, "offset": p.offset, "end": p.end, "message": p.message}
            for p in index.problems
            if p.kind != COMPRESSION
        ]
        pj = json.dumps(probs).encode()
        head = _INDEX_HEAD.pack(
            _INDEX_MAGIC, ident.size, ident.mtime_ns, ident.ino, len(index.offsets), len(pj)
        )
        target = self._path(ident)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".idx-")
            with os.fdopen(fd, "wb") as f:
                f.write(head)
                f.write(pj)
                f.write(index.offsets.tobytes())
                f.write(index.lengths.tobytes())
            os.replace(tmp, target)
        except OSError:
            pass


# --------------------------------------------------------------------------------------------
# Inflated copies of GZIP / ZLIB files
#
# A GZIP/ZLIB file is read through an inflated copy under ``<cache>/inflated``, one per file
# identity. The copies together stay under a total size (:func:`inflated_cap`): adding one
# removes the least recently used others (a copy's access time, set at each open) until
# they fit. A copy that is open (a reader holds a shared ``flock`` on it for as long as it is
# open, in any process) is never removed: its disk space would not come back before it is
# closed anyway, and the next reader of the same file would have to inflate it again.


INFLATE_RATIO = 100  # inflate at most this many times a file's compressed size, by default
INFLATE_MARGIN = 1 << 30  # and never into the last GiB of the cache disk's free space
INFLATED_CAP = 10 << 30  # the inflated copies together, by default
MAX_INFLATE_ENV = "TFRECORD_BROWSER_MAX_INFLATE"
INFLATED_CAP_ENV = "TFRECORD_BROWSER_INFLATED_CAP"
_ABANDONED_AFTER = 600  # seconds: an unlocked partial copy this old was left by a crash

_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b|bytes?)?\s*", re.I)
_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes from ``"10G"``, ``"500M"``, ``"1.5GiB"``, ``"64k"`` or ``"123"`` (units are
    binary: ``1K`` is 1024 bytes). Raises ``ValueError`` with a message for anything else."""
    m = _SIZE.fullmatch(text)
    if not m:
        raise ValueError(f"{text!r} is not a size: give bytes, or a number with K, M, G or T")
    value = float(m.group(1)) * _UNITS.get((m.group(2) or "").lower(), 1)
    return int(value)


def _size_text(n: int) -> str:
    """``n`` bytes as the shortest ``--max-inflate`` value not below it: ``8G``, ``300M``."""
    for unit, scale in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            return f"{-(-n // scale)}{unit}"
    return str(n)


def given_inflate_limit(limit: int | None = None) -> int | None:
    """The inflate limit a person set: ``limit`` when given, else
    ``$TFRECORD_BROWSER_MAX_INFLATE``, else None (each file's default applies)."""
    return limit if limit is not None else _env_size(MAX_INFLATE_ENV)


def _env_size(name: str) -> int | None:
    text = os.environ.get(name)
    if not text:
        return None
    try:
        return parse_size(text)
    except ValueError:
        return None


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
    the smaller of :data:`INFLATE_RATIO` times its size (1 MiB at least) and the cache disk's
    free space less :data:`INFLATE_MARGIN`. The reason says how to raise it."""
    limit = given_inflate_limit(limit)
    if limit is not None:
        how = f"raise it with --max-inflate larger than {_size_text(limit)}, or {MAX_INFLATE_ENV}"
        return limit, f"the limit set ({how})"
    ratio = INFLATE_RATIO * max(compressed, 1 << 20)
    free = cache_room(cache_dir)
    if free is not None and free < ratio:
        return free, (
            "the free space on the cache disk less 1 GiB (free some space, or point"
            " TFRECORD_BROWSER_CACHE at a larger disk)"
        )
    how = f"raise it with --max-inflate {_size_text(4 * ratio)}, say, or {MAX_INFLATE_ENV}"
    return ratio, f"{INFLATE_RATIO} times its compressed size ({how})"


def inflated_cap() -> int:
    """The total size the inflated copies may take: ``$TFRECORD_BROWSER_INFLATED_CAP`` (a
    size such as ``20G``), else :data:`INFLATED_CAP`."""
    return _env_size(INFLATED_CAP_ENV) or INFLATED_CAP


def _share(fd: int) -> None:
    """Mark the copy open on ``fd`` as in use (a shared lock, released when every
    descriptor of this open file, the memory map's included, is closed)."""
    if _fcntl is not None:
        with contextlib.suppress(OSError):
            _fcntl.flock(fd, _fcntl.LOCK_SH)


def _open_copy(target: Path) -> int | None:
    """A read-only descriptor of the cached copy ``target``, marked in use and as just used;
    None when there is none (or it was removed while being opened)."""
    try:
        fd = os.open(target, os.O_RDONLY)
    except OSError:
        return None
    _share(fd)
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


def _unused(fd: int) -> bool:
    """Whether no reader has the file open on ``fd`` open as well: then ``fd`` holds it
    locked until it is closed, so that no reader takes it meanwhile."""
    if _fcntl is None:  # no locks: an open file cannot be removed there, the removal says it
        return True
    try:
        _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
    except OSError:  # held by a reader (or no lock can be taken: then it is kept)
        return False
    return True


def _unless_open(path: Path, then: Callable[[], object] = lambda: None) -> bool:
    """Run ``then`` with ``path`` locked, unless a reader has it open (or it cannot be
    opened); whether it ran."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        if not _unused(fd):
            return False
        then()
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


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
        sum(not _unless_open(c.path) for c in copies),  # kept: open, or unreadable
        inflated_cap() if cap is None else cap,
    )


def evict_inflated(cache_dir: Path, cap: int | None = None) -> list[Path]:
    """Remove the least recently used inflated copies, never an open one, until the rest fit
    in ``cap`` (default :func:`inflated_cap`); also remove partial copies that a crash left.
    Returns the copies removed."""
    cap = inflated_cap() if cap is None else cap
    copies = inflated_copies(cache_dir)
    total = sum(c.size for c in copies)
    removed = []
    for c in copies:
        if total <= cap:
            break
        if _unless_open(c.path, c.path.unlink):
            total -= c.size
            removed.append(c.path)
            with contextlib.suppress(OSError):
                c.path.with_suffix(".problems").unlink(missing_ok=True)
    cutoff = time.time() - _ABANDONED_AFTER
    with contextlib.suppress(OSError):
        for tmp in (cache_dir / "inflated").glob(".inflate-*"):
            with contextlib.suppress(OSError):
                if tmp.stat().st_mtime < cutoff:
                    _unless_open(tmp, tmp.unlink)
    return removed


@dataclass
class _Copy:
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


def _begin_copy(ident: FileIdentity, compression: Compression, cache_dir: Path) -> _Copy:
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
    if _fcntl is not None:
        with contextlib.suppress(OSError):
            _fcntl.flock(fd, _fcntl.LOCK_EX)
    return _Copy(fd, tmp_name, target, note, in_cache)


def _abandon_copy(copy: _Copy) -> None:
    with contextlib.suppress(OSError):
        os.close(copy.fd)
    with contextlib.suppress(OSError):
        os.unlink(copy.tmp_name)


def _commit_copy(copy: _Copy, problems: list[Problem], cache_dir: Path) -> int:
    """Sync the finished copy, give it its name, note its problems, make room under the cap;
    a read-only descriptor of it, marked in use. Closes the writing descriptor."""
    try:
        os.fsync(copy.fd)
        os.replace(copy.tmp_name, copy.target)
        copy_fd = os.open(copy.target, os.O_RDONLY)
    except BaseException:
        _abandon_copy(copy)
        raise
    os.close(copy.fd)
    if not copy.in_cache:
        with contextlib.suppress(OSError):
            os.unlink(copy.target)
        return copy_fd
    _share(copy_fd)
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
    copy = _begin_copy(ident, compression, cache_dir)
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
        _abandon_copy(copy)
        raise
    return _commit_copy(copy, result.problems, cache_dir), result.problems
