"""What the first records of a source say about all of them: its kinds and features, the
type most of them give each feature, and whether its boxes are normalised or pixels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

import codec
from browser_app import view
from browser_app.errors import AppError
from browser_app.ui.services.identity import Key
from browser_app.view import SchemaResult
from codec.errors import CodecError

if TYPE_CHECKING:
    from browser_app.ui.source import Source

__all__ = ["box_scale", "feature_summary", "forget_summaries", "known_types", "usual_types"]


@st.cache_data(max_entries=32, show_spinner=False)
def _summary(key: Key, limit: int, _ds: codec.TFRecordDataset) -> dict[str, Any]:
    return view.feature_summary(_ds, limit)


def feature_summary(src: Source, limit: int = 200) -> dict[str, Any]:
    """Kinds and features (names, types, lengths) of the first ``limit`` records."""
    return _summary(src.key, limit, src.dataset)


def known_types(key: Key, ds: codec.TFRecordDataset) -> tuple[dict[str, str], dict[str, str]]:
    """:func:`usual_types` of the files ``key`` names, open as ``ds`` (for the journal, which
    has no :class:`~browser_app.ui.source.Source`)."""
    try:
        return view.usual_types(_summary(key, 200, ds))
    except (AppError, CodecError):
        return {}, {}


def usual_types(src: Source) -> tuple[dict[str, str], dict[str, str]]:
    """``({feature: type}, {feature list: type})``: the type most of the first records of
    ``src`` give each feature, for warnings about edits that disagree (none when the records
    cannot be read)."""
    return known_types(src.key, src.dataset)


@st.cache_data(max_entries=32, show_spinner=False)
def _box_scale(key: Key, limit: int, _ds: codec.TFRecordDataset) -> view.BoxScale:
    total = _ds.indexed if _ds.index_complete else None
    return view.boxes_normalized(view.first_payloads(_ds, limit), total)


def box_scale(src: Source, schema: SchemaResult | None) -> view.BoxScale:
    """Whether the boxes of ``src`` are normalised or pixels: one decision for the dataset,
    from every record when ``schema`` (its inferred schema, if any) read them all, else from
    the first :data:`~browser_app.view.BOX_SAMPLE` records."""
    if schema is not None and not schema.schema.get("sampled"):
        layouts = schema.schema.get("detection", {})
        # The ground truth's decision: ``image/object/`` first, never a model's predictions.
        decisions = [
            d.get("normalized")
            for _prefix, d in sorted(layouts.items(), key=lambda kv: kv[0] != "image/object/")
            if d.get("kind") != "predictions"
        ]
        if decisions:
            return view.BoxScale(bool(decisions[0]), int(schema.schema["records"]), False)
    return _box_scale(src.key, view.BOX_SAMPLE, src.dataset)


def forget_summaries() -> None:
    """Drop every summary and box decision (a source is opened again as it is now)."""
    _summary.clear()
    _box_scale.clear()
