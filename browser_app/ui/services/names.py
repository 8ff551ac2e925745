"""Class names found with the data, shared by every session: the names files lying beside a
source's files by convention (:func:`codec.names.names_beside`: ``<feature>.labels.txt``,
``label_map.pbtxt``, ``vocabulary.csv``, ``class_labels_indices.csv``) and the ClassLabel
names of a TFDS dataset's ``features.json``; and the key a set of names is cached by.

What the person binds in a session is not here (:mod:`browser_app.ui.state.names`): a cached
result that depends on names takes them as an argument, with :func:`names_key`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import streamlit as st

from browser_app.ui.services.identity import Key
from codec.names import ClassNames, names_beside

if TYPE_CHECKING:
    from browser_app.ui.source import Source

__all__ = ["NamesKey", "beside", "names_key"]

NamesKey = tuple[tuple[str, str, str, int, int], ...]
"""What a set of class names is cached by: per feature, its file, kind, size and a digest of
its names."""

_FOLDERS = 8  # folders of a source looked in for names (a glob over many folders: the first)


@st.cache_data(max_entries=32, ttl=300, show_spinner=False)
def _beside(key: Key, paths: tuple[str, ...]) -> tuple[dict[str, ClassNames], tuple[str, ...]]:
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
    for k, cn in names_beside(folders, problems=problems).items():
        found.setdefault(k, cn)
    return found, tuple(problems)


def beside(src: Source) -> tuple[dict[str, ClassNames], tuple[str, ...]]:
    """The class names found with the files of ``src``, by record key, and the names files
    there that could not be used, in words (too large, not a names file, a CSV without
    index and name columns: left out; the data opens all the same). Cached per files for a
    few minutes (a names file put beside the data is found then, or when the source is
    opened again)."""
    return _beside(src.key, tuple(src.paths))


def names_key(names: Mapping[str, ClassNames] | None) -> NamesKey:
    """A small hashable key of ``names`` for caches whose results depend on them."""
    if not names:
        return ()
    return tuple(
        (k, cn.source, cn.kind, len(cn), hash(tuple(sorted(cn.names.items()))))
        for k, cn in sorted(names.items())
    )
