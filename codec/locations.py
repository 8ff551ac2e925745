"""Where data lives: local paths and URLs (``gs://``, ``s3://``, ``az://``, ``https://`` and any
other fsspec protocol that reads byte ranges), in one place.

Every URL the codec touches goes through here: :func:`is_url` tells a URL from a path,
:func:`shown` is the only form of a URL that is ever printed, logged, stored on disk or put in a
link (no user name, password or query string: a signed URL's signature lives in its query),
:func:`filesystem` finds the fsspec file system of a URL (one message naming the extra to
install when its library is missing), :func:`remote_stat` asks for an object's size and version,
and :func:`expand_urls` turns globs, shard patterns, ``name@N`` and folder prefixes into objects.

Credentials come from each library's own chain (environment, config files, metadata server);
``anon=True`` reads public buckets without any. An S3-compatible server (MinIO, ...) is reached
through the usual ``AWS_ENDPOINT_URL`` setting.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .errors import MissingExtraError, ObjectChangedError, RemoteError
from .settings import remote_timeout

__all__ = [
    "RemoteStat",
    "expand_urls",
    "filesystem",
    "forget",
    "is_url",
    "join_url",
    "parent_url",
    "protocol",
    "remote_errors",
    "remote_stat",
    "shown",
    "url_inside",
]

_URL = re.compile(r"^(?P<proto>[A-Za-z][A-Za-z0-9+.\-]*)://")

# The protocols with a library behind an extra of ours: the extra that installs it.
EXTRAS: dict[str, tuple[str, str]] = {
    "s3": ("s3", "s3fs"),
    "s3a": ("s3", "s3fs"),
    "gs": ("gcs", "gcsfs"),
    "gcs": ("gcs", "gcsfs"),
    "az": ("azure", "adlfs"),
    "abfs": ("azure", "adlfs"),
    "abfss": ("azure", "adlfs"),
    "http": ("http", "aiohttp"),
    "https": ("http", "aiohttp"),
}


def protocol(spec: str) -> str | None:
    """The protocol of a URL (``"s3"``, ``"https"``, ...), lower case; ``None`` for a path."""
    m = _URL.match(spec)
    return m.group("proto").lower() if m else None


def is_url(spec: object) -> bool:
    """Whether ``spec`` names a remote object (``scheme://...``), not a local path. A
    ``file://`` URL is a local path (see :func:`local_path`)."""
    return isinstance(spec, str) and protocol(spec) not in (None, "file")


def local_path(spec: str) -> str:
    """``spec`` with a ``file://`` prefix taken off (other specs unchanged)."""
    return spec[len("file://") :] if protocol(spec) == "file" else spec


def shown(url: str) -> str:
    """``url`` as it may be shown, logged or stored: without user name, password, query string
    or fragment. A signed URL's signature and a token in the query are never printed."""
    if not is_url(url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"{protocol(url)}://…"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    path = parts.path
    query = "…" if parts.query else ""
    return urlunsplit((parts.scheme, host, path, query, ""))


def redact_text(text: str, url: str) -> str:
    """``text`` (an error message from a library, say) with ``url``'s query string, user
    name and password replaced by the shown form, and any other signed-looking query cut."""
    if is_url(url):
        text = text.replace(url, shown(url))
        with contextlib.suppress(ValueError):
            parts = urlsplit(url)
            for secret in (parts.query, parts.password, parts.username):
                if secret:
                    text = text.replace(secret, "…")
    return _SIGNED.sub(r"\1…", text)


_SIGNED = re.compile(
    r"((?:X-Amz-[A-Za-z-]+|X-Goog-[A-Za-z-]+|Signature|sig|se|sp|sv|skoid|sktid|token"
    r"|access_token|GoogleAccessId|AWSAccessKeyId|Expires|key)=)[^&\s'\"]+",
    re.I,
)


def join_url(base: str, *names: str) -> str:
    """``base`` and ``names`` joined with ``/``."""
    out = base.rstrip("/")
    for n in names:
        out += "/" + n.strip("/")
    return out


def parent_url(url: str) -> str:
    """The folder a URL's object is in (``s3://b/x/y.tfrecord`` → ``s3://b/x``)."""
    head, _, _ = url.rstrip("/").rpartition("/")
    return head if _URL.match(head + "/") and "://" in head else url


def url_inside(url: str, root: str) -> bool:
    """Whether ``url`` lies under the URL prefix ``root`` (same protocol and bucket, and its
    path under the root's, by whole path components). A dot segment (``.`` or ``..``) or a
    separator (``/``, ``\\``) hidden in a component by percent-encoding, at any depth
    (``%2e%2e``, ``%252e%252e``, ``..%2f``), is never inside: an HTTP client, a server or a
    store's library may decode it and resolve it, leaving the root, so the component is
    refused before any of them sees it."""
    if not (is_url(url) and is_url(root)):
        return False
    a, b = _norm(url), _norm(root)
    if any(_hides_a_way_out(part) for part in a.split("://", 1)[1].split("/")):
        return False
    return a == b or a.startswith(b.rstrip("/") + "/")


_DECODINGS = 8  # percent-decodings a component is followed through (each may be applied)


def _hides_a_way_out(part: str) -> bool:
    """Whether a path component is, or decodes (once or more) into, a dot segment or
    something holding a separator."""
    for _ in range(_DECODINGS):
        if part in (".", "..") or "/" in part or "\\" in part:
            return True
        decoded = urllib.parse.unquote(part)
        if decoded == part:
            return False
        part = decoded
    return True  # still encoded after that many decodings: no name a person means


def _norm(url: str) -> str:
    proto = protocol(url) or ""
    rest = url[len(proto) + 3 :].split("?", 1)[0].split("#", 1)[0]
    return f"{proto}://{re.sub('/+', '/', rest)}"


# --------------------------------------------------------------------------------------------
# File systems


def storage_options(proto: str, *, anon: bool = False) -> dict[str, Any]:
    """The fsspec options for ``proto``: anonymous access when asked; timeouts that make a
    stalled connection an error (retried) rather than a wait of minutes."""
    timeout = remote_timeout()
    opts: dict[str, Any] = {}
    if proto in ("s3", "s3a"):
        opts["config_kwargs"] = {
            "connect_timeout": timeout,
            "read_timeout": timeout,
            # One attempt each: the retries (with backoff, and one message when they run out)
            # are ours, in codec.remote, not botocore's 5 times s3fs's 5.
            "retries": {"total_max_attempts": 1},
        }
        if anon:
            opts["anon"] = True
    elif proto in ("gs", "gcs"):
        if anon:
            opts["token"] = "anon"
    elif proto in ("az", "abfs", "abfss"):
        if anon:
            opts["anon"] = True
    elif proto in ("http", "https"):
        with contextlib.suppress(ImportError):
            import aiohttp

            opts["client_kwargs"] = {
                "timeout": aiohttp.ClientTimeout(total=None, connect=timeout, sock_read=timeout)
            }
    return opts


_FS_LOCK = threading.Lock()


def filesystem(url: str, *, anon: bool = False) -> tuple[Any, str]:
    """The fsspec file system that reads ``url``, and the object's path within it.

    Raises :class:`~codec.errors.MissingExtraError` naming the extra to install when the
    protocol's library is missing, and :class:`~codec.errors.RemoteError` for a protocol
    fsspec does not know. Access is anonymous only when this call says ``anon``: a bucket
    one caller reads anonymously is read with credentials by another that does not."""
    proto = protocol(url)
    if proto is None:
        raise ValueError(f"{url}: not a URL")
    try:
        import fsspec
    except ImportError as exc:
        extra = EXTRAS.get(proto, ("remote", "fsspec"))[0]
        raise MissingExtraError(shown(url), extra, "fsspec") from exc
    try:
        with _FS_LOCK:  # fsspec's instance cache is shared: make one per option set
            fs, path = fsspec.core.url_to_fs(url, **storage_options(proto, anon=anon))
    except ImportError as exc:
        extra, library = EXTRAS.get(proto, ("remote", proto))
        raise MissingExtraError(shown(url), extra, library) from exc
    except ValueError as exc:
        if "Protocol not known" in str(exc) or "not known" in str(exc):
            raise RemoteError(
                f"{shown(url)}: {proto}:// is not a protocol this tool can read"
            ) from exc
        raise RemoteError(f"{shown(url)}: {redact_text(str(exc), url)}") from exc
    if proto in ("s3", "s3a") and hasattr(fs, "retries"):
        fs.retries = 1  # see storage_options: retrying is codec.remote's job
    return fs, path


# --------------------------------------------------------------------------------------------
# Errors in words


WRITES = ("writing", "uploading")  # what remote_errors is told a call does when it writes


@contextlib.contextmanager
def remote_errors(url: str, doing: str = "") -> Iterator[None]:
    """Errors of a remote call as this package's errors, their text free of credentials:
    a missing object stays ``FileNotFoundError``, a refused one ``PermissionError``, an object
    that changed becomes :class:`ObjectChangedError`; anything else :class:`RemoteError`.
    ``doing`` says what the call did; for a write (``"writing"``, ``"uploading"``) a missing
    object can only be a missing bucket (a store makes any key it is given)."""
    name = shown(url)
    try:
        yield
    except (RemoteError, MissingExtraError):
        raise
    except FileNotFoundError as exc:
        if exc.filename == name:  # one of ours, already in words ("3 of 16 shards are missing")
            raise
        if doing in WRITES:
            raise FileNotFoundError(2, "no such bucket; create it first", name) from _bare(exc)
        raise FileNotFoundError(2, "no such object", name) from _bare(exc)
    except PermissionError as exc:
        raise PermissionError(
            13,
            "access denied (check the credentials this library finds, or --anon for a public"
            " bucket)",
            name,
        ) from _bare(exc)
    except Exception as exc:
        if changed_error(exc):
            raise ObjectChangedError(name) from _bare(exc)
        if type(exc).__name__ in ("NoCredentialsError", "PartialCredentialsError"):
            raise PermissionError(
                13,
                "no credentials found (set them up for this store, or --anon for a public bucket)",
                name,
            ) from _bare(exc)
        what = f"{doing} failed" if doing else "failed"
        raise RemoteError(f"{name}: {what}: {describe(exc, url)}") from _bare(exc)


def _bare(exc: BaseException) -> BaseException | None:
    """The cause kept on a re-raised error: none, since its text may hold a signed URL."""
    return None


def changed_error(exc: BaseException) -> bool:
    """Whether ``exc`` says the object is no longer the version a read was pinned to (HTTP
    412 Precondition Failed, fsspec's ``FileExpired``)."""
    if isinstance(exc, ObjectChangedError):
        return True
    name = type(exc).__name__
    if name == "FileExpired":
        return True
    status = getattr(exc, "status", None) or getattr(exc, "code", None)
    if status == 412:
        return True
    text = str(exc)
    return ("412" in text and "recondition" in text) or "PreconditionFailed" in text


def describe(exc: BaseException, url: str = "") -> str:
    """An exception from a remote library in one line, without credentials."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if len(text) > 300:
        text = text[:300] + "…"
    return redact_text(text, url)


# --------------------------------------------------------------------------------------------
# Objects


@dataclass(frozen=True)
class RemoteStat:
    """An object's size and version (ETag, generation or version id; ``""`` when the server
    gives none), and its last-modified time in nanoseconds (0 when unknown)."""

    size: int
    version: str
    mtime_ns: int = 0

    def moved_from(self, size: int, version: str) -> bool:
        """Whether this (the object as the server has it now) is no longer the object opened
        with ``size`` and ``version`` (an empty ``version`` is not compared)."""
        return self.size != size or (bool(version) and self.version != version)


_VERSION_KEYS = ("generation", "VersionId", "version_id", "ETag", "etag", "ContentMD5")


def version_of(info: dict[str, Any]) -> str:
    """The version of an object from an fsspec ``info`` dict: the first of generation,
    version id, ETag that the file system gives; ``""`` when none."""
    for k in _VERSION_KEYS:
        v = info.get(k)
        if v not in (None, ""):
            return str(v)
    return ""


def _mtime_ns(info: dict[str, Any]) -> int:
    for k in ("LastModified", "mtime", "updated", "last_modified", "Last-Modified"):
        v = info.get(k)
        if v is None:
            continue
        with contextlib.suppress(Exception):
            if hasattr(v, "timestamp"):
                return int(v.timestamp() * 1e9)
            if isinstance(v, (int, float)):
                return int(v * 1e9)
            from email.utils import parsedate_to_datetime

            return int(parsedate_to_datetime(str(v)).timestamp() * 1e9)
    return 0


_STAT_TTL = 5.0
_stat_cache: dict[tuple[str, bool], tuple[float, RemoteStat]] = {}


def forget() -> None:
    """Forget every object's size and version kept from a listing or a recent request."""
    _stat_cache.clear()


def _remember(url: str, anon: bool, info: dict[str, Any]) -> None:
    """Keep what a listing said of an object (size, version), so opening the objects of a
    pattern just listed costs no request each."""
    size = info.get("size")
    if size is not None and info.get("type") != "directory":
        st = RemoteStat(int(size), version_of(info), _mtime_ns(info))
        _stat_cache[(url, anon)] = (time.monotonic(), st)


def remote_stat(url: str, *, anon: bool = False, fresh: bool = False) -> RemoteStat:
    """Size and version of the object at ``url`` (one request; answers younger than a few
    seconds are reused unless ``fresh``). A folder or a missing object raises
    ``FileNotFoundError`` / ``IsADirectoryError`` with the URL as shown (asked anonymously
    with ``anon``; the answer is kept apart from one asked with credentials)."""
    key = (url, anon)
    now = time.monotonic()
    hit = _stat_cache.get(key)
    if hit is not None and not fresh and now - hit[0] < _STAT_TTL:
        return hit[1]
    fs, path = filesystem(url, anon=anon)
    with remote_errors(url, "asking for the object's size"):
        with contextlib.suppress(AttributeError):
            fs.invalidate_cache(path)
        info = fs.info(path)
    if info.get("type") == "directory":
        raise IsADirectoryError(21, "is a folder, not an object", shown(url))
    size = info.get("size")
    if size is None:
        raise RemoteError(f"{shown(url)}: the server does not tell the object's size")
    st = RemoteStat(int(size), version_of(info), _mtime_ns(info))
    _stat_cache[key] = (now, st)
    return st


# --------------------------------------------------------------------------------------------
# Patterns


_SHARD_AT = re.compile(r"^(?P<base>.+)@(?P<n>\d+)$")
_GLOB_CHARS = re.compile(r"[*?\[]")


def expand_urls(
    spec: str,
    *,
    anon: bool = False,
    looks_like: Callable[[str], bool],
    max_shards: int,
) -> list[str]:
    """The objects a URL names: itself, a glob (``gs://b/train-*-of-01024``), TensorFlow's
    ``name@N`` or a folder prefix (its TFRecord-looking objects, by ``looks_like``), sorted.
    One listing per pattern, whatever ``N`` is. Raises ``FileNotFoundError`` when nothing
    matches."""
    fs, path = filesystem(spec, anon=anon)
    proto = protocol(spec) or ""
    name = shown(spec)

    def url_of(p: str) -> str:
        if proto in ("http", "https"):
            return p
        return f"{proto}://{p.split('://', 1)[-1]}"

    m = _SHARD_AT.match(spec)
    with remote_errors(spec, "listing"):
        if m and not _exists(fs, path):
            from .errors import LimitError

            n = int(m.group("n"))
            if not 1 <= n <= max_shards:
                raise LimitError(f"{name}: {n:,} shards is outside 1 to {max_shards:,}")
            base = m.group("base")
            folder = parent_url(base)
            stem = base.rsplit("/", 1)[-1]
            of = f"{n:05d}"
            # ``name@N`` is name-00000-of-0000N...; ``stem.ext@N`` also stem-00000-of-0000N.ext
            # (the names TensorFlow and a sharded export give), as for local files.
            head, dot, _ = stem.rpartition(".")
            shapes = [re.escape(stem)] + ([re.escape(head)] if dot and head else [])
            pattern = re.compile(rf"(?:{'|'.join(shapes)})-(\d{{5,}})-of-{of}(\.[^/]*)?")
            entries = {
                str(e["name"]).rstrip("/").rsplit("/", 1)[-1]: e
                for e in fs.ls(_path_of(fs, folder), detail=True)
            }
            listing = list(entries)
            found: dict[int, str] = {}
            for x in listing:
                mm = pattern.fullmatch(x)
                k = int(mm.group(1)) if mm else n
                # A shard's name beats another name with its number (its text index beside it)
                if k < n and (k not in found or (looks_like(x) and not looks_like(found[k]))):
                    found[k] = x
            if len(found) < n:
                first = next(k for k in range(n) if k not in found)
                raise FileNotFoundError(
                    2,
                    f"{n - len(found):,} of {n:,} shards are missing, first"
                    f" {stem}-{first:05d}-of-{of}",
                    name,
                )
            urls = [join_url(folder, found[k]) for k in range(n)]
            for k, u in enumerate(urls):
                _remember(u, anon, entries[found[k]])
            return urls
        if _GLOB_CHARS.search(path) and proto not in ("http", "https"):
            matched = fs.glob(path, detail=True)
            hits = sorted(p for p, e in matched.items() if e.get("type") != "directory")
            if not hits:
                raise FileNotFoundError(2, "no object matches this pattern", name)
            for p in hits:
                _remember(url_of(p), anon, matched[p])
            return [url_of(p) for p in hits]
        try:
            info = fs.info(path)
        except FileNotFoundError:
            info = {"type": "directory"} if _is_dir(fs, path) else None
        if info is None:
            raise FileNotFoundError(2, "no such object", name)
        if info.get("type") == "directory":
            entries = {e["name"]: e for e in fs.ls(path, detail=True)}
            hits = sorted(
                n
                for n, e in entries.items()
                if e.get("type") != "directory" and looks_like(n.rstrip("/").rsplit("/", 1)[-1])
            )
            if not hits:
                raise FileNotFoundError(2, "the folder holds no TFRecord objects", name)
            urls = hits if proto in ("http", "https") else [url_of(p) for p in hits]
            for u, p in zip(urls, hits):
                _remember(u, anon, entries[p])
            return urls
        _remember(spec, anon, info)  # opening it next asks no second time
        return [spec]


def _path_of(fs: Any, url: str) -> str:
    return str(fs._strip_protocol(url))


def _exists(fs: Any, path: str) -> bool:
    try:
        return bool(fs.exists(path))
    except Exception:
        return False


def _is_dir(fs: Any, path: str) -> bool:
    try:
        return bool(fs.isdir(path))
    except Exception:
        return False
