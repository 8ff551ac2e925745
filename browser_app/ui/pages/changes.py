"""Changes: every pending edit of the open source, record by record, with before and after,
undo per change or all at once, and the review marks with their report."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import streamlit as st

from browser_app.edits import Change, Journal, RecordRef
from browser_app.errors import AppError
from browser_app.ui import frame, navigation, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import editor, review
from browser_app.ui.widgets import journal as shared_journal
from browser_app.view import diff_rows, md_text, plural
from codec.errors import CodecError

PER_PAGE = 20
_UNDONE_SHOWN = 30  # undone changes offered for redo, the latest first


def _failed(what: str) -> Callable[[str], None]:
    return lambda why: state.flash(f"{what}: {why}", "error")


def _undo(src: Source, change_id: int) -> None:
    ids = shared_journal.act(src, lambda j: j.undo(change_id), _failed("Could not undo"))
    if ids is not None:
        extra = f" (and {len(ids) - 1} later change(s) that built on it)" if len(ids) > 1 else ""
        state.flash(f"Undone change {change_id}{extra}.", "success")


def _undo_all(src: Source) -> None:
    ids = shared_journal.act(src, lambda j: j.undo_all(), _failed("Could not undo"))
    if ids is not None:
        state.set_widget_value("changes:confirm", False)
        state.flash(f"Undone all {plural(len(ids), 'change')}. Review marks are kept.", "success")


def _redo(src: Source, change_id: int) -> None:
    shared_journal.act(src, lambda j: j.redo(change_id), _failed("Could not redo"))


def _open(src: Source, j: Journal, ref: RecordRef) -> None:
    root = j.anchor(ref)
    if root is None:
        return
    state.set_record(root)
    if isinstance(ref, str):
        editor.show_target(src, root, ref)
    navigation.goto("records")


def _record_block(src: Source, j: Journal, ref: RecordRef) -> None:
    changes = j.changes_for(ref)
    with st.container(border=True):
        head = st.columns([4, 1], vertical_alignment="center")
        status = ""
        if j.is_deleted(ref):
            status = " · :red[deleted — left out of exports]"
        elif isinstance(ref, str):
            status = " · :green[new]"
        head[0].markdown(f"**{md_text(j.label(ref))}**{status}")
        if head[1].button(
            "Open",
            key=state.widget_key(f"changes:open:{ref}"),
            icon=":material/open_in_new:",
            help="Show this record on the Records page",
        ):
            _open(src, j, ref)
        try:
            diffs = j.diff(ref)
        except (AppError, CodecError) as exc:
            diffs = []
            st.caption(f"(before/after not available: {md_text(str(exc))})")
        if diffs and not j.is_deleted(ref):
            st.dataframe(
                diff_rows(diffs),
                hide_index=True,
                width="stretch",
                column_config={
                    "feature": st.column_config.TextColumn("feature", width="medium"),
                    "before": st.column_config.TextColumn("before", width="large"),
                    "after": st.column_config.TextColumn("after", width="large"),
                },
            )
        elif isinstance(ref, str) and not j.is_deleted(ref):
            st.caption("Same values as the record it was copied from.")
        for ch in changes:
            _change_line(src, ch)


def _change_row(text: str, label: str, icon: str, key: str, on_click: Callable[[], None]) -> None:
    """One change in words, with its Undo (or Redo) button."""
    c = st.columns([6, 1], vertical_alignment="center")
    c[0].markdown(text)
    c[1].button(label, key=state.widget_key(key), icon=icon, on_click=on_click, width="stretch")


def _change_line(src: Source, ch: Change) -> None:
    when = time.strftime("%H:%M:%S", time.localtime(ch.timestamp))
    text = f"`#{ch.id}` {md_text(ch.describe())} · {when}"
    for w in ch.warnings:
        text += f"  \n:orange[⚠ {md_text(w)}]"
    _change_row(
        text, "Undo", ":material/undo:", f"changes:undo:{ch.id}", partial(_undo, src, ch.id)
    )


def _changes(src: Source, j: Journal) -> None:
    refs = j.edited_records()
    pending = j.pending
    if not pending:
        st.info(
            "No pending changes. Edit a record on the Records page (the Edit view of a"
            " record); every edit is saved here at once and can be undone.",
            icon=":material/edit_note:",
        )
    else:
        deleted = len(j.deleted_records())
        added = len(j.added_records())
        edited = len([r for r in refs if isinstance(r, int) and not j.is_deleted(r)])
        st.markdown(
            f"**{plural(pending, 'pending change')}** ·"
            f" {plural(edited, 'record')} edited · {deleted:,} deleted ·"
            f" {added:,} added. They are kept on disk in the edit journal and applied when"
            " you export; the source file is not changed."
        )
        c = st.columns([1.3, 1.2, 4], vertical_alignment="center")
        confirm = c[0].checkbox(
            "Really undo everything",
            key=state.widget_key("changes:confirm"),
        )
        c[1].button(
            "Undo all",
            key=state.widget_key("changes:undo_all"),
            icon=":material/undo:",
            type="primary",
            disabled=not confirm,
            on_click=_undo_all,
            args=(src,),
        )
        export_page = navigation.page("export")
        if export_page is not None:
            c[2].page_link(
                export_page,
                label="Export with these changes",
                icon=":material/download:",
            )
        pages = max(1, -(-len(refs) // PER_PAGE))
        page = st.pagination(pages, key=state.widget_key("changes:page")) if pages > 1 else 1
        start = (max(1, int(page)) - 1) * PER_PAGE
        for ref in refs[start : start + PER_PAGE]:
            _record_block(src, j, ref)
    undone = [c for c in j.changes(include_undone=True) if j.is_undone(c.id)]
    if undone:
        with st.expander(f"Undone ({len(undone)}) — redo one"):
            for ch in reversed(undone[-_UNDONE_SHOWN:]):
                _change_row(
                    f"`#{ch.id}` {md_text(ch.describe())}",
                    "Redo",
                    ":material/redo:",
                    f"changes:redo:{ch.id}",
                    partial(_redo, src, ch.id),
                )


def render() -> None:
    src = frame.start("Changes", needs_records=False)
    if src is None:
        return
    j = shared_journal.journal(src)
    if j is None:
        return
    try:
        n_marks = len(j.marks())
        tabs = st.tabs([f"Pending changes ({j.pending:,})", f"Review ({plural(n_marks, 'mark')})"])
        with tabs[0]:
            _changes(src, j)
        with tabs[1]:
            review.render_report(src, j)
    except (AppError, CodecError) as exc:
        st.error(f"The pending changes cannot be shown: {md_text(str(exc))}")


if __name__ == "__main__":
    render()
