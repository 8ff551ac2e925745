"""Shared readers and where their files come from: one reader per set of files for every
session, the listings of the root, and the remote objects a reader reads.

Open readers are shared resources (``st.cache_resource``): one memory-mapped reader per set
of files (and way of reaching remote objects: with credentials or anonymously) for every
session, re-opened when a file changes on disk (``validate`` compares the size and mtime)
and closed when evicted (``on_release``). A remote object is not asked at every run whether
it changed (a request per object): reads are pinned to the version opened and raise
:class:`~codec.errors.ObjectChangedError` when it was replaced, and :func:`remote_changes`
asks, a few seconds apart, about the objects this session has read; the person then reopens
the new version (:func:`forget_source`, which drops what every other part of the package
keeps about the old one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

import codec
from browser_app.paths import RootEntry, expand_inside, list_tfrecords, spec_stamp
from browser_app.ui.services.identity import unchanged
from browser_app.ui.services.order import forget_matches
from browser_app.ui.services.pages import forget_pages
from browser_app.ui.services.results import forget_results
from browser_app.ui.services.summary import forget_summaries
from codec.errors import CodecError
from codec.locations import filesystem, is_url, remote_stat

if TYPE_CHECKING:
    from browser_app.ui.source import Source

__all__ = [
    "CHANGES_CHECKED",
    "forget_source",
    "list_files",
    "local_files",
    "open_dataset",
    "remote_changes",
    "remote_files",
    "remote_source",
]


def _close(ds: codec.TFRecordDataset) -> None:
    ds.close()


@st.cache_resource(
    max_entries=8,
    validate=unchanged,
    on_release=_close,
    show_spinner="Opening…",
)
def open_dataset(
    paths: tuple[str, ...], max_inflate: int | None = None, anon: bool = False
) -> codec.TFRecordDataset:
    """One shared reader for ``paths`` (real paths or URLs, already confined to the root); a
    GZIP or ZLIB file inflates up to ``max_inflate`` bytes (default:
    :func:`codec.cache.inflate_limit`); remote objects are read without credentials when
    ``anon``."""
    return codec.TFRecordDataset(list(paths), max_inflate=max_inflate, anon=anon)


@st.cache_data(ttl=15, max_entries=64, show_spinner=False)
def list_files(root: str, query: str, anon: bool = False) -> tuple[list[RootEntry], bool]:
    """TFRecord-looking files under the root matching ``query`` (re-listed every 15 s)."""
    return list_tfrecords(root, query, anon=anon)


@st.cache_data(ttl=30, max_entries=64, show_spinner="Listing…")
def remote_files(root: str, spec: str, anon: bool = False) -> list[str]:
    """The objects a remote ``spec`` names under the root (:func:`paths.expand_inside
    <browser_app.paths.expand_inside>`), listed again at most every 30 s rather than at every
    run."""
    return expand_inside(root, spec, anon=anon)


def local_files(
    root: str, spec: str
) -> tuple[list[str], tuple[str, ...], tuple[tuple[str, str], ...]]:
    """``(files, notes, skipped)`` of a local ``spec`` under the root, as
    :func:`~browser_app.paths.expand_inside` finds them (``notes``: what it says about files
    left out; ``skipped``: those looked at by content and left out). Listed again when the
    folder they come from changes (:func:`~browser_app.paths.spec_stamp`) and at least every
    5 s, not at every run: a folder of thousands of shards, or one whose files are told apart
    by their content, takes tens of milliseconds or more to list. Raises as ``expand_inside``
    does (errors are not kept)."""
    return _local_files(root, spec, spec_stamp(root, spec))


@st.cache_data(ttl=5, max_entries=64, show_spinner=False)
def _local_files(
    root: str, spec: str, stamp: tuple[str, int] | None
) -> tuple[list[str], tuple[str, ...], tuple[tuple[str, str], ...]]:
    del stamp  # a part of the key only
    notes: list[str] = []
    files = expand_inside(root, spec, on_skip=notes.append)
    return list(files), tuple(notes), tuple(getattr(files, "skipped", ()))


def remote_source(f: codec.TFRecordFile) -> Any:
    """The source behind a remote file's reader (its requests and bytes read: for a compressed
    object, those of its compressed bytes), or None for a local file."""
    source = getattr(f, "_source", None)
    return source if getattr(source, "remote", False) else None


CHANGES_CHECKED = 8  # remote objects asked about per run, at most


def remote_changes(src: Source) -> list[str]:
    """The remote objects of ``src`` that this process has read from and that are no longer
    the version opened (the server is asked at most every few seconds per object, and about
    :data:`CHANGES_CHECKED` of them at most: the last read from, in file order): their URLs
    as shown."""
    read = [
        (p, f)
        for p, f in zip(src.paths, src.dataset.files)
        if not f.closed and (s := remote_source(f)) is not None and s.requests
    ]
    out = []
    for p, f in read[-CHANGES_CHECKED:]:
        try:
            now = remote_stat(p, anon=src.anon)
        except FileNotFoundError:
            out.append(f.path)
            continue
        except OSError:  # the network: the reads say so when it matters
            continue
        if now.moved_from(f.identity.size, f.identity.version):
            out.append(f.path)
    return out


def forget_source(
    root: str, spec: str, paths: tuple[str, ...], anon: bool, max_inflate: int | None
) -> None:
    """Drop everything kept about the source ``spec`` (its files ``paths``), so its remote
    objects open again as they are now: the shared reader, the listing of its spec, what the
    file systems and the codec remember of the objects (sizes, versions, listings), and the
    plain-data results made from them (those of other sources are made again on demand)."""
    open_dataset.clear(paths, max_inflate, anon)
    remote_files.clear(root, spec, anon)
    list_files.clear()
    for p in paths:
        if not is_url(p):
            continue
        try:
            fs, path = filesystem(p, anon=anon)
            fs.invalidate_cache(path)
            remote_stat(p, anon=anon, fresh=True)
        except (OSError, AttributeError, CodecError):
            continue  # reopening says what is wrong
    forget_pages()
    forget_summaries()
    forget_matches()
    forget_results()
