"""The record editor of the records page's detail view, and that detail view itself.

Every edit is saved into the source's journal the moment it is made (see
:mod:`.saving`), so there is no unsaved state to lose when paging away, refreshing or
opening a second tab. Values are checked as they are typed
(:func:`browser_app.edits.check_value`): a rejected value is shown beside its feature with the
reason, and every other edit stands. How values are written in a cell:
:mod:`browser_app.view.cells`; how a cell's text is read back into an edit:
:mod:`browser_app.edits.cells`.

The parts: :mod:`.tables` (features and feature lists), :mod:`.actions` (feature and record
buttons), :mod:`.pictures` (replace a picture), :mod:`.saving` (saving and messages),
:mod:`.keys` (a quick Enter in a cell is not lost).
"""

from __future__ import annotations

import streamlit as st

import codec
from browser_app.edits import Journal, RecordRef
from browser_app.errors import AppError
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import detail as record_view
from browser_app.ui.widgets import journal as shared_journal
from browser_app.ui.widgets import review
from browser_app.ui.widgets.editor.actions import feature_actions, on_undo_delete, record_actions
from browser_app.ui.widgets.editor.keys import keep_quick_enter
from browser_app.ui.widgets.editor.pictures import PICTURE, pictures
from browser_app.ui.widgets.editor.saving import (
    rejected_cells,
    show_messages,
    show_target,
    sid,
    target_name,
)
from browser_app.ui.widgets.editor.tables import features_table, list_table, type_warnings_of
from browser_app.view import md_text, plural
from codec.errors import CodecError
from codec.kinds import EXAMPLE, RAW, SEQUENCE_EXAMPLE

__all__ = ["MODES", "detail", "mode", "render", "show_target"]


# -- the editor ----------------------------------------------------------------------------


def _choose_target(src: Source, j: Journal, record_no: int) -> RecordRef:
    """Which record at ``record_no`` to edit: the record itself, or (a switch) one of the new
    records placed after it."""
    children = j.new_children(record_no)
    if not children:
        return record_no
    name = target_name(src, record_no)
    options: list[RecordRef] = [record_no, *children]
    if state.widget_value(name) not in options:
        state.set_widget_value(name, record_no)
    picked = st.segmented_control(
        "Edit",
        options,
        key=state.widget_key(name),
        format_func=lambda r: f"Record {r}" if isinstance(r, int) else f"New record {r}",
        help="New records placed after this one are edited here",
    )
    return picked if picked is not None else record_no


def render(src: Source, record_no: int, ref: RecordRef | None = None) -> None:
    """The editor for record ``record_no`` (and the new records placed after it: a switch
    chooses which one, unless ``ref`` says)."""
    j = shared_journal.journal(src)
    if j is None:
        return
    if ref is None:
        ref = _choose_target(src, j, record_no)
    keep_quick_enter()
    show_messages(src, j)
    try:
        rec = j.effective_record(ref)
    except codec.CorruptRecordError as exc:
        st.error(
            f"Record {ref} is damaged ({exc}); it cannot be edited, only left out of the"
            " export by deleting it.",
            icon=":material/error:",
        )
        record_actions(src, ref, record_no, editable=False)
        return
    except (AppError, CodecError, IndexError) as exc:
        st.error(f"Record {ref} cannot be edited: {md_text(str(exc))}")
        return
    if rec is None:
        c = st.columns([5, 1.2], vertical_alignment="center")
        with c[0]:
            st.warning(
                f"{j.label(ref)} is deleted: it is left out of exports.",
                icon=":material/delete:",
            )
        c[1].button(
            "Undo the deletion",
            key=state.widget_key(f"edit:undel:{sid(src)}:{ref}"),
            icon=":material/undo:",
            on_click=on_undo_delete,
            args=(src, ref),
        )
        return
    n = len(j.changes_for(ref))
    kind = {EXAMPLE: "Example", SEQUENCE_EXAMPLE: "SequenceExample"}.get(rec.kind, "raw payload")
    status = f" · :blue[✎ {plural(n, 'pending change')}]" if n else ""
    st.markdown(f"**Editing {md_text(j.label(ref))}** · {kind}{status}")
    record_actions(src, ref, record_no, editable=True)
    if rec.kind == RAW:
        st.info(
            "This record is not an Example or SequenceExample: it can be deleted or"
            " duplicated, not edited feature by feature.",
            icon=":material/info:",
        )
        return
    warn = type_warnings_of(src, j, ref, rec)
    if warn:
        st.warning(
            "**This record now disagrees with the rest of the dataset:** "
            + "; ".join(md_text(w) for ws in warn.values() for w in ws)
            + ".",
            icon=":material/rule:",
        )
    rejected = rejected_cells(src, ref)
    table_rejects = [(k, v) for k, v in rejected.items() if k[0] != PICTURE]
    if table_rejects:
        st.error(
            "**Not saved:** "
            + "; ".join(
                f"{md_text(k[1])}{'' if k[2] < 0 else f' step {k[2]}'}: “{md_text(t)}”"
                f" — {md_text(r)}"
                for k, (t, r) in table_rejects
            )
            + ". Everything else is saved; type a corrected value to replace it.",
            icon=":material/block:",
        )
    title = "Context features" if rec.kind == SEQUENCE_EXAMPLE else "Features"
    st.markdown(f"**{title}** · edits are saved as you make them")
    features_table(src, j, ref, rec, warn)
    feature_actions(src, j, ref, rec)
    pictures(src, ref, rec)
    if rec.kind == SEQUENCE_EXAMPLE:
        st.markdown("**Feature lists** · the values of each step")
        if not rec.feature_lists:
            st.caption("(no feature lists)")
        for lname, steps in rec.feature_lists.items():
            list_table(src, j, ref, lname, list(steps), warn)


# -- the records page's detail view ------------------------------------------------------

MODES = ("View", "Edit")


def mode() -> str:
    """The records page's detail mode: "View" or "Edit"."""
    value = state.widget_value("detail:mode")
    return value if value in MODES else "View"


def detail(src: Source, slot: codec.Slot, boxes: bool) -> None:
    """The records page's detail of one record: "View" (the record with its pending edits
    applied) or "Edit" (this editor), with the review bar on top in both."""
    if slot.index is None:
        record_view.record_detail(src, slot, boxes)
        return
    record_no = slot.index
    j = services.shared_journal(src)
    if state.widget_value("detail:mode") not in MODES:
        state.set_widget_value("detail:mode", "View")
    mode = st.segmented_control(
        "Record view",
        MODES,
        key=state.widget_key("detail:mode"),
        format_func=lambda m: {
            "View": ":material/visibility: View",
            "Edit": ":material/edit: Edit",
        }[m],
        label_visibility="collapsed",
    )
    if j is None:
        if mode == "Edit":
            shared_journal.journal(src)  # explains why, with the choices
        record_view.record_detail(src, slot, boxes)
        return
    if mode == "Edit":
        ref = _choose_target(src, j, record_no)
        review.render_marks(src, ref)
        render(src, record_no, ref)
        return
    review.render_marks(src, record_no)
    if j.is_deleted(record_no):
        st.warning(
            f"Record {record_no:,} is deleted (pending): it is left out of exports. Undo it in"
            " the Edit view or on the Changes page.",
            icon=":material/delete:",
        )
    elif j.is_touched(record_no):
        st.info(
            f"Shown with {plural(len(j.changes_for(record_no)), 'pending change')}"
            " applied (the file itself is unchanged until you export).",
            icon=":material/edit_note:",
        )
    news = j.new_children(record_no)
    if news:
        st.caption(
            "New records placed after this one: " + ", ".join(news) + " (the Edit view shows them)."
        )
    record_view.record_detail(src, _edited(j, slot), boxes)


def _edited(j: Journal, slot: codec.Slot) -> codec.Slot:
    """``slot`` as the pending edits leave it (the same slot when it cannot be edited)."""
    if slot.index is None:
        return slot
    try:
        page = j.page(slot.index, slot.index + 1)
    except (AppError, CodecError, IndexError):
        return slot
    return next((e.slot for e in page if e.ref == slot.index), slot)
