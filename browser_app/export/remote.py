"""Outputs whose destination is a URL (``s3://``, ``gs://``, ``az://``...): put in place so that
no partial object ever appears under the final name.

An export writes and verifies its outputs locally, in the staging folder
(:func:`staging_folder`), as it does for local destinations (:mod:`~browser_app.export.staging`).
Then :func:`publish` (or, for a piece written by a worker, :func:`upload` there and
:func:`publish` on the client) uploads each one to a temporary name in the destination's own
bucket and folder (``.<name>.tfb-export-<run>.part``, the temporary outputs' names of
:mod:`~browser_app.export.tempfiles`), checks what the server holds (its size, and its MD5 or
CRC32C where the server tells it), and only when every output has been uploaded and checked
copies each one to its final name (a server-side copy: the object appears whole or not at all)
and removes the temporary object. A failure at any step removes the temporary objects; the
objects already moved into place stay (as the local commit leaves the files already renamed),
and the message says how many.

While an export runs, a marker object stands beside each remote destination
(``.tfb-export-<run>.lock``, :func:`mark_run`), as its lock file does in a local folder. An
export that fails or is cancelled removes its markers first, then its temporary objects; a
task still writing on a worker that outlives the export (a Dask cluster, a running pool)
asks for the marker before it writes and after it uploads, and removes its upload when the
marker is gone, so nothing of a given-up export stays in the bucket whenever its tasks end.

:func:`open_input` reads an input that may be a URL (an import's JSON Lines, a label map).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import socket
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import crc32c as _crc32c

from browser_app.errors import ExportError, UploadError
from browser_app.export.tempfiles import run_of
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
from codec.settings import default_cache_dir

__all__ = [
    "READ_ONLY_PROTOCOLS",
    "Sent",
    "Upload",
    "check_writable",
    "clean_stale",
    "mark_run",
    "object_kind",
    "open_input",
    "publish",
    "remove_temporaries",
    "run_marked",
    "run_marker",
    "same_place",
    "staging_folder",
    "temp_url",
    "unmark_run",
    "upload",
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


def run_marker(dst: str, run: str) -> str:
    """The URL of the object that says the export run ``run`` is alive, in the folder of the
    destination ``dst``: the run's lock file name (``.tfb-export-<run>.lock``). A store has
    no locks that end with the process holding them, so this object stands for one: the
    client puts it there before any task writes (:func:`mark_run`) and removes it first when
    it gives the export up; a task asks for it (:func:`run_marked`) before it writes and
    after it uploads, and removes its upload when the marker is gone."""
    from browser_app.export.tempfiles import lock_name

    return join_url(parent_url(dst.split("?", 1)[0].rstrip("/")), lock_name(run))


def _this_process() -> dict[str, str]:
    """What tells this process from any other, now and later: the machine (its name and
    this boot), the process id and the process's start time (a pid is reused, never with
    the same start time)."""
    here = {"host": socket.gethostname(), "pid": str(os.getpid()), "boot": "", "start": ""}
    with contextlib.suppress(OSError):
        here["boot"] = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    here["start"] = _start_time(os.getpid())
    return here


def _start_time(pid: int) -> str:
    """The start time of process ``pid`` in clock ticks since boot ('' when unknown)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22, counted after the name


def _dead(marker: bytes) -> bool:
    """Whether the run whose marker holds ``marker`` is over for certain: it was put by a
    process of this machine, since this boot, that is gone (killed, say). A run of another
    machine is never judged from here."""
    fields = dict(
        line.split(" ", 1) for line in marker.decode("utf-8", "replace").splitlines() if " " in line
    )
    here = _this_process()
    if not here["boot"] or (fields.get("host"), fields.get("boot")) != (here["host"], here["boot"]):
        return False
    pid = fields.get("pid", "")
    if not pid.isdigit():
        return False
    start = _start_time(int(pid))
    return not start or start != fields.get("start")


def clean_stale(folder: str, *, anon: bool = False) -> int:
    """Remove from the remote ``folder`` what export runs that are over left: the markers
    of runs killed on this machine (``kill -9`` of the app or a command), then every
    temporary object of a run that has no marker (a marker is put before a run writes
    anything, and removed first when it ends). Returns how many objects it removed; never
    raises (what cannot be listed or removed stays for a later export)."""
    try:
        fs, path = filesystem(folder, anon=anon)
        names = [n.rstrip("/").rsplit("/", 1)[-1] for n in fs.ls(path, detail=False)]
    except Exception:
        return 0
    finally:
        # A library that keeps listings (adlfs) would answer later questions about this
        # folder from this one, taken before the run put its marker.
        with contextlib.suppress(Exception):
            fs.invalidate_cache(path)
    found = [(name, run_of(name)) for name in names]
    marked = {r[1] for _, r in found if r is not None and r[0] == "lock"}
    removed = 0
    for name, r in found:
        if r is None or r[0] != "lock":
            continue
        url = join_url(folder, name)
        try:
            with remote_errors(url, "reading"):
                text = fs.cat_file(f"{path.rstrip('/')}/{name}")
        except Exception:
            continue
        if _dead(text):
            unmark_run(url, anon=anon)
            marked.discard(r[1])
            removed += 1
    for name, r in found:
        if r is not None and r[0] == "temp" and r[1] not in marked:
            with contextlib.suppress(Exception):
                fs.rm(f"{path.rstrip('/')}/{name}", recursive=True)
                removed += 1
    return removed


def mark_run(dst: str, run: str, *, anon: bool = False) -> str:
    """Put the marker of the live run ``run`` beside ``dst`` (see :func:`run_marker`): what
    process of which machine runs it (:func:`clean_stale` judges it by that); its URL."""
    url = run_marker(dst, run)
    fs, path = filesystem(url, anon=anon)
    body = "tfrecord-browser export\n" + "".join(f"{k} {v}\n" for k, v in _this_process().items())
    try:
        with remote_errors(url, "writing"):
            fs.pipe_file(path, body.encode())
    except (RemoteError, OSError) as exc:
        unmark_run(url, anon=anon)
        plain = isinstance(exc, OSError) and not isinstance(exc, RemoteError) and exc.strerror
        why = exc.strerror if plain else describe(exc, url)  # its path is not the user's
        raise UploadError(
            f"{shown(dst)}: the upload failed, nothing was written under this name ({why})"
        ) from None
    return url


def run_marked(dst: str, run: str, *, anon: bool = False) -> bool:
    """Whether the marker of the run ``run`` is beside ``dst``: the export is alive (asked of
    the server, never of a cached listing)."""
    return object_kind(run_marker(dst, run), anon=anon) == "object"


def unmark_run(url: str, *, anon: bool = False) -> None:
    """Remove the run marker ``url`` (gone already, or the store away: nothing to do)."""
    with contextlib.suppress(Exception):
        fs, path = filesystem(url, anon=anon)
        fs.rm(path)


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
    """One output on its way: the local file or folder ``local`` (written and verified), its
    final URL ``dst``, and the temporary URL it is uploaded to first. Once uploaded,
    ``sent`` holds what the server said of each temporary object (its size and digests), so
    that another process can move it into place and check it without the local file."""

    local: str
    dst: str
    tmp: str
    moved: bool = False  # every object of it is in place
    created: list[str] = field(default_factory=list)  # objects of a folder new under dst
    names: list[str] | None = None  # a folder's files (read from ``local`` when not given)
    sent: dict[str, Sent] = field(default_factory=dict)  # temporary URL → what it holds

    def _names(self) -> list[str] | None:
        if self.names is None and os.path.isdir(self.local):
            self.names = sorted(os.listdir(self.local))
        return self.names

    def files(self) -> list[tuple[str, str, str]]:
        """``(local file, temporary URL, final URL)`` of every object this output is: the
        file itself, or each file of a folder (under the folder's URLs)."""
        names = self._names()
        if names is None:
            return [(self.local, self.tmp, self.dst)]
        return [
            (os.path.join(self.local, name), join_url(self.tmp, name), join_url(self.dst, name))
            for name in names
        ]

    @property
    def uploaded(self) -> bool:
        """Whether every object of it is at its temporary URL, checked."""
        return bool(self.sent) and len(self.sent) == len(self.files())


@dataclass(frozen=True)
class Sent:
    """What the server holds at a temporary URL after an upload was checked: its size and
    the whole-object digests it told (``md5``, ``crc32c``)."""

    size: int
    digests: dict[str, bytes]


Mover = Callable[[Any, str, str], None]


def _copy_then_remove(fs: Any, src: str, dst: str) -> None:
    """Move an object within one store: a server-side copy (whole or not at all), then the
    source removed."""
    fs.copy(src, dst)
    fs.rm(src)


MOVE: Mover = _copy_then_remove  # how an uploaded object is moved to its final name


@contextlib.contextmanager
def _uploading(uploads: list[Upload], anon: bool, done: list[int]) -> Iterator[list[str]]:
    """Run the body's uploads and moves of ``uploads``; on any failure remove their
    temporary objects and raise :class:`UploadError` naming the output the body was at
    (``current[0]``), and how many were already in place (``done[0]``)."""
    current = [uploads[0].dst if uploads else ""]
    try:
        yield current
    except (RemoteError, OSError, ExportError) as exc:
        remove_temporaries(uploads, anon)
        why = exc if isinstance(exc, ExportError) else describe(exc, current[0])
        already = f"; {done[0]} of the other outputs were already in place" if done[0] else ""
        raise UploadError(
            f"{shown(current[0])}: the upload failed, nothing was written under this name"
            f" ({why}){already}"
        ) from None
    except BaseException:
        remove_temporaries(uploads, anon)
        raise


def upload(uploads: list[Upload], *, anon: bool = False) -> None:
    """Upload every output to its temporary name and check what the server holds (see the
    module docstring), recording it in each one's ``sent``. Raises :class:`UploadError`; the
    temporary objects are removed then."""
    with _uploading(uploads, anon, [0]) as current:
        for up in uploads:
            current[0] = up.dst
            for local, tmp, _dst in up.files():
                up.sent[tmp] = _upload(local, tmp, anon)


def publish(uploads: list[Upload], *, anon: bool = False) -> None:
    """Upload every output not uploaded yet to its temporary name and check it, then move
    each one to its final name (see the module docstring). Raises :class:`UploadError`; the
    temporary objects are removed whatever happens."""
    done = [0]
    with _uploading(uploads, anon, done) as current:
        for up in uploads:
            current[0] = up.dst
            for local, tmp, _dst in up.files():
                if tmp not in up.sent:
                    up.sent[tmp] = _upload(local, tmp, anon)
        for up in uploads:
            current[0] = up.dst
            folder = up._names() is not None
            for _local, tmp, dst in up.files():
                if folder and object_kind(dst, anon=anon) is None:
                    up.created.append(dst)
                _move(tmp, dst, anon, up.sent[tmp])
            up.moved = True
            done[0] += 1


def _upload(local: str, tmp: str, anon: bool) -> Sent:
    fs, path = filesystem(tmp, anon=anon)
    with remote_errors(tmp, "uploading"):
        fs.put_file(local, path)
    size, told = _held(tmp, anon)
    if size != os.path.getsize(local):
        raise ExportError(
            f"{shown(tmp)}: the server holds {size} bytes, {os.path.getsize(local):,} were uploaded"
        )
    mine = _local_digests(local, set(told)) if told else {}
    for kind, value in told.items():
        if mine[kind] != value:
            raise ExportError(f"{shown(tmp)}: the uploaded object's {kind} does not match")
    return Sent(size, told)


def _move(tmp: str, dst: str, anon: bool, sent: Sent) -> None:
    """Move the checked temporary object ``tmp`` to ``dst`` and check that the object there
    is the one uploaded: the same size, and the same digest of every kind both tell."""
    fs, src = filesystem(tmp, anon=anon)
    _, target = filesystem(dst, anon=anon)
    with remote_errors(dst, "moving the upload into place"):
        MOVE(fs, src, target)
    size, told = _held(dst, anon)
    if size != sent.size:
        raise ExportError(
            f"{shown(dst)}: the server holds {size} bytes, {sent.size:,} were uploaded"
        )
    for kind, value in told.items():
        if kind in sent.digests and sent.digests[kind] != value:
            raise ExportError(f"{shown(dst)}: the uploaded object's {kind} does not match")


def remove_temporaries(uploads: list[Upload], anon: bool) -> None:
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


def _held(url: str, anon: bool) -> tuple[Any, dict[str, bytes]]:
    """The size of the object at ``url`` and the whole-object digests the server tells."""
    fs, path = filesystem(url, anon=anon)
    with remote_errors(url, "checking the upload"):
        with contextlib.suppress(AttributeError):
            fs.invalidate_cache(path)
        info = fs.info(path)
    return info.get("size"), _digests_told(info)


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
