"""Root confinement: the app opens files under one root (``--root``) and nowhere else.

Every path a person types, picks, or puts in a URL goes through :func:`resolve_inside` (or
:func:`expand_inside` for globs and shard patterns). A path is refused when it contains a
``..`` component, when it is outside the root, or when a symlink leads out of it; all of
these are checked on the *real* path (``os.path.realpath``), so a link inside the root that
points elsewhere is caught as well.

The root is a local folder or a URL prefix (``s3://bucket/data``, ``gs://b``,
``https://host/datasets``):

- Under a **URL root**, specs are URLs inside it (same protocol and bucket, the path under
  the root's by whole components: :func:`codec.locations.url_inside`) or paths relative to
  it (``train-*-of-00016``, ``val/part@4``); patterns and folder prefixes are expanded by
  listing the bucket, and every object they name must lie inside the root. Local paths are
  refused. The picker lists the root with the same listing (:func:`list_tfrecords`).
- Under a **local root** (also the default one: the current folder, or the folder of the
  paths given), URLs are refused, with a message saying to start the app with
  ``--root s3://bucket/prefix``: a URL would let anyone who reaches the app read whatever
  the server's credentials can (every bucket, the cloud metadata server over ``http://``),
  which a root folder is there to prevent. ``file://`` URLs are local paths.

Datasets that are folders are found and opened as folders: :func:`list_tfrecords` offers, beside
the files, the TFDS dataset folders (``dataset_info.json``, one entry per split too), TFX
ExampleGen outputs (``Split-*`` folders), TensorBoard log folders (``events.out.tfevents.*``)
and ``tf.data.Dataset.save`` folders (``snapshot.metadata``) under the root (:class:`RootEntry`
``kind``); :func:`split_spec` reads a ``FOLDER:SPLIT`` spec; :func:`expand_inside` opens a
split's files, and says (``on_skip``) what a folder or ``**`` glob found by content left out.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import codec
from browser_app.errors import PathRefused
from codec.expand import Expanded
from codec.locations import (
    filesystem,
    is_url,
    join_url,
    local_path,
    parent_url,
    protocol,
    remote_errors,
    shown,
    url_inside,
)
from codec.settings import default_cache_dir
from codec.values import plural

__all__ = [
    "ENTRY_KINDS",
    "EVENTS_FOLDER",
    "FILE",
    "SAVED_FOLDER",
    "TFDS_FOLDER",
    "TFDS_SPLIT",
    "TFX_FOLDER",
    "PathRefused",
    "RootEntry",
    "expand_inside",
    "is_pattern",
    "is_url_root",
    "list_tfrecords",
    "may_be_folder",
    "relative_inside",
    "relative_to_root",
    "resolve_inside",
    "skipped_note",
    "spec_stamp",
    "split_spec",
    "url_root_for",
]

_PATTERN = re.compile(r"[*?\[]|@\d+$")
_SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", "venv", ".mypy_cache", ".cache"}


def _cache_real() -> str:
    """The real path of the app's cache folder (indexes, inflated copies, journals,
    uploads): never listed or expanded as data, even when it lies under the root."""
    return os.path.realpath(default_cache_dir())


def _in_cache(real: str, cache: str) -> bool:
    return real == cache or real.startswith(cache.rstrip(os.sep) + os.sep)


def _real_root(root: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(root))


def _inside(real: str, real_root: str) -> bool:
    try:
        return os.path.commonpath([real, real_root]) == real_root
    except ValueError:  # different drives, or a mix of absolute and relative
        return False


def _check_text(path: str) -> str:
    text = local_path(path.strip())
    if not text:
        raise PathRefused("no path given")
    if "\x00" in text:
        raise PathRefused("a path cannot contain a NUL character")
    parts = re.split(r"[\\/]+", text)
    if ".." in parts:
        raise PathRefused(f"{text}: paths with '..' are not opened; give a path inside the root")
    return text


def resolve_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str:
    """The real absolute path of ``path`` (absolute, or relative to ``root``), if it lies in
    ``root``. Raises :class:`PathRefused` otherwise. The path need not exist.

    Under a URL root, the URL of ``path`` (a URL, or a path relative to the root)."""
    text = _check_text(os.fspath(path))
    if is_url_root(root) or is_url(text):
        return _url_inside_root(os.fspath(root), text)
    real_root = _real_root(root)
    expanded = os.path.expanduser(text)
    candidate = expanded if os.path.isabs(expanded) else os.path.join(real_root, expanded)
    real = os.path.realpath(candidate)
    if not _inside(real, real_root):
        if os.path.islink(candidate) or real != os.path.normpath(os.path.abspath(candidate)):
            raise PathRefused(f"{text}: a symlink leads outside the root folder {real_root}")
        raise PathRefused(f"{text}: outside the root folder {real_root}")
    return real


def relative_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str | None:
    """``path`` written relative to ``root`` with ``/`` separators when its real path lies in
    ``root`` (``"."`` for the root itself), else ``None``. A URL under a URL root is
    written relative to it the same way (never one with a query string: a signed URL stays
    whole, and is never shortened into a form that drops its signature)."""
    if is_url_root(root) or is_url(os.fspath(path)):
        return _url_relative(os.fspath(root), os.fspath(path))
    real_root = _real_root(root)
    real = os.path.realpath(os.fspath(path))
    if not _inside(real, real_root):
        return None
    return os.path.relpath(real, real_root).replace(os.sep, "/")


def relative_to_root(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str:
    """``path`` written relative to ``root`` with ``/`` separators (for URLs and labels).

    ``"."`` for the root itself; the real path when it is not inside the root (a URL as it
    may be shown: :func:`codec.locations.shown`)."""
    rel = relative_inside(root, path)
    if rel is not None:
        return rel
    text = os.fspath(path)
    return shown(text) if is_url(text) else os.path.realpath(text)


def is_pattern(spec: str) -> bool:
    """Whether ``spec`` is a glob (``*``, ``?``, ``[``) or ``name@N`` shard shorthand (an
    ``http(s)://`` URL's query string is not a pattern)."""
    return bool(_PATTERN.search(_without_query(spec)))


def is_url_root(root: str | os.PathLike[str]) -> bool:
    """Whether ``root`` is a URL prefix rather than a local folder."""
    return is_url(os.fspath(root))


def _without_query(spec: str) -> str:
    if protocol(spec) in ("http", "https"):
        return spec.split("?", 1)[0].split("#", 1)[0]
    return spec


# -- URL roots ------------------------------------------------------------------------------


def _url_of(root: str, text: str) -> str:
    """The URL ``text`` names under the URL root ``root``: itself when a URL, else the root
    joined with it (``./`` parts dropped). A local path is refused."""
    if is_url(text):
        return text
    if os.path.isabs(os.path.expanduser(text)) or re.match(r"^[A-Za-z]:[\\/]", text):
        raise PathRefused(
            f"{text}: a local path; the root is {shown(root)}, so only objects under it open"
        )
    parts = [p for p in re.split(r"[\\/]+", text) if p not in ("", ".")]
    return join_url(root, *parts) if parts else root.rstrip("/")


def _refuse_url(root: str, url: str) -> PathRefused:
    """The refusal of ``url`` under ``root``: outside a URL root, or under a local one."""
    if is_url(root):
        return PathRefused(f"{shown(url)}: outside the root {shown(root)}")
    scheme = protocol(url) or "s3"
    return PathRefused(
        f"{shown(url)}: URLs are not opened under the local root folder {root}; to browse"
        f" remote data, start the app with --root {scheme}://bucket/prefix (the part of the"
        " bucket it may open)"
    )


def _url_inside_root(root: str, text: str) -> str:
    if not is_url(root):
        raise _refuse_url(root, text)
    url = _url_of(root, text)
    if not url_inside(_without_query(url), root):
        raise _refuse_url(root, url)
    return url


def _url_relative(root: str, url: str) -> str | None:
    if not (is_url(root) and is_url(url)) or not url_inside(url, root):
        return None
    if _without_query(url) != url or "?" in url or "#" in url:
        return None
    base = re.sub("(?<!:)/+", "/", root.rstrip("/"))
    full = re.sub("(?<!:)/+", "/", url.rstrip("/"))
    if full == base:
        return "."
    if full.startswith(base + "/"):
        return full[len(base) + 1 :]
    return None


def _pattern_head(url: str) -> str:
    """The fixed folder of a URL pattern (before its first wildcard; a ``name@N``'s
    folder), which must itself lie inside the root."""
    bare = _without_query(url)
    if not is_pattern(bare):
        return bare
    fixed = re.split(r"[*?\[]", bare, maxsplit=1)[0]
    if fixed != bare:
        return parent_url(fixed) if not fixed.endswith("/") else fixed.rstrip("/")
    return parent_url(bare)


def url_root_for(specs: list[str]) -> str:
    """The root for URL ``specs`` given without ``--root``: the deepest folder prefix that
    holds them all (like the local default, the folder of the paths given). Raises
    :class:`PathRefused` when they do not share a protocol and bucket, or mix URLs with
    local paths."""
    if not specs or not all(is_url(s) for s in specs):
        raise PathRefused(
            "local paths and URLs cannot be opened together without --root; give --root (a"
            " folder, or a URL prefix such as s3://bucket/data)"
        )
    heads = [_pattern_head(s) if is_pattern(s) else parent_url(_without_query(s)) for s in specs]
    parts = [h.split("/") for h in heads]
    common: list[str] = []
    for column in zip(*parts):
        if len(set(column)) != 1:
            break
        common.append(column[0])
    root = "/".join(common)
    if len(common) < 3 or not is_url(root + "/x"):  # "s3:", "", "bucket"
        raise PathRefused(
            f"{', '.join(shown(s) for s in specs[:3])}: not in one bucket; give --root (a URL"
            " prefix they all lie under)"
        )
    return root


def may_be_folder(spec: str) -> bool:
    """Whether a URL (or a path) may name a folder, and so a dataset folder: not a pattern
    and not a TFRecord-named file. Those are opened as they are, without asking a store
    whether they are folders."""
    name = _without_query(spec).rstrip("/").rsplit("/", 1)[-1]
    return not is_pattern(spec) and not codec.looks_like_tfrecord(name)


def _expand_url(
    root: str, text: str, anon: bool, on_skip: Callable[[str], object] | None = None
) -> list[str]:
    url = _url_inside_root(root, text)
    if not url_inside(_pattern_head(url), root):
        raise _refuse_url(root, url)
    folder, split = split_spec(root, text)
    if split is not None:
        got = _url_split_files(root, folder, split, anon, on_skip)
        if got is not None:
            return got
        try:  # no dataset there: an object whose name holds a colon, or nothing
            return _expand_url_objects(root, url, anon)
        except FileNotFoundError as exc:
            raise FileNotFoundError(
                f"{shown(folder)}: not a TFDS dataset folder or a TFX ExampleGen output; it"
                f" has no split {split!r}"
            ) from exc
    if may_be_folder(url):
        every = _url_dataset_files(root, url, anon)
        if every is not None:
            return every
    return _expand_url_objects(root, url, anon)


def _expand_url_objects(root: str, url: str, anon: bool) -> list[str]:
    found = codec.expand_paths([url], anon=anon)
    inside = [u for u in found if url_inside(_without_query(u), root)]
    if not inside:
        raise PathRefused(f"{shown(url)}: every object it names lies outside the root")
    return inside


def _shown(path: str, real_root: str) -> str:
    """``path`` as the person sees it: relative to the root, never through a symlink's
    target."""
    rel = os.path.relpath(os.path.abspath(path), real_root).replace(os.sep, "/")
    return os.path.basename(path) if rel.startswith("..") else rel


def spec_stamp(root: str | os.PathLike[str], spec: str) -> tuple[str, int] | None:
    """What changes when the files a local ``spec`` names may have changed: the real path and
    modification time (ns) of the folder they are listed from (the spec's own folder, the
    folder of a file, or the fixed folder in front of a pattern's first wildcard). A file
    added to, removed from or renamed in that folder changes it. None when there is no such
    folder (or under a URL root)."""
    try:
        text = _check_text(spec)
    except PathRefused:
        return None
    if is_url_root(root) or is_url(text):
        return None
    real_root = _real_root(root)
    folder, _split = split_spec(real_root, text)
    expanded = os.path.expanduser(folder)
    absolute = expanded if os.path.isabs(expanded) else os.path.join(real_root, expanded)
    if is_pattern(folder):
        head = os.path.dirname(re.split(r"[*?\[]", absolute, maxsplit=1)[0]) or real_root
    elif os.path.isdir(absolute):
        head = absolute
    else:
        head = os.path.dirname(absolute) or real_root
    try:
        return head, os.stat(head).st_mtime_ns
    except OSError:
        return None


def expand_inside(
    root: str | os.PathLike[str],
    spec: str,
    *,
    on_skip: Callable[[str], object] | None = None,
    anon: bool = False,
) -> list[str]:
    """Files named by ``spec`` (a path, folder, glob, ``train-*-of-00010``, ``name@N``, or
    ``FOLDER:SPLIT``: a split of a TFDS dataset or TFX output, see :func:`split_spec`), every
    one of them confined to ``root``. Under a URL root: the objects' URLs, listed without
    credentials when ``anon``.

    A file that a folder, glob or shard pattern matches but whose symlink leads outside the
    root is left out, and ``on_skip`` gets one note naming those left out (the links, never
    where they lead); so is a file a folder or ``**`` glob looked at by content and left out
    (a note naming the first few with why: ``README.md: not TFRecord framing …``). The result
    is a :class:`codec.expand.Expanded`: its ``skipped`` holds ``(path relative to the root,
    why)`` of the latter. Raises :class:`PathRefused` for a spec outside the root, or when
    every file it matches leads outside; ``FileNotFoundError`` (with a message for the
    person) when nothing matches, or the folder has no such split."""
    text = _check_text(spec)
    if is_url_root(root) or is_url(text):
        return _expand_url(os.fspath(root), text, anon, on_skip)
    real_root = _real_root(root)
    folder, split = split_spec(real_root, text)
    if split is not None:
        return _split_files(real_root, folder, split, on_skip)
    expanded = os.path.expanduser(text)
    absolute = expanded if os.path.isabs(expanded) else os.path.join(real_root, expanded)
    if not is_pattern(text) and os.path.isdir(absolute):
        every = _dataset_files(real_root, text)
        if every is not None:
            return every
    # The fixed part of a pattern (before the first wildcard) must itself be inside the root.
    head = absolute
    if is_pattern(text):
        head = os.path.dirname(re.split(r"[*?\[]", absolute, maxsplit=1)[0]) or real_root
    resolve_inside(real_root, head)
    out = []
    skipped = []
    cache = _cache_real()
    # A folder or pattern never takes in the app's own cache files; a path into the cache,
    # given on purpose, still opens.
    own = _in_cache(os.path.realpath(head), cache)
    found = codec.expand_paths([absolute])
    for f in found:
        real = os.path.realpath(f)
        if not own and _in_cache(real, cache):
            continue
        if _inside(real, real_root):
            out.append(real)
        else:
            skipped.append(_shown(f, real_root))
    if not out and not skipped:
        raise FileNotFoundError(f"{text}: it names only the app's own cache files")
    if skipped and not out:
        raise PathRefused(
            f"{text}: every file it names leads outside the root folder through a symlink"
        )
    if skipped and on_skip is not None:
        few = ", ".join(skipped[:3]) + (
            f" and {len(skipped) - 3:,} more" if len(skipped) > 3 else ""
        )
        what = "1 file" if len(skipped) == 1 else f"{len(skipped):,} files"
        on_skip(f"{text}: left out {what} whose symlink leads outside the root folder: {few}")
    looked = [
        (_shown(p, real_root), why)
        for p, why in getattr(found, "skipped", ())
        if not _in_cache(os.path.realpath(p), cache)
    ]
    if looked and on_skip is not None:
        on_skip(skipped_note(text, len(out), looked))
    return Expanded(out, looked)


SKIPPED_SHOWN = 5  # files left out named in a note; the rest counted


def skipped_note(spec: str, taken: int, skipped: Sequence[tuple[str, str]]) -> str:
    """What a folder or ``**`` glob found by content took and left out, in words:
    ``logs: 3 files opened; left out 2 files: README.md (not TFRecord framing: …); …``."""
    few = "; ".join(f"{p} ({why})" for p, why in skipped[:SKIPPED_SHOWN])
    more = f"; and {len(skipped) - SKIPPED_SHOWN:,} more" if len(skipped) > SKIPPED_SHOWN else ""
    return (
        f"{spec}: {plural(taken, 'file')} opened (TFRecord framing, whatever their names);"
        f" left out {plural(len(skipped), 'file')}: {few}{more}"
    )


_SPLIT_NAME = re.compile(r"^\w[\w.-]*$")  # as codec.tfds reads a split's name


def split_spec(root: str | os.PathLike[str], spec: str) -> tuple[str, str | None]:
    """``(FOLDER, SPLIT)`` for a ``FOLDER:SPLIT`` spec (as the command line takes it): the
    spec as a whole names nothing, and ``FOLDER`` is a folder inside the local ``root``;
    ``(spec, None)`` for anything else (a path with a colon that exists, a pattern).

    Under a URL root, ``FOLDER`` (relative to the root, or a URL) is read by its form alone,
    asking the store nothing (:func:`codec.tfds.url_split_spec`), and must lie inside the
    root; whether it is a dataset folder is for opening it to say (a spec whose folder is
    none is then opened as it is: an object whose name holds a colon)."""
    text = spec.strip()
    if ":" not in text:
        return spec, None
    if is_url_root(root) or is_url(text):
        return _url_split_spec(os.fspath(root), text, spec)
    folder, _, split = text.rpartition(":")
    if not folder or not _SPLIT_NAME.match(split) or is_pattern(folder):
        return spec, None
    try:
        if os.path.exists(resolve_inside(root, text)):
            return spec, None
        real = resolve_inside(root, folder)
    except PathRefused:
        return spec, None
    return (folder, split) if os.path.isdir(real) else (spec, None)


def _url_split_spec(root: str, text: str, spec: str) -> tuple[str, str | None]:
    """:func:`split_spec` under a URL root."""
    from codec.tfds import url_split_spec

    if not is_url(root):
        return spec, None
    if is_url(text):
        folder, split = url_split_spec(text)
    else:
        folder, _, split_text = text.rpartition(":")
        split = split_text if folder and _SPLIT_NAME.match(split_text) else None
    if split is None or is_pattern(folder):
        return spec, None
    try:
        _url_inside_root(root, _check_text(folder))
    except PathRefused:
        return spec, None
    return folder, split


def _url_split_files(
    root: str,
    folder: str,
    split: str,
    anon: bool,
    on_skip: Callable[[str], object] | None,
) -> list[str] | None:
    """The objects of ``split`` of the TFDS dataset or TFX output ``folder`` (relative to the
    URL root, or a URL inside it), every one inside the root; None when ``folder`` is no
    such dataset."""
    from codec.tfds import open_split_folder

    url = _url_inside_root(root, _check_text(folder))
    described = open_split_folder(url, anon=anon)
    if described is None:
        return None
    name = shown(folder)
    try:
        files = described.split(split).files
    except KeyError as exc:
        raise FileNotFoundError(f"{name}: {exc.args[0]}") from exc
    if not files:
        raise FileNotFoundError(f"{name}: split {split!r} has no shard file")
    out = [f for f in files if url_inside(f, root)]
    if not out:
        raise PathRefused(f"{name}:{split}: every shard lies outside the root {shown(root)}")
    if len(out) < len(files) and on_skip is not None:
        outside = len(files) - len(out)
        on_skip(f"{name}:{split}: left out {plural(outside, 'shard')} outside the root")
    return Expanded(out)


def _url_dataset_files(root: str, url: str, anon: bool) -> list[str] | None:
    """Every split's objects of the TFDS dataset or TFX output at ``url`` (inside the URL
    root), as :func:`_dataset_files` gives a local one's; None when it is no such folder,
    or holds several TFDS datasets."""
    from codec.tfds import TfdsChoiceError, open_split_folder

    try:
        described = open_split_folder(url, anon=anon)
    except TfdsChoiceError:
        return None
    if described is None:
        return None
    out = [f for f in described.files if url_inside(f, root)]
    return Expanded(out) if out else None


def _dataset_files(real_root: str, folder: str) -> list[str] | None:
    """Every split's files of the TFDS dataset or TFX output ``folder`` (split after split,
    as the command line reads a dataset folder; the app opens one split, see
    :mod:`browser_app.ui.opening`), confined to the root; None when it is no such folder,
    or holds several TFDS datasets (it is then expanded by content)."""
    from codec.tfds import TfdsChoiceError, open_split_folder

    real = resolve_inside(real_root, folder)
    try:
        described = open_split_folder(real)
    except TfdsChoiceError:
        return None
    if described is None:
        return None
    out = [os.path.realpath(f) for f in described.files if _inside(os.path.realpath(f), real_root)]
    return Expanded(out) if out else None


def _split_files(
    real_root: str, folder: str, split: str, on_skip: Callable[[str], object] | None
) -> list[str]:
    """The files of ``split`` of the TFDS dataset or TFX output ``folder``, confined to the
    root (a shard whose symlink leads out is left out, and said)."""
    # Imported here: most specs are files, and a file needs none of the dataset metadata.
    from codec.tfds import open_split_folder

    real = resolve_inside(real_root, folder)
    described = open_split_folder(real)
    if described is None:
        raise FileNotFoundError(
            f"{folder}: not a TFDS dataset folder or a TFX ExampleGen output; it has no split"
            f" {split!r}"
        )
    try:
        files = described.split(split).files
    except KeyError as exc:
        raise FileNotFoundError(f"{folder}: {exc.args[0]}") from exc
    out = [os.path.realpath(f) for f in files if _inside(os.path.realpath(f), real_root)]
    outside = len(files) - len(out)
    if not files:
        raise FileNotFoundError(f"{folder}: split {split!r} has no shard file")
    if not out:
        raise PathRefused(f"{folder}:{split}: every shard leads outside the root folder")
    if outside and on_skip is not None:
        on_skip(f"{folder}:{split}: left out {plural(outside, 'shard')} outside the root folder")
    return out


FILE = "file"
TFDS_FOLDER = "tfds"  # a TFDS dataset's version folder (dataset_info.json)
TFDS_SPLIT = "tfds_split"  # one split of it, as FOLDER:SPLIT
TFX_FOLDER = "tfx"  # a TFX ExampleGen output (Split-* folders)
EVENTS_FOLDER = "events"  # a folder of TensorBoard event files
SAVED_FOLDER = "saved"  # a tf.data.Dataset.save folder (snapshot.metadata)
ENTRY_KINDS = (FILE, TFDS_FOLDER, TFDS_SPLIT, TFX_FOLDER, EVENTS_FOLDER, SAVED_FOLDER)

_EVENTS_NAME = "events.out.tfevents."
_SNAPSHOT_METADATA = "snapshot.metadata"
_DATASET_INFO = "dataset_info.json"
_TFX_SPLIT = re.compile(r"^Split-(?P<name>.+)$")
# A TFDS shard named by its default template ({DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}).
_TFDS_SHARD = re.compile(r"^[a-zA-Z]\w*-(?P<split>[\w-]+?)\.\w+-\d{5,}-of-\d{5,}$")


@dataclass(frozen=True)
class RootEntry:
    """Something under the root the picker offers: its spec relative to the root (``rel``),
    its size (a folder's: its files', as far as the listing looked) and time; ``kind`` one of
    :data:`ENTRY_KINDS` (a file, or a folder that is a dataset: a TFDS dataset and each of its
    splits as ``FOLDER:SPLIT``, a TFX output, TensorBoard logs, a saved dataset) and ``parts``
    what it holds in words (a folder's splits, its event files)."""

    rel: str
    size: int
    mtime: float
    kind: str = FILE
    parts: tuple[str, ...] = ()


def _walk(real_root: str, max_depth: int) -> Iterator[tuple[str, os.DirEntry[str]]]:
    cache = _cache_real()
    stack: list[tuple[str, int]] = [(real_root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for e in entries:
            if e.name.startswith("."):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    if (
                        depth < max_depth
                        and e.name not in _SKIP_DIRS
                        and not _in_cache(os.path.realpath(e.path), cache)
                    ):
                        subdirs.append((e.path, depth + 1))
                    continue
            except OSError:
                continue
            yield folder, e
        stack.extend(reversed(subdirs))


def _wanted(rel: str, name: str, q: str) -> bool:
    """Whether the file ``rel`` (named ``name``) matches the picker's query ``q`` (lower
    case: a substring of the path, or a glob of the path or the name)."""
    if not q:
        return True
    low = rel.lower()
    if any(c in q for c in "*?["):
        return fnmatch.fnmatch(low, q) or fnmatch.fnmatch(name.lower(), q)
    return q in low


class _Folders:
    """What a listing learns of the folders it walks: which are datasets (by the files it
    sees in them), and the files that make up each."""

    def __init__(self, real_root: str) -> None:
        self.real_root = real_root
        self.kinds: dict[str, str] = {}  # folder -> kind
        self.files: list[tuple[str, str, int, float]] = []  # (folder, name, size, mtime)

    def note(self, folder: str, name: str, size: int, mtime: float) -> None:
        """A regular file ``name`` of ``folder`` (``size`` bytes) was walked."""
        if name == _DATASET_INFO:
            self.kinds.setdefault(folder, TFDS_FOLDER)
        elif name == _SNAPSHOT_METADATA:
            self.kinds.setdefault(folder, SAVED_FOLDER)
        elif name.startswith(_EVENTS_NAME):
            self.kinds.setdefault(folder, EVENTS_FOLDER)
        split = _TFX_SPLIT.match(os.path.basename(folder))
        if split and codec.looks_like_tfrecord(name) and folder != self.real_root:
            self.kinds.setdefault(os.path.dirname(folder), TFX_FOLDER)
        self.files.append((folder, name, size, mtime))

    def _members(self, folder: str, kind: str) -> tuple[list[tuple[str, int, float]], set[str]]:
        """The files of the dataset ``folder`` (``(name, size, mtime)``) and its parts."""
        out: list[tuple[str, int, float]] = []
        parts: set[str] = set()
        below = folder.rstrip(os.sep) + os.sep
        for where, name, size, mtime in self.files:
            if kind == TFDS_FOLDER and where == folder:
                m = _TFDS_SHARD.match(name)
                if m:
                    parts.add(m.group("split"))
                    out.append((name, size, mtime))
            elif kind == TFX_FOLDER and os.path.dirname(where) == folder:
                m = _TFX_SPLIT.match(os.path.basename(where))
                if m and codec.looks_like_tfrecord(name):
                    parts.add(m.group("name"))
                    out.append((name, size, mtime))
            elif kind == EVENTS_FOLDER and (where == folder or where.startswith(below)):
                if name.startswith(_EVENTS_NAME):
                    parts.add(os.path.relpath(os.path.join(where, name), folder))
                    out.append((name, size, mtime))
            elif kind == SAVED_FOLDER and where.startswith(below) and name.endswith(".snapshot"):
                out.append((name, size, mtime))
        return out, parts

    def entries(self, q: str) -> list[RootEntry]:
        out = []
        for folder, kind in self.kinds.items():
            rel = os.path.relpath(folder, self.real_root).replace(os.sep, "/")
            members, found = self._members(folder, kind)
            if not members:
                continue  # nothing it could open: a dataset_info.json without its shards
            parts = tuple(sorted(found))
            size = sum(m[1] for m in members)
            mtime = max(m[2] for m in members)
            if _wanted(rel, os.path.basename(folder), q):
                out.append(RootEntry(rel, size, mtime, kind, parts))
            if kind == TFDS_FOLDER:
                for split in parts:
                    spec = f"{rel}:{split}"
                    mine = [
                        m
                        for m in members
                        if (hit := _TFDS_SHARD.match(m[0])) and hit.group("split") == split
                    ]
                    if _wanted(spec, split, q):
                        size = sum(m[1] for m in mine)
                        out.append(RootEntry(spec, size, mtime, TFDS_SPLIT, (split,)))
        return out


def list_tfrecords(
    root: str | os.PathLike[str],
    query: str = "",
    *,
    limit: int = 500,
    max_depth: int = 6,
    max_visits: int = 50_000,
    anon: bool = False,
    folders: bool = True,
) -> tuple[list[RootEntry], bool]:
    """TFRecord-looking files under ``root`` (by name, see :func:`codec.looks_like_tfrecord`),
    sorted by path, filtered by ``query`` (a substring, or a glob when it has wildcards);
    with ``folders``, the datasets that are folders (:data:`ENTRY_KINDS`) before them, each
    recognised by the files the walk sees (``dataset_info.json`` with shards named as TFDS
    names them, ``Split-*`` folders of TFRecord files, ``events.out.tfevents.*``,
    ``snapshot.metadata``) and opened by content when picked; under a URL root, TFDS datasets
    (and their splits) and TFX outputs only, the folders opened by content being local ones.

    Returns ``(entries, truncated)``: at most ``limit`` entries, and at most ``max_visits``
    directory entries looked at (a huge tree is cut short, not walked for minutes). Symlinks
    leading outside the root are left out; hidden folders, tool folders and the app's own
    cache folder are not walked. A URL root is listed folder by folder with its file
    system's listing (``anon``: without credentials); a listing that fails raises
    :class:`codec.RemoteError` (or ``PermissionError``)."""
    if is_url_root(root):
        q = query.strip().lower()
        return _list_url(os.fspath(root), q, limit, max_depth, max_visits, anon, folders)
    real_root = _real_root(root)
    q = query.strip().lower()
    out: list[RootEntry] = []
    seen = _Folders(real_root)
    visited = 0
    truncated = False
    for folder, e in _walk(real_root, max_depth):
        visited += 1
        if visited > max_visits:
            truncated = True
            break
        looks = codec.looks_like_tfrecord(e.name)
        if not looks and not (folders and _dataset_file(e.name)):
            continue
        try:
            if e.is_symlink() and not _inside(os.path.realpath(e.path), real_root):
                continue
            st = e.stat()
        except OSError:
            continue
        if not os.path.isfile(e.path):
            continue
        if folders:
            seen.note(folder, e.name, st.st_size, st.st_mtime)
        if not looks:
            continue
        rel = os.path.relpath(e.path, real_root).replace(os.sep, "/")
        if not _wanted(rel, e.name, q):
            continue
        out.append(RootEntry(rel, st.st_size, st.st_mtime))
        if len(out) >= limit:
            truncated = True
            break
    out.sort(key=lambda r: r.rel)
    if folders:
        found = sorted(seen.entries(q), key=lambda r: r.rel)
        out = (found + out)[:limit]
    return out, truncated


def _dataset_file(name: str) -> bool:
    """Whether a file of this name tells that its folder is a dataset, or is one of a
    dataset's files (see :class:`_Folders`)."""
    return (
        name in (_DATASET_INFO, _SNAPSHOT_METADATA)
        or name.startswith(_EVENTS_NAME)
        or name.endswith(".snapshot")
    )


def _mtime(info: dict[str, object]) -> float:
    value = info.get("LastModified") or info.get("mtime") or info.get("updated")
    stamp = getattr(value, "timestamp", None)
    if callable(stamp):
        return float(stamp())
    return float(value) if isinstance(value, (int, float)) else 0.0


_URL_ENTRY_KINDS = (TFDS_FOLDER, TFDS_SPLIT, TFX_FOLDER)  # the dataset folders a URL root lists


def _list_url(
    root: str, q: str, limit: int, max_depth: int, max_visits: int, anon: bool, folders: bool
) -> tuple[list[RootEntry], bool]:
    """:func:`list_tfrecords` of a URL root: one listing per folder, breadth first."""
    fs, base = filesystem(root, anon=anon)
    base = base.rstrip("/")
    seen = _Folders(base)  # fs paths, "/"-separated: the folder code reads them as paths
    out: list[RootEntry] = []
    visited = 0
    queue: list[tuple[str, int]] = [(base, 0)]
    while queue:
        folder, depth = queue.pop(0)
        with remote_errors(root, "listing the root"):
            with contextlib.suppress(AttributeError):
                fs.invalidate_cache(folder)  # a listing kept by the file system is stale
            listing = fs.ls(folder, detail=True)
        for info in sorted(listing, key=lambda i: str(i.get("name", ""))):
            name_path = str(info.get("name", "")).rstrip("/")
            name = name_path.rsplit("/", 1)[-1]
            visited += 1
            if visited > max_visits:
                return _url_entries(out, seen, q, limit, folders), True
            if not name or name.startswith(".") or not name_path.startswith(base + "/"):
                continue
            rel = name_path[len(base) + 1 :]
            if info.get("type") == "directory":
                if depth < max_depth and name not in _SKIP_DIRS:
                    queue.append((name_path, depth + 1))
                continue
            looks = codec.looks_like_tfrecord(name)
            if folders and (looks or name == _DATASET_INFO):
                seen.note(folder, name, int(info.get("size") or 0), _mtime(info))
            if not looks or not _wanted(rel, name, q):
                continue
            out.append(RootEntry(rel, int(info.get("size") or 0), _mtime(info)))
            if len(out) >= limit:
                return _url_entries(out, seen, q, limit, folders), True
    return _url_entries(out, seen, q, limit, folders), False


def _url_entries(
    files: list[RootEntry], seen: _Folders, q: str, limit: int, folders: bool
) -> list[RootEntry]:
    """The dataset folders a URL root's walk saw, then its files, sorted, at most
    ``limit``."""
    files.sort(key=lambda r: r.rel)
    if not folders:
        return files
    found = sorted((e for e in seen.entries(q) if e.kind in _URL_ENTRY_KINDS), key=lambda r: r.rel)
    return (found + files)[:limit]
