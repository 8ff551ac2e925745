"""Records: the page's records as a table, and everything about the selected one — side by
side on a wide screen (the record and its pictures in view beside the table), one above the
other on a narrow one.

The page's body is a fragment, and the table and the record view are fragments inside it
(:mod:`browser_app.ui.widgets.parts` says which a change runs again): paging runs
the body; selecting a row, the review keys and the editor run the record view (with the
table when a mark or a move changes it); the sidebar and the header are drawn again only when
what they show changed (pending changes, review marks). After "Go to %" the body shows the
records found at that byte instead (:mod:`browser_app.ui.widgets.landing`), until the person
goes back to numbered pages. A remote source that fails while read shows what went wrong
below what was drawn (:func:`browser_app.ui.widgets.remote.guard`).
"""

from __future__ import annotations

import streamlit as st

from browser_app.ui import frame, services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import (
    detail,
    editor,
    landing,
    layers,
    names,
    pager,
    parts,
    records_table,
    remote,
    schema,
)
from browser_app.view import PageView, plural

SPLIT = "tfb-records-split"  # the container of the table and the record (CSS st-key-<this>)
WIDE_PX = 1200  # narrower windows stack the record under the table

# Side by side from WIDE_PX on; below, the two columns take the whole width, one above the
# other (Streamlit itself stacks columns only on phones).
_ROW = f".st-key-{SPLIT} > [data-testid='stLayoutWrapper'] > [data-testid='stHorizontalBlock']"
CSS = f"""<style>
@media (max-width: {WIDE_PX - 1}px) {{
  {_ROW} {{ flex-direction: column; }}
  {_ROW} > [data-testid="stColumn"] {{
    width: 100% !important; flex: 1 1 100% !important; min-width: 100% !important;
  }}
}}
</style>"""


def render() -> None:
    src = frame.start("Records", on_empty=_problems_in_place)
    if src is None:
        return
    st.html(CSS)
    state.set_sidebar_counts(parts.sidebar_facts(src))
    if landing.view(src, "records"):  # after "Go to %": the records found there
        return
    _body(src)


def _whole_page_changed(src: Source) -> bool:
    """Whether a part's run must give way to a run of the whole page: an edit changed the
    pending changes (the table's values, the sidebar's count), or "Go to %" the records
    shown. (Marks the parts show themselves: :mod:`browser_app.ui.widgets.parts`.)"""
    shown, now = state.sidebar_counts(), parts.sidebar_facts(src)
    pending = (shown[0] if shown else 0) != (now[0] if now else 0)
    return pending or state.landing() is not None


@st.fragment(key=parts.BODY)
def _body(src: Source) -> None:
    if _whole_page_changed(src):
        st.rerun(scope="app")
    with remote.guard(src, "records"):
        _page(src)


def _page(src: Source) -> None:
    start, stop, _total = pager.pager(src, "records")
    view = services.page_view(
        src,
        start,
        stop,
        sel=state.selection(),
        schema=schema.stored(src),
        boxes=state.show_boxes(),
        layers=layers.for_source(src.spec),
        names=names.for_source(src),
    )  # edits applied
    if not view.rows:
        st.info(f"No records from {start:,} on: {src.label} ends before that.")
        return
    _notes(view)
    mode = editor.mode()
    if mode == "Edit":  # the editor's tables need the whole width
        _table(src, view, start)
        st.divider()
        _record_view(src, view, start, stop, mode)
        return
    with st.container(key=SPLIT):
        left, right = st.columns([1.05, 1], gap="medium")
    with left:
        _table(src, view, start)
    with right:
        _record_view(src, view, start, stop, mode)


@st.fragment(key=parts.TABLE)
def _table(src: Source, view: PageView, start: int) -> None:
    records_table.records_table(src, view, start)
    records_table.column_chooser(src, view)


@st.fragment(key=parts.VIEW)
def _record_view(src: Source, view: PageView, start: int, stop: int, mode: str) -> None:
    """The current record (or the skipped region selected in the table), laid out for
    ``mode``; a run of its own gives way to the whole page when the page must change."""
    if _whole_page_changed(src) or editor.mode() != mode:
        st.rerun(scope="app")  # (never true on a run of the whole app: no loop)
    # A skipped region selected in the table, unless the review has moved on since.
    gap = None
    if state.table_shows(src.tag) == state.record():
        gap = records_table.selected_gap(src, view)
    with remote.guard(src, "records"):
        _detail(src, view, start, stop, gap)


def _notes(view: PageView) -> None:
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


def _problems_in_place(src: Source) -> None:
    """A source without records: its first unreadable region in place, when there is one."""
    view = services.page_view(src, 0, 1, sel=state.selection(), schema=schema.stored(src))
    if view.rows:
        records_table.records_table(src, view, 0)


def _detail(src: Source, view: PageView, start: int, stop: int, gap_row: int | None) -> None:
    if gap_row is not None:
        gaps = [s for s in src.dataset.page(start, stop) if s.index is None]
        before = sum(1 for r in view.records[:gap_row] if r is None)
        if before < len(gaps):
            detail.record_detail(src, gaps[before], state.show_boxes())
            return
    current: int | None = state.record()
    if current not in view.records and not parts.ahead(src):
        current = next((r for r in view.records if r is not None), None)
    if current is None:
        return
    slot = next((s for s in src.dataset.page(current, current + 1) if s.index == current), None)
    if slot is None:
        return
    editor.detail(src, slot, state.show_boxes())  # View (edits applied) / Edit, and review


if __name__ == "__main__":
    render()
