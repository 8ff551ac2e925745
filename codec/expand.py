"""Which files a spec names: paths, globs (``data/*.tfrecord``), shard patterns
(``train-*-of-00100``), TensorFlow's ``train@100`` shorthand, folders and URLs, expanded to
a sorted list of files, with the text indexes that lie beside them left out."""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence

from .errors import LimitError
from .locations import expand_urls, is_url, local_path
from .text_index import index_names

__all__ = ["MAX_SHARDS", "expand_paths", "looks_like_tfrecord"]

_SHARD_AT = re.compile(r"^(?P<base>.+)@(?P<n>\d+)$")
_GLOB_CHARS = re.compile(r"[*?\[]")


def expand_paths(
    specs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *, anon: bool = False
) -> list[str]:
    """Turn paths, globs (``data/*.tfrecord``), shard patterns (``train-*-of-00100``) and
    TensorFlow's ``train@100`` shorthand into a sorted, de-duplicated list of files. URLs
    (``s3://bucket/train-*``, a folder prefix, ``gs://b/x@16``) become lists of objects the
    same way (:func:`codec.locations.expand_urls`).

    A text index lying beside a matched file (``x.tfrecord.idx``, ``x.index``) is left out:
    the reader uses it. A plain path that does not exist raises :class:`FileNotFoundError`;
    so does a pattern that matches nothing. A directory expands to the TFRecord-looking files
    inside it."""
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    out: list[str] = []
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
        elif _GLOB_CHARS.search(s) and not os.path.exists(s):
            found = sorted(p for p in glob.iglob(s) if os.path.isfile(p))
            if not found:
                raise FileNotFoundError(f"{s}: no file matches this pattern")
            out.extend(found)
        elif os.path.isdir(s):
            found = sorted(
                os.path.join(s, n)
                for n in os.listdir(s)
                if looks_like_tfrecord(n) and os.path.isfile(os.path.join(s, n))
            )
            if not found:
                raise FileNotFoundError(f"{s}: the folder holds no TFRecord files")
            out.extend(found)
        else:
            if not os.path.exists(s):
                raise FileNotFoundError(f"{s}: no such file")
            out.append(s)
    # A pattern that matches a file and the text index beside it (``x.tfrecord.idx``) means
    # the file: the index is used by the reader, not read as data.
    indexes = {i for p in out for i in index_names(p) if i != p}
    seen: set[str] = set()
    unique = []
    for p in out:
        if p not in seen and p not in indexes:
            seen.add(p)
            unique.append(p)
    return unique


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
