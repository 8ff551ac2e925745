"""The parts of the app that run on their own (fragments with a name), and which of them a
change runs again.

The Records page's body (the pager, the table and the record view) is a fragment,
:data:`BODY`; inside it the table (:data:`TABLE`) and the record view with its review bar
(:data:`VIEW`) are fragments of their own. A change made on the page runs again only the
parts it changes:

- a row selected in the table: the record view only; the table shows the row selected
  already (:func:`after_select`);
- another current record (J / K, "Next record"): the record view and the table, whose
  selected row follows, when the table's page holds it; else the whole body
  (:func:`after_move`);
- a mark (passed, flagged, cleared, a comment): the record view, the table's review column,
  and what the sidebar says of marks — the count of marks (:data:`COUNTS`) and the review
  facets (:data:`FACETS`) — when the sidebar has them as parts; else the whole app, so that
  the sidebar never says a number that is no longer true (:func:`after_mark`). Within a
  selection made of marks ("unreviewed", a review facet) a mark changes the page: the body.

Outside the Records page (a test drawing the review bar alone) these names are not
registered: a change then runs what Streamlit runs by default.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.errors import StreamlitAPIException

from browser_app.errors import AppError
from browser_app.selection import Selection
from browser_app.ui import services, state
from browser_app.ui.source import Source
from codec.errors import CodecError

__all__ = [
    "BODY",
    "COUNTS",
    "FACETS",
    "TABLE",
    "VIEW",
    "after_mark",
    "after_move",
    "after_select",
    "remember_page",
    "sidebar_facts",
]

BODY = "tfb-records-body"
TABLE = "tfb-records-table-part"
VIEW = "tfb-record-view"
COUNTS = "tfb-journal-counts"
"""The sidebar's count of pending changes and marks, as a part of its own."""
FACETS = "tfb-facets"
"""The sidebar's facets (with the count of each review state), as a part of their own."""

_REVIEW_BASES = frozenset({"passed", "flagged", "unreviewed"})


def sidebar_facts(src: Source) -> tuple[int, int] | None:
    """What the sidebar shows about the journal: pending changes and review marks."""
    j = services.shared_journal(src)
    if j is None:
        return None
    try:
        return j.pending, len(j.marks())
    except (AppError, CodecError):
        return None


def _page_name(src: Source) -> str:
    return f"records:page:{src.tag}"


def remember_page(src: Source, records: Sequence[int | None]) -> None:
    """The records of the page the table shows (a move within them keeps the body)."""
    state.set_widget_value(_page_name(src), tuple(records))


def _on_page(src: Source, record: int) -> bool:
    shown = state.widget_value(_page_name(src))
    return isinstance(shown, tuple) and record in shown


def _made_of_marks(sel: Selection) -> bool:
    """Whether marks decide which records ``sel`` holds (a mark can change its pages)."""
    return sel.base in _REVIEW_BASES or any(group == "review" for group, _ in sel.facets)


def _rerun(parts: Sequence[str]) -> None:
    """Run ``parts`` again instead of what the interaction would run (from a callback);
    nothing when one of them is not on the page."""
    try:
        st.rerun(list(parts))
    except StreamlitAPIException:
        return


def after_select() -> None:
    """A row of the table was selected: only the record view runs again."""
    _rerun([VIEW])


def after_move(src: Source, record: int) -> None:
    """The current record became ``record``: the record view and the table run again when
    the table's page holds it, else the whole body (the pager turns the page)."""
    _rerun([VIEW, TABLE] if _on_page(src, record) else [BODY])


def after_mark(src: Source, moved_to: int | None = None) -> None:
    """A mark was saved (and the current record became ``moved_to``, when given): the parts
    that show it run again (see the module's description)."""
    if _made_of_marks(state.selection()) or (moved_to is not None and not _on_page(src, moved_to)):
        parts = [BODY]
    else:
        parts = [VIEW, TABLE]
    state.set_sidebar_counts(sidebar_facts(src))  # what the run asked for below draws
    try:
        st.rerun([*parts, COUNTS, FACETS])
    except StreamlitAPIException:
        st.rerun()  # the sidebar says it only when the whole app runs
