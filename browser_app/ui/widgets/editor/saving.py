"""What every part of the editor shares: running an edit against the source's shared journal,
and what the person is told about it — values that were not saved (kept beside their cell),
warnings of saved changes, and messages with an Undo button at the top of the editor.

Every edit is saved into the journal the moment it is made (a table cell in its
``on_change`` callback, a button in its ``on_click``), so there is no unsaved state to lose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from browser_app.edits import Change, Journal, RecordRef
from browser_app.errors import AppError, ConversionError, ValueParseError
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import journal, messages
from browser_app.view import plural
from codec.errors import CodecError

__all__ = [
    "Key",
    "after_change",
    "journal_call",
    "rejected_cells",
    "saved_notes",
    "say",
    "set_notes",
    "set_rejected",
    "show_messages",
    "show_target",
    "sid",
    "target_name",
    "undo",
]

Key = tuple[str, str, int]
"""A table row: ``(section, feature, step)``, step -1 for a feature; ``("picture", feature,
index)`` for a picture."""

_T = TypeVar("_T")
_MESSAGES_KEPT = 6


def sid(src: Source) -> str:
    """The source's part of the editor's widget names and session values (widget names reach
    the page: a signed URL's is a digest)."""
    return src.tag


def target_name(src: Source, record_no: int) -> str:
    """The widget name of the switch choosing which record at ``record_no`` is edited (the
    record itself or a new record placed after it)."""
    return f"edit:target:{sid(src)}:{record_no}"


def show_target(src: Source, record_no: int, ref: RecordRef) -> None:
    """Make the editor at ``record_no`` open on ``ref`` (a new record placed after it)."""
    state.set_widget_value(target_name(src, record_no), ref)


# -- what was not saved, and what was saved with a warning ----------------------------------


def rejected_cells(src: Source, ref: RecordRef) -> dict[Key, tuple[str, str]]:
    """``{row: (text typed, why it was not saved)}`` for record ``ref``."""
    return state.rejected_texts(sid(src), ref)


def set_rejected(src: Source, ref: RecordRef, key: Key, item: tuple[str, str] | None) -> None:
    """Remember (or, with ``None``, forget) why a row's text was not saved."""
    current = dict(rejected_cells(src, ref))
    if item is None:
        current.pop(key, None)
    else:
        current[key] = item
    state.set_rejected_texts(sid(src), ref, current)


def saved_notes(src: Source, ref: RecordRef) -> dict[Key, list[str]]:
    """``{row: warnings}`` of the changes saved from record ``ref``'s rows."""
    return state.saved_warnings(sid(src), ref)


def set_notes(src: Source, ref: RecordRef, key: Key, notes: list[str]) -> None:
    """Remember the warnings of the change saved from a row (none: forget them)."""
    current = dict(saved_notes(src, ref))
    if notes:
        current[key] = notes
    else:
        current.pop(key, None)
    state.set_saved_warnings(sid(src), ref, current)


# -- messages at the top of the editor ------------------------------------------------------


def say(src: Source, kind: str, text: str, undo: int | tuple[int, ...] | None = None) -> None:
    """A message for the top of the editor (shown on the next run), with an Undo button for
    the change ``undo`` (or for a group of changes made as one, undone together)."""
    msgs = state.editor_messages(sid(src))
    msgs.append((kind, text, undo))
    state.set_editor_messages(sid(src), msgs[-_MESSAGES_KEPT:])


def show_messages(src: Source, j: Journal) -> None:
    """The messages said since the last run, each once."""
    msgs = state.editor_messages(sid(src))
    state.set_editor_messages(sid(src), [])
    for n, (kind, text, change_id) in enumerate(msgs):
        group = change_id if isinstance(change_id, tuple) else (change_id,)
        if change_id is not None and not all(j.is_undone(c) for c in group if c is not None):
            c = st.columns([6, 1], vertical_alignment="center")
            with c[0]:
                messages.show(kind, text)
            c[1].button(
                "Undo",
                key=state.widget_key(f"edit:undo-msg:{change_id}:{n}"),
                icon=":material/undo:",
                on_click=undo,
                args=(src, change_id),
            )
        else:
            messages.show(kind, text)


def undo(src: Source, change_id: int | tuple[int, ...]) -> None:
    """Undo a change (or a group of them, last first) and the later ones built on it, saying
    how many were undone."""
    group = change_id if isinstance(change_id, tuple) else (change_id,)

    def run(j: Journal) -> list[int]:
        return [i for c in reversed(group) if not j.is_undone(c) for i in j.undo(c)]

    ids = journal.act(src, run, lambda why: say(src, "error", f"Could not undo: {why}"))
    if ids is not None:
        say(src, "info", f"Undone ({plural(len(ids), 'change')}).")


# -- saving ----------------------------------------------------------------------------------


def journal_call(src: Source, what: Callable[[Journal], _T]) -> tuple[_T | None, str | None]:
    """Run an edit; ``(result, None)`` or ``(None, reason)``. Nothing is recorded on error."""
    j = services.shared_journal(src)
    if j is None:
        return None, "the pending edits cannot be opened (see the message above the editor)"
    try:
        return what(j), None
    except ConversionError as exc:
        return None, str(exc)
    except ValueParseError as exc:
        return None, exc.reason if exc.reason else str(exc)
    except (AppError, CodecError, IndexError, OSError) as exc:
        return None, str(exc)


def change_notes(ch: Change | None) -> list[str]:
    """The warnings a saved change came with."""
    return list(ch.warnings) if ch is not None else []


def after_change(src: Source, ch: Change | None, text: str) -> None:
    """After a change from a button: redraw the editor, and say what was done (a warning
    when the change came with warnings), with an Undo button."""
    state.bump_edit_revision()
    notes = change_notes(ch)
    say(
        src,
        "warning" if notes else "success",
        text + ("" if not notes else " — " + "; ".join(notes)),
        ch.id if ch is not None else None,
    )
