"""Datasets that describe themselves, served once for every session: what a folder is (a TFDS
dataset, with its metadata, splits and features; a TFX ExampleGen output; a folder holding
several TFDS datasets or configs to choose among), the records counted in each split's files,
the first records checked against the declared features, and what other parts of the app read
from the metadata: the class names of every ClassLabel (:func:`class_names`) and the boxes of
every ``BBoxFeature`` (:func:`box_features`).

A folder's description is kept for its metadata files as they are (their modification times
are part of the key) and looked at again every :data:`DESCRIBE_TTL` seconds; counts and checks
are kept for the identity of the files they read. Nothing here reads the session.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import streamlit as st

import codec
from browser_app import view
from browser_app.paths import PathRefused, is_url_root, resolve_inside, split_spec
from browser_app.ui.services.identity import Key
from browser_app.ui.services.readers import open_dataset
from codec.errors import CodecError
from codec.identity import FileIdentity
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
def _described(path: str, stamp: tuple[int, ...]) -> Described:
    try:
        found = open_split_folder(path)
    except TfdsChoiceError as exc:
        return Described(None, tuple(os.path.realpath(c) for c in exc.choices))
    return Described(found)


def describe(path: str) -> Described:
    """What the local folder ``path`` (a real path, already confined to the root) is: see
    :class:`Described`. Never raises for what its files say (their problems are the
    folder's ``findings``)."""
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


def boxes_of_spec(root: str, spec: str) -> tuple[BoxFeature, ...]:
    """:func:`box_features` of the source ``spec`` would open under ``root``, from the spec
    alone (for what knows only the spec: the layers a session draws for it); empty for a
    spec that is no split of a TFDS dataset. Cheap: the folder's description is kept."""
    if is_url_root(root) or "://" in spec:
        return ()
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


@dataclass(frozen=True)
class Counted:
    """The records counted in a split's files, one count per file (None when they could not
    be counted: ``error`` says why)."""

    counts: tuple[int, ...] | None
    error: str | None = None


@st.cache_data(max_entries=64, show_spinner="Counting records…")
def _counted(key: Key, _files: tuple[str, ...]) -> Counted:
    try:
        ds = open_dataset(_files)
        len(ds)  # indexes every file: a header scan
        return Counted(tuple(f.indexed for f in ds.files))
    except (OSError, CodecError) as exc:
        return Counted(None, str(exc) or type(exc).__name__)


def split_counts(files: tuple[str, ...]) -> Counted:
    """The records in each of ``files`` (a split's, real paths inside the root), counted by a
    header scan of the shared reader of those files (which then knows them), kept for the
    files as they are."""
    if not files:
        return Counted(())
    try:
        key = FileIdentity.of_paths(files)
    except OSError as exc:
        return Counted(None, str(exc))
    return _counted(key, files)


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
