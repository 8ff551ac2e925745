"""The shared edit journal as the person meets it: the journal of the open source for the
editing views (with what to do when it cannot be used), and the sidebar's count of pending
changes and review marks.

The journal itself is shared by every page and session
(:func:`browser_app.ui.services.open_journal`). When the source changed since the journal was
started, the journal refuses to open (:class:`~browser_app.errors.JournalMismatchError`);
:func:`journal` then explains what changed and offers to discard the old edits or keep them
aside, and the app keeps browsing read-only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from browser_app.edits import Journal, discard_journal, journal_path
from browser_app.errors import AppError, JournalError, JournalMismatchError, os_error_message
from browser_app.ui import navigation, services, state
from browser_app.ui.source import Source
from browser_app.view import md_text, plural
from codec.errors import CodecError

__all__ = ["act", "journal", "sidebar_status"]

_T = TypeVar("_T")


def journal(src: Source, quiet: bool = False) -> Journal | None:
    """The journal of ``src``, or None when it cannot be opened. Unless ``quiet``, a journal
    made on another version of the files is explained, with the choices to discard its edits
    or keep them aside (browsing goes on either way)."""
    if quiet:
        return services.shared_journal(src)
    try:
        return services.open_journal(src)
    except JournalMismatchError as exc:
        _mismatch(src, exc)
    except JournalError as exc:
        _broken(src, str(exc))
    except OSError as exc:
        st.error(f"The pending edits of {md_text(src.label)} cannot be read: {md_text(str(exc))}.")
    return None


def act(src: Source, action: Callable[[Journal], _T], failed: Callable[[str], None]) -> _T | None:
    """Run ``action`` (an undo, a redo…) on the shared journal of ``src`` from a callback, and
    have the edits redrawn; ``failed`` is told why when it cannot be done (nothing changed).
    None when it failed or there is no journal to run it on."""
    j = services.shared_journal(src)
    if j is None:
        return None
    try:
        result = action(j)
    except (AppError, CodecError) as exc:
        failed(str(exc))
        return None
    state.bump_edit_revision()
    return result


def _set_aside(src: Source, reason: str) -> None:
    path = journal_path(src.paths)
    try:
        moved = discard_journal(path, reason)
    except OSError as exc:
        state.flash(f"The old edits could not be moved: {os_error_message(exc)}.", "error")
        return
    services.forget_journals()
    state.bump_edit_revision()
    if reason == "discarded":
        state.flash("The old edits were discarded; you can edit this version now.", "success")
    else:
        state.flash(f"The old edits are kept aside in {moved}; this version starts clean.", "info")


def _mismatch(src: Source, exc: JournalMismatchError) -> None:
    with st.container(border=True, key="tfb-journal-mismatch"):
        st.warning(
            f"**{md_text(src.label)} changed since its pending edits were made.** Those edits"
            " were made on another version of the file, so they are not applied here. What"
            " changed: "
            + "; ".join(md_text(c) for c in exc.changes)
            + ". Browsing works as usual; choose what to do with the old edits to edit again.",
            icon=":material/sync_problem:",
        )
        c = st.columns(2)
        c[0].button(
            "Keep the old edits aside",
            key=state.widget_key("journal:keep"),
            icon=":material/inventory_2:",
            on_click=_set_aside,
            args=(src, "kept"),
            help="Move the old journal to a side file (its name is shown) and start clean",
        )
        c[1].button(
            "Discard the old edits",
            key=state.widget_key("journal:discard"),
            icon=":material/delete_sweep:",
            on_click=_set_aside,
            args=(src, "discarded"),
        )


def _broken(src: Source, message: str, where: str = "page") -> None:
    """A journal that cannot be read: why, and a button that moves it aside (no restart)."""
    with st.container(border=True):
        st.error(f"The pending edits of {md_text(src.label)} cannot be read: {md_text(message)}")
        st.button(
            "Set the damaged journal aside",
            key=state.widget_key(f"journal:broken:{where}"),
            on_click=_set_aside,
            args=(src, "damaged"),
            help="Moves the journal to a side file (kept, not deleted) and starts a clean one",
        )


def _torn_notice(j: Journal) -> None:
    """Say once per journal that a change cut short by a crash could not be read."""
    torn = j.torn
    if torn is None or state.torn_seen(str(torn)):
        return
    with st.sidebar.container(border=True):
        st.warning(
            "**One change could not be read:** the last line of the edit journal was cut"
            " short (a crash while it was written). Everything before it is applied; the cut"
            f" line is kept in {md_text(torn.name)} beside the journal, and new edits start on"
            " a clean line.",
            icon=":material/content_cut:",
        )
        if st.button("OK", key=state.widget_key(f"torn:{torn.name}")):
            state.set_torn_seen(str(torn))
            st.rerun()


def _broken_in_sidebar(src: Source) -> None:
    """A journal that cannot be read: said in the sidebar on every page, with the way out."""
    try:
        services.open_journal(src)
    except JournalMismatchError:
        return  # the editing views explain it; browsing is unaffected
    except JournalError as exc:
        with st.sidebar:
            _broken(src, str(exc), "sidebar")
    except OSError:
        return


def sidebar_status(src: Source | None) -> None:
    """The number of pending changes and review marks, with a link to the Changes page; a
    journal that cannot be read, with the way to set it aside; a change lost to a crash."""
    if src is None:
        return
    j = services.shared_journal(src)
    if j is None:
        _broken_in_sidebar(src)
        return
    _torn_notice(j)
    try:
        n = j.pending
        marks = len(j.marks())
    except (AppError, CodecError):
        return
    if not n and not marks:
        return
    label = f"**{plural(n, 'pending change')}**" if n else "Review marks"
    page = navigation.page("changes")
    with st.sidebar:
        if page is not None:
            st.page_link(page, label=label, icon=":material/edit_note:")
        else:
            st.caption(label)
        if marks:
            st.caption(plural(marks, "review mark"))
