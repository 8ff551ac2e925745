"""The editor's pictures: each picture of a record with an uploader that replaces it. The new
picture is checked (it must decode) before it is saved; a refused upload is said beside it.

Replacing a picture that has Object Detection boxes first asks what becomes of them: keep
them, clear them (every object list emptied) or edit them (a table of the boxes, one row
each); a new picture of another size is said, since boxes in pixels would be misplaced while
normalised ones keep their meaning. The replacement and what is done to the boxes are saved
as one group, undone together."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

import codec
from browser_app.edits import Change, Journal, RecordRef
from browser_app.errors import AppError
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets.editor.saving import (
    Key,
    after_change,
    journal_call,
    rejected_cells,
    say,
    set_rejected,
    sid,
)
from browser_app.ui.widgets.schema import stored as stored_schema
from browser_app.view import md_text, plural
from codec import detection
from codec import example as ex
from codec.errors import CodecError
from codec.kinds import BYTES, FLOAT, INT64
from codec.values import image_size, sniff_image

__all__ = ["pictures"]

MAX_PICTURES = 12  # pictures offered for replacement per record
UPLOAD_LIMIT_MB = 50
_THUMB_SIZE = 160
PICTURE = "picture"  # the section of a picture's Key


@dataclass(frozen=True)
class Pending:
    """An uploaded picture waiting for the choice of what becomes of the boxes on the one it
    replaces: ``fname[index]`` gets ``data`` (``label``, the file's name); ``boxes`` boxes
    under ``layout``; the old and new sizes (None when unknown)."""

    fname: str
    index: int
    data: bytes
    label: str
    layout: detection.Layout
    boxes: int
    old_size: tuple[int, int] | None
    new_size: tuple[int, int] | None


def pending(src: Source, ref: RecordRef) -> Pending | None:
    """The upload of record ``ref`` waiting for the choice about its boxes, if any."""
    return state.waiting_picture(sid(src), ref, Pending)


def _size(data: bytes) -> tuple[int, int] | None:
    header = image_size(data)
    return (header[1], header[2]) if header is not None else None


def _boxed_layout(rec: ex.Record, fname: str, index: int) -> tuple[detection.Layout, int] | None:
    """The detection layout whose boxes are drawn on picture ``fname[index]``, and how many
    boxes it has; None when the picture has none."""
    if index != 0:
        return None
    for layout in detection.layouts(rec.features):
        if layout.image == fname:
            n = min(len(rec.features[name].values) for name in layout.boxes)
            return (layout, n) if n else None
    return None


def _on_upload(src: Source, ref: RecordRef, widget: str, fname: str, index: int) -> None:
    up = state.widget_value(widget)
    if up is None:
        return
    try:
        data = up.getvalue()
        label = getattr(up, "name", "upload")
    except Exception as exc:
        set_rejected(src, ref, (PICTURE, fname, index), ("(upload)", str(exc)))
        return
    j = services.shared_journal(src)
    rec = j.effective_record(ref) if j is not None else None
    boxed = _boxed_layout(rec, fname, index) if rec is not None else None
    new_size = _size(data)
    if boxed is not None and new_size is not None:
        old = rec.features[fname].values[index] if rec is not None else b""
        state.set_waiting_picture(
            sid(src), ref, Pending(fname, index, data, label, *boxed, _size(bytes(old)), new_size)
        )
        state.bump_edit_revision()  # clears the uploader
        return
    _replace(src, ref, fname, index, data, label)


def _replace(src: Source, ref: RecordRef, fname: str, index: int, data: bytes, label: str) -> None:
    ch, err = journal_call(src, lambda j: j.replace_image(ref, fname, index, data))
    key: Key = (PICTURE, fname, index)
    if err is not None:
        set_rejected(src, ref, key, (label, err))
        state.bump_edit_revision()  # clears the uploader
        return
    set_rejected(src, ref, key, None)
    after_change(src, ch, _replaced_text(src, ref, fname, index, data, label))


def _replaced_text(
    src: Source, ref: RecordRef, fname: str, index: int, data: bytes, label: str
) -> str:
    """ "Replaced picture …", with a note when the format feature names another format."""
    text = f"Replaced picture {fname}[{index}] with {label}."
    fmt = sniff_image(data)
    j = services.shared_journal(src)
    rec = j.effective_record(ref) if j is not None else None
    declared = rec.features.get(_format_feature(fname)) if rec is not None else None
    if fmt and declared is not None and declared.type == BYTES and declared.values:
        said = bytes(declared.values[0]).decode("utf-8", "replace").lower()
        if said.replace("jpg", "jpeg") != fmt:
            text += f" Note: {_format_feature(fname)!r} still says {said!r}; the picture is {fmt}."
    return text


KEEP, CLEAR, EDIT = "keep", "clear", "edit"


def _empty(feat: ex.Feature) -> tuple[str, list[Any]]:
    return (feat.type, [])


def _on_choice(src: Source, ref: RecordRef, choice: str) -> None:
    """Replace the waiting picture and do ``choice`` to its boxes, as one group of changes."""
    p = pending(src, ref)
    state.set_waiting_picture(sid(src), ref, None)
    if p is None:
        return

    def run(j: Journal) -> list[Change]:
        rec = j.effective_record(ref)
        if rec is None:
            raise codec.CodecError(f"record {ref} is deleted")
        with j.batch():
            done = [j.replace_image(ref, p.fname, p.index, p.data)]
            if choice == CLEAR:
                for name in p.layout.parallel:
                    feat = rec.features.get(name)
                    if feat is not None and feat.values:
                        done.append(j.set_feature(ref, name, _empty(feat)))
        return done

    done, err = journal_call(src, run)
    if err is not None or not done:
        set_rejected(src, ref, (PICTURE, p.fname, p.index), (p.label, err or "not saved"))
        state.bump_edit_revision()
        return
    set_rejected(src, ref, (PICTURE, p.fname, p.index), None)
    text = _replaced_text(src, ref, p.fname, p.index, p.data, p.label)
    if choice == CLEAR:
        text += f" Cleared its {plural(p.boxes, 'box', 'boxes')} ({len(done) - 1} object lists)."
    elif choice == EDIT:
        text += " Its boxes are kept: edit them in the table under the picture."
        state.set_box_editor_open(sid(src), ref, True)
    else:
        text += f" Its {plural(p.boxes, 'box', 'boxes')} are kept as they are."
    notes = [n for ch in done for n in ch.warnings]
    state.bump_edit_revision()
    say(
        src,
        "warning" if notes else "success",
        text + ("" if not notes else " — " + "; ".join(notes)),
        tuple(ch.id for ch in done),
    )


def _size_words(p: Pending, normalized: bool | None) -> str:
    """What the new picture's size means for the boxes."""
    if p.old_size is None or p.new_size is None or p.old_size == p.new_size:
        return "The new picture has the same size as the old one: the boxes stay in place."
    (ow, oh), (nw, nh) = p.old_size, p.new_size
    said = f"The new picture is {nw}×{nh}; the old one was {ow}×{oh}."
    if normalized is False:
        return said + " The boxes are in pixels: kept as they are, they would be misplaced."
    return said + " The boxes are normalised (fractions of the picture): they keep their meaning."


def _choice(src: Source, ref: RecordRef, p: Pending) -> None:
    """Ask what becomes of the boxes of the picture being replaced."""
    normalized = services.box_scale(src, stored_schema(src)).normalized
    with st.container(key="tfb-replace-choice", border=True):
        st.warning(
            f"**{md_text(p.fname)}[{p.index}] has {plural(p.boxes, 'box', 'boxes')}.** What"
            f" becomes of them when it is replaced by **{md_text(p.label)}**?"
            f" {_size_words(p, normalized)}",
            icon=":material/crop_free:",
        )
        c = st.columns(4)
        for col, (choice, words, icon) in zip(
            c,
            (
                (KEEP, "Keep the boxes", ":material/check:"),
                (CLEAR, "Clear the boxes", ":material/delete_sweep:"),
                (EDIT, "Edit the boxes", ":material/edit:"),
            ),
        ):
            col.button(
                words,
                key=state.widget_key(f"edit:replace:{choice}:{sid(src)}:{ref}"),
                icon=icon,
                on_click=_on_choice,
                args=(src, ref, choice),
                width="stretch",
            )
        c[3].button(
            "Cancel",
            key=state.widget_key(f"edit:replace:cancel:{sid(src)}:{ref}"),
            on_click=state.set_waiting_picture,
            args=(sid(src), ref, None),
            width="stretch",
            type="tertiary",
        )


# -- the boxes as a table ----------------------------------------------------------------


_NUMBERS = (FLOAT, INT64)


def _box_columns(rec: ex.Record, layout: detection.Layout) -> list[str]:
    """The object lists of ``layout`` shown as the box table's columns: the four bbox lists,
    the class text and label, then the other lists of numbers or text."""
    first = [*layout.boxes, layout.text, layout.label]
    rest = [n for n in layout.parallel if n not in first]
    return [n for n in first + rest if n in rec.features]


def _cell(feat: ex.Feature, value: Any) -> Any:
    if feat.type == BYTES:
        return bytes(value).decode("utf-8", "replace")
    return value


def _box_frame(rec: ex.Record, columns: list[str], prefix: str) -> pd.DataFrame:
    """One row per box, one column per object list (named without ``prefix``); a list
    shorter than the others is padded with empty cells."""
    n = max(len(rec.features[c].values) for c in columns)
    data = {}
    for c in columns:
        feat = rec.features[c]
        vals = [_cell(feat, v) for v in feat.values]
        data[c[len(prefix) :]] = vals + [None] * (n - len(vals))
    return pd.DataFrame(data)


def _typed(feat: ex.Feature, column: pd.Series) -> tuple[str, list[Any]]:
    """A column of the box table as the values of its object list (as long as it was: the
    cells padding a shorter list are not values)."""
    vals = column.tolist()[: len(feat.values)]
    if feat.type == BYTES:
        return (BYTES, [str(v).encode() for v in vals])
    if feat.type == INT64:
        return (INT64, [int(v) for v in vals])
    return (FLOAT, [float(v) for v in vals])


def _on_boxes(src: Source, ref: RecordRef, name: str, columns: list[str], prefix: str) -> None:
    """Save the box table's edits: each changed object list as one change, in one group."""
    edits = state.widget_value(name) or {}
    rows = edits.get("edited_rows") or {}
    if not rows:
        return

    def run(j: Journal) -> list[Change]:
        rec = j.effective_record(ref)
        if rec is None:
            raise codec.CodecError(f"record {ref} is deleted")
        frame = _box_frame(rec, columns, prefix)
        shown = list(frame.columns)
        for r, changed in rows.items():
            for col, value in changed.items():
                frame.at[int(r), col] = value
        touched = {col for changed in rows.values() for col in changed}
        with j.batch():
            return [
                j.set_feature(ref, name, _typed(rec.features[name], frame[shown[k]]))
                for k, name in enumerate(columns)
                if shown[k] in touched
            ]

    done, err = journal_call(src, run)
    state.bump_edit_revision()
    if err is not None:
        say(src, "error", f"The boxes were not saved: {err}")
        return
    if done:
        notes = [n for ch in done for n in ch.warnings]
        say(
            src,
            "warning" if notes else "success",
            f"Saved the boxes ({plural(len(done), 'object list')} changed)."
            + ("" if not notes else " — " + "; ".join(notes)),
            tuple(ch.id for ch in done),
        )


def _box_table(src: Source, ref: RecordRef, rec: ex.Record, layout: detection.Layout) -> None:
    """The boxes of a picture as a table, one row per box, saved as they are edited."""
    columns = _box_columns(rec, layout)
    with st.container(key="tfb-editor-boxes"):
        head, close = st.columns([5, 1], vertical_alignment="center")
        head.markdown(f"**Boxes** · {md_text(layout.prefix)}bbox/\\* · one row per box")
        close.button(
            "Close",
            key=state.widget_key(f"edit:boxes:close:{sid(src)}:{ref}"),
            on_click=state.set_box_editor_open,
            args=(sid(src), ref, False),
            type="tertiary",
        )
        frame = _box_frame(rec, columns, layout.prefix)
        name = f"edit:boxes:table:{sid(src)}:{ref}:{state.edit_revision()}"
        if (state.widget_value(name) or {}).get("edited_rows"):
            # Edits that arrived without the table's callback (a rerun came first).
            _on_boxes(src, ref, name, columns, layout.prefix)
            st.rerun()
        st.data_editor(
            frame,
            key=state.widget_key(name),
            on_change=_on_boxes,
            args=(src, ref, name, columns, layout.prefix),
            hide_index=False,
            width="stretch",
            height=min(len(frame), 12) * 35 + 38,
            num_rows="fixed",
        )


def _format_feature(name: str) -> str:
    """The feature that names the format of the picture in ``name`` (``image/format`` for
    ``image/encoded``)."""
    return name.rsplit("/", 1)[0] + "/format" if "/" in name else "format"


def pictures(src: Source, ref: RecordRef, rec: ex.Record) -> None:
    """Every picture of ``rec`` (the first :data:`MAX_PICTURES`) with its uploader."""
    found = []
    for fname, feat in rec.features.items():
        if feat.type != BYTES:
            continue
        for i, v in enumerate(feat.values):
            if sniff_image(bytes(v)):
                found.append((fname, i, bytes(v)))
    if not found:
        return
    st.markdown("**Pictures** · replace one by uploading an image file")
    rejected = rejected_cells(src, ref)
    waiting = pending(src, ref)
    box = st.container(key="tfb-editor-pictures")
    for fname, i, data in found[:MAX_PICTURES]:
        c = box.columns([1, 4], vertical_alignment="center")
        with c[0]:
            try:
                thumb = codec.images.thumbnail_bytes(data, _THUMB_SIZE)
                st.image(thumb, output_format="PNG" if thumb[:4] == b"\x89PNG" else "JPEG")
            except (AppError, CodecError):
                st.caption("(cannot be shown)")
        with c[1]:
            widget = f"edit:upload:{sid(src)}:{ref}:{fname}:{i}:{state.edit_revision()}"
            st.file_uploader(
                f"Replace {md_text(fname)}[{i}]"
                f" ({(sniff_image(data) or '').upper()}, {len(data):,} bytes)",
                key=state.widget_key(widget),
                on_change=_on_upload,
                args=(src, ref, widget, fname, i),
                max_upload_size=UPLOAD_LIMIT_MB,
            )
            if waiting is not None and (waiting.fname, waiting.index) == (fname, i):
                _choice(src, ref, waiting)
            bad = rejected.get((PICTURE, fname, i))
            if bad is not None:
                st.error(
                    f"**{md_text(bad[0])}** was not used: {md_text(bad[1])}",
                    icon=":material/broken_image:",
                )
    if len(found) > MAX_PICTURES:
        st.caption(f"… and {len(found) - MAX_PICTURES} more pictures")
    boxed = next((b for f, i, _ in found if (b := _boxed_layout(rec, f, i)) is not None), None)
    if boxed is not None:
        if state.box_editor_open(sid(src), ref):
            _box_table(src, ref, rec, boxed[0])
        else:
            st.button(
                f"Edit the boxes ({plural(boxed[1], 'box', 'boxes')})",
                key=state.widget_key(f"edit:boxes:open:{sid(src)}:{ref}"),
                icon=":material/crop_free:",
                on_click=state.set_box_editor_open,
                args=(sid(src), ref, True),
                type="tertiary",
            )
