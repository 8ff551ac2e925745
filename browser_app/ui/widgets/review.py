"""Review marks: passed or flagged, with a comment, from the record view and the gallery.

Marks are saved in the source's journal (they survive a refresh or a restart, and undoing
edits leaves them alone). In the record view the keys are **P** passed, **F** flagged, **J**
next record, **K** previous record (:mod:`browser_app.ui.components.review_keys`: each key
acts once, in the order typed, however fast); the comment is saved when Enter is pressed. A
mark or a move runs again only the parts of the Records page it changes
(:mod:`.parts`). :func:`render_report` offers every mark as CSV or JSON
(:mod:`browser_app.edits.review` makes them).

Where the server has the marks route (:mod:`browser_app.ui.routes`), an element posts P/F
there first and says saved as soon as the journal holds the line (:func:`mark_route` grants
the session's token); its action still reaches Python, which does not write the mark again
(:func:`route_saved`).
"""

from __future__ import annotations

import hashlib

import streamlit as st

from browser_app.edits import FLAGGED, PASSED, Journal, MarkStatus, RecordRef
from browser_app.edits.review import (
    ID_FEATURES,
    marked_features,
    progress,
    report_csv,
    report_json,
    report_rows,
)
from browser_app.errors import AppError
from browser_app.export.csv import neutralized, runs_as_formula
from browser_app.ui import routes, services, state
from browser_app.ui.components import review_keys as keys
from browser_app.ui.source import Source
from browser_app.ui.widgets import names, parts, schema
from browser_app.view import label_text, md_text
from codec.errors import CodecError

__all__ = [
    "apply_keys",
    "comment_popover",
    "mark_route",
    "render_marks",
    "render_report",
    "route_saved",
    "set_mark",
    "tile_mark",
]

ICONS: dict[MarkStatus, str] = {PASSED: "✓", FLAGGED: "⚑"}
LABELS: dict[MarkStatus, str] = {PASSED: "Passed", FLAGGED: "Flagged"}
# The review bar's mark buttons: status, widget name, icon, keyboard shortcut (the keys
# element takes the key once its code runs: the shortcut shows it, and acts only before).
_STATUS_BUTTONS: tuple[tuple[MarkStatus, str, str, str], ...] = (
    (PASSED, "pass", ":material/check_circle:", "P"),
    (FLAGGED, "flag", ":material/flag:", "F"),
)


def _sid(src: Source) -> str:
    return src.tag  # widget keys reach the page: never a signed URL


def _set(src: Source, ref: RecordRef, status: str | None, comment: str | None) -> bool:
    """Save the mark of ``ref`` (``comment`` None: keep its comment); False when it could
    not be saved (said in a message)."""
    j = services.shared_journal(src)
    if j is None:
        state.flash("Review marks cannot be saved: the pending edits cannot be opened.", "error")
        return False
    try:
        services.write_mark(j, ref, status, comment)
    except (AppError, CodecError) as exc:
        state.flash(f"The mark was not saved: {exc}", "error")
        return False
    state.bump_edit_revision()
    return True


def _on_status(src: Source, ref: RecordRef, status: str | None, comment_widget: str) -> None:
    comment = state.widget_value(comment_widget)
    if not _set(src, ref, status, None if comment is None else str(comment)):
        st.rerun()  # the whole page: it says why


def _on_comment(src: Source, ref: RecordRef, comment_widget: str) -> bool:
    """Save the comment typed for ``ref``; False when it could not be saved."""
    j = services.shared_journal(src)
    if j is None:
        return True
    comment = str(state.widget_value(comment_widget) or "")
    mark = j.marks().get(ref)
    if mark is None:
        if not comment.strip():
            return True
        # A comment on an unmarked record flags it: a remark usually means "look again".
        return _set(src, ref, FLAGGED, comment)
    if comment == mark.comment:
        # Nothing typed: the box told its value again (a page that ran while an earlier
        # record's box was still on screen). Writing it would be a mark nobody made.
        return True
    return _set(src, ref, mark.status, comment)


def _on_popover_comment(src: Source, ref: RecordRef, comment_widget: str) -> None:
    _on_comment(src, ref, comment_widget)


def _on_bar_comment(src: Source, ref: RecordRef, comment_widget: str) -> None:
    if not _on_comment(src, ref, comment_widget):
        st.rerun()  # the whole page: it says why


def _go(src: Source, n: int) -> None:
    parts.moved(src, max(0, n))


# -- the keys ------------------------------------------------------------------------------


def _keys_name(src: Source) -> str:
    return f"review:keys:{_sid(src)}"  # one element per source: a new one when another opens


def _scope(src: Source) -> str:
    """The source the keys act on, for the element: a digest (no file name in its data)."""
    return hashlib.sha256(src.tag.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _keys_memory_name(src: Source) -> str:
    return f"review:keys-memory:{_sid(src)}"


def _keys_memory(src: Source) -> keys.Memory:
    got = state.widget_value(_keys_memory_name(src))
    return got if isinstance(got, keys.Memory) else keys.Memory()


def _on_keys(src: Source) -> None:
    got = state.widget_value(_keys_name(src))
    apply_keys(src, got.get("act") if hasattr(got, "get") else None)


def _on_rest(src: Source) -> None:
    """The keys rest: the parts of the page the review left behind catch up."""
    parts.after_rest(src)


def apply_keys(src: Source, value: object) -> None:
    """What the keys element sent (its trigger value ``act``), applied: each mark written to
    the journal, in order, and the current record moved; each action once, whatever is sent
    again; then the parts of the page that show them run again. (The element's callback;
    tests call it with a value of their own.)"""
    sel, inferred = state.selection(), schema.stored(src)

    def step(record: keys.Record, n: int) -> keys.Record:
        at = record if isinstance(record, int) else state.record()  # a new record: its anchor
        before, after = services.neighbours(src, at, sel, inferred)
        there = after if n > 0 else before
        return at if there is None else there

    effects, memory = keys.handle(value, _keys_memory(src), state.record(), step, route_saved(src))
    if not effects.applied:
        return
    state.set_widget_value(_keys_memory_name(src), memory)
    if effects.saved:
        state.bump_edit_revision()  # the route wrote them: the page shows them from now on
    saved = [_set(src, record, status, None) for record, status in effects.marks]
    if isinstance(effects.record, int):
        parts.moved(src, effects.record)
    if not all(saved):
        st.rerun()  # the whole page: it says why


def mark_route(src: Source, j: Journal) -> dict[str, str] | None:
    """Where an element may post a mark of ``src`` and the token it shows (granted now for
    this session, this source's journal ``j`` and its records known), or None where the
    server has no marks route (:mod:`browser_app.ui.routes`). An element sent it hands its
    actions to Python afterwards all the same; :func:`route_saved` says which marks the
    route wrote."""
    session = state.streamlit_session()
    if not routes.served() or session is None:
        return None
    token = state.mark_token(src.tag)
    routes.grant(token, session, j, src.dataset.indexed)
    return {"url": routes.MARK_PATH, "token": token}


def route_saved(src: Source) -> keys.Saved | None:
    """``saved(client, seq, record, status)``: whether the marks route wrote that action of
    an element of ``src`` (then Python applies it without writing it again; the caller bumps
    the edit revision so the page shows it); None where there is no route."""
    if not routes.served():
        return None
    token = state.mark_token(src.tag)

    def saved(client: str, seq: int, record: keys.Record, status: str) -> bool:
        return routes.saved_by_route(token, client, seq, record, status)

    return saved


def progress_line(j: Journal) -> str:
    """Review progress in one line: reviewed of total, passed, flagged."""
    done, total, passed, flagged = progress(j)
    return (
        f"**{done:,} of {total:,} reviewed** · {ICONS[PASSED]} {passed:,} passed ·"
        f" {ICONS[FLAGGED]} {flagged:,} flagged"
    )


def render_marks(src: Source, ref: RecordRef) -> None:
    """The review bar of the record view: status, comment, keys and progress."""
    j = services.shared_journal(src)
    if j is None:
        return
    mark = j.marks().get(ref)
    rev = state.edit_revision()
    base = f"review:{_sid(src)}:{ref}"
    comment_widget = f"{base}:comment:{rev}"
    # One key for every record's bar: the keys element inside it stays the same element
    # from record to record (keys typed while the next record is drawn are not lost).
    with st.container(border=True, key="tfb-review-bar"):
        head, bar = st.columns([2.2, 3], vertical_alignment="center")
        now = (
            f"{ICONS[mark.status]} **{LABELS[mark.status]}**"
            + (f" — {md_text(mark.comment)}" if mark.comment else "")
            if mark is not None
            else "not reviewed yet"
        )
        head.markdown(f"**Review** · {now}")
        done, total, _p, _f = progress(j)
        bar.progress(min(1.0, done / total) if total else 0.0, text=progress_line(j))
        row = st.container(horizontal=True, vertical_alignment="bottom", gap="small")
        for status, name, icon, key in _STATUS_BUTTONS:
            row.button(
                LABELS[status],
                key=state.widget_key(f"{base}:{name}"),
                icon=icon,
                type="primary" if mark is not None and mark.status == status else "secondary",
                on_click=_on_status,
                args=(src, ref, status, comment_widget),
                shortcut=key,
            )
        row.button(
            "Clear",
            key=state.widget_key(f"{base}:clear"),
            icon=":material/backspace:",
            on_click=_on_status,
            args=(src, ref, None, comment_widget),
            disabled=mark is None,
        )
        if state.widget_value(comment_widget) is None:
            state.set_widget_value(comment_widget, mark.comment if mark else "")
        row.text_input(
            "Comment (Enter saves)",
            key=state.widget_key(comment_widget),
            on_change=_on_bar_comment,
            args=(src, ref, comment_widget),
            placeholder="What is wrong (or right) with this record",
            width=220,
        )
        if isinstance(ref, int):
            before, after = services.neighbours(src, ref, state.selection(), schema.stored(src))
            row.button(
                "Previous record",
                key=state.widget_key(f"{base}:prev"),
                icon=":material/keyboard_arrow_up:",
                on_click=_go,
                args=(src, ref if before is None else before),
                disabled=before is None,
                shortcut="K",
                help="The previous record of the selection",
            )
            row.button(
                "Next record",
                key=state.widget_key(f"{base}:next"),
                icon=":material/keyboard_arrow_down:",
                on_click=_go,
                args=(src, ref if after is None else after),
                disabled=after is None,
                shortcut="J",
                help="The next record of the selection",
            )
        keys.mount(
            state.widget_key(_keys_name(src)),
            keys.data(
                ref,
                _scope(src),
                _keys_memory(src),
                can_mark=True,
                can_move=isinstance(ref, int),
                behind=parts.behind(src),
                rest_waits=parts.rest_waits(src),
                rest_whole=parts.rest_runs_app(src),
                mark=mark_route(src, j),
            ),
            on_act=lambda: _on_keys(src),
            on_rest=lambda: _on_rest(src),
        )


def set_mark(src: Source, ref: RecordRef, status: str | None) -> None:
    """Mark ``ref`` passed or flagged (None clears it), keeping its comment."""
    _set(src, ref, status, None)


def _on_tile(src: Source, ref: RecordRef, widget: str) -> None:
    value = state.widget_value(widget)
    set_mark(src, ref, str(value) if value else None)


def tile_mark(src: Source, ref: RecordRef, j: Journal | None = None) -> None:
    """A compact mark control under a gallery tile: passed / flagged (the gallery's focus
    bar has the comment)."""
    j = j or services.shared_journal(src)
    if j is None:
        return
    mark = j.marks().get(ref)
    rev = state.edit_revision()
    widget = f"review:tile:{_sid(src)}:{ref}:{rev}"
    state.set_widget_value(widget, mark.status if mark else None)
    st.segmented_control(
        f"Review record {ref}",
        list(ICONS),
        key=state.widget_key(widget),
        format_func=lambda s: ICONS[s],
        on_change=_on_tile,
        args=(src, ref, widget),
        label_visibility="collapsed",
        width="stretch",
    )


def comment_popover(src: Source, ref: RecordRef, j: Journal | None = None) -> None:
    """A "Comment" popover with the comment of ``ref`` (Enter saves; a comment on an
    unmarked record flags it), for the gallery's focused tile."""
    j = j or services.shared_journal(src)
    if j is None:
        return
    mark = j.marks().get(ref)
    with st.popover(
        "",
        icon=":material/chat:" if not (mark and mark.comment) else ":material/mark_chat_read:",
        help=md_text(mark.comment) if mark and mark.comment else "Comment",
    ):
        cw = f"review:tilec:{_sid(src)}:{ref}:{state.edit_revision()}"
        if state.widget_value(cw) is None:
            state.set_widget_value(cw, mark.comment if mark else "")
        st.text_input(
            f"Comment on record {ref} (Enter saves)",
            key=state.widget_key(cw),
            on_change=_on_popover_comment,
            args=(src, ref, cw),
        )


# -- the report ----------------------------------------------------------------------------


_AUTO_ID = ""  # the identifying-feature choice meaning "image/source_id, else image/filename"
_AUTO_LABEL = " or ".join(ID_FEATURES) + " (the first found)"


def _on_id_feature(src: Source, widget: str) -> None:
    state.set_review_id_feature(src.spec, str(state.widget_value(widget) or "") or None)


def _id_feature(src: Source, j: Journal) -> str | None:
    """The identifying feature picked for this dataset (remembered in the session), with the
    picker to change it."""
    chosen = state.review_id_feature(src.spec)
    options = [_AUTO_ID, *marked_features(j)]
    if chosen and chosen not in options:
        options.append(chosen)
    widget = f"review:id:{_sid(src)}"
    state.set_widget_value(widget, chosen or _AUTO_ID)
    st.selectbox(
        "Identify records by",
        options,
        key=state.widget_key(widget),
        format_func=lambda name: (
            " or ".join(ID_FEATURES) + " (the first found)"
            if name == _AUTO_ID
            else label_text(name)
        ),
        on_change=_on_id_feature,
        args=(src, widget),
        help="The feature whose value the report gives for every mark, beside the file and"
        " the record's index in it. Remembered for this dataset.",
        width=420,
    )
    return chosen


def _spreadsheet_safe(text: str) -> str:
    """A report cell a spreadsheet shows as text: a leading ' before one it would run as a
    formula (a comment or a value from a file starting with =, +, -, @…)."""
    return neutralized(text) if runs_as_formula(text) else text


def render_report(src: Source, j: Journal) -> None:
    """Review progress, the marks as a table (file, index in the file and an identifying
    feature for each), and the report as CSV / JSON downloads."""
    done, total, _p, _f = progress(j)
    st.progress(min(1.0, done / total) if total else 0.0, text=progress_line(j))
    if not j.marks():
        st.info(
            "No review marks yet. Mark records passed or flagged from the Records page (keys"
            " P and F) or under the pictures of the Gallery.",
            icon=":material/fact_check:",
        )
        return
    rows = report_rows(j, src.rel, _id_feature(src, j), names.for_source(src))
    st.dataframe(
        [
            {
                "record": str(r["record"]),
                "status": r["status"],
                "comment": r["comment"],
                "file": r["file"],
                "index in file": r["local_index"],
                "identified by": r["id_feature"],
                "id": r["id"],
                "time": r["time"],
                "edited": r["edited"],
                **({"classes": r["classes"]} if "classes" in r else {}),
            }
            for r in rows
        ],
        hide_index=True,
        width="stretch",
        height=min(len(rows), 12) * 35 + 38,
    )
    stem = src.label.replace("/", "_").rsplit(".", 1)[0] or "review"
    # Side by side, each as wide as its label: both labels are read in full (CSV, JSON).
    row = st.container(horizontal=True, gap="small")
    row.download_button(
        "Review report (CSV)",
        report_csv(rows, _spreadsheet_safe),
        file_name=f"{stem}-review.csv",
        mime="text/csv",
        key=state.widget_key("review:csv"),
        on_click="ignore",
        icon=":material/download:",
    )
    row.download_button(
        "Review report (JSON)",
        report_json(j, rows, src.label),
        file_name=f"{stem}-review.json",
        mime="application/json",
        key=state.widget_key("review:json"),
        on_click="ignore",
        icon=":material/download:",
    )
    flagged = [r for r in rows if r["status"] == FLAGGED]
    if flagged:
        st.caption(
            "Flagged: "
            + ", ".join(str(r["record"]) for r in flagged[:40])
            + (f" and {len(flagged) - 40:,} more" if len(flagged) > 40 else "")
        )
