"""Records: the page's records as a table, and everything about the selected one."""

from __future__ import annotations

import streamlit as st

from browser_app import edit_session, editor, loading, presenters, state, widgets


def render() -> None:
    src = loading.current_source()
    widgets.show_flashes()
    if src is None:
        st.subheader("Records", anchor=False)
        widgets.no_source()
        return
    widgets.source_header(src, "Records")
    if widgets.empty_source(src):
        _problems_in_place(src)
        return
    start, stop, _total = widgets.pager(src, "records")
    boxes = state.show_boxes()
    view = edit_session.page_view(src, start, stop, boxes=boxes)  # pending edits applied
    if not view.rows:
        st.info(f"No records from {start:,} on: {src.label} ends before that.")
        return
    notes = []
    if view.damaged:
        notes.append(presenters.plural(view.damaged, "damaged record"))
    if view.skipped:
        notes.append(presenters.plural(view.skipped, "skipped region"))
    if notes:
        st.caption(
            f":red[**{' and '.join(notes)} on this page**] — shown in place; every intact"
            " record around them reads normally."
        )
    gap_row = widgets.records_table(src, view, start)
    _detail(src, view, start, stop, gap_row)


def _problems_in_place(src: loading.Source) -> None:
    view = loading.page_view(src, 0, 1)
    if view.rows:
        widgets.records_table(src, view, 0)


def _detail(
    src: loading.Source, view: presenters.PageView, start: int, stop: int, gap_row: int | None
) -> None:
    if gap_row is not None:
        gaps = [s for s in src.dataset.page(start, stop) if s.index is None]
        before = sum(1 for r in view.records[:gap_row] if r is None)
        if before < len(gaps):
            st.divider()
            widgets.record_detail(src, gaps[before], state.show_boxes())
            return
    current: int | None = state.record()
    if current not in view.records:
        current = next((r for r in view.records if r is not None), None)
    if current is None:
        return
    slots = src.dataset.page(current, current + 1)
    slot = widgets.find_slot(slots, current)
    if slot is None:
        return
    st.divider()
    editor.detail(src, slot, state.show_boxes())  # View (edits applied) / Edit, and review


if __name__ == "__main__":
    render()
