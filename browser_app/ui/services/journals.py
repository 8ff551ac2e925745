"""The edit journal of a source, shared by every page and session (two tabs on the same
files see the same pending edits), closed when its files change or it cannot be read."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

import codec
from browser_app.edits import Journal, RecordRef
from browser_app.errors import JournalError
from browser_app.ui.services.identity import Key, unchanged
from browser_app.ui.services.summary import known_types

if TYPE_CHECKING:
    from browser_app.ui.source import Source

__all__ = ["forget_journals", "journal_usable", "open_journal", "shared_journal", "write_mark"]


def _alive(j: Journal) -> bool:
    """A cached journal stays valid while its dataset is open (the reader cache may have
    closed it), its files are unchanged and its own file reads (once a damaged line is met,
    it is opened again, which fails and offers to set it aside: no restart needed)."""
    return j.damaged is None and unchanged(j.source)


def journal_usable(j: Journal) -> bool:
    """Whether a journal handed out earlier may still be written to (what the cache asks
    before it hands one out again)."""
    return _alive(j)


def write_mark(j: Journal, ref: RecordRef, status: str | None, comment: str | None = None) -> None:
    """Save the review mark of ``ref`` (``comment`` None: keep the comment it has): the one
    way a mark is written, from a widget's callback or from the marks route
    (:mod:`browser_app.ui.routes`). Raises what :meth:`Journal.set_mark
    <browser_app.edits.Journal.set_mark>` raises."""
    old = j.marks().get(ref)
    text = comment if comment is not None else (old.comment if old else "")
    j.set_mark(ref, status, text)


def _release(j: Journal) -> None:
    j.close()


@st.cache_resource(max_entries=8, validate=_alive, on_release=_release, show_spinner=False)
def _open_journal(key: Key, _dataset: codec.TFRecordDataset) -> Journal:
    # The usual types come from the same files (the key): not part of the key themselves,
    # which would hash every feature name on every call.
    feats, lists = known_types(key, _dataset)
    return Journal(_dataset, known_types=feats, known_list_types=lists)


def open_journal(src: Source) -> Journal:
    """The edit journal of ``src``, shared by every page and session. Raises
    :class:`~browser_app.errors.JournalMismatchError` when it was made on another version of
    the files, :class:`~browser_app.errors.JournalError` or ``OSError`` when it cannot be
    read."""
    return _open_journal(src.key, src.dataset)


def shared_journal(src: Source) -> Journal | None:
    """The journal of ``src``, or None when it cannot be opened (the Edit view and the Edit
    pages explain why; see :mod:`browser_app.ui.widgets.journal`)."""
    try:
        return open_journal(src)
    except (JournalError, OSError):
        return None


def forget_journals() -> None:
    """Drop every shared journal (after one was set aside)."""
    _open_journal.clear()
