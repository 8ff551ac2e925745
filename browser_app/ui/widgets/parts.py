"""The parts of the app that run on their own (fragments with a name), and which of them a
change runs again.

The Records page's body (the pager, the table and the record view) is a fragment,
:data:`BODY`; inside it the table (:data:`TABLE`) and the record view with its review bar
(:data:`VIEW`) are fragments of their own. A review runs as little as it can:

- a mark, or another current record (the review keys, the review bar's buttons), runs the
  record view alone, even past the end of the table's page: the review bar says the mark,
  its progress line the counts, the record view the record, at once. (Naming parts to run,
  ``st.rerun(["…"])``, costs a second run of the script: the fast path names none.)
- once the keys rest, the record view's keys element asks for the rest (:func:`after_rest`):
  the table (its row follows the current record, its review column the marks), or the whole
  body when the current record left the table's page or the marks changed a selection made
  of them ("unreviewed", a review facet); and what the sidebar says of marks — the count
  (:data:`COUNTS`) and the review facets (:data:`FACETS`) when the sidebar has them as parts,
  else the whole app, so that the sidebar never keeps a number that is no longer true. Only
  then are widgets the server sets itself drawn again (the pager's "Go to record"): drawn
  between two keys, the browser could send the old value back as a change.
- a row selected in the table: the record view (:func:`after_select`).

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
    "after_rest",
    "after_select",
    "ahead",
    "behind",
    "moved",
    "remember_table",
    "rest_runs_app",
    "rest_waits",
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


def _table_name(src: Source) -> str:
    return f"records:table-drew:{src.tag}"


def remember_table(src: Source, records: Sequence[int | None]) -> None:
    """What the table drew: the records of its page and the marks it knew (the edit
    revision). The record whose row it selects is :func:`browser_app.ui.state.table_shows`."""
    state.set_widget_value(_table_name(src), (tuple(records), state.edit_revision()))
    state.set_widget_value(_moved_name(src), None)  # the table has followed


def _drew(src: Source) -> tuple[tuple[int | None, ...], int]:
    got = state.widget_value(_table_name(src))
    return got if isinstance(got, tuple) and len(got) == 2 else ((), -1)


def _on_page(src: Source, record: int) -> bool:
    return record in _drew(src)[0]


def behind(src: Source) -> str:
    """What the table or the sidebar does not show yet of the current record and the marks:
    a token (one per state of both: the keys element asks for the rest once per token), or
    "" when they are up to date."""
    now = (state.record(), state.edit_revision())
    table = state.table_shows(src.tag) == now[0] and _drew(src)[1] == now[1]
    counts, facts = state.sidebar_counts(), sidebar_facts(src)
    sidebar = counts is None or facts is None or counts[1] == facts[1]
    return "" if table and sidebar else f"{now[0]}:{now[1]}"


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
    """A row of the table was selected: the record view runs (the table shows the row
    selected already)."""
    _rerun([VIEW])


def _moved_name(src: Source) -> str:
    return f"records:moved:{src.tag}"


def moved(src: Source, record: int) -> None:
    """The review made ``record`` the current record (the table follows once the keys
    rest, even to another page)."""
    state.set_record(record)
    state.set_widget_value(_moved_name(src), record)


def ahead(src: Source) -> bool:
    """Whether the review moved the current record off the page the table shows: the record
    view shows it, and the table and the pager follow once the keys rest."""
    current = state.record()
    return state.widget_value(_moved_name(src)) == current and not _on_page(src, current)


_SIDEBAR_PARTS = "records:sidebar-parts"  # whether the sidebar's counts were parts last time


def rest_waits(src: Source) -> bool:
    """Whether a key typed while the page catches up (:func:`after_rest`) must wait for
    that run: it draws the pager (the body: the current record left the table's page, or
    marks decide the selection's pages), or the whole app (the sidebar's counts changed and
    are not parts of their own). Those draw widgets the server sets itself, whose old values
    a message sent meanwhile would carry. (The table alone, or with the sidebar's parts, need
    not be waited for: the key's run takes its place.)"""
    return ahead(src) or _made_of_marks(state.selection()) or rest_runs_app(src)


def rest_runs_app(src: Source) -> bool:
    """Whether catching up runs the whole app: the sidebar's counts changed, and they are
    not parts of their own (as far as the last catching up found)."""
    sidebar = sidebar_facts(src) != state.sidebar_counts()
    return sidebar and state.widget_value(_SIDEBAR_PARTS) is not True


def after_rest(src: Source) -> None:
    """The keys rest: the table follows the current record and the marks — the whole body
    when the current record left its page or the marks changed the selection's pages — and
    the sidebar the marks (the whole app when its counts are not parts of their own)."""
    body = ahead(src) or _made_of_marks(state.selection())
    facts = sidebar_facts(src)
    sidebar = facts != state.sidebar_counts()
    state.set_sidebar_counts(facts)  # what the run asked for below draws
    part = BODY if body else TABLE
    if not sidebar:
        _rerun([part])
        return
    try:
        state.set_widget_value(_SIDEBAR_PARTS, True)  # unless the rerun below says otherwise
        st.rerun([part, COUNTS, FACETS])
    except StreamlitAPIException:
        state.set_widget_value(_SIDEBAR_PARTS, False)
        st.rerun()  # the sidebar says it only when the whole app runs
