"""The gallery's grid and its keyboard: one element drawn in the browser
(:mod:`browser_app.ui.components.gallery`) with the page's tiles, their captions, badges and
marks and a focus ring, and above it the focused record with its Passed / Flagged / Open
buttons; around it, Streamlit's own controls (tile size, the comment of the focused record,
the keys' help).

The focused tile is the current record (:func:`state.record`, in the URL) once the grid has
told Python: with every mark, page turn or opening, and before a click elsewhere on the page.
Moving the focus runs nothing on the server; a mark is written to the journal by the marks
route where the server has it (:func:`review.mark_route`: shown saved once the route
answers; Python then does not write it again, :func:`review.route_saved`), else by Python
(:func:`review.set_mark`), shown saved when the next data confirms it.

Keys (also listed in the "Keys" popover), owned by the element alone: ←/→ or K/J move the
focus by one tile, ↑/↓ by one row (past the page's ends the page turns), P / F mark the
focused record passed / flagged, Enter opens it, N / B the next / previous page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

import streamlit as st

from browser_app.edits import Journal
from browser_app.ui import navigation, services, state
from browser_app.ui.components import gallery as element
from browser_app.ui.source import Source
from browser_app.ui.widgets import review, schema
from browser_app.view import GalleryItem

__all__ = [
    "KEYS_HELP",
    "TILE_SIZES",
    "TileSize",
    "focus_bar",
    "grid",
    "opening",
    "tile_size",
]


@dataclass(frozen=True)
class TileSize:
    """A tile size: tiles per row, the thumbnail's longest side in pixels, and whether tiles
    carry their own mark buttons (the dense size leaves them to the keys and the buttons
    above the grid)."""

    per_row: int
    thumb: int
    controls: bool = True


TILE_SIZES: dict[str, TileSize] = {
    "Dense": TileSize(12, 96, controls=False),
    "Small": TileSize(8, 128),
    "Medium": TileSize(6, 160),
    "Large": TileSize(4, 224),
}
DEFAULT_SIZE = "Medium"

KEYS_HELP = """
| key | does |
| --- | --- |
| ← → or K J | focus the previous / next tile |
| ↑ ↓ | focus the tile above / below |
| P / F | mark the focused record passed / flagged |
| Enter | open the focused record on the Records page |
| N / B | next / previous page |

A click on a picture opens its record; ✓ and ⚑ under it mark it (a second click clears the
mark). A mark shows dimmed until the journal has saved it.
"""


def tile_size() -> tuple[str, TileSize]:
    """The tile size control; returns the chosen name and size."""
    name = st.segmented_control(
        "Tile size",
        list(TILE_SIZES),
        default=state.tile_size_name() or DEFAULT_SIZE,
        key=state.widget_key("tile"),
        label_visibility="collapsed",
        help="Dense: twelve a row, at least four rows of them on a laptop screen",
    )
    name = name if name in TILE_SIZES else DEFAULT_SIZE
    state.set_tile_size_name(name)
    return name, TILE_SIZES[name]


# -- what the server remembers of the grid ---------------------------------------------------


def _key(src: Source) -> str:
    return f"gallery:grid:{src.tag}"  # one element per source: a new one when another opens


def _memory_name(src: Source) -> str:
    return f"gallery:memory:{src.tag}"


def _memory(src: Source) -> element.Memory:
    got = state.widget_value(_memory_name(src))
    return got if isinstance(got, element.Memory) else element.Memory()


def _remember(src: Source, memory: element.Memory) -> None:
    state.set_widget_value(_memory_name(src), memory)


def _told(src: Source) -> tuple[object, int | None]:
    """The element's trigger value ``act`` and its focus, as this run received them."""
    got = state.widget_value(_key(src))
    if not hasattr(got, "get"):
        return None, None
    return got.get("act"), element.read_focus(got.get("focus"))


def looks_ahead(src: Source, start: int) -> bool:
    """Whether the grid, having shown the page at ``start``, asked for the next one."""
    got = state.widget_value(_key(src))
    return hasattr(got, "get") and element.read_ahead(got.get("ahead")) == start


# -- what the element sends back -------------------------------------------------------------


def _on_act(src: Source, size: int, total: int | None) -> None:
    """The element's actions: marks written to the journal, the page turned, a record to
    open (on this run's body: :func:`opening`). Each action once, whatever is sent again."""
    value, focus = _told(src)
    sel, inferred = state.selection(), schema.stored(src)
    pages = element.PageFacts(
        record_at=lambda pos: services.record_at(src, pos, sel, inferred), size=size, total=total
    )
    effects, memory = element.handle(value, focus, _memory(src), pages, review.route_saved(src))
    if effects.saved:
        state.bump_edit_revision()  # the route wrote them: the page shows them from now on
    for record, status in effects.marks:
        review.set_mark(src, record, status)
    if effects.record is not None:
        state.set_record(effects.record)
    _remember(src, memory)


def _on_focus(src: Source) -> None:
    """The element told its focus: the current record follows (the URL too)."""
    _value, focus = _told(src)
    if focus is None:
        return
    state.set_record(focus)
    _remember(src, replace(_memory(src), record=focus))


def opening(src: Source) -> bool:
    """Open the record the grid's last actions asked to open (Enter or a click), on the
    Records page: True when this run goes there."""
    memory = _memory(src)
    if memory.opening is None:
        return False
    _remember(src, replace(memory, opening=None))
    state.set_record(memory.opening)
    navigation.goto("records")
    return True


# -- on the page -----------------------------------------------------------------------------


def _focused(items: Sequence[GalleryItem]) -> int | None:
    records = [it.index for it in items]
    current = state.record()
    if current in records:
        return current
    return next((r for r in records if r is not None), None)


def focus_bar(src: Source, items: Sequence[GalleryItem]) -> None:
    """The comment of the focused record (as Python knows it: the grid tells it before a
    click here opens the box) and the keys' help; drawn into the current horizontal
    container. The record's number and its Passed / Flagged / Open buttons are the grid's own
    (always its focus)."""
    focused = _focused(items)
    j = services.shared_journal(src)
    if focused is not None and j is not None:
        review.comment_popover(src, focused, j)
    with st.popover("", icon=":material/keyboard:", help="Keys"):
        st.markdown(KEYS_HELP)


def _marks(j: Journal | None) -> dict[int, str]:
    if j is None:
        return {}
    return {r: m.status for r, m in j.marks().items() if isinstance(r, int)}


def grid(
    src: Source,
    items: Sequence[GalleryItem],
    next_items: Sequence[GalleryItem],
    *,
    start: int,
    total: int | None,
    has_next: bool,
    size: TileSize,
    j: Journal | None,
) -> None:
    """The grid: the page's ``items`` (its first at position ``start`` of the selection, of
    ``total``; ``has_next``: whether a page follows), ``size.per_row`` a row, with
    ``next_items`` (the next page, once the grid asked for it: :func:`looks_ahead`) sent
    along so that N shows it at once and its pictures are fetched ahead."""
    page_size = state.page_size()
    memory = _memory(src).seen(state.record())
    _remember(src, memory)
    marks = _marks(j)

    def tiles(got: Sequence[GalleryItem], slot: str) -> list[dict[str, object]]:
        urls = services.tile_urls(got, slot)
        return [
            element.tile(it, url, marks.get(it.index) if it.index is not None else None)
            for it, url in zip(got, urls)
        ]

    stop = start + len(items)
    after = stop + len(next_items)
    data = element.page_data(
        grid=_key(src),
        page=start,
        size=page_size,
        has_next=has_next,
        per_row=size.per_row,
        dense=not size.controls,
        focus=state.record(),
        epoch=memory.epoch,
        tiles=tiles(items, "page"),
        next_tiles=tiles(next_items, "next") if next_items else (),
        next_has_next=total is None or after < total,
        can_mark=j is not None,
        ack=memory.ack(),
        mark=None if j is None else review.mark_route(src, j),
    )
    with st.container(key="tfb-gallery"):  # where tests and styles find the grid
        element.mount(
            state.widget_key(_key(src)),
            data,
            on_act=partial(_on_act, src, page_size, total),
            on_focus=partial(_on_focus, src),
        )
