"""Datasets that describe themselves, served once for every session: what a folder is (a TFDS
dataset, with its metadata, splits and features; a TFX ExampleGen output; a folder holding
several TFDS datasets or configs to choose among), the records counted in each split's files,
the first records checked against the declared features, and what other parts of the app read
from the metadata: the class names of every ClassLabel (:func:`class_names`) and the boxes of
every ``BBoxFeature`` (:func:`box_features`).

A folder's description is kept for its metadata files as they are (their modification times
are part of the key) and looked at again every :data:`DESCRIBE_TTL` seconds; counts and checks
are kept for the identity of the files they read. A folder in an object store (a URL inside a
URL root) is described the same way, its description kept for :data:`DESCRIBE_TTL` seconds
(asking the store whether it changed would cost what describing it again costs: a listing
and a request per metadata file). Nothing here reads the session.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import streamlit as st

import codec
from browser_app import view
from browser_app.paths import (
    PathRefused,
    is_url_root,
    may_be_folder,
    resolve_inside,
    split_spec,
)
from browser_app.ui.services.identity import Key
from browser_app.ui.services.readers import open_dataset
from codec.errors import CodecError
from codec.folders import folder_access
from codec.identity import FileIdentity
from codec.locations import is_url
from codec.tfds import (
    DATASET_INFO,
    FEATURES_JSON,
    BoxFeature,
    FeatureSpec,
    SplitFolder,
    TfdsChoiceError,
    TfdsDataset,
    check_records,
    open_split_folder,
)
from codec.tfds import box_features as declared_boxes

if TYPE_CHECKING:
    from browser_app.ui.source import Source
    from codec.names import ClassNames

__all__ = [
    "CHECKED_RECORDS",
    "DESCRIBE_TTL",
    "Counted",
    "Described",
    "box_features",
    "boxes_of_spec",
    "class_names",
    "class_names_at",
    "describe",
    "first_checks",
    "split_bytes",
    "split_counts",
    "tfds_of",
]

DESCRIBE_TTL = 30  # seconds a folder's description is kept before it is looked at again
CHECKED_RECORDS = 64  # the first records checked against the declared features


@dataclass(frozen=True)
class Described:
    """What a folder is: ``folder``, a TFDS dataset or TFX output with its splits (None when
    it is neither); or ``choices``, the TFDS datasets or configs it holds (their folders, real
    paths) when it holds several."""

    folder: SplitFolder | None = None
    choices: tuple[str, ...] = ()


def _stamp(path: str) -> tuple[int, ...]:
    """What changes when a folder's description may: its own time and its metadata files'."""
    out = []
    for p in (path, os.path.join(path, DATASET_INFO), os.path.join(path, FEATURES_JSON)):
        try:
            st_ = os.stat(p)
            out += [st_.st_mtime_ns, st_.st_size]
        except OSError:
            out += [0, -1]
    return tuple(out)


@st.cache_resource(max_entries=64, ttl=DESCRIBE_TTL, show_spinner=False)
def _described(path: str, stamp: tuple[int, ...], anon: bool = False) -> Described:
    try:
        found = open_split_folder(path, anon=anon)
    except TfdsChoiceError as exc:
        return Described(None, tuple(c if is_url(c) else os.path.realpath(c) for c in exc.choices))
    return Described(found)


def describe(path: str, anon: bool = False) -> Described:
    """What the folder ``path`` is (a real path, or a URL, already confined to the root;
    a URL's store asked without credentials with ``anon``): see :class:`Described`. Never
    raises for what its files say (their problems are the folder's ``findings``); a store
    that cannot be reached raises (:class:`codec.RemoteError`, ``PermissionError``), and
    nothing is kept of it."""
    if is_url(path):
        return _described(path, (), anon)
    if not os.path.isdir(path):
        return Described()
    return _described(path, _stamp(path))


def tfds_of(src: Source) -> TfdsDataset | None:
    """The TFDS dataset ``src`` is a split of, or None."""
    folder = src.split_folder
    return folder.tfds if folder is not None else None


def class_names(src: Source) -> dict[str, ClassNames]:
    """The class names of every ClassLabel of the TFDS dataset ``src`` is a split of, by
    record key (``label``, ``objects/label``): from its ``*.labels.txt``, as
    :meth:`codec.tfds.TfdsDataset.class_names` reads them; empty for any other source."""
    ds = tfds_of(src)
    return ds.class_names() if ds is not None else {}


def class_names_at(path: str) -> dict[str, ClassNames]:
    """:func:`class_names` of the TFDS dataset at the local folder ``path`` (any level it
    opens from; a real path inside the root), or empty."""
    found = describe(path).folder
    return found.tfds.class_names() if found is not None and found.tfds is not None else {}


@st.cache_resource(max_entries=64, show_spinner=False)
def _box_features(folder: str, stamp: tuple[int, ...], _ds: TfdsDataset) -> tuple[BoxFeature, ...]:
    return declared_boxes(_ds.features)


def box_features(src: Source) -> tuple[BoxFeature, ...]:
    """The boxes of the TFDS dataset ``src`` is a split of, as
    :class:`codec.layers.LayerOptions` carries them (``box_features=``): every declared
    ``BBoxFeature`` with the ClassLabel that names its boxes (:func:`codec.tfds.box_features`);
    empty for any other source."""
    ds = tfds_of(src)
    if ds is None:
        return ()
    return _box_features(ds.folder, _stamp(ds.folder), ds)


def boxes_of_spec(root: str, spec: str, anon: bool = False) -> tuple[BoxFeature, ...]:
    """:func:`box_features` of the source ``spec`` would open under ``root``, from the spec
    alone (for what knows only the spec: the layers a session draws for it); empty for a
    spec that is no split of a TFDS dataset. Cheap: the folder's description is kept. Under
    a URL root (its store asked without credentials with ``anon``), what the spec names is
    kept for :data:`DESCRIBE_TTL` seconds, a store that cannot be reached included (no
    boxes then, and no request at every run)."""
    if is_url_root(root) or "://" in spec:
        return _remote_boxes(root, spec, anon)
    folder, _split = split_spec(root, spec)
    try:
        real = resolve_inside(root, folder)
    except PathRefused:
        return ()
    found = describe(real)
    if found.folder is None and found.choices:
        found = describe(found.choices[0])  # what the spec opens: the first dataset
    ds = found.folder.tfds if found.folder is not None else None
    if ds is None:
        return ()
    return _box_features(ds.folder, _stamp(ds.folder), ds)


@st.cache_data(ttl=DESCRIBE_TTL, max_entries=64, show_spinner=False)
def _remote_boxes(root: str, spec: str, anon: bool) -> tuple[BoxFeature, ...]:
    folder, _split = split_spec(root, spec)
    try:
        url = resolve_inside(root, folder)
        if not is_url(url) or not may_be_folder(url):
            return ()
        found = describe(url, anon)
        if found.folder is None and found.choices:
            found = describe(found.choices[0], anon)
    except (PathRefused, OSError, CodecError):
        return ()
    ds = found.folder.tfds if found.folder is not None else None
    return declared_boxes(ds.features) if ds is not None else ()


@dataclass(frozen=True)
class Counted:
    """The records counted in a split's files, one count per file (None when they could not
    be counted: ``error`` says why)."""

    counts: tuple[int, ...] | None
    error: str | None = None


@st.cache_data(max_entries=64, show_spinner="Counting records…")
def _counted(key: Key, _files: tuple[str, ...], anon: bool = False) -> Counted:
    try:
        ds = open_dataset(_files, None, anon)
        len(ds)  # indexes every file: a header scan
        return Counted(tuple(f.indexed for f in ds.files))
    except (OSError, CodecError) as exc:
        return Counted(None, str(exc) or type(exc).__name__)


def split_counts(files: tuple[str, ...], anon: bool = False) -> Counted:
    """The records in each of ``files`` (a split's, paths inside the root, or objects' URLs
    read without credentials with ``anon``), counted by a header scan of the shared reader
    of those files (which then knows them), kept for the files as they are."""
    if not files:
        return Counted(())
    files = tuple(f if is_url(f) else os.path.realpath(f) for f in files)
    try:
        key = FileIdentity.of_paths(files, anon=anon)
    except OSError as exc:
        return Counted(None, str(exc))
    return _counted(key, files, anon)


def split_bytes(files: Sequence[str], anon: bool = False) -> int:
    """The bytes of ``files`` (a split's) as they are: a local file's size, an object's as
    the listing of its folder says (one listing per folder, kept for :data:`DESCRIBE_TTL`
    seconds; never a request per object). A file that is not there counts nothing."""
    remote = tuple(f for f in files if is_url(f))
    total = sum(_remote_sizes(remote, anon)) if remote else 0
    for f in files:
        if not is_url(f):
            with contextlib.suppress(OSError):
                total += os.path.getsize(f)
    return total


@st.cache_data(ttl=DESCRIBE_TTL, max_entries=64, show_spinner=False)
def _remote_sizes(urls: tuple[str, ...], anon: bool) -> tuple[int, ...]:
    try:
        fs = folder_access(urls[0], anon=anon)
        return tuple(fs.size(u) or 0 for u in urls)
    except (OSError, CodecError):
        return tuple(0 for _ in urls)


@st.cache_data(max_entries=32, show_spinner=False)
def _checks(
    key: Key,
    folder: str,
    stamp: tuple[int, ...],
    limit: int,
    _ds: codec.TFRecordDataset,
    _features: dict[str, FeatureSpec],
) -> list[str]:
    from codec import example as ex

    records = []
    for i, payload in enumerate(view.first_payloads(_ds, limit)):
        if payload is not None:
            records.append((i, ex.decode(payload, "auto")))
    return check_records(_features, records)


def first_checks(src: Source, limit: int = CHECKED_RECORDS) -> list[str]:
    """What the first ``limit`` records of ``src`` say against the features its TFDS dataset
    declares (:func:`codec.tfds.check_records`), in words; empty for any other source."""
    ds = tfds_of(src)
    if ds is None or not ds.features:
        return []
    try:
        return _checks(src.key, ds.folder, _stamp(ds.folder), limit, src.dataset, ds.features)
    except (OSError, CodecError) as exc:
        return [f"the first records could not be read: {exc}"]
