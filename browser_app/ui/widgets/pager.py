"""Paging through a source: first / previous / next / last, the page size, "go to record",
and "go to %" of the bytes (:mod:`browser_app.ui.widgets.landing`; not within a selection).
The current record (in the URL) decides the page shown.

With a selection (:func:`browser_app.ui.state.selection`), pages are positions in its order
(:func:`browser_app.ui.services.order`): the pager returns positions, which
``services.page_view`` and ``services.gallery_items``, given the same selection, turn into
the records shown."""

from __future__ import annotations

import numpy as np
import streamlit as st

from browser_app.selection import position
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import landing, schema
from browser_app.view import plural

__all__ = ["pager"]


def _go(n: int) -> None:
    state.set_record(n)


def _on_size() -> None:
    state.set_page_size(int(state.widget_value("page_size") or state.DEFAULT_PAGE_SIZE))


def _jump_name(shown: int) -> str:
    """The "Go to record" box's name while it shows record ``shown``. The box shows the
    current record, so it is a widget the server sets; with the value in its name, a message
    the browser sent before it was drawn again (a key pressed, a button clicked meanwhile)
    carries the box of a record left, which is no longer drawn, and cannot take the reviewer
    back there."""
    return f"jump:{shown}"


def _typed(shown: int) -> int | None:
    """The record typed in the box that showed ``shown``, or None when it still says
    ``shown``: a message carrying the box as it was drawn (sent while the page was being
    drawn again, when the server no longer remembers that box's value) is not a jump."""
    value = state.widget_value(_jump_name(shown))
    return None if value is None or int(value) == shown else int(value)


def _on_jump(shown: int) -> None:
    value = _typed(shown)
    if value is not None:
        state.set_record(value)


def _on_jump_selected(shown: int, order: np.ndarray) -> None:
    value = _typed(shown)
    if value is None:
        return
    if np.any(order == int(value)):
        state.set_record(int(value))
    else:
        state.flash(
            f"Record {int(value):,} is not in the selection ({state.selection().describe()}):"
            " clear the selection in the sidebar to see it.",
            "info",
        )


def pager(
    src: Source, where: str = "records", compact: bool = False
) -> tuple[int, int, int | None]:
    """First/previous/next/last, page size and "go to record". Returns ``(start, stop,
    total)``: positions in the current selection's order when there is one (``total`` its
    size), else record numbers; ``total`` is None while the index is still being built.
    ``compact``: the navigation buttons and the "Records a–b" line only (a second pager
    below a long page)."""
    got = services.order(src, state.selection(), schema.stored(src))
    if got is not None:
        return _selected(got, where, compact)
    ds = src.dataset
    total = ds.indexed if ds.index_complete else None
    size = state.page_size()
    if total is not None and total > 0 and state.record() >= total:
        st.warning(
            f"Record {state.record():,} does not exist: {src.label} has"
            f" {plural(total, 'record')}. Showing the last one.",
            icon=":material/last_page:",
        )
        state.set_record(total - 1)
    start = state.page_start(total)
    stop = start + size if total is None else min(start + size, total)
    known = ds.indexed
    last_start = ((total - 1) // size) * size if total else 0
    widths = [1.05, 1.25, 2.2, 1.05, 1.05] + ([2.7] if compact else [1.2, 1.5, 1.2])
    c = st.columns(widths, vertical_alignment="bottom")
    c[0].button(
        "First",
        key=state.widget_key(f"{where}:first"),
        icon=":material/first_page:",
        disabled=start == 0,
        on_click=_go,
        args=(0,),
        width="stretch",
    )
    c[1].button(
        "Previous",
        key=state.widget_key(f"{where}:prev"),
        icon=":material/chevron_left:",
        disabled=start == 0,
        on_click=_go,
        args=(max(0, start - size),),
        width="stretch",
    )
    if total == 0:
        label = "No records"
    else:
        shown_stop = stop if total is not None else min(stop, max(known, stop))
        of = f"{total:,}" if total is not None else f"{known:,}+"
        label = f"Records <b>{start:,}–{max(start, shown_stop - 1):,}</b> of {of}"
    c[2].html(
        f"<div style='text-align:center;padding-bottom:0.55rem;white-space:nowrap'>{label}</div>"
    )
    has_next = (total is None and known > stop) or (total is not None and stop < total)
    if total is None and known <= stop:
        has_next = True  # unknown yet: try the next page; it may be empty
    c[3].button(
        "Next",
        key=state.widget_key(f"{where}:next"),
        icon=":material/chevron_right:",
        icon_position="right",
        disabled=not has_next,
        on_click=_go,
        args=(start + size,),
        width="stretch",
    )
    c[4].button(
        "Last",
        key=state.widget_key(f"{where}:last"),
        icon=":material/last_page:",
        icon_position="right",
        disabled=total is None or start >= last_start,
        on_click=_go,
        args=(last_start,),
        width="stretch",
        help=None if total is not None else "Available once the whole file is indexed",
    )
    if compact:
        return start, stop, total
    state.set_widget_value("page_size", size)
    c[5].selectbox(
        "Per page",
        state.PAGE_SIZES,
        key=state.widget_key("page_size"),
        on_change=_on_size,
    )
    shown = state.record()
    state.set_widget_value(_jump_name(shown), shown)
    c[6].number_input(
        "Go to record",
        min_value=0,
        max_value=max(0, total - 1) if total else None,
        step=1,
        key=state.widget_key(_jump_name(shown)),
        on_change=_on_jump,
        args=(shown,),
        help="Record number (counting from 0); press Enter",
    )
    landing.percent_input(where, c[7])
    return start, stop, total


def _selected(order: np.ndarray, where: str, compact: bool) -> tuple[int, int, int | None]:
    """The pager over a selection: positions ``start..stop`` of ``order``."""
    total = len(order)
    size = state.page_size()
    pos = position(order, state.record()) if total else 0
    start = (pos // size) * size
    stop = min(start + size, total)
    last_start = ((total - 1) // size) * size if total else 0

    def at(p: int) -> int:
        return int(order[min(max(p, 0), total - 1)]) if total else 0

    widths = [1.05, 1.25, 2.2, 1.05, 1.05] + ([2.7] if compact else [1.2, 1.5])
    c = st.columns(widths, vertical_alignment="bottom")
    buttons = (
        (c[0], "First", "first", ":material/first_page:", start == 0, 0),
        (c[1], "Previous", "prev", ":material/chevron_left:", start == 0, start - size),
    )
    for col, label, name, icon, disabled, target in buttons:
        col.button(
            label,
            key=state.widget_key(f"{where}:{name}"),
            icon=icon,
            disabled=disabled,
            on_click=_go,
            args=(at(target),),
            width="stretch",
        )
    label = (
        "No records selected"
        if not total
        else f"Selected <b>{start + 1:,}–{stop:,}</b> of {total:,}"
    )
    c[2].html(
        f"<div style='text-align:center;padding-bottom:0.55rem;white-space:nowrap'>{label}</div>"
    )
    for col, label, name, icon, disabled, target in (
        (c[3], "Next", "next", ":material/chevron_right:", stop >= total, start + size),
        (c[4], "Last", "last", ":material/last_page:", start >= last_start, last_start),
    ):
        col.button(
            label,
            key=state.widget_key(f"{where}:{name}"),
            icon=icon,
            icon_position="right",
            disabled=disabled,
            on_click=_go,
            args=(at(target),),
            width="stretch",
        )
    if compact:
        return start, stop, total
    state.set_widget_value("page_size", size)
    c[5].selectbox(
        "Per page", state.PAGE_SIZES, key=state.widget_key("page_size"), on_change=_on_size
    )
    shown = at(pos)
    state.set_widget_value(_jump_name(shown), shown)
    c[6].number_input(
        "Go to record",
        min_value=0,
        step=1,
        key=state.widget_key(_jump_name(shown)),
        on_change=_on_jump_selected,
        args=(shown, order),
        help="Record number (counting from 0) within the selection; press Enter",
    )
    if not total:
        st.info(
            f"No record is in the selection ({state.selection().describe()}). Widen it in the"
            " sidebar.",
            icon=":material/filter_alt_off:",
        )
    return start, stop, total
