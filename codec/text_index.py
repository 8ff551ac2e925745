"""Text indexes beside the data: the ``<offset> <size>`` lines of NVIDIA DALI's
``tfrecord2idx`` and of the ``tfrecord`` package (one line per record: the header's byte offset
and the record's whole size, payload + 16).

An index is only ever a shortcut: its entries are checked against the file's own headers before
they are used (:func:`checked_prefix`: every header's length and length CRC, vectorised), or,
where every header would cost a block read of a remote object, the entries must run back to back
from byte 0 to the last byte and a few headers spread over the object must check out
(:func:`sampled_ok`); every record's data CRC is still checked when it is read.

:func:`find_text_index` finds the index of a file or object (``<name>.idx``, ``<stem>.idx``,
``<name>.index``, beside it: one listing per remote folder), :func:`checked_index` keeps the
entries of an index that check out against a stream (what
:meth:`~codec.reader.TFRecordFile.load_text_index` adopts) and :func:`use_text_index` adopts
the index beside an open file whose own index is not known yet. :func:`write_text_index`
writes one.
"""

from __future__ import annotations

import os
import posixpath
import warnings
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .framing import HEADER_SIZE, OVERHEAD, headers_hold
from .locations import RemoteStat, filesystem, is_url, join_url, parent_url, remote_errors, shown

__all__ = [
    "INDEX_SUFFIXES",
    "Checked",
    "IndexedFile",
    "checked_index",
    "checked_prefix",
    "find_text_index",
    "index_names",
    "parse_text_index",
    "sampled_ok",
    "use_text_index",
    "write_text_index",
]

INDEX_SUFFIXES = (".idx", ".index")  # DALI's and the tfrecord package's usual names
REMOTE_SAMPLE = 3  # headers of a remote object checked before its index is used
MAX_LINE = 48  # bytes of one index line at most ("<20 digits> <20 digits>\r\n")

Need = Callable[[int, int], None]
Listings = dict[str, dict[str, dict[str, Any]]]
"""Remote folder listings already made: folder URL → object name → fsspec info."""


def parse_text_index(data: bytes, name: str = "") -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, sizes)`` of the entries of a text index (int64 arrays). Blank lines are
    skipped; any other line must be two whole numbers (``ValueError`` naming ``name``)."""
    lines = sum(1 for line in data.splitlines() if line.strip())
    if not lines:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # numpy warns, and stops, at text it cannot read
            values = np.fromstring(data.decode("ascii"), dtype=np.int64, sep=" ")
    except (ValueError, DeprecationWarning) as exc:
        raise ValueError(f"{name}: not a text index: {exc}") from None
    if len(values) != 2 * lines:
        raise ValueError(f"{name}: not a text index (every line must be '<offset> <size>')")
    pairs = values.reshape(-1, 2)
    return pairs[:, 0].copy(), pairs[:, 1].copy()


def _headers_match(buf: Any, offsets: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Whether each header at ``offsets`` holds the length ``size - 16`` and its length CRC
    checks out (the headers must lie inside ``buf``)."""
    return headers_hold(buf, offsets, sizes - OVERHEAD)


def _contiguous(offsets: np.ndarray, sizes: np.ndarray, size: int) -> int:
    """How many leading entries run back to back from byte 0, each a whole record inside a
    stream of ``size`` bytes."""
    n = len(offsets)
    if not n:
        return 0
    ends = offsets + sizes
    expected = np.concatenate(([0], ends[:-1]))
    bad = (offsets != expected) | (sizes < OVERHEAD) | (ends > size)
    hits = np.flatnonzero(bad)
    return int(hits[0]) if hits.size else n


def checked_prefix(
    buf: Any, size: int, need: Need | None, offsets: np.ndarray, sizes: np.ndarray
) -> int:
    """How many leading entries can be trusted: they run back to back from byte 0, and every
    one's header holds its length with a matching length CRC. Each header is asked for with
    ``need`` first (a remote object fetches its blocks; ``None``: every byte is there)."""
    n = _contiguous(offsets, sizes, size)
    if need is not None:
        for off in offsets[:n].tolist():
            need(off, off + HEADER_SIZE)
    ok = _headers_match(buf, offsets[:n], sizes[:n])
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else n


def sampled_ok(
    buf: Any, size: int, need: Need, offsets: np.ndarray, sizes: np.ndarray, sample: int
) -> bool:
    """Whether the whole index may be used after checking ``sample`` headers only: its
    entries run back to back from byte 0 to exactly the end of the stream, and the headers of
    ``sample`` entries spread over it (the first and the last included) check out."""
    n = len(offsets)
    if not n or _contiguous(offsets, sizes, size) != n or int(offsets[-1] + sizes[-1]) != size:
        return False
    picks = np.unique(np.linspace(0, n - 1, max(2, sample)).round().astype(np.int64))
    for off in offsets[picks].tolist():
        need(off, off + HEADER_SIZE)
    return bool(_headers_match(buf, offsets[picks], sizes[picks]).all())


@dataclass(frozen=True)
class Checked:
    """The entries of a text index that check out: the records' header ``offsets`` and payload
    ``lengths`` (``array("Q")``, as a reader keeps them) and ``end``, the byte after the last."""

    offsets: array
    lengths: array
    end: int


def checked_index(
    source: str | os.PathLike[str] | bytes,
    buf: Any,
    size: int,
    need: Need | None,
    *,
    path: str,
    sample: int | None = None,
) -> Checked | None:
    """The entries of the text index ``source`` (a file, or its bytes) that may stand for the
    index of the stream ``buf`` of ``size`` bytes (named ``path``), or None when none may.

    By default every entry is checked against its header (:func:`checked_prefix`: each
    header asked for with ``need`` first; ``None``: every byte is there) and the entries are
    kept up to the first that does not match or does not follow the one before. ``sample=N``
    keeps all of them or none (:func:`sampled_ok`). Raises ``OSError`` / ``ValueError`` for an
    index that cannot be read or parsed."""
    if isinstance(source, bytes):
        data, name = source, path + " (text index)"
    else:
        with open(source, "rb") as fh:
            data, name = fh.read(), os.fspath(source)
    offsets, sizes = parse_text_index(data, name)
    if sample is None:
        n = checked_prefix(buf, size, need, offsets, sizes)
    else:
        every = need if need is not None else _all_there
        n = len(offsets) if sampled_ok(buf, size, every, offsets, sizes, sample) else 0
    if not n:
        return None
    return Checked(
        array("Q", offsets[:n].astype(np.uint64).tobytes()),
        array("Q", (sizes[:n] - OVERHEAD).astype(np.uint64).tobytes()),
        int(offsets[n - 1] + sizes[n - 1]),
    )


def _all_there(start: int, end: int) -> None:
    """The ``need`` of a stream whose every byte is there."""


def write_text_index(
    target: str | os.PathLike[str], offsets: Sequence[int], lengths: Sequence[int]
) -> None:
    """Write ``"<offset> <total size>"`` per record (total = payload + 16), atomically."""
    from .writer import atomic_output  # here: reading loads no writing code

    with atomic_output(target, "w") as f:
        for off, n in zip(offsets, lengths):
            f.write(f"{off} {n + OVERHEAD}\n")


# --------------------------------------------------------------------------------------------
# Finding the index beside the data


def index_names(name: str) -> list[str]:
    """Index names tried for a data file called ``name``, in order."""
    stem, ext = posixpath.splitext(name)
    out = [name + INDEX_SUFFIXES[0]]
    if ext and stem:
        out.append(stem + INDEX_SUFFIXES[0])
    out.extend(name + s for s in INDEX_SUFFIXES[1:])
    return out


def find_text_index(
    spec: str, *, anon: bool = False, listings: Listings | None = None
) -> tuple[str, int] | None:
    """``(path or URL, size)`` of the text index beside ``spec`` (a path or a URL), or
    ``None``. A remote folder is listed once per ``listings`` dict (pass the same dict for the
    files of one dataset); a listing that fails means no index."""
    if not is_url(spec):
        folder, name = os.path.split(spec)
        for cand in index_names(name):
            p = os.path.join(folder, cand)
            try:
                st = os.stat(p)
            except OSError:
                continue
            if os.path.isfile(p):
                return p, st.st_size
        return None
    base = spec.split("?", 1)[0].split("#", 1)[0]
    folder = parent_url(base)
    name = base.rstrip("/").rsplit("/", 1)[-1]
    listings = {} if listings is None else listings
    entries = listings.get(folder)
    if entries is None:
        entries = listings[folder] = _listing(folder, anon)
    for cand in index_names(name):
        info = entries.get(cand)
        if info is not None and info.get("type") != "directory" and info.get("size") is not None:
            return join_url(folder, cand), int(info["size"])
    return None


def _listing(folder: str, anon: bool) -> dict[str, dict[str, Any]]:
    try:
        fs, path = filesystem(folder, anon=anon)
        entries = fs.ls(path, detail=True)
    except Exception:  # no listing (no right to list, an HTTP server): no index known
        return {}
    return {str(e["name"]).rstrip("/").rsplit("/", 1)[-1]: e for e in entries}


def _read_index(where: str, size: int, anon: bool) -> bytes:
    if not is_url(where):
        with open(where, "rb") as f:
            return f.read()
    from .remote import RemoteObject  # here: a reader of local files loads no remote code

    with remote_errors(where, "reading the index"):
        obj = RemoteObject(where, anon=anon, stat=RemoteStat(size, ""))
        try:
            return obj.read(0, size)
        finally:
            obj.close()


class IndexedFile(Protocol):
    """What :func:`use_text_index` asks of an open file (a :class:`~codec.reader.TFRecordFile`)."""

    @property
    def path(self) -> str: ...

    @property
    def url(self) -> str | None: ...

    @property
    def compression(self) -> str: ...

    @property
    def remote(self) -> bool: ...

    @property
    def size(self) -> int: ...

    @property
    def index_complete(self) -> bool: ...

    def load_text_index(
        self, source: str | os.PathLike[str] | bytes, *, sample: int | None = None
    ) -> int: ...


def use_text_index(
    f: IndexedFile,
    *,
    anon: bool = False,
    listings: Listings | None = None,
    sample: int | None = None,
) -> str | None:
    """Adopt the text index beside ``f`` when ``f``'s own index is not known yet (no saved
    index) and the index checks out; return where it was found (as shown), else ``None``.

    A local file's index is checked entry by entry (as cheap as a scan); a remote object's by
    :func:`sampled_ok` with ``sample`` headers (default :data:`REMOTE_SAMPLE`), since checking
    every header would read every block. A compressed file's offsets would be those of its
    inflated stream, which these tools do not index: it is left alone. An index that cannot be
    read or parsed, or that does not check out, is ignored: the file is scanned as usual."""
    if f.index_complete or f.compression != "none" or not f.size:
        return None
    spec = f.url or f.path
    found = find_text_index(spec, anon=anon, listings=listings)
    if found is None:
        return None
    where, size = found
    if size > MAX_LINE * (f.size // OVERHEAD + 1):
        return None  # more lines than the file can have records
    if sample is None and f.remote:
        sample = REMOTE_SAMPLE
    try:
        data = _read_index(where, size, anon)
        adopted = f.load_text_index(data, sample=sample)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return shown(where) if adopted else None
