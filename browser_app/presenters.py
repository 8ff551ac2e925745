"""Compatibility shim: the presentation functions now live in :mod:`browser_app.view`.

Re-exports only, for code that has not moved yet; it goes away once the pages import
:mod:`browser_app.view` (and ``codec``) directly.
"""

from __future__ import annotations

from browser_app.view import (
    BROKEN_PICTURE,
    PREVIEW_VALUES,
    FeatureRow,
    GalleryItem,
    PageView,
    Picture,
    TensorView,
    ValueView,
    all_values,
    data_url,
    feature_rows,
    feature_summary,
    gallery_items,
    hex_dump,
    page_view,
    plural,
    record_label,
    record_pictures,
    report_dict,
    scalar_text,
    sequence_table,
    tensor_view,
    text_preview,
    thumbnail,
    value_view,
    values_preview,
)
from codec.dataset import DAMAGED as STATUS_DAMAGED
from codec.dataset import INTACT as STATUS_INTACT
from codec.dataset import SKIPPED as STATUS_SKIPPED
from codec.dataset import Slot
from codec.values import format_bytes

__all__ = [
    "BROKEN_PICTURE",
    "PREVIEW_VALUES",
    "STATUS_DAMAGED",
    "STATUS_INTACT",
    "STATUS_SKIPPED",
    "FeatureRow",
    "GalleryItem",
    "PageView",
    "Picture",
    "Slot",
    "TensorView",
    "ValueView",
    "all_values",
    "data_url",
    "feature_rows",
    "feature_summary",
    "format_bytes",
    "gallery_items",
    "hex_dump",
    "page_view",
    "plural",
    "record_label",
    "record_pictures",
    "report_dict",
    "scalar_text",
    "sequence_table",
    "tensor_view",
    "text_preview",
    "thumbnail",
    "value_view",
    "values_preview",
]
