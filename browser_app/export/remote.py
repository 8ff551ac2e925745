"""Outputs whose destination is a URL (``s3://``, ``gs://``, ``az://``...): put in place so that
no partial object ever appears under the final name.

An export writes and verifies its outputs locally, in the staging folder
(:func:`staging_folder`), as it does for local destinations (:mod:`~browser_app.export.staging`).
Then :func:`publish` uploads each one to a temporary name in the destination's own bucket and
folder (``.<name>.tfb-export-<run>.part``, the temporary outputs' names of
:mod:`~browser_app.export.tempfiles`), checks what the server holds (its size, and its MD5 or
CRC32C where the server tells it), and only when every output has been uploaded and checked
copies each one to its final name (a server-side copy: the object appears whole or not at all)
and removes the temporary object. A failure at any step removes the temporary objects; the
objects already moved into place stay (as the local commit leaves the files already renamed),
and the message says how many.

:func:`open_input` reads an input that may be a URL (an import's JSON Lines, a label map).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import crc32c as _crc32c

from browser_app.errors import ExportError, UploadError
from codec.cache import default_cache_dir
from codec.errors import RemoteError
from codec.locations import (
    describe,
    filesystem,
    is_url,
    join_url,
    parent_url,
    protocol,
    remote_errors,
    shown,
)

__all__ = [
    "READ_ONLY_PROTOCOLS",
    "Upload",
    "check_writable",
    "object_kind",
    "open_input",
    "publish",
    "same_place",
    "staging_folder",
    "temp_url",
]

READ_ONLY_PROTOCOLS = frozenset({"http", "https"})  # ranged reads only; nothing is written
STAGING = "export-staging"  # the local folder (under the cache) remote outputs are written in


def staging_folder() -> str:
    """The local folder where outputs for remote destinations are written and verified
    before they are uploaded: ``<cache>/export-staging`` (made when missing)."""
    folder = Path(default_cache_dir()) / STAGING
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder)


def check_writable(dst: str, *, anon: bool = False) -> None:
    """Refuse a destination URL this tool cannot write (``http(s)://`` is read-only here), and
    one whose library is missing (:class:`~codec.errors.MissingExtraError`), before anything
    is written."""
    proto = protocol(dst) or ""
    if proto in READ_ONLY_PROTOCOLS:
        raise ExportError(
            f"{shown(dst)}: {proto}:// URLs are read-only here; export to a local path or to an"
            " object store (s3://, gs://, az://)"
        )
    filesystem(dst, anon=anon)


def same_place(path: str) -> str:
    """A key that is the same for two names of the same file or object: a local file's real
    path, a URL as shown with repeated slashes folded."""
    if is_url(path):
        proto = protocol(path) or ""
        rest = shown(path)[len(proto) + 3 :].split("?", 1)[0]
        while "//" in rest:
            rest = rest.replace("//", "/")
        return f"{proto}://{rest.rstrip('/')}"
    return os.path.realpath(path)


def temp_url(dst: str, run: str) -> str:
    """The temporary name of an output for ``dst`` in the same bucket and folder:
    ``.<name>.tfb-export-<run>.part`` (the temporary outputs' names of
    :mod:`~browser_app.export.tempfiles`, so they are recognised as an export's)."""
    from browser_app.export.tempfiles import MARK, _short

    name = dst.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return join_url(
        parent_url(dst.split("?", 1)[0].rstrip("/")), f".{_short(name)}.{MARK}-{run}.part"
    )


def object_kind(url: str, *, anon: bool = False) -> str | None:
    """``"object"``, ``"folder"`` (a prefix with objects under it) or ``None`` (nothing)."""
    fs, path = filesystem(url, anon=anon)
    with remote_errors(url, "looking at the destination"):
        with contextlib.suppress(AttributeError):
            fs.invalidate_cache(path)
        try:
            info = fs.info(path)
        except FileNotFoundError:
            return None
    return "folder" if info.get("type") == "directory" else "object"


class _Reading:
    """A remote file object whose reads raise this package's errors (the body of the
    ``with`` that reads it keeps its own)."""

    def __init__(self, f: Any, url: str) -> None:
        self._f = f
        self._url = url

    def read(self, n: int = -1) -> bytes:
        with remote_errors(self._url, "reading"):
            return bytes(self._f.read(n))

    def readline(self) -> bytes:
        with remote_errors(self._url, "reading"):
            return bytes(self._f.readline())

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line


@contextlib.contextmanager
def open_input(spec: str, *, anon: bool = False) -> Iterator[IO[bytes]]:
    """``spec`` (a local path or a URL) open for reading bytes (``read``, ``readline``,
    iteration over lines). A remote object's errors come as this package's errors (see
    :func:`codec.locations.remote_errors`)."""
    if not is_url(spec):
        with open(spec, "rb") as f:
            yield f
        return
    fs, path = filesystem(spec, anon=anon)
    with remote_errors(spec, "opening"):
        f = fs.open(path, "rb")
    try:
        yield _Reading(f, spec)  # type: ignore[misc]
    finally:
        with contextlib.suppress(Exception):
            f.close()


# --------------------------------------------------------------------------------------------
# Putting outputs in place


@dataclass
class Upload:
    """One output on its way: the local file or folder ``local`` (written and verified),
    its final URL ``dst``, and the temporary URL it is uploaded to first."""

    local: str
    dst: str
    tmp: str
    moved: bool = False  # every object of it is in place
    created: list[str] = field(default_factory=list)  # objects of a folder new under dst

    def files(self) -> list[tuple[str, str, str]]:
        """``(local file, temporary URL, final URL)`` of every object this output is: the
        file itself, or each file of a folder (under the folder's URLs)."""
        if not os.path.isdir(self.local):
            return [(self.local, self.tmp, self.dst)]
        return [
            (os.path.join(self.local, name), join_url(self.tmp, name), join_url(self.dst, name))
            for name in sorted(os.listdir(self.local))
        ]


Mover = Callable[[Any, str, str], None]


def _copy_then_remove(fs: Any, src: str, dst: str) -> None:
    """Move an object within one store: a server-side copy (whole or not at all), then the
    source removed."""
    fs.copy(src, dst)
    fs.rm(src)


MOVE: Mover = _copy_then_remove  # how an uploaded object is moved to its final name


def publish(uploads: list[Upload], *, anon: bool = False) -> None:
    """Upload every output to its temporary name and check it, then move each one to its
    final name (see the module docstring). Raises :class:`UploadError`; the temporary objects
    are removed whatever happens."""
    done = 0
    current = uploads[0].dst if uploads else ""
    digests: dict[str, dict[str, bytes]] = {}
    try:
        for up in uploads:
            current = up.dst
            for local, tmp, _dst in up.files():
                _upload(local, tmp, anon, digests)
        for up in uploads:
            current = up.dst
            folder = os.path.isdir(up.local)
            for local, tmp, dst in up.files():
                if folder and object_kind(dst, anon=anon) is None:
                    up.created.append(dst)
                _move(local, tmp, dst, anon, digests)
            up.moved = True
            done += 1
    except (RemoteError, OSError, ExportError) as exc:
        _remove_temporaries(uploads, anon)
        why = exc if isinstance(exc, ExportError) else describe(exc, current)
        already = f"; {done} of the other outputs were already in place" if done else ""
        raise UploadError(
            f"{shown(current)}: the upload failed, nothing was written under this name"
            f" ({why}){already}"
        ) from None
    except BaseException:
        _remove_temporaries(uploads, anon)
        raise


Digests = dict[str, dict[str, bytes]]  # local file → its digests computed so far


def _upload(local: str, tmp: str, anon: bool, digests: Digests) -> None:
    fs, path = filesystem(tmp, anon=anon)
    with remote_errors(tmp, "uploading"):
        fs.put_file(local, path)
    _check(local, tmp, anon, digests)


def _move(local: str, tmp: str, dst: str, anon: bool, digests: Digests) -> None:
    fs, src = filesystem(tmp, anon=anon)
    _, target = filesystem(dst, anon=anon)
    with remote_errors(dst, "moving the upload into place"):
        MOVE(fs, src, target)
    _check(local, dst, anon, digests)


def _remove_temporaries(uploads: list[Upload], anon: bool) -> None:
    """Remove the temporary objects of the outputs not in place, and the objects of a folder
    output that was partly moved and that were not there before (a folder appears whole or
    not at all; an object it replaced stays replaced)."""
    for up in uploads:
        if up.moved:
            continue
        gone = [tmp for _local, tmp, _dst in up.files()] + up.created
        for url in gone:
            with contextlib.suppress(Exception):  # gone already, or the store is away
                fs, path = filesystem(url, anon=anon)
                fs.rm(path)


def _check(local: str, url: str, anon: bool, digests: Digests) -> None:
    """Raise :class:`ExportError` unless the object at ``url`` has the local file's size, and
    its MD5 or CRC32C where the server gives one that is the whole object's."""
    fs, path = filesystem(url, anon=anon)
    with remote_errors(url, "checking the upload"):
        with contextlib.suppress(AttributeError):
            fs.invalidate_cache(path)
        info = fs.info(path)
    size = os.path.getsize(local)
    if info.get("size") != size:
        raise ExportError(
            f"{shown(url)}: the server holds {info.get('size')} bytes, {size:,} were uploaded"
        )
    want = _digests_told(info)
    if not want:
        return
    have = digests.setdefault(local, {})
    missing = set(want) - set(have)
    if missing:
        have.update(_local_digests(local, missing))
    for kind, value in want.items():
        if have[kind] != value:
            raise ExportError(f"{shown(url)}: the uploaded object's {kind} does not match")


def _digests_told(info: dict[str, Any]) -> dict[str, bytes]:
    """The whole-object digests an object's info gives: S3's ETag when it is an MD5 (not a
    multipart ETag), GCS's md5Hash and crc32c."""
    out: dict[str, bytes] = {}
    etag = str(info.get("ETag") or info.get("etag") or "").strip('"')
    if len(etag) == 32 and "-" not in etag:
        with contextlib.suppress(ValueError):
            out["md5"] = bytes.fromhex(etag)
    for key, kind in (("md5Hash", "md5"), ("crc32c", "crc32c")):
        value = info.get(key)
        if isinstance(value, str) and value:
            with contextlib.suppress(ValueError):
                out[kind] = base64.b64decode(value)
    return out


def _local_digests(path: str, kinds: set[str]) -> dict[str, bytes]:
    md5 = hashlib.md5(usedforsecurity=False) if "md5" in kinds else None
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            if md5 is not None:
                md5.update(chunk)
            if "crc32c" in kinds:
                crc = _crc32c.crc32c(chunk, crc)
    out: dict[str, bytes] = {}
    if md5 is not None:
        out["md5"] = md5.digest()
    if "crc32c" in kinds:
        out["crc32c"] = struct.pack(">I", crc)
    return out
