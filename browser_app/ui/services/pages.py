"""Pages of records as the views draw them: the records table's rows and the gallery's
tiles of the records at some positions of a selection, with the pending edits applied.

Both are plain data cached per page and source identity (``st.cache_data``); a page with
pending edits is built from :meth:`Journal.page <browser_app.edits.Journal.page>` and keyed
by the ids of the changes on it as well, so an edit makes only its own page again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

import streamlit as st

from browser_app import view
from browser_app.edits import Journal, RecordRef
from browser_app.errors import AppError
from browser_app.selection import Selection
from browser_app.ui.services.identity import Key
from browser_app.ui.services.journals import shared_journal
from browser_app.ui.services.names import NamesKey, names_key
from browser_app.ui.services.order import page_records
from browser_app.ui.services.summary import box_scale
from browser_app.view import SchemaResult
from browser_app.view.media import MediaHints, hints_of
from codec.detection import ClassKey
from codec.errors import CodecError
from codec.layers import LayerOptions

if TYPE_CHECKING:
    from browser_app.ui.source import Source
    from browser_app.view.values import Names

__all__ = ["forget_pages", "gallery_items", "page_view"]

log = logging.getLogger("tfrecord-browser")

Fingerprint = tuple[tuple[RecordRef, tuple[int, ...]], ...]
"""The pending changes on a page: each touched record with the ids of its changes."""

Span = tuple[int, ...] | tuple[str, int, int]
"""The records of a page: ``("range", start, stop)`` in file order, or the record numbers."""

_T = TypeVar("_T")


class _Pages(Protocol):
    """What a page of records is read from: the dataset, or the journal (edits applied)."""

    def page(self, start: int, stop: int) -> Sequence[view.PageItem]: ...


def _span(src: Source, start: int, stop: int, sel: Selection, schema: SchemaResult | None) -> Span:
    records = page_records(src, start, stop, sel, schema)
    return ("range", start, stop) if records is None else tuple(records)


def _items(pages: _Pages, span: Span) -> list[view.PageItem]:
    """The page's slots: a range of the file (skipped regions in place), or the given
    records one by one (each with the new records placed after it)."""
    if span and span[0] == "range":
        return list(pages.page(int(span[1]), int(span[2])))
    out: list[view.PageItem] = []
    for r in span:
        out.extend(s for s in pages.page(int(r), int(r) + 1) if _index(s) is not None)
    return out


def _index(item: view.PageItem) -> int | None:
    slot = getattr(item, "slot", item)
    return getattr(slot, "index", None)


def _fingerprint(j: Journal, span: Span) -> Fingerprint:
    """What a page with pending edits depends on: the pending change ids of its records (and
    of new records placed among them)."""
    if span and span[0] == "range":
        lo, hi = int(span[1]), int(span[2])
        inside: Callable[[int], bool] = lambda root: lo <= root < hi  # noqa: E731
    else:
        members = set(span)
        inside = members.__contains__
    out = []
    for r in j.edited_records():
        root = j.anchor(r)
        if root is not None and inside(root):
            out.append((r, tuple(c.id for c in j.changes_for(r))))
    return tuple(out)


def _with_edits(src: Source, span: Span, build: Callable[[Fingerprint, _Pages], _T]) -> _T:
    """``build(fingerprint, pages)`` for the records of ``span``: from the journal when
    changes are pending on them, else (or when the edits cannot be applied: the page is then
    shown as the file has it) from the dataset with an empty fingerprint."""
    j = shared_journal(src)
    if j is not None:
        try:
            fp = _fingerprint(j, span) if j.pending else ()
            if fp:
                return build(fp, j)
        except (AppError, CodecError):
            log.exception("applying the pending edits failed")
    return build((), src.dataset)


@st.cache_data(max_entries=64, show_spinner=False)
def _page(
    key: Key,
    span: Span,
    thumbs: int,
    boxes: bool,
    normalized: bool | None,
    fingerprint: Fingerprint,
    _pages: _Pages,
    layers: LayerOptions | None = None,
    names: NamesKey = (),
    _names: Names | None = None,
) -> view.PageView:
    return view.page_view(
        _items(_pages, span),
        thumb_size=thumbs,
        boxes=boxes,
        normalized=normalized,
        options=layers,
        names=_names,
    )


def page_view(
    src: Source,
    start: int,
    stop: int,
    *,
    sel: Selection,
    schema: SchemaResult | None,
    thumbs: int = 72,
    boxes: bool = True,
    layers: LayerOptions | None = None,
    names: Names | None = None,
) -> view.PageView:
    """The records page's table of the records at positions ``start..stop`` of ``sel``
    (record numbers when it is the whole file) with the pending edits applied (cached per
    page); ``schema``, the schema inferred for ``src`` if any, decides how boxes are read
    and which records a finding holds. Rows of new records carry their anchor's number in
    ``view.records`` (selecting one opens the anchor, whose editor offers the new record).
    ``layers``: what is drawn over the thumbnails (every layer when None); ``names``: the
    class names labels are shown with (``2 (cat)``)."""
    normalized = box_scale(src, schema).normalized if boxes else None
    span = _span(src, start, stop, sel, schema)
    key = names_key(names)
    return _with_edits(
        src,
        span,
        lambda fp, pages: _page(
            src.key, span, thumbs, boxes, normalized, fp, pages, layers, key, names
        ),
    )


@st.cache_data(max_entries=16, show_spinner=False)
def _gallery(
    key: Key,
    span: Span,
    size: int,
    boxes: bool,
    normalized: bool | None,
    fingerprint: Fingerprint,
    _pages: _Pages,
    hidden: frozenset[ClassKey] = frozenset(),
    layers: LayerOptions | None = None,
    names: NamesKey = (),
    _names: Names | None = None,
    hints: MediaHints | None = None,
) -> list[view.GalleryItem]:
    return view.gallery_items(
        _items(_pages, span),
        size=size,
        boxes=boxes,
        normalized=normalized,
        hidden=hidden,
        options=layers,
        names=_names,
        hints=hints,
    )


def gallery_items(
    src: Source,
    start: int,
    stop: int,
    *,
    sel: Selection,
    schema: SchemaResult | None,
    hidden: frozenset[ClassKey] = frozenset(),
    size: int = 160,
    boxes: bool = True,
    records: Sequence[int] | None = None,
    layers: LayerOptions | None = None,
    names: Names | None = None,
) -> list[view.GalleryItem]:
    """The gallery's tiles of the records at positions ``start..stop`` of ``sel`` (record
    numbers when it is the whole file), or of the given ``records``, with the pending edits
    applied (edited pictures and labels, new records in place, deleted ones captioned as
    such); without the boxes of the classes ``hidden``; the other layers as ``layers`` say.
    ``schema`` as for :func:`page_view`; labels in captions named by ``names``."""
    normalized = box_scale(src, schema).normalized if boxes else None
    if records is None:
        span = _span(src, start, stop, sel, schema)
    else:
        span = tuple(int(r) for r in records)
    key = names_key(names)
    tfds = src.split_folder.tfds if src.split_folder is not None else None
    hints = hints_of(tfds.features) if tfds is not None else None  # TFDS Video and Audio
    return _with_edits(
        src,
        span,
        lambda fp, pages: _gallery(
            src.key, span, size, boxes, normalized, fp, pages, hidden, layers, key, names, hints
        ),
    )


def forget_pages() -> None:
    """Drop every cached page (a source is opened again as it is now)."""
    _page.clear()
    _gallery.clear()
