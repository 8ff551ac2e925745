"""Records: the page's records as a table, and everything about the selected one."""

from __future__ import annotations

import streamlit as st

from browser_app.ui import frame, services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import detail, editor, pager, records_table
from browser_app.view import PageView, plural


def render() -> None:
    src = frame.start("Records", on_empty=_problems_in_place)
    if src is None:
        return
    start, stop, _total = pager.pager(src, "records")
    view = services.page_view(src, start, stop, boxes=state.show_boxes())  # edits applied
    if not view.rows:
        st.info(f"No records from {start:,} on: {src.label} ends before that.")
        return
    notes = []
    if view.damaged:
        notes.append(plural(view.damaged, "damaged record"))
    if view.skipped:
        notes.append(plural(view.skipped, "skipped region"))
    if notes:
        st.caption(
            f":red[**{' and '.join(notes)} on this page**] — shown in place; every intact"
            " record around them reads normally."
        )
    if view.recovered:
        st.caption(
            f":orange[**{plural(view.recovered, 'recovered record')} on this page**] — found"
            " by searching past damage: their CRCs check, but they might be content of a"
            " damaged record (open one for details)."
        )
    gap_row = records_table.records_table(src, view, start)
    _detail(src, view, start, stop, gap_row)


def _problems_in_place(src: Source) -> None:
    """A source without records: its first unreadable region in place, when there is one."""
    view = services.page_view(src, 0, 1)
    if view.rows:
        records_table.records_table(src, view, 0)


def _detail(src: Source, view: PageView, start: int, stop: int, gap_row: int | None) -> None:
    if gap_row is not None:
        gaps = [s for s in src.dataset.page(start, stop) if s.index is None]
        before = sum(1 for r in view.records[:gap_row] if r is None)
        if before < len(gaps):
            st.divider()
            detail.record_detail(src, gaps[before], state.show_boxes())
            return
    current: int | None = state.record()
    if current not in view.records:
        current = next((r for r in view.records if r is not None), None)
    if current is None:
        return
    slot = next((s for s in src.dataset.page(current, current + 1) if s.index == current), None)
    if slot is None:
        return
    st.divider()
    editor.detail(src, slot, state.show_boxes())  # View (edits applied) / Edit, and review


if __name__ == "__main__":
    render()
