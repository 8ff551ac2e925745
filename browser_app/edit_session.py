"""The edit journal of the open source, shared by every page and every session.

One :class:`~browser_app.journal.Journal` per source identity (the files' paths, sizes and
mtimes) lives in ``st.cache_resource``: two tabs on the same file see the same pending edits,
and the journal file on disk (appended and synced per change) survives a refresh or a server
restart. When the source changed since the journal was started, the journal refuses to open
(:class:`~browser_app.journal.JournalMismatchError`); :func:`journal` then explains what changed
and offers to discard the old edits or keep them aside, and the app keeps browsing read-only.

This module also overlays the pending edits on the records page's table (:func:`page_view`)
and gallery (:func:`gallery_items`): edited records show their effective values, deleted
records are marked, added records appear in place after the record they were inserted after.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from typing import Any

import streamlit as st

import codec
from browser_app import app_pages, loading, presenters, state
from browser_app.errors import AppError
from browser_app.journal import (
    Journal,
    JournalError,
    JournalMismatchError,
    RecordRef,
    discard_journal,
    journal_path,
)
from codec.errors import CodecError

__all__ = [
    "STATUS_ADDED",
    "STATUS_DELETED",
    "STATUS_EDITED",
    "bump",
    "edited_slot",
    "gallery_items",
    "journal",
    "known_types",
    "new_children",
    "page_view",
    "revision",
    "sidebar_status",
]

log = logging.getLogger("tfrecord-browser")

STATUS_EDITED = "edited"
STATUS_DELETED = "deleted"
STATUS_ADDED = "added"

_REV = "edit:rev"


# -- the shared journal --------------------------------------------------------------------


def _alive(j: Journal) -> bool:
    """A cached journal stays valid while its dataset is open (the reader cache may have
    closed it) and its files are unchanged."""
    try:
        return not any(f.closed for f in j.source.files) and loading.identity(j.paths) == _KEYS.get(
            id(j)
        )
    except Exception:
        return False


# The source identity each cached journal was opened for, to notice a changed file.
_KEYS: dict[int, tuple[tuple[str, int, int], ...]] = {}


def _release(j: Journal) -> None:
    _KEYS.pop(id(j), None)
    j.close()


@st.cache_resource(max_entries=8, validate=_alive, on_release=_release, show_spinner=False)
def _open_journal(
    key: tuple[tuple[str, int, int], ...],
    types: tuple[tuple[str, str], ...],
    list_types: tuple[tuple[str, str], ...],
    _dataset: Any,
) -> Journal:
    j = Journal(_dataset, known_types=dict(types), known_list_types=dict(list_types))
    _KEYS[id(j)] = key
    return j


def known_types(src: loading.Source) -> tuple[dict[str, str], dict[str, str]]:
    """``({feature: type}, {feature list: type})``: the type most records use for each
    feature (from the first records of the source), for warnings about disagreeing edits."""
    feats: dict[str, str] = {}
    lists: dict[str, str] = {}
    try:
        summary = loading.feature_summary(src)
    except (AppError, CodecError):
        return feats, lists
    for e in summary.get("features", []):
        types = {t: n for t, n in dict(e.get("types", {})).items() if t != "none"}
        if not types:
            continue
        best = max(types, key=lambda t: types[t])
        (lists if e.get("section") == "feature_lists" else feats)[str(e["name"])] = best
    return feats, lists


def journal(src: loading.Source, quiet: bool = False) -> Journal | None:
    """The journal of ``src``, or None when it cannot be opened. Unless ``quiet``, a journal
    made on another version of the files is explained, with the choices to discard its edits
    or keep them aside (browsing goes on either way)."""
    feats, lists = known_types(src)
    try:
        return _open_journal(
            src.key, tuple(sorted(feats.items())), tuple(sorted(lists.items())), src.dataset
        )
    except JournalMismatchError as exc:
        if not quiet:
            _mismatch(src, exc)
        return None
    except JournalError as exc:
        if not quiet:
            _broken(src, str(exc))
        return None
    except OSError as exc:
        if not quiet:
            st.error(f"The pending edits of {src.label} cannot be read: {exc}.")
        return None


def _set_aside(src: loading.Source, reason: str) -> None:
    path = journal_path(src.paths)
    try:
        moved = discard_journal(path, reason)
    except OSError as exc:
        state.flash(f"The old edits could not be moved: {exc}.", "error")
        return
    _open_journal.clear()
    bump()
    if reason == "discarded":
        state.flash("The old edits were discarded; you can edit this version now.", "success")
    else:
        state.flash(f"The old edits are kept aside in {moved}; this version starts clean.", "info")


def _mismatch(src: loading.Source, exc: JournalMismatchError) -> None:
    with st.container(border=True, key="tfb-journal-mismatch"):
        st.warning(
            f"**{src.label} changed since its pending edits were made.** Those edits were made"
            " on another version of the file, so they are not applied here. What changed: "
            + "; ".join(exc.changes)
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


def _broken(src: loading.Source, message: str) -> None:
    with st.container(border=True):
        st.error(f"The pending edits of {src.label} cannot be read: {message}")
        st.button(
            "Set the damaged journal aside",
            key=state.widget_key("journal:broken"),
            on_click=_set_aside,
            args=(src, "damaged"),
        )


def revision() -> int:
    """A counter bumped after every edit of this session (widget keys include it, so editors
    redraw with the saved values)."""
    return int(state.get(_REV, 0))


def bump() -> None:
    state.put(_REV, revision() + 1)


def sidebar_status(src: loading.Source | None) -> None:
    """The number of pending changes and review marks, with a link to the Changes page."""
    if src is None:
        return
    j = journal(src, quiet=True)
    if j is None:
        return
    try:
        n = j.pending
        marks = len(j.marks())
    except (AppError, CodecError):
        return
    if not n and not marks:
        return
    label = f"**{presenters.plural(n, 'pending change')}**" if n else "Review marks"
    page = app_pages.page("changes")
    with st.sidebar:
        if page is not None:
            st.page_link(page, label=label, icon=":material/edit_note:")
        else:
            st.caption(label)
        if marks:
            st.caption(presenters.plural(marks, "review mark"))


# -- pending edits overlaid on the records page and the gallery -------------------------


def new_children(j: Journal, anchor: RecordRef) -> list[str]:
    """New records placed after ``anchor`` (and after those, recursively), in order."""
    added = j.added_records()
    if not added:
        return []
    children: dict[RecordRef, list[str]] = {}
    for a in added:
        children.setdefault(j.inserted_after(a), []).append(a)
    out: list[str] = []
    stack = list(reversed(children.get(anchor, [])))
    while stack:
        r = stack.pop()
        if not j.is_deleted(r):
            out.append(r)
        stack.extend(reversed(children.get(r, [])))
    return out


def _fingerprint(j: Journal, start: int, stop: int) -> tuple[Any, ...]:
    """What the page's overlay depends on: the pending change ids of its records (and of new
    records placed among them)."""
    out = []
    for r in j.edited_records():
        root = j.anchor(r)
        if root is not None and start <= root < stop:
            out.append((r, tuple(c.id for c in j.changes_for(r))))
    return tuple(out)


def edited_slot(j: Journal, slot: presenters.Slot) -> presenters.Slot:
    """``slot`` with the record's effective payload when it has pending changes."""
    if slot.index is None or slot.payload is None or not j.is_touched(slot.index):
        return slot
    if j.is_deleted(slot.index):
        return slot
    try:
        payload = j.effective_payload(slot.index)
    except (AppError, CodecError):
        return slot
    if payload is None:
        return slot
    return dataclasses.replace(slot, payload=payload, length=len(payload))


def _slots(
    j: Journal, slots: list[presenters.Slot]
) -> Iterator[tuple[presenters.Slot, str | None, str]]:
    """``(slot, new id or None, status)`` with new records after their anchors."""
    for s in slots:
        if s.index is None:
            yield s, None, ""
            continue
        status = ""
        if j.is_deleted(s.index):
            status = STATUS_DELETED
        elif j.is_touched(s.index):
            status = STATUS_EDITED
        yield edited_slot(j, s), None, status
        for new_id in new_children(j, s.index):
            try:
                payload = j.effective_payload(new_id)
            except (AppError, CodecError):
                continue
            if payload is None:
                continue
            yield (
                presenters.Slot(s.index, s.path, None, len(payload), payload),
                new_id,
                STATUS_ADDED,
            )


def _status_text(j: Journal, new_id: str | None, status: str, n: int) -> str:
    if status == STATUS_DELETED:
        return "– deleted (pending)"
    if status == STATUS_EDITED:
        return f"✎ edited ({presenters.plural(n, 'change')})"
    if status == STATUS_ADDED and new_id is not None:
        return f"+ new record {new_id}"
    return ""


@st.cache_data(max_entries=16, show_spinner=False)
def _edited_page(
    key: tuple[tuple[str, int, int], ...],
    start: int,
    stop: int,
    thumbs: int,
    boxes: bool,
    fingerprint: tuple[Any, ...],
    _j: Journal,
) -> presenters.PageView:
    ds = loading.open_dataset(tuple(p for p, _, _ in key))
    items = list(_slots(_j, ds.page(start, stop)))
    view = presenters.page_view([s for s, _, _ in items], thumb_size=thumbs, boxes=boxes)
    for pos, (slot, new_id, status) in enumerate(items):
        if not status or pos >= len(view.rows):
            continue
        row = view.rows[pos]
        ref: RecordRef = new_id if new_id is not None else (slot.index or 0)
        row["status"] = _status_text(_j, new_id, status, len(_j.changes_for(ref)))
        view.status[pos] = status
        if new_id is not None:
            row["#"] = None
            row["offset"] = None
    return view


def page_view(
    src: loading.Source, start: int, stop: int, thumbs: int = 72, boxes: bool = True
) -> presenters.PageView:
    """The records page's table with the pending edits applied (the plain cached table when
    nothing on the page is edited). Rows of new records carry their anchor's number in
    ``view.records`` (selecting one opens the anchor, whose editor offers the new record)."""
    j = journal(src, quiet=True)
    if j is None:
        return loading.page_view(src, start, stop, thumbs=thumbs, boxes=boxes)
    try:
        if not j.pending:
            return loading.page_view(src, start, stop, thumbs=thumbs, boxes=boxes)
        fp = _fingerprint(j, start, stop)
        if not fp:
            return loading.page_view(src, start, stop, thumbs=thumbs, boxes=boxes)
        return _edited_page(src.key, start, stop, thumbs, boxes, fp, j)
    except (AppError, CodecError):
        log.exception("overlaying the pending edits failed")
        return loading.page_view(src, start, stop, thumbs=thumbs, boxes=boxes)


def gallery_items(
    src: loading.Source, start: int, stop: int, size: int = 160, boxes: bool = True
) -> list[presenters.GalleryItem]:
    """The gallery's tiles with the pending edits applied (edited pictures and labels, new
    records in place, deleted ones captioned as such)."""
    j = journal(src, quiet=True)
    if j is None or not j.pending or not _fingerprint(j, start, stop):
        return loading.gallery_items(src, start, stop, size=size, boxes=boxes)
    try:
        items = list(_slots(j, src.dataset.page(start, stop)))
        tiles = presenters.gallery_items([s for s, _, _ in items], size=size, boxes=boxes)
    except (AppError, CodecError):
        log.exception("overlaying the pending edits failed")
        return loading.gallery_items(src, start, stop, size=size, boxes=boxes)
    out: list[presenters.GalleryItem] = []
    # gallery_items drops skipped regions; walk both lists in step.
    records = [(s, new_id, status) for s, new_id, status in items if s.index is not None]
    for tile, (_slot, new_id, status) in zip(tiles, records):
        if status == STATUS_DELETED:
            tile = dataclasses.replace(tile, caption=f"{tile.caption} · deleted")
        elif status == STATUS_EDITED:
            tile = dataclasses.replace(tile, caption=f"{tile.caption} · ✎")
        elif status == STATUS_ADDED and new_id is not None:
            label = tile.caption.split(" · ", 1)
            rest = f" · {label[1]}" if len(label) > 1 else ""
            # No "open" button of its own (the anchor's tile has it).
            tile = dataclasses.replace(tile, index=None, caption=f"new {new_id}{rest}")
        out.append(tile)
    return out


def is_damaged(exc: BaseException) -> bool:
    return isinstance(exc, codec.CorruptRecordError)
