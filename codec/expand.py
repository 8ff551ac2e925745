"""Which files a spec names: paths, globs (``data/*.tfrecord``), shard patterns
(``train-*-of-00100``), TensorFlow's ``train@100`` shorthand, folders and URLs, expanded to
a sorted list of files, with the text indexes that lie beside them left out.

Folders and ``**`` globs find files by content as well as by name: a file whose name does not
look like TFRecord (``events.out.tfevents.*``, ``*.snapshot``, ``data_tfrecord-*.gz``) is
taken when its first record header's length CRC checks out, after inflating its first bytes
when it is GZIP or ZLIB (:func:`why_not_tfrecord`). What was looked at and left out comes back
with the files (:class:`Expanded`, a list whose ``skipped`` holds ``(path, reason)`` pairs).
A folder whose own files include TFRecord-named ones opens those, as it always did; a folder
without any opens what it and its subfolders hold by content (a TensorBoard log folder, a
``tf.data.Dataset.save`` folder, a TFX ``Split-*`` parent), :data:`MAX_DEPTH` levels down.
URLs are matched by name only."""

from __future__ import annotations

import glob
import os
import re
import stat
import zlib
from collections.abc import Iterator, Sequence

from .errors import LimitError
from .locations import expand_urls, is_url, local_path
from .text_index import index_names
from .values import plural

__all__ = [
    "MAX_DEPTH",
    "MAX_SHARDS",
    "MAX_VISITS",
    "Expanded",
    "expand_paths",
    "looks_like_tfrecord",
    "why_not_tfrecord",
]

_SHARD_AT = re.compile(r"^(?P<base>.+)@(?P<n>\d+)$")
_GLOB_CHARS = re.compile(r"[*?\[]")


class Expanded(list[str]):
    """The files a spec names, in order (a ``list`` of paths, as callers always had), and
    ``skipped``: ``(path, reason)`` for each file a folder or ``**`` glob held that is not
    taken, the reason in words (``"empty"``, ``"not TFRecord framing: the first record's
    length check fails"``, ``"the text index of x.tfrecord"``)."""

    def __init__(self, files: Sequence[str] = (), skipped: Sequence[tuple[str, str]] = ()):
        super().__init__(files)
        self.skipped: list[tuple[str, str]] = list(skipped)


def expand_paths(
    specs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *, anon: bool = False
) -> Expanded:
    """Turn paths, globs (``data/*.tfrecord``), shard patterns (``train-*-of-00100``) and
    TensorFlow's ``train@100`` shorthand into a sorted, de-duplicated list of files. URLs
    (``s3://bucket/train-*``, a folder prefix, ``gs://b/x@16``) become lists of objects the
    same way (:func:`codec.locations.expand_urls`).

    A text index lying beside a matched file (``x.tfrecord.idx``, ``x.index``) is left out:
    the reader uses it. A plain path that does not exist raises :class:`FileNotFoundError`;
    so does a pattern that matches nothing. A directory expands to the TFRecord files inside
    it, and a ``**`` glob (recursive) to the TFRecord files it matches: by name, or by
    content (see the module docstring); the others are in the result's ``skipped``."""
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    out: list[str] = []
    skipped: list[tuple[str, str]] = []
    for spec in specs:
        s = os.fspath(spec)
        if is_url(s):
            out.extend(
                expand_urls(s, anon=anon, looks_like=looks_like_tfrecord, max_shards=MAX_SHARDS)
            )
            continue
        s = local_path(s)
        m = _SHARD_AT.match(s)
        if m and not os.path.exists(s):
            out.extend(_shards(s, m.group("base"), int(m.group("n"))))
        elif "**" in s and not os.path.exists(s):
            out.extend(_recursive_glob(s, skipped))
        elif _GLOB_CHARS.search(s) and not os.path.exists(s):
            found = sorted(p for p in glob.iglob(s) if os.path.isfile(p))
            if not found:
                raise FileNotFoundError(f"{s}: no file matches this pattern")
            out.extend(found)
        elif os.path.isdir(s):
            out.extend(_folder(s, skipped))
        else:
            if not os.path.exists(s):
                raise FileNotFoundError(f"{s}: no such file")
            out.append(s)
    # A pattern that matches a file and the text index beside it (``x.tfrecord.idx``) means
    # the file: the index is used by the reader, not read as data.
    index_of = {i: p for p in out for i in index_names(p) if i != p}
    seen: set[str] = set()
    unique = []
    for p in out:
        if p in index_of:
            continue
        if p not in seen:
            seen.add(p)
            unique.append(p)
    kept = [
        (p, f"the text index of {os.path.basename(index_of[p])}" if p in index_of else why)
        for p, why in skipped
    ]
    return Expanded(unique, kept)


# --------------------------------------------------------------------------------------------
# Found by content

MAX_DEPTH = 4  # folder levels a folder without TFRecord-named files is searched
MAX_VISITS = 100_000  # folder entries looked at for one folder or ** glob
_INFLATE_READ = 64 << 10  # compressed bytes read to find the first header of a GZIP file


def why_not_tfrecord(path: str) -> str | None:
    """``None`` when ``path`` starts like a TFRecord file: its first 12 bytes are a record
    header whose length CRC checks out, plain or after inflating the start of a GZIP or
    ZLIB file (at most 64 KiB read). Otherwise why not, in words. Only a regular file is
    opened (never a pipe or a device)."""
    from .framing import HEADER_SIZE, header_ok

    try:
        st = os.stat(path)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_size == 0:
        return "empty"
    try:
        with open(path, "rb") as f:
            head = f.read(HEADER_SIZE)
            if len(head) >= HEADER_SIZE and header_ok(head, 0):
                return None
            kind = (
                "gzip" if head[:2] == b"\x1f\x8b" else "zlib" if head[:2] in _ZLIB_HEADERS else None
            )
            if kind is not None:  # only a compressed file is read further
                head += f.read(_INFLATE_READ - len(head))
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if kind is None:
        if len(head) < HEADER_SIZE:
            return f"not TFRecord framing: {len(head)} bytes, shorter than a record header"
        return "not TFRecord framing: the first record's length check fails"
    inflater = zlib.decompressobj(31 if kind == "gzip" else 15)
    try:
        start = inflater.decompress(head, HEADER_SIZE)
    except zlib.error as exc:
        return f"{kind.upper()} that does not inflate: {exc}"
    if len(start) < HEADER_SIZE:
        return f"{kind.upper()} whose start inflates to fewer bytes than a record header"
    if header_ok(start, 0):
        return None
    return f"{kind.upper()}, but not TFRecord framing inside: the first length check fails"


_ZLIB_HEADERS = {b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda"}


def _by_content(path: str, skipped: list[tuple[str, str]]) -> bool:
    """Whether to take ``path``: by its name, else by its first header; a file not taken
    is noted in ``skipped``."""
    if looks_like_tfrecord(os.path.basename(path)):
        return True
    why = why_not_tfrecord(path)
    if why is not None:
        skipped.append((path, why))
    return why is None


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def _folder(s: str, skipped: list[tuple[str, str]]) -> list[str]:
    own = _entries(s)
    named = sorted(
        os.path.join(s, e.name)
        for e in own
        if looks_like_tfrecord(e.name) and os.path.isfile(os.path.join(s, e.name))
    )
    if named:
        return named  # as it always was: the folder's TFRecord-named files
    found: list[str] = []
    looked: list[tuple[str, str]] = []
    for path in _walk(s, looked):
        if _by_content(path, looked):
            found.append(path)
    skipped.extend(looked)
    if not found:
        raise FileNotFoundError(f"{s}: the folder holds no TFRecord files{_reasons(looked)}")
    return sorted(found)


def _walk(top: str, skipped: list[tuple[str, str]]) -> Iterator[str]:
    """Regular files under ``top`` (hidden ones and symlinked folders left out), breadth
    first, at most :data:`MAX_DEPTH` levels and :data:`MAX_VISITS` entries."""
    queue = [(top, 0)]
    visits = 0
    while queue:
        folder, depth = queue.pop(0)
        for e in _entries(folder):
            visits += 1
            if visits > MAX_VISITS:
                skipped.append(
                    (top, f"stopped after looking at {plural(MAX_VISITS, 'entry', 'entries')}")
                )
                return
            if e.name.startswith("."):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    if depth < MAX_DEPTH:
                        queue.append((e.path, depth + 1))
                    continue
                if not e.is_file():
                    skipped.append((e.path, "not a regular file"))
                    continue
            except OSError:
                continue
            yield e.path


def _recursive_glob(s: str, skipped: list[tuple[str, str]]) -> list[str]:
    found: list[str] = []
    looked: list[tuple[str, str]] = []
    matched = 0
    for i, p in enumerate(glob.iglob(s, recursive=True)):
        if i >= MAX_VISITS:
            looked.append((s, f"stopped after {plural(MAX_VISITS, 'match', 'matches')}"))
            break
        if not os.path.isfile(p):
            continue
        matched += 1
        if _by_content(p, looked):
            found.append(p)
    skipped.extend(looked)
    if not matched:
        raise FileNotFoundError(f"{s}: no file matches this pattern")
    if not found:
        raise FileNotFoundError(f"{s}: no file it matches is TFRecord{_reasons(looked)}")
    return sorted(found)


def _reasons(skipped: Sequence[tuple[str, str]]) -> str:
    """`` (3 files looked at: a.json: not TFRecord framing …; …)`` for a message."""
    if not skipped:
        return ""
    few = "; ".join(f"{os.path.basename(p)}: {why}" for p, why in skipped[:3])
    more = f"; and {len(skipped) - 3:,} more" if len(skipped) > 3 else ""
    return f" ({plural(len(skipped), 'file')} looked at: {few}{more})"


MAX_SHARDS = 100_000  # name@N beyond this is refused before anything is listed


def _shards(spec: str, base: str, n: int) -> list[str]:
    """The files of TensorFlow's ``base@N`` shorthand: ``base-00000-of-0000N`` ..., or
    ``stem-00000-of-0000N.ext`` for ``stem.ext@N``. The folder is listed once and the names
    matched against it, so the cost follows what is on disk, never ``N``."""
    if not 1 <= n <= MAX_SHARDS:
        raise LimitError(f"{spec}: {n:,} shards is outside 1 to {MAX_SHARDS:,}")
    folder, name = os.path.split(base)
    stem, ext = os.path.splitext(name)
    shapes = [(name, ""), (stem, ext)] if ext else [(name, "")]
    of = f"{n:05d}"
    try:
        listing = [e.name for e in os.scandir(folder or ".")]
    except OSError as exc:
        raise FileNotFoundError(f"{spec}: the folder {folder or '.'} cannot be listed") from exc
    for head, tail in shapes:
        pattern = re.compile(rf"{re.escape(head)}-(\d{{5,}})-of-{of}{re.escape(tail)}")
        found = {int(m.group(1)) for x in listing if (m := pattern.fullmatch(x))}
        found = {k for k in found if k < n}
        if not found:
            continue
        if len(found) < n:
            first = next(k for k in range(n) if k not in found)
            raise FileNotFoundError(
                f"{spec}: {n - len(found):,} of {n:,} shards are missing,"
                f" first {os.path.join(folder, f'{head}-{first:05d}-of-{of}{tail}')}"
            )
        return [os.path.join(folder, f"{head}-{k:05d}-of-{of}{tail}") for k in range(n)]
    raise FileNotFoundError(
        f"{spec}: {n:,} of {n:,} shards are missing, first"
        f" {os.path.join(folder, f'{name}-00000-of-{of}')}"
    )


_TFRECORD_NAME = re.compile(
    r"(\.tfrecords?|\.tfrec|\.records?|-\d{5}-of-\d{5})(\.gz|\.gzip|\.zlib|\.z)?$", re.I
)


def looks_like_tfrecord(name: str) -> bool:
    """Whether a file name looks like a TFRecord file (by extension or shard suffix)."""
    return bool(_TFRECORD_NAME.search(name))
