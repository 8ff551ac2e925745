"""Gallery: the page's pictures in a grid with their labels and review marks, for spot-checks
and a review by keyboard (see :mod:`browser_app.ui.widgets.gallery_grid` for the keys).

The grid is one element drawn in the browser: moving the focus runs nothing on the server.
The grid, its pager and its controls are one fragment: paging and marking rerun only them,
not the sidebar and the header. After "Go to %" the tiles are those of the
records found at that byte (:mod:`browser_app.ui.widgets.landing`)."""

from __future__ import annotations

import functools

import streamlit as st

from browser_app.ui import frame, services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import (
    detail,
    gallery_grid,
    landing,
    layers,
    names,
    pager,
    remote,
    schema,
)


def render() -> None:
    src = frame.start("Gallery")
    if src is None:
        return
    if landing.view(src, "gallery"):  # after "Go to %": the records found there
        return
    _gallery(src)


@st.fragment
def _gallery(src: Source) -> None:
    if state.landing() is not None:
        st.rerun(scope="app")  # "Go to %": the page shows the records found there
    with remote.guard(src, "gallery"):
        _tiles(src)


def _tiles(src: Source) -> None:
    if gallery_grid.opening(src):  # Enter or a click on a tile: the Records page
        return
    start, stop, total = pager.pager(src, "gallery")
    bar = st.container(horizontal=True, vertical_alignment="center", gap="small")
    with bar:
        boxes = detail.boxes_toggle("gallery")
        if boxes:
            layers.gallery_controls(src.spec)
        _name, size = gallery_grid.tile_size()
    tiles = functools.partial(
        services.gallery_items,  # edits applied
        src,
        sel=state.selection(),
        schema=schema.stored(src),
        hidden=state.hidden_classes(src.spec),
        size=size.thumb,
        boxes=boxes,
        layers=layers.for_source(src.spec),
        names=names.for_source(src),
    )
    items = tiles(start, stop)
    if not items:
        st.info(f"No records from {start:,} on.")
        return
    # Once the grid has shown this page it asks for the next one, which then goes along:
    # N shows it at once, its pictures fetched ahead (and this page is not kept waiting).
    more = total is None or stop < total
    ahead = more and gallery_grid.looks_ahead(src, start)
    next_items = tiles(stop, stop + state.page_size()) if ahead else []
    with bar:
        gallery_grid.focus_bar(src, items)
    if not any(it.data is not None for it in items):
        st.info(
            f"No pictures in records {start:,}–{stop - 1:,}. The Records page shows every feature."
        )
    gallery_grid.grid(
        src,
        items,
        next_items,
        start=start,
        total=total,
        has_next=more and (bool(next_items) or not ahead),
        size=size,
        j=services.shared_journal(src),
    )
    pager.pager(src, "gallery-bottom", compact=True)


if __name__ == "__main__":
    render()
