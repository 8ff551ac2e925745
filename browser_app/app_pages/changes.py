"""Changes: every pending edit of the open source, record by record, with before and after,
undo per change or all at once, and the review marks with their report."""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from browser_app import app_pages, edit_session, loading, presenters, review, state, widgets
from browser_app.errors import AppError
from browser_app.journal import Change, Journal, RecordRef
from codec import example as ex
from codec.errors import CodecError

PER_PAGE = 20


def _preview(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):  # a feature list: its steps
        if not value:
            return "(no steps)"
        steps = "; ".join(presenters.values_preview(f, 4, 20) for f in value[:6])
        more = f"; … {len(value) - 6} more steps" if len(value) > 6 else ""
        return f"{presenters.plural(len(value), 'step')}: {steps}{more}"
    if isinstance(value, ex.Feature):
        return f"{value.type} [{len(value.values)}] {presenters.values_preview(value, 8, 60)}"
    return str(value)


def _undo(src: loading.Source, change_id: int) -> None:
    j = edit_session.journal(src, quiet=True)
    if j is None:
        return
    try:
        ids = j.undo(change_id)
    except (AppError, CodecError) as exc:
        state.flash(f"Could not undo: {exc}", "error")
        return
    edit_session.bump()
    extra = f" (and {len(ids) - 1} later change(s) that built on it)" if len(ids) > 1 else ""
    state.flash(f"Undone change {change_id}{extra}.", "success")


def _undo_all(src: loading.Source) -> None:
    j = edit_session.journal(src, quiet=True)
    if j is None:
        return
    try:
        ids = j.undo_all()
    except (AppError, CodecError) as exc:
        state.flash(f"Could not undo: {exc}", "error")
        return
    state.set_widget_value("changes:confirm", False)
    edit_session.bump()
    state.flash(
        f"Undone all {presenters.plural(len(ids), 'change')}. Review marks are kept.", "success"
    )


def _redo(src: loading.Source, change_id: int) -> None:
    j = edit_session.journal(src, quiet=True)
    if j is None:
        return
    try:
        j.redo(change_id)
    except (AppError, CodecError) as exc:
        state.flash(f"Could not redo: {exc}", "error")
        return
    edit_session.bump()


def _open(src: loading.Source, j: Journal, ref: RecordRef) -> None:
    root = j.anchor(ref)
    if root is None:
        return
    state.set_record(root)
    if isinstance(ref, str):
        state.set_widget_value(f"edit:target:{src.spec}:{root}", ref)
    app_pages.goto("records")


def _record_block(src: loading.Source, j: Journal, ref: RecordRef) -> None:
    changes = j.changes_for(ref)
    with st.container(border=True):
        head = st.columns([4, 1], vertical_alignment="center")
        status = ""
        if j.is_deleted(ref):
            status = " · :red[deleted — left out of exports]"
        elif isinstance(ref, str):
            status = " · :green[new]"
        head[0].markdown(f"**{j.label(ref)}**{status}")
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
            st.caption(f"(before/after not available: {exc})")
        if diffs and not j.is_deleted(ref):
            st.dataframe(
                [
                    {
                        "feature": d.feature
                        + (" (feature list)" if d.section == "feature_lists" else ""),
                        "before": _preview(d.before),
                        "after": _preview(d.after),
                    }
                    for d in diffs
                ],
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


def _change_line(src: loading.Source, ch: Change) -> None:
    c = st.columns([6, 1], vertical_alignment="center")
    when = time.strftime("%H:%M:%S", time.localtime(ch.timestamp))
    text = f"`#{ch.id}` {ch.describe()} · {when}"
    for w in ch.warnings:
        text += f"  \n:orange[⚠ {w}]"
    c[0].markdown(text)
    c[1].button(
        "Undo",
        key=state.widget_key(f"changes:undo:{ch.id}"),
        icon=":material/undo:",
        on_click=_undo,
        args=(src, ch.id),
        width="stretch",
    )


def _changes(src: loading.Source, j: Journal) -> None:
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
            f"**{presenters.plural(pending, 'pending change')}** ·"
            f" {presenters.plural(edited, 'record')} edited · {deleted:,} deleted ·"
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
        if app_pages.page("export") is not None:
            c[2].page_link(
                app_pages.page("export"),
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
            for ch in reversed(undone[-30:]):
                c = st.columns([6, 1], vertical_alignment="center")
                c[0].markdown(f"`#{ch.id}` {ch.describe()}")
                c[1].button(
                    "Redo",
                    key=state.widget_key(f"changes:redo:{ch.id}"),
                    icon=":material/redo:",
                    on_click=_redo,
                    args=(src, ch.id),
                    width="stretch",
                )


def render() -> None:
    src = loading.current_source()
    widgets.show_flashes()
    if src is None:
        st.subheader("Changes", anchor=False)
        widgets.no_source()
        return
    widgets.source_header(src, "Changes")
    j = edit_session.journal(src)
    if j is None:
        return
    try:
        n_marks = len(j.marks())
        tabs = st.tabs(
            [f"Pending changes ({j.pending:,})", f"Review ({presenters.plural(n_marks, 'mark')})"]
        )
        with tabs[0]:
            _changes(src, j)
        with tabs[1]:
            review.render_report(src, j)
    except (AppError, CodecError) as exc:
        st.error(f"The pending changes cannot be shown: {exc}")


if __name__ == "__main__":
    render()
