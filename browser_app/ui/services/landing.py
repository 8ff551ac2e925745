"""The records a jump into the bytes landed on ("Go to %"): their table rows and tiles,
cached per source identity, and their numbers as far as the index knows them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

import codec
from browser_app import view
from browser_app.ui.services.identity import Key
from browser_app.ui.services.summary import box_scale
from browser_app.view import SchemaResult
from codec.detection import ClassKey
from codec.errors import CodecError, RemoteError
from codec.kinds import DATA_CRC
from codec.layers import LayerOptions

if TYPE_CHECKING:
    from browser_app.ui.source import Source

__all__ = ["Spans", "landed_numbers", "landed_page", "landed_tiles"]

Spans = tuple[tuple[int, int], ...]
"""The ``(offset, length)`` of records found by a jump, in one file."""


def _landed_slots(f: codec.TFRecordFile, spans: Spans) -> list[codec.Slot]:
    """The records at ``spans`` of ``f`` as slots (numbered by their place: the numbers the
    person sees are written by :func:`landed_numbers`)."""
    slots = []
    for k, (off, n) in enumerate(spans):
        try:
            payload: bytes | None = f.read_at(off)
            problem = None
        except RemoteError:
            raise
        except (CodecError, IndexError) as exc:
            payload = None
            problem = codec.Problem(DATA_CRC, off, off, getattr(exc, "reason", str(exc)), f.path)
        slots.append(codec.Slot(k, f.path, off, n, payload, problem))
    return slots


@st.cache_data(max_entries=16, show_spinner=False)
def _landed_page(
    key: Key,
    file: int,
    spans: Spans,
    thumbs: int,
    boxes: bool,
    normalized: bool | None,
    _ds: codec.TFRecordDataset,
    layers: LayerOptions | None = None,
) -> view.PageView:
    slots = _landed_slots(_ds.files[file], spans)
    return view.page_view(
        slots, thumb_size=thumbs, boxes=boxes, normalized=normalized, options=layers
    )


def landed_page(
    src: Source,
    file: int,
    spans: Spans,
    *,
    schema: SchemaResult | None,
    thumbs: int = 72,
    boxes: bool = True,
    layers: LayerOptions | None = None,
) -> view.PageView:
    """The records table of the records at ``spans`` of file ``file`` (found by a jump),
    cached per source identity; ``schema`` (the schema inferred for ``src``, if any) decides
    how boxes are read."""
    normalized = box_scale(src, schema).normalized if boxes else None
    return _landed_page(src.key, file, spans, thumbs, boxes, normalized, src.dataset, layers)


@st.cache_data(max_entries=16, show_spinner=False)
def _landed_tiles(
    key: Key,
    file: int,
    spans: Spans,
    size: int,
    boxes: bool,
    normalized: bool | None,
    hidden: frozenset[ClassKey],
    _ds: codec.TFRecordDataset,
    layers: LayerOptions | None = None,
) -> list[view.GalleryItem]:
    slots = _landed_slots(_ds.files[file], spans)
    return view.gallery_items(
        slots, size=size, boxes=boxes, normalized=normalized, hidden=hidden, options=layers
    )


def landed_tiles(
    src: Source,
    file: int,
    spans: Spans,
    *,
    schema: SchemaResult | None,
    hidden: frozenset[ClassKey] = frozenset(),
    size: int = 160,
    boxes: bool = True,
    layers: LayerOptions | None = None,
) -> list[view.GalleryItem]:
    """The gallery tiles of the records at ``spans`` of file ``file`` (found by a jump),
    without the boxes of the classes ``hidden``; ``schema`` as for :func:`landed_page`."""
    normalized = box_scale(src, schema).normalized if boxes else None
    return _landed_tiles(src.key, file, spans, size, boxes, normalized, hidden, src.dataset, layers)


def landed_numbers(
    src: Source, file: int, spans: Spans, estimate: int | None
) -> list[view.LandedNumber]:
    """The numbers of the records at ``spans`` of file ``file``, the first estimated as
    ``estimate``: exact where the index has reached them (and every file before is
    indexed), "inside a record" where it reached their byte and found no record there."""
    ds = src.dataset
    f = ds.files[file]
    before_done = all(g.index_complete for g in ds.files[:file])
    reached = f.size if f.index_complete else int(f.index_progress * f.size)
    out = []
    for k, (off, _n) in enumerate(spans):
        guess = None if estimate is None else estimate + k
        local = f.known_number(off)
        if local is not None and before_done:
            out.append(view.LandedNumber(ds.global_index(file, local), guess))
        elif local is None and off < reached:
            out.append(view.LandedNumber(None, guess, inside=True))
        else:
            out.append(view.LandedNumber(None, guess))
    return out
