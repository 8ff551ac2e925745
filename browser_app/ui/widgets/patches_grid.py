"""The patches view's grid and its keyboard: one element drawn in the browser
(:mod:`browser_app.ui.components.patches`), a tile per object (its crop, its caption, ✓/⚑
that mark its *record* in the review journal) and a focus ring on one tile.

Keys, owned by the element: ←/→ or K/J move the focus by one tile, ↑/↓ by one row, with no
run of the script; P / F mark the focused object's record passed / flagged (the journal is
written before the mark shows as saved), Enter or O opens that record on the Records page,
N / B turn the page. The page number is the page's own widget: a turn sets it.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import replace
from functools import partial

import numpy as np
import streamlit as st

from browser_app.edits import Journal
from browser_app.ui import navigation, state
from browser_app.ui.components import patches as element
from browser_app.ui.services.tiles import picture_urls
from browser_app.ui.source import Source
from browser_app.ui.widgets import review
from browser_app.view.patches import PatchTable, patch_png
from codec.errors import CodecError

__all__ = ["KEYS_HELP", "grid", "opening"]

KEYS_HELP = """
| key | does |
| --- | --- |
| ← → or K J | focus the previous / next object |
| ↑ ↓ | focus the object above / below |
| P / F | mark the focused object's record passed / flagged |
| Enter or O | open the focused object's record on the Records page |
| N / B | next / previous page |

A click on a crop opens its record; ✓ and ⚑ under it mark the record (a second click clears
the mark), and every object of that record shows the mark. A mark shows dimmed until the
journal has saved it.
"""


def _key(src: Source) -> str:
    return f"patches:grid:{src.tag}"


def _memory_name(src: Source) -> str:
    return f"patches:memory:{src.tag}"


def _memory(src: Source) -> element.Memory:
    got = state.widget_value(_memory_name(src))
    return got if isinstance(got, element.Memory) else element.Memory()


def _remember(src: Source, memory: element.Memory) -> None:
    state.set_widget_value(_memory_name(src), memory)


def _told(src: Source) -> tuple[object, str | None]:
    """The element's trigger value ``act`` and its focus, as this run received them."""
    got = state.widget_value(_key(src))
    if not hasattr(got, "get"):
        return None, None
    return got.get("act"), element.read_focus(got.get("focus"))


def _on_act(src: Source, page_widget: str, page: int, pages: int) -> None:
    """The element's actions: marks written to the journal, the page turned (its widget
    set), a record to open (by this run's body: :func:`opening`). Each action once."""
    value, focus = _told(src)
    effects, memory = element.handle(value, focus, _memory(src))
    for record, status in effects.marks:
        review.set_mark(src, record, status)
    if effects.turn:
        state.set_widget_value(page_widget, max(1, min(pages, page + effects.turn)))
    if effects.opening is not None:
        state.set_record(effects.opening)
        state.set_widget_value("patches:opening", effects.opening)
    _remember(src, memory)


def _on_focus(src: Source) -> None:
    _value, focus = _told(src)
    if focus is not None:
        _remember(src, replace(_memory(src), focus=focus))


def opening() -> bool:
    """Go to the Records page when a tile was opened: True when this run goes."""
    record = state.widget_value("patches:opening")
    if record is None:
        return False
    state.set_widget_value("patches:opening", None)
    navigation.goto("records")
    return True


def _crop(src: Source, table: PatchTable, row: int, size: int) -> bytes | None:
    try:
        payload = src.dataset[int(table.record[row])]
    except CodecError:  # a damaged record: "no picture"
        return None
    return None if payload is None else patch_png(payload, table, row, size)


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def grid(
    src: Source,
    table: PatchTable,
    rows: Sequence[int] | np.ndarray,
    *,
    page: int,
    pages: int,
    page_widget: str,
    per_row: int,
    size: int,
    j: Journal | None,
) -> None:
    """The tiles of ``rows`` of ``table`` (page ``page`` of ``pages``, whose number is the
    widget ``page_widget``), ``per_row`` a row, crops at most ``size`` pixels a side."""
    marks: dict[int, str] = {}
    if j is not None:
        marks = {r: m.status for r, m in j.marks().items() if isinstance(r, int)}
    rows = [int(r) for r in rows]
    crops = [_crop(src, table, r, size) for r in rows]
    urls = picture_urls([(c, "image/png") for c in crops], "tfb-patches.page")
    tiles = []
    for row, png, url in zip(rows, crops, urls):
        record = int(table.record[row])
        if url is None and png is not None:  # outside a running app: the crop inline
            url = _data_url(png)
        key = element.tile_key(int(table.side[row]), record, int(table.index[row]))
        tiles.append(element.tile(key, record, table.caption(row), url, marks.get(record)))
    memory = _memory(src)
    data = element.page_data(
        grid=_key(src),
        page=page,
        pages=pages,
        per_row=per_row,
        focus=memory.focus,
        tiles=tiles,
        can_mark=j is not None,
        ack=memory.ack(),
    )
    with st.container(key="tfb-patches"):  # where tests and styles find the grid
        element.mount(
            state.widget_key(_key(src)),
            data,
            on_act=partial(_on_act, src, page_widget, page, pages),
            on_focus=partial(_on_focus, src),
        )
