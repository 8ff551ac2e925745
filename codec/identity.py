"""The one file identity: what a file or object is, as far as caches and journals are
concerned.

Every cache entry is keyed by a :class:`FileIdentity` (:meth:`FileIdentity.digest`), so a file
that changes on disk never meets a stale index or inflated copy, and a journal remembers the
identity of its sources to notice a file rewritten under it (:meth:`FileIdentity.differences`).
"""

from __future__ import annotations

import hashlib
import os
import time
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import crc32c as _crc32c
import numpy as np

from .framing import data_crcs
from .locations import RemoteStat, is_url, remote_stat, shown

__all__ = ["CONTENT_WINDOW", "FileIdentity", "index_digest"]

CONTENT_WINDOW = 64 * 1024  # bytes at each end of a file whose CRC32C a content identity keeps


def _real(path: str) -> str:
    """The real path of a local file; a URL as it may be shown."""
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

    def moved_from(self, other: FileIdentity) -> bool:
        """Whether this file (as it is now) is no longer the one ``other`` names: another
        size, modification time or version. (Not the inode: a worker on another machine
        reads the same file through its own mount, or a copy made with its times.)"""
        return (self.size, self.mtime_ns, self.version) != (
            other.size,
            other.mtime_ns,
            other.version,
        )

    @property
    def remote(self) -> bool:
        """Whether this is a remote object's identity (``path`` is its URL as shown)."""
        return is_url(self.path)

    @classmethod
    def from_remote(cls, url: str, stat: RemoteStat) -> FileIdentity:
        """The identity of a remote object: its URL as shown (never a credential), its size,
        last-modified time and version."""
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
    def of(
        cls, path: str | os.PathLike[str], *, content: bool = False, anon: bool = False
    ) -> FileIdentity:
        """The identity of ``path`` now (``content=True`` reads the CRCs of both ends; a
        remote object is asked for anonymously with ``anon``). Raises ``OSError`` when the
        file cannot be read."""
        if is_url(os.fspath(path)):
            return cls._of_remote(os.fspath(path), content, anon)
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
    def _of_remote(cls, url: str, content: bool, anon: bool) -> FileIdentity:
        st = remote_stat(url, anon=anon)
        ident = cls.from_remote(url, st)
        if not content:
            return ident
        from .remote import RemoteObject  # here: local files load no remote code

        obj = RemoteObject(url, anon=anon, stat=st)
        try:
            head = obj.read(0, CONTENT_WINDOW)
            tail = obj.read(max(0, st.size - CONTENT_WINDOW), st.size)
        finally:
            obj.close()
        return replace(ident, head_crc=_crc32c.crc32c(head), tail_crc=_crc32c.crc32c(tail))

    @classmethod
    def of_paths(
        cls, paths: Sequence[str | os.PathLike[str]], *, anon: bool = False
    ) -> tuple[FileIdentity, ...]:
        """Identities of several files; a file that cannot be read gets size and mtime -1."""
        out = []
        for p in paths:
            try:
                out.append(cls.of(p, anon=anon))
            except OSError:
                out.append(cls(_real(os.fspath(p)), -1, -1))
        return tuple(out)

    def unchanged(self, *, anon: bool = False) -> bool:
        """Whether the file still has this size and modification time (a remote object:
        this size and version, asked of the server at most every few seconds, anonymously
        with ``anon``)."""
        if self.remote:
            try:
                now = remote_stat(self.path, anon=anon)
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


def index_digest(buf: Any, offsets: array, lengths: array) -> str:
    """A digest of every record's offset, length and stored data CRC (headers at ``offsets``,
    payload ``lengths``, every byte of ``buf`` there): what a journal compares when a file
    was written to but its size and modification time were set back."""
    h = hashlib.blake2b(digest_size=16)
    h.update(offsets.tobytes())
    h.update(lengths.tobytes())
    offs = np.frombuffer(offsets, np.uint64).astype(np.int64)
    lens = np.frombuffer(lengths, np.uint64).astype(np.int64)
    h.update(data_crcs(buf, offs, lens).tobytes())
    return h.hexdigest()
