"""Paging through a source: first / previous / next / last, the page size, and "go to
record". The current record (in the URL) decides the page shown."""

from __future__ import annotations

import streamlit as st

from browser_app.ui import state
from browser_app.ui.source import Source
from browser_app.view import plural

__all__ = ["pager"]


def _go(n: int) -> None:
    state.set_record(n)


def _on_size() -> None:
    state.set_page_size(int(state.widget_value("page_size") or state.DEFAULT_PAGE_SIZE))


def _on_jump() -> None:
    value = state.widget_value("jump")
    if value is not None:
        state.set_record(int(value))


def pager(
    src: Source, where: str = "records", compact: bool = False
) -> tuple[int, int, int | None]:
    """First/previous/next/last, page size and "go to record". Returns ``(start, stop,
    total)``; ``total`` is None while the index is still being built. ``compact``: the
    navigation buttons and the "Records a–b" line only (a second pager below a long page)."""
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
    widths = [1.05, 1.25, 2.2, 1.05, 1.05] + ([2.7] if compact else [1.2, 1.5])
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
    state.set_widget_value("jump", state.record())
    c[6].number_input(
        "Go to record",
        min_value=0,
        max_value=max(0, total - 1) if total else None,
        step=1,
        key=state.widget_key("jump"),
        on_change=_on_jump,
        help="Record number (counting from 0); press Enter",
    )
    return start, stop, total
