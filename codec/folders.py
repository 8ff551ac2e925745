"""A folder of small files read the same way on disk and in an object store: what a dataset
that describes itself (:mod:`codec.tfds`) needs of its folder, and nothing more.

:func:`folder_access` gives the :class:`FolderAccess` of a path or URL: :data:`LOCAL` for a
path (``os.scandir``, ``os.stat``, :func:`codec.labelmap.read_capped`, as the folder code
always did), a :class:`RemoteFolders` over fsspec for a URL (``s3://``, ``gs://``, ``az://``,
…: :func:`codec.locations.filesystem`). Both list a folder (its subfolders, its files), tell
a file, a folder, and a thing that exists, and read a small file whose size is checked
before anything of it is read (:meth:`FolderAccess.read`: too large is a
:class:`~codec.errors.DecodeError` in the same words either way, and nothing is
allocated from a size the file declares). Paths are joined, named and confined by the same
object, so a dataset's code never splits a URL with ``os.path``.

A :class:`RemoteFolders` lists each folder once (one request; a store's listing pages through
more than a thousand entries) and answers every question about the files in it from that
listing: whether a shard is there and how large a JSON file is cost nothing more. It reads a
file with one ranged request (none for an empty one), and tells
:func:`codec.locations.remote_stat` what the listing said of each object, so that opening the
shards just listed asks nothing more of them. It stops listing after :data:`MAX_LISTINGS`
folders (a data dir of hundreds of datasets is not walked for minutes; :attr:`truncated`
says so). Network failures are :class:`~codec.errors.RemoteError` and refusals
``PermissionError`` (raised: a folder that cannot be reached is not a folder without
files); a folder or object that is not there is an empty folder, or ``FileNotFoundError``
from :meth:`~FolderAccess.read`."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import DecodeError
from .labelmap import read_capped
from .locations import (
    _remember,
    filesystem,
    is_url,
    join_url,
    protocol,
    remote_errors,
    shown,
    url_inside,
)

__all__ = [
    "LOCAL",
    "MAX_LISTINGS",
    "FolderAccess",
    "LocalFolders",
    "RemoteFolders",
    "folder_access",
    "too_large",
]

MAX_LISTINGS = 200  # folders one RemoteFolders lists at most


def too_large(what: str, size: int, limit: int) -> DecodeError:
    """The refusal of a ``what`` of ``size`` bytes over ``limit``, in the words
    :func:`codec.labelmap.read_capped` uses for a local file."""
    return DecodeError(f"{what}: {size:,} bytes is too large for a {what} (at most {limit:,})")


class FolderAccess(Protocol):
    """What a dataset's code asks of the folder it lies in (see the module docstring)."""

    remote: bool

    def join(self, folder: str, *names: str) -> str:
        """``folder`` and ``names`` joined."""
        ...

    def name(self, path: str) -> str:
        """The last part of ``path`` (a file's or a folder's name)."""
        ...

    def parent(self, path: str) -> str:
        """The folder ``path`` is in."""
        ...

    def child(self, folder: str, relative: str) -> str | None:
        """``folder/relative`` when it stays inside ``folder`` (not ``folder`` itself, no
        climbing out with ``..``, no absolute path or URL); None otherwise."""
        ...

    def relative(self, path: str, start: str) -> str:
        """``path`` written relative to ``start`` (``path`` shown when it is not below)."""
        ...

    def shown(self, path: str) -> str:
        """``path`` as it may be printed (a URL without credentials or query)."""
        ...

    def folders(self, folder: str, limit: int) -> list[str]:
        """The names of the subfolders of ``folder``, sorted, among its first ``limit``
        entries; empty when it is no folder or cannot be listed."""
        ...

    def files(self, folder: str, limit: int) -> list[str]:
        """The names of the files of ``folder``, sorted, among its first ``limit`` entries;
        empty when it is no folder or cannot be listed."""
        ...

    def is_file(self, path: str) -> bool: ...

    def is_dir(self, path: str) -> bool: ...

    def exists(self, path: str) -> bool: ...

    def size(self, path: str) -> int | None:
        """The size of the file at ``path`` in bytes; None when it is not there or its size
        is not known."""
        ...

    def read(self, path: str, limit: int, what: str) -> bytes:
        """The bytes of the small file at ``path``, its size checked first: over ``limit``
        is :func:`too_large` (``what`` names it) and nothing of it is read.
        ``FileNotFoundError`` when it is not there; ``OSError`` when it cannot be read."""
        ...


class LocalFolders:
    """:class:`FolderAccess` on the local disk."""

    remote = False

    def join(self, folder: str, *names: str) -> str:
        return os.path.join(folder, *names)

    def name(self, path: str) -> str:
        return os.path.basename(os.path.normpath(path))

    def parent(self, path: str) -> str:
        return os.path.dirname(path)

    def child(self, folder: str, relative: str) -> str | None:
        if os.path.isabs(relative) or not relative:
            return None
        path = os.path.normpath(os.path.join(folder, relative))
        root = os.path.normpath(folder)
        if os.path.commonpath([path, root]) != root or path == root:
            return None
        return path

    def relative(self, path: str, start: str) -> str:
        return os.path.relpath(path, start)

    def shown(self, path: str) -> str:
        return path

    def _names(self, folder: str, limit: int, dirs: bool) -> list[str]:
        try:
            with os.scandir(folder) as it:
                out = []
                for i, entry in enumerate(it):
                    if i >= limit:
                        break
                    if entry.is_dir() if dirs else entry.is_file():
                        out.append(entry.name)
                return sorted(out)
        except OSError:
            return []

    def folders(self, folder: str, limit: int) -> list[str]:
        return self._names(folder, limit, True)

    def files(self, folder: str, limit: int) -> list[str]:
        return self._names(folder, limit, False)

    def is_file(self, path: str) -> bool:
        return os.path.isfile(path)

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def size(self, path: str) -> int | None:
        try:
            return os.path.getsize(path)
        except OSError:
            return None

    def read(self, path: str, limit: int, what: str) -> bytes:
        return read_capped(path, limit, what)


LOCAL = LocalFolders()


@dataclass
class _Entry:
    folder: bool
    size: int | None


@dataclass
class RemoteFolders:
    """:class:`FolderAccess` on the object store of ``url`` (its file system made once, asked
    anonymously with ``anon``), each folder listed once. ``requests`` counts what it asked
    of the store; ``truncated`` says it stopped listing at :data:`MAX_LISTINGS` folders."""

    url: str
    anon: bool = False
    max_listings: int = MAX_LISTINGS
    remote: bool = True
    requests: int = 0
    truncated: bool = False
    _fs: Any = None
    _proto: str = ""
    _listings: dict[str, dict[str, _Entry]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._fs, _path = filesystem(self.url, anon=self.anon)
        self._proto = protocol(self.url) or ""

    # -- names --------------------------------------------------------------------------

    def join(self, folder: str, *names: str) -> str:
        return join_url(folder, *names)

    def name(self, path: str) -> str:
        return path.rstrip("/").rsplit("/", 1)[-1]

    def parent(self, path: str) -> str:
        head, _, _ = path.rstrip("/").rpartition("/")
        return head if "://" in head and head.split("://", 1)[1] else path

    def child(self, folder: str, relative: str) -> str | None:
        if not relative or relative.startswith(("/", "\\")) or "://" in relative:
            return None
        parts: list[str] = []
        for part in relative.replace("\\", "/").split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    return None
                parts.pop()
                continue
            parts.append(part)
        if not parts:
            return None
        url = join_url(folder, *parts)
        return url if url_inside(url, folder) else None

    def relative(self, path: str, start: str) -> str:
        base = start.rstrip("/") + "/"
        return path[len(base) :] if path.startswith(base) else shown(path)

    def shown(self, path: str) -> str:
        return shown(path)

    # -- the store ----------------------------------------------------------------------

    def _path(self, url: str) -> str:
        return str(self._fs._strip_protocol(url)).rstrip("/")

    def _url(self, path: str) -> str:
        if self._proto in ("http", "https"):
            return path
        return f"{self._proto}://{path.split('://', 1)[-1]}"

    def _listing(self, folder: str) -> dict[str, _Entry]:
        """The entries of ``folder`` by name, listed at the first question about it."""
        key = folder.rstrip("/")
        got = self._listings.get(key)
        if got is not None:
            return got
        if len(self._listings) >= self.max_listings:
            self.truncated = True
            return {}
        path = self._path(key)
        entries: dict[str, _Entry] = {}
        self.requests += 1
        with remote_errors(key, "listing"):
            with contextlib.suppress(AttributeError):
                self._fs.invalidate_cache(path)  # a listing the file system kept is stale
            try:
                listed = self._fs.ls(path, detail=True)
            except FileNotFoundError:
                listed = []
        for info in listed:
            full = str(info.get("name", "")).rstrip("/")
            if full == path or not full.startswith(path + "/"):
                continue  # the object itself (ls of a file), or nothing of this folder
            name = full[len(path) + 1 :]
            if not name or "/" in name:
                continue
            is_dir = info.get("type") == "directory"
            size = info.get("size")
            entries[name] = _Entry(is_dir, None if size is None else int(size))
            if not is_dir:
                _remember(self._url(full), self.anon, info)  # opening it asks nothing more
        self._listings[key] = entries
        return entries

    def _names(self, folder: str, limit: int, dirs: bool) -> list[str]:
        listing = self._listing(folder)
        names = sorted(listing)[:limit]
        return [n for n in names if listing[n].folder == dirs]

    def folders(self, folder: str, limit: int) -> list[str]:
        return self._names(folder, limit, True)

    def files(self, folder: str, limit: int) -> list[str]:
        return self._names(folder, limit, False)

    def _entry(self, path: str) -> _Entry | None:
        parent = self.parent(path)
        if parent == path:
            return None
        return self._listing(parent).get(self.name(path))

    def is_file(self, path: str) -> bool:
        entry = self._entry(path)
        return entry is not None and not entry.folder

    def is_dir(self, path: str) -> bool:
        key = path.rstrip("/")
        parent = self._listings.get(self.parent(key))
        if parent is not None and parent.get(self.name(key)) is not None:
            return parent[self.name(key)].folder  # known from its parent's listing
        # A store has no empty folders: a folder is a prefix with something under it. Its
        # own listing answers, and is what is asked of it next.
        return bool(self._listing(key))

    def exists(self, path: str) -> bool:
        return self._entry(path) is not None or self.is_dir(path)

    def size(self, path: str) -> int | None:
        entry = self._entry(path)
        return None if entry is None or entry.folder else entry.size

    def read(self, path: str, limit: int, what: str) -> bytes:
        entry = self._entry(path)
        if entry is None:
            raise FileNotFoundError(2, "no such object", shown(path))
        if entry.folder:
            raise IsADirectoryError(21, "is a folder, not a file", shown(path))
        size = entry.size
        if size is None:
            self.requests += 1
            with remote_errors(path, "asking for the object's size"):
                size = int(self._fs.info(self._path(path)).get("size") or 0)
        if size > limit:
            raise too_large(what, size, limit)
        if size == 0:
            return b""  # a ranged request of an empty object is refused by some stores
        self.requests += 1
        with remote_errors(path, "reading"):
            # A range to the cap and a byte more: the answer holds no more than the object
            # has, an object grown past the cap since it was listed is caught below.
            data = bytes(self._fs.cat_file(self._path(path), start=0, end=limit + 1))
        if len(data) > limit:
            raise DecodeError(f"{what}: more than {limit:,} bytes is too large for a {what}")
        return data


def folder_access(path: str, *, anon: bool = False) -> FolderAccess:
    """The :class:`FolderAccess` of ``path``: :data:`LOCAL` for a local path (or a
    ``file://`` URL), a new :class:`RemoteFolders` for a URL (read without credentials with
    ``anon``)."""
    if is_url(path):
        return RemoteFolders(path, anon)
    return LOCAL
