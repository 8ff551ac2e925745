"""The editor's buttons: add, delete or convert a feature; duplicate, copy, delete a record
(and undo a deletion). Each saves its change at once and says what it did, with an Undo."""

from __future__ import annotations

import streamlit as st

from browser_app.edits import DELETE_RECORD, Journal, RecordRef
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets.editor.saving import (
    after_change,
    journal_call,
    say,
    show_target,
    sid,
    undo,
)
from browser_app.view import label_text
from codec import example as ex
from codec.kinds import FEATURE_TYPES, INT64

__all__ = ["feature_actions", "on_undo_delete", "record_actions"]


def _on_add(src: Source, ref: RecordRef, form: str) -> None:
    fname = str(state.widget_value(f"{form}:name") or "").strip()
    ftype = str(state.widget_value(f"{form}:type") or INT64)
    values = str(state.widget_value(f"{form}:values") or "")

    if not fname:
        say(src, "error", "A new feature needs a name.")
        return
    ch, err = journal_call(src, lambda j: j.add_cell(ref, fname, ftype, values))
    if err is not None:
        say(src, "error", f"Feature {fname!r} was not added: {err}")
        return
    for k in ("name", "values"):
        state.set_widget_value(f"{form}:{k}", "")
    after_change(src, ch, f"Added feature {fname!r} ({ftype}).")


def _on_delete_feature(src: Source, ref: RecordRef, widget: str) -> None:
    fname = state.widget_value(widget)
    if not fname:
        return
    ch, err = journal_call(src, lambda j: j.delete_feature(ref, str(fname)))
    if err is not None:
        say(src, "error", f"Feature {fname!r} was not deleted: {err}")
        return
    after_change(src, ch, f"Deleted feature {fname!r}.")


def _on_convert(src: Source, ref: RecordRef, fw: str, tw: str) -> None:
    fname, to = state.widget_value(fw), state.widget_value(tw)
    if not fname or not to:
        return
    ch, err = journal_call(src, lambda j: j.convert_feature(ref, str(fname), str(to)))
    if err is not None:
        say(src, "error", f"Not converted (nothing changed): {err}")
        return
    after_change(src, ch, f"Converted {fname!r} to {to}; every value checked.")


def feature_actions(src: Source, j: Journal, ref: RecordRef, rec: ex.Record) -> None:
    """Add a feature, delete one, change one's type (each in a popover)."""
    base = f"edit:act:{sid(src)}:{ref}"
    names = list(rec.features)
    c = st.columns(3)
    with c[0].popover("Add a feature", icon=":material/add:", width="stretch"):
        form = f"{base}:add"
        st.text_input("Name", key=state.widget_key(f"{form}:name"))
        st.selectbox("Type", FEATURE_TYPES, key=state.widget_key(f"{form}:type"))
        st.text_input(
            "Values",
            key=state.widget_key(f"{form}:values"),
            help="As in the table: 1, 2, 3 · 0.5 · text · hex:00ff · a JSON list for several"
            " bytes values. Empty for no values.",
        )
        st.button(
            "Add feature",
            key=state.widget_key(f"{form}:go"),
            type="primary",
            on_click=_on_add,
            args=(src, ref, form),
        )
    with c[1].popover("Delete a feature", icon=":material/remove:", width="stretch"):
        w = f"{base}:del"
        st.selectbox("Feature", names, key=state.widget_key(w), index=None, format_func=label_text)
        st.button(
            "Delete feature",
            key=state.widget_key(f"{w}:go"),
            on_click=_on_delete_feature,
            args=(src, ref, w),
            disabled=not names,
        )
    with c[2].popover("Change a type", icon=":material/swap_horiz:", width="stretch"):
        fw, tw = f"{base}:conv:f", f"{base}:conv:t"
        st.selectbox(
            "Feature",
            names,
            key=state.widget_key(fw),
            index=None,
            format_func=lambda n: label_text(
                f"{n} ({rec.features[n].type})" if n in rec.features else n
            ),
        )
        st.selectbox("New type", FEATURE_TYPES, key=state.widget_key(tw), index=None)
        st.caption(
            "Every value is checked: the conversion is refused when any value would change"
            " (e.g. 2.5 to int64, or 16777217 to float32)."
        )
        st.button(
            "Convert",
            key=state.widget_key(f"{base}:conv:go"),
            on_click=_on_convert,
            args=(src, ref, fw, tw),
        )


# -- whole records -------------------------------------------------------------------------


def _on_delete_record(src: Source, ref: RecordRef) -> None:
    _ch, err = journal_call(src, lambda j: j.delete_record(ref))
    if err is not None:
        say(src, "error", f"Record {ref} was not deleted: {err}")
        return
    # No message of its own: the editor shows a deleted record as one banner with its Undo.
    state.bump_edit_revision()


def _on_duplicate(src: Source, ref: RecordRef, record_no: int) -> None:
    new_id, err = journal_call(src, lambda j: j.duplicate_record(ref))
    if new_id is None:
        say(src, "error", f"Record {ref} was not duplicated: {err}")
        return
    j = services.shared_journal(src)
    ch = j.changes_for(new_id)[0] if j is not None else None
    after_change(src, ch, f"Duplicated record {ref} as new record {new_id}, placed after it.")


def _on_new_from_copy(src: Source, ref: RecordRef, widget: str) -> None:
    after = state.widget_value(widget)
    anchor: RecordRef = ref if after is None else int(after)
    new_id, err = journal_call(src, lambda j: j.add_record(anchor, copy_of=ref))
    if new_id is None:
        say(src, "error", f"No new record: {err}")
        return
    root = anchor
    j = services.shared_journal(src)
    if isinstance(root, str) and j is not None:
        root = j.anchor(root) or 0
    state.set_record(int(root))
    show_target(src, int(root), new_id)
    ch = j.changes_for(new_id)[0] if j is not None else None
    after_change(
        src,
        ch,
        f"New record {new_id}: a copy of record {ref}, after record {anchor}. Edit it below.",
    )


def on_undo_delete(src: Source, ref: RecordRef) -> None:
    """Undo the deletion of record ``ref`` (a button's callback)."""
    j = services.shared_journal(src)
    if j is None:
        return
    for ch in reversed(j.changes_for(ref)):
        if ch.op == DELETE_RECORD:
            undo(src, ch.id)
            return


def record_actions(src: Source, ref: RecordRef, record_no: int, editable: bool) -> None:
    """Duplicate, new from copy (after any record) and delete; only delete when the record
    cannot be edited (``editable`` false: it is damaged)."""
    base = f"edit:rec:{sid(src)}:{ref}"
    c = st.columns([1, 1.3, 1, 2.5])
    c[0].button(
        "Duplicate",
        key=state.widget_key(f"{base}:dup"),
        icon=":material/content_copy:",
        on_click=_on_duplicate,
        args=(src, ref, record_no),
        disabled=not editable,
        help="Insert a copy of this record right after it",
        width="stretch",
    )
    with c[1].popover(
        "New from copy", icon=":material/note_add:", width="stretch", disabled=not editable
    ):
        w = f"{base}:after"
        total = src.dataset.indexed if src.dataset.index_complete else None
        if state.widget_value(w) is None:
            state.set_widget_value(w, record_no)
        st.number_input(
            "Insert after record",
            min_value=0,
            max_value=max(0, total - 1) if total else None,
            step=1,
            key=state.widget_key(w),
        )
        st.button(
            "Create and edit it",
            key=state.widget_key(f"{base}:new"),
            type="primary",
            on_click=_on_new_from_copy,
            args=(src, ref, w),
        )
    c[2].button(
        "Delete record",
        key=state.widget_key(f"{base}:del"),
        icon=":material/delete:",
        on_click=_on_delete_record,
        args=(src, ref),
        width="stretch",
    )
