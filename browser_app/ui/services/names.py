"""Class names found with the data, shared by every session: the names files lying beside a
source's files by convention (:func:`codec.names.names_beside`: ``<feature>.labels.txt``,
``label_map.pbtxt``, ``vocabulary.csv``, ``class_labels_indices.csv``) and the ClassLabel
names of a TFDS dataset's ``features.json``; and the key a set of names is cached by.

What the person binds in a session is not here (:mod:`browser_app.ui.state.names`): a cached
result that depends on names takes them as an argument, with :func:`names_key`."""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING

import streamlit as st

from browser_app.ui.services.identity import Key
from browser_app.ui.services.summary import usual_types
from codec.names import ClassNames, names_beside

if TYPE_CHECKING:
    from browser_app.ui.source import Source

__all__ = ["NamesKey", "beside", "every_beside", "names_key"]

NamesKey = tuple[tuple[str, str, str, int, int], ...]
"""What a set of class names is cached by: per feature, its file, kind, size and a digest of
its names."""

_FOLDERS = 8  # folders of a source looked in for names (a glob over many folders: the first)


@st.cache_resource(max_entries=32, ttl=300, show_spinner=False)
def _beside(
    key: Key, paths: tuple[str, ...], keys: tuple[str, ...] | None
) -> tuple[dict[str, ClassNames], tuple[str, ...]]:
    found: dict[str, ClassNames] = {}
    problems: list[str] = []
    local = [p for p in paths if "://" not in p]
    folders = list(dict.fromkeys(os.path.dirname(p) or "." for p in local))[:_FOLDERS]
    for folder in folders:
        if not os.path.isfile(os.path.join(folder, "dataset_info.json")):
            continue
        from codec.tfds import TfdsChoiceError, open_tfds

        try:
            ds = open_tfds(folder)
        except (TfdsChoiceError, OSError, ValueError):
            continue
        if ds is not None:
            for k, cn in ds.class_names().items():
                found.setdefault(k, cn)
    for k, cn in names_beside(folders, keys, problems=problems).items():
        found.setdefault(k, cn)
    return found, tuple(problems)


def beside(src: Source) -> tuple[dict[str, ClassNames], tuple[str, ...]]:
    """The class names found with the files of ``src``, by record key, and the names files
    there that could not be used, in words (too large, not a names file, a CSV without
    index and name columns: left out; the data opens all the same). Cached per files for a
    few minutes (a names file put beside the data is found then, or when the source is
    opened again). Only names of the features the first records have are looked for (a
    labels file whose name could spell several keys goes to the one there is). Shared
    objects: read them, never change them."""
    feats, lists = usual_types(src)
    keys = tuple(sorted({*feats, *lists})) or None
    return _beside(src.key, tuple(src.paths), keys)


def every_beside(src: Source) -> dict[str, ClassNames]:
    """Every usable names file found with the files of ``src``, by record key, whatever
    features the records have: a COCO export turns class texts into the labels of a label
    map although the records hold no label list."""
    return _beside(src.key, tuple(src.paths), None)[0]


_DIGESTS: dict[int, tuple[weakref.ref[ClassNames], int]] = {}
_DIGESTS_LOCK = threading.Lock()


def _digest(cn: ClassNames) -> int:
    """A digest of the names of ``cn``, worked out once per object (a vocabulary of 20,000
    names is hashed once, not at every run of every page)."""
    with _DIGESTS_LOCK:
        got = _DIGESTS.get(id(cn))
        if got is not None and got[0]() is cn:
            return got[1]
    digest = hash(tuple(sorted(cn.names.items())))
    with _DIGESTS_LOCK:
        if len(_DIGESTS) > 256:
            for k in [k for k, (ref, _d) in _DIGESTS.items() if ref() is None]:
                del _DIGESTS[k]
        _DIGESTS[id(cn)] = (weakref.ref(cn), digest)
    return digest


def names_key(names: Mapping[str, ClassNames] | None) -> NamesKey:
    """A small hashable key of ``names`` for caches whose results depend on them."""
    if not names:
        return ()
    return tuple((k, cn.source, cn.kind, len(cn), _digest(cn)) for k, cn in sorted(names.items()))
