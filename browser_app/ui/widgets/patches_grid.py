"""The patches view's grid: a tile per object (its crop, its caption, a passed / flagged
control that marks its *record* in the review journal, and Open, which shows the record on
the Records page), drawn with Streamlit's own elements.

The gallery's grid element (:mod:`browser_app.ui.components.gallery`) is not used: it knows a
tile by its record (focus, moves, marks and the focused record's number are the record), and
a picture's objects are several tiles of one record — side by side the focus could not move
from one to the next, and both would be ringed. A tile identity apart from the record, in the
element's data, would let it draw patches too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import streamlit as st

from browser_app.edits import Journal
from browser_app.ui import navigation, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import review
from browser_app.view import md_text
from browser_app.view.patches import PatchTable, patch_png
from codec.errors import CodecError

__all__ = ["grid", "opening"]


def _tile_id(src: Source, table: PatchTable, row: int) -> str:
    side = "t" if table.side[row] == 0 else "p"
    return f"patches:{src.tag}:{side}:{int(table.record[row])}:{int(table.index[row])}"


def _on_mark(src: Source, record: int, widget: str) -> None:
    value = state.widget_value(widget)
    review.set_mark(src, record, str(value) if value else None)


def _open(record: int) -> None:
    state.set_record(record)
    state.set_widget_value("patches:opening", record)


def opening() -> bool:
    """Go to the Records page when a tile's Open was clicked: True when this run goes."""
    record = state.widget_value("patches:opening")
    if record is None:
        return False
    state.set_widget_value("patches:opening", None)
    navigation.goto("records")
    return True


def grid(
    src: Source,
    table: PatchTable,
    rows: Sequence[int] | np.ndarray,
    *,
    per_row: int,
    size: int,
    j: Journal | None,
) -> None:
    """The tiles of ``rows`` of ``table``, ``per_row`` a row, crops at most ``size`` pixels
    a side."""
    marks: dict[int, str] = {}
    if j is not None:
        marks = {r: m.status for r, m in j.marks().items() if isinstance(r, int)}
    rev = state.edit_revision()
    rows = [int(r) for r in rows]
    with st.container(key="tfb-patches"):  # where tests and styles find the grid
        for start in range(0, len(rows), per_row):
            cols = st.columns(per_row)
            for col, row in zip(cols, rows[start : start + per_row]):
                with col, st.container(border=True):
                    _tile(src, table, row, size, marks, rev, j is not None)


def _tile(
    src: Source,
    table: PatchTable,
    row: int,
    size: int,
    marks: dict[int, str],
    rev: int,
    can_mark: bool,
) -> None:
    record = int(table.record[row])
    try:
        payload = src.dataset[record]
    except CodecError:  # a damaged record: "no picture"
        payload = None
    png = patch_png(payload, table, row, size) if payload is not None else None
    if png is not None:
        st.image(png)
    else:
        st.caption("no picture")
    st.caption(md_text(table.caption(row)))
    tile = _tile_id(src, table, row)
    # The mark control, then Open below it: side by side they do not fit a narrow tile.
    if can_mark:
        widget = f"{tile}:mark:{rev}"
        state.set_widget_value(widget, marks.get(record))
        st.segmented_control(
            f"Review record {record}",
            list(review.ICONS),
            key=state.widget_key(widget),
            format_func=lambda s: review.ICONS[s],
            on_change=_on_mark,
            args=(src, record, widget),
            label_visibility="collapsed",
        )
    st.button(
        "Open",
        width="stretch",
        key=state.widget_key(f"{tile}:open"),
        on_click=_open,
        args=(record,),
        help=f"Show record {record} on the Records page",
    )
