"""The editor's pictures: each picture of a record with an uploader that replaces it. The new
picture is checked (it must decode) before it is saved; a refused upload is said beside it."""

from __future__ import annotations

import streamlit as st

import codec
from browser_app.edits import RecordRef
from browser_app.errors import AppError
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets.editor.saving import (
    Key,
    after_change,
    journal_call,
    rejected_cells,
    set_rejected,
    sid,
)
from browser_app.view import md_text
from codec import example as ex
from codec.errors import CodecError
from codec.kinds import BYTES
from codec.values import sniff_image

__all__ = ["pictures"]

MAX_PICTURES = 12  # pictures offered for replacement per record
UPLOAD_LIMIT_MB = 50
_THUMB_SIZE = 160
PICTURE = "picture"  # the section of a picture's Key


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
    ch, err = journal_call(src, lambda j: j.replace_image(ref, fname, index, data))
    key: Key = (PICTURE, fname, index)
    if err is not None:
        set_rejected(src, ref, key, (label, err))
        state.bump_edit_revision()  # clears the uploader
        return
    set_rejected(src, ref, key, None)
    text = f"Replaced picture {fname}[{index}] with {label}."
    fmt = sniff_image(data)
    j = services.shared_journal(src)
    rec = j.effective_record(ref) if j is not None else None
    declared = rec.features.get(_format_feature(fname)) if rec is not None else None
    if fmt and declared is not None and declared.type == BYTES and declared.values:
        said = bytes(declared.values[0]).decode("utf-8", "replace").lower()
        if said.replace("jpg", "jpeg") != fmt:
            text += f" Note: {_format_feature(fname)!r} still says {said!r}; the picture is {fmt}."
    after_change(src, ch, text)


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
            bad = rejected.get((PICTURE, fname, i))
            if bad is not None:
                st.error(
                    f"**{md_text(bad[0])}** was not used: {md_text(bad[1])}",
                    icon=":material/broken_image:",
                )
    if len(found) > MAX_PICTURES:
        st.caption(f"… and {len(found) - MAX_PICTURES} more pictures")
