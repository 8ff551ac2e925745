"""Every ``st.cache_*`` call of the app, and turning a spec into an open source.

Open readers are shared resources (``st.cache_resource``): one memory-mapped reader per set
of files for every session, re-opened when a file changes on disk (``validate`` compares the
size and mtime) and closed when evicted (``on_release``). Results that are plain data (a
verify report, a feature summary) use ``st.cache_data`` keyed by the files' identities.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

import codec
from browser_app import presenters, state
from browser_app.paths import (
    PathRefused,
    RootEntry,
    expand_inside,
    list_tfrecords,
    relative_to_root,
)

__all__ = [
    "OpenFailed",
    "Source",
    "current_source",
    "feature_summary",
    "open_dataset",
    "open_source",
    "store_upload",
    "verify_source",
]

# Files up to this size (all files of a source together) are verified in full automatically.
AUTO_VERIFY_BYTES = 256 << 20
UPLOAD_LIMIT_MB = 200


def _unchanged(ds: codec.TFRecordDataset) -> bool:
    try:
        for f in ds.files:
            if f.closed:
                return False
            st_ = os.stat(f.path)
            if (st_.st_size, st_.st_mtime_ns) != (f.stat.st_size, f.stat.st_mtime_ns):
                return False
    except OSError:
        return False
    return True


def _close(ds: codec.TFRecordDataset) -> None:
    ds.close()


@st.cache_resource(
    max_entries=8,
    validate=_unchanged,
    on_release=_close,
    show_spinner="Opening…",
)
def open_dataset(paths: tuple[str, ...]) -> codec.TFRecordDataset:
    """One shared reader for ``paths`` (real paths, already confined to the root)."""
    return codec.TFRecordDataset(list(paths))


def identity(paths: Sequence[str]) -> tuple[tuple[str, int, int], ...]:
    """``(path, size, mtime_ns)`` of each file: a cache key that changes with the files."""
    out = []
    for p in paths:
        try:
            s = os.stat(p)
            out.append((p, s.st_size, s.st_mtime_ns))
        except OSError:
            out.append((p, -1, -1))
    return tuple(out)


@dataclass(frozen=True)
class Source:
    """An open source: the spec the person gave, a label, the files and the shared reader."""

    spec: str
    label: str
    root: str
    paths: tuple[str, ...]
    dataset: codec.TFRecordDataset

    @property
    def key(self) -> tuple[tuple[str, int, int], ...]:
        return identity(self.paths)

    def rel(self, path: str) -> str:
        if state.is_upload(self.spec):
            return self.label
        return relative_to_root(self.root, path)


class OpenFailed(Exception):
    """A spec could not be opened; the message is meant for the person (no traceback)."""

    def __init__(self, message: str, level: str = "error") -> None:
        super().__init__(message)
        self.level = level


def _resolve(spec: str, root: str) -> tuple[list[str], str]:
    if state.is_upload(spec):
        path = state.upload_path(spec)
        if not path or not os.path.isfile(path):
            raise OpenFailed(
                f"{spec[len(state.UPLOAD_PREFIX) :]}: the uploaded copy is gone; upload it again."
            )
        return [path], spec[len(state.UPLOAD_PREFIX) :]
    try:
        files = expand_inside(root, spec)
    except PathRefused as exc:
        raise OpenFailed(f"Refused: {exc}.") from exc
    except FileNotFoundError as exc:
        msg = str(exc).strip("'\"")
        try:
            shown = relative_to_root(root, msg.split(":")[0])
            if os.path.isabs(msg.split(":")[0]) and not shown.startswith("/"):
                msg = shown + msg[len(msg.split(":")[0]) :]
        except (OSError, ValueError):
            pass
        raise OpenFailed(f"Not found: {msg}.") from exc
    except OSError as exc:
        raise OpenFailed(f"{spec}: cannot be read: {exc.strerror or exc}.") from exc
    return files, spec


def open_source(spec: str, root: str | None = None) -> Source:
    """Open ``spec`` (path, folder, glob or shard pattern relative to the root, or an upload
    of this session). Raises :class:`OpenFailed` with a message for the person."""
    root = root or state.app_args().root
    files, label = _resolve(spec, root)
    for p in files:
        if os.path.isdir(p):
            raise OpenFailed(f"{relative_to_root(root, p)} is a folder, not a file.")
    try:
        ds = open_dataset(tuple(files))
    except PermissionError as exc:
        raise OpenFailed(f"{label}: permission denied.") from exc
    except IsADirectoryError as exc:
        raise OpenFailed(f"{label} is a folder, not a file.") from exc
    except OSError as exc:
        raise OpenFailed(f"{label}: cannot be opened: {exc.strerror or exc}.") from exc
    except codec.CodecError as exc:
        raise OpenFailed(f"{label}: {exc}") from exc
    return Source(spec=spec, label=label, root=root, paths=tuple(files), dataset=ds)


def current_source() -> Source | None:
    """The source of this session (see :func:`state.source_spec`), or None.

    An error opening it is shown once, and the session falls back to no source."""
    spec = state.source_spec()
    if not spec:
        return None
    try:
        return open_source(spec)
    except OpenFailed as exc:
        state.flash(str(exc), exc.level)
        state.forget_recent(spec)
        state.clear_source()
        return None


@st.cache_data(ttl=15, max_entries=64, show_spinner=False)
def list_files(root: str, query: str) -> tuple[list[RootEntry], bool]:
    """TFRecord-looking files under the root matching ``query`` (re-listed every 15 s)."""
    return list_tfrecords(root, query)


# -- uploads -----------------------------------------------------------------------------


def _upload_dir() -> str:
    folder = os.path.join(tempfile.gettempdir(), "tfrecord-browser-uploads")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def store_upload(name: str, chunks: Any) -> str:
    """Copy an uploaded file to a private temporary file (then memory-mapped like any other
    file, never kept in session memory) and register it; return its spec."""
    base = os.path.basename(name.replace("\\", "/")) or "upload.tfrecord"
    fd, path = tempfile.mkstemp(dir=_upload_dir(), prefix="up-", suffix="-" + base)
    with os.fdopen(fd, "wb") as out:
        while True:
            chunk = chunks.read(1 << 20)
            if not chunk:
                break
            out.write(chunk)
    return state.add_upload(base, path)


# -- plain-data results ------------------------------------------------------------------


@st.cache_data(max_entries=32, show_spinner="Checking every CRC…")
def _verify(
    key: tuple[tuple[str, int, int], ...], compression: tuple[str, ...]
) -> list[dict[str, Any]]:
    paths = [p for p, _, _ in key]
    reports = codec.verify_paths(paths, workers=min(len(paths), os.cpu_count() or 1))
    return [presenters.report_dict(r) for r in reports]


def verify_source(src: Source) -> list[dict[str, Any]]:
    """A full CRC check of every file of ``src`` (cached until a file changes)."""
    return _verify(src.key, tuple(f.compression for f in src.dataset.files))


def should_auto_verify(src: Source) -> bool:
    return sum(f.size for f in src.dataset.files) <= AUTO_VERIFY_BYTES


@st.cache_data(max_entries=32, show_spinner=False)
def _summary(key: tuple[tuple[str, int, int], ...], limit: int) -> dict[str, Any]:
    ds = open_dataset(tuple(p for p, _, _ in key))
    return presenters.feature_summary(ds, limit)


def feature_summary(src: Source, limit: int = 200) -> dict[str, Any]:
    """Kinds and features (names, types, lengths) of the first ``limit`` records."""
    return _summary(src.key, limit)


@st.cache_data(max_entries=64, show_spinner=False)
def _page(
    key: tuple[tuple[str, int, int], ...], start: int, stop: int, thumbs: int, boxes: bool
) -> presenters.PageView:
    ds = open_dataset(tuple(p for p, _, _ in key))
    slots = ds.page(start, stop)
    return presenters.page_view(slots, thumb_size=thumbs, boxes=boxes)


def page_view(
    src: Source, start: int, stop: int, thumbs: int = 72, boxes: bool = True
) -> presenters.PageView:
    """The table of records ``start..stop`` (cached per page)."""
    return _page(src.key, start, stop, thumbs, boxes)


@st.cache_data(max_entries=16, show_spinner=False)
def _gallery(
    key: tuple[tuple[str, int, int], ...], start: int, stop: int, size: int, boxes: bool
) -> list[presenters.GalleryItem]:
    ds = open_dataset(tuple(p for p, _, _ in key))
    slots = ds.page(start, stop)
    return presenters.gallery_items(slots, size=size, boxes=boxes)


def gallery_items(
    src: Source, start: int, stop: int, size: int = 160, boxes: bool = True
) -> list[presenters.GalleryItem]:
    return _gallery(src.key, start, stop, size, boxes)


def clear_all() -> None:
    """Drop every cache (readers are closed)."""
    st.cache_resource.clear()
    st.cache_data.clear()
