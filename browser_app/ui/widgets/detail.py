"""Everything about one record (or one skipped region): its features, its pictures with the
boxes switch, every value in full (text, hex, tensors), its JSON form and downloads of its
bytes; for a damaged record, why, and its bytes as stored."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import quote

import pandas as pd
import streamlit as st

import codec
from browser_app import view
from browser_app.edits import FEATURE_LISTS
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import layers as layer_controls
from browser_app.ui.widgets import media, picture_view, schema
from browser_app.ui.widgets import names as class_names
from browser_app.view import media as vm
from codec import example as ex
from codec.kinds import BYTES, FLOAT, RAW, SEQUENCE_EXAMPLE
from codec.tensor import MAX_BYTES
from codec.values import format_bytes, format_float, plural

__all__ = ["boxes_toggle", "feature_table", "feature_values", "pictures", "record_detail"]

PICTURES_SHOWN = 16  # pictures of a record drawn at once; the rest a choice away
_INLINE_DOWNLOAD = 256 << 10  # larger downloads are made when clicked
_VALUES_SHOWN = 50  # bytes values written out per feature
# Bounds that hold whatever a record holds; what is beyond them is a download.
TEXT_SHOWN = 20_000  # characters of a text value
NUMBERS_SHOWN = 10_000  # numbers of a feature in its table
FEATURES_PER_PAGE = 50  # features with their values written out, per page
JSON_VIEW_BYTES = 2 << 20  # records larger than this have no JSON view
TENSOR_PREVIEW_BYTES = 16 << 20  # a tensor decodes for its preview up to this size
MAX_TENSOR_BYTES = MAX_BYTES  # and in full, on request, up to this


def _on_boxes(name: str) -> None:
    state.set_show_boxes(bool(state.widget_value(name)))


def boxes_toggle(where: str, disabled: bool = False) -> bool:
    """The "Layers" switch (one setting shared by every page): whether anything is drawn
    over pictures (boxes, predictions, masks, class maps, keypoints)."""
    name = f"boxes:{where}"
    state.set_widget_value(name, state.show_boxes())
    st.toggle(
        "Layers",
        key=state.widget_key(name),
        on_change=_on_boxes,
        args=(name,),
        disabled=disabled,
        help="Draw what the records hold over their pictures: ground-truth boxes with their"
        " class text, predictions, instance masks, class maps and keypoints",
    )
    return state.show_boxes()


def _st_format(fmt: str) -> Literal["JPEG", "PNG", "auto"]:
    """How ``st.image`` sends a picture: JPEG and PNG as they are stored (no re-encoding)."""
    if fmt == "JPEG":
        return "JPEG"
    if fmt == "PNG":
        return "PNG"
    return "auto"


def _box_warning(p: view.Picture) -> None:
    """What is wrong with the boxes drawn on ``p`` (dashed in magenta, captions with "!")."""
    lines = "\n".join(f"- {view.md_text(t)}" for t in p.box_problems[:20])
    more = len(p.box_problems) - 20
    if more > 0:
        lines += f"\n- … and {more:,} more"
    st.warning(
        "**Boxes with problems** (drawn dashed, clipped to the picture):\n" + lines,
        icon=":material/crop_free:",
    )


def pictures(
    pics: list[view.Picture],
    record: ex.Record | None = None,
    how: picture_view.BoxSettings | None = None,
    number: int = 0,
) -> None:
    """Each picture at its stored bytes (JPEG/PNG as they are; drawn ones as PNG), a clear
    message in place of any that cannot be shown, and a warning under a picture whose boxes
    have problems. With the ``record`` (number ``number``) and ``how`` its boxes are drawn: a
    button to open each picture in the full view, and the legend of classes under the
    picture with boxes."""
    with st.container(key="tfb-pictures"):
        for p in pics:
            if p.error or p.data is None:
                st.error(
                    f"**{view.md_text(p.caption)}** — {view.md_text(p.error or '')}",
                    icon=":material/broken_image:",
                )
                continue
            width: Any = "stretch" if p.width < 480 else "content"
            caption = view.md_text(p.caption)  # Streamlit reads image captions as Markdown
            st.image(p.data, caption=caption, output_format=_st_format(p.format), width=width)
            if record is not None and how is not None:
                picture_view.full_view_button(record, number, p, how)
                picture_view.legend(how.spec, p.legend)
                if p.main and how.boxes:
                    layer_controls.controls(how.spec, p.layers)
            if p.note:
                st.warning(view.md_text(p.note), icon=":material/aspect_ratio:")
            if p.box_problems:
                _box_warning(p)


# -- record detail -----------------------------------------------------------------------


def _download(
    label: str, data: bytes | Callable[[], bytes], name: str, key: str, mime: str
) -> None:
    """A download button; large data (and data made on demand) is produced when clicked."""
    payload: Any = data
    if isinstance(data, bytes) and len(data) > _INLINE_DOWNLOAD:
        payload = functools.partial(bytes, data)  # made when clicked

    st.download_button(
        label,
        payload,
        file_name=name,
        mime=mime,
        key=state.widget_key(key),
        on_click="ignore",
        icon=":material/download:",
        type="tertiary",
    )


def feature_table(record: ex.Record) -> None:
    """A record's features (not its feature lists), by name: a preview of values (floats in
    their shortest float32 text), type and length. The values come right after the name, so
    that they are in view when the table has a narrow column beside the pictures."""
    rows = sorted(view.feature_rows(record), key=lambda r: r.name)
    df = pd.DataFrame(
        [
            {"feature": r.name, "values": r.preview, "type": r.type, "length": r.length}
            for r in rows
            if r.section != FEATURE_LISTS
        ],
        columns=["feature", "values", "type", "length"],
    )
    st.dataframe(
        df,
        hide_index=True,
        width="stretch",
        height=min(len(df), 16) * 35 + 38 if len(df) else "auto",
        column_config={
            "feature": st.column_config.TextColumn("feature", width="medium"),
            "type": st.column_config.TextColumn("type", width="small"),
            "length": st.column_config.NumberColumn("length", width="small"),
            "values": st.column_config.TextColumn("values", width="large"),
        },
    )


def _bytes_value(name: str, i: int, v: bytes, key: str) -> None:
    shown = view.value_view(v)
    label = view.md_code(f"{name}[{i}]" if i else name)
    stem = name.replace("/", "_")
    if shown.kind == "text":
        text = shown.text or ""
        st.caption(f"{label} · text · {len(v):,} bytes")
        st.code(text[:TEXT_SHOWN], language=None, wrap_lines=True)
        if len(text) > TEXT_SHOWN:
            st.caption(f"… {len(text) - TEXT_SHOWN:,} more characters: download the value for all.")
            _download("Download text", v, f"{stem}_{i}.txt", key, "text/plain")
        return
    if shown.kind == "tensor":
        _tensor(label, v, key)
        _download("Download tensor bytes", v, f"{stem}_{i}.pb", key, "application/octet-stream")
        return
    if shown.kind.startswith("image/"):
        st.caption(f"{label} · {view.md_text(shown.summary)}")
        ext = shown.kind.split("/")[1]
        _download("Download picture", v, f"{stem}_{i}.{ext}", key, shown.kind)
        return
    if shown.kind.startswith("audio/"):
        st.caption(f"{label} · {view.md_text(shown.summary)} · played above")
        ext = {"audio/mpeg": "mp3"}.get(shown.kind, shown.kind.split("/")[1])
        _download("Download audio", v, f"{stem}_{i}.{ext}", key, shown.kind)
        return
    st.caption(f"{label} · binary · {len(v):,} bytes")
    st.code(view.hex_dump(v, 512), language=None)
    _download("Download bytes", v, f"{stem}_{i}.bin", key, "application/octet-stream")


def _tensor(label: str, v: bytes, key: str) -> None:
    """A serialized tensor: dtype and shape always; its values when they decode within the
    preview's byte cap, or on request up to :data:`codec.tensor.MAX_BYTES`."""
    full = state.tensor_in_full(key)
    t = view.tensor_view(v, max_bytes=MAX_TENSOR_BYTES if full else TENSOR_PREVIEW_BYTES)
    dims = "×".join(str(d) for d in t.shape) or "scalar"
    st.caption(f"{label} · serialized tensor · {t.dtype} · shape {dims} · {len(v):,} bytes")
    cap = MAX_TENSOR_BYTES if full else TENSOR_PREVIEW_BYTES
    if t.error is not None and t.decoded_bytes is not None and t.decoded_bytes > cap:
        if t.decoded_bytes <= MAX_TENSOR_BYTES:
            st.info(
                f"Decoded, this tensor takes {format_bytes(t.decoded_bytes)}: more than the"
                f" {format_bytes(TENSOR_PREVIEW_BYTES)} a preview decodes.",
                icon=":material/memory:",
            )
            if st.button("Decode it in full", key=state.widget_key(f"tensorfull:{key}")):
                state.show_tensor_in_full(key)
                st.rerun()
        else:
            st.warning(
                f"Decoded, this tensor would take {format_bytes(t.decoded_bytes)}: more than the"
                f" {format_bytes(MAX_TENSOR_BYTES)} the app decodes. Its dtype and shape are"
                " above; download its bytes to work on it.",
                icon=":material/memory:",
            )
        return
    if t.error:
        st.error(f"Cannot read this tensor: {view.md_text(t.error)}")
        return
    if t.picture is not None:
        with st.container(key=f"tfb-tensor-{key}"):
            st.image(t.picture, output_format="PNG", width=min(320, 4 * max(t.shape[1], 1)))
    st.code(t.values, language=None)


def _values_needing_a_view(record: ex.Record) -> list[str]:
    """The features whose values the feature table cannot show whole."""
    out = []
    for name, f in sorted(record.features.items()):
        n = len(f.values)
        if f.type != BYTES and n <= view.PREVIEW_VALUES:
            continue
        if (
            f.type == BYTES
            and n == 1
            and view.value_view(f.values[0]).kind == "text"
            and len(f.values[0]) <= 60
        ):
            continue
        out.append(name)
    return out


def _values_text(f: ex.Feature) -> bytes:
    return ", ".join(view.all_values(f)).encode()


def feature_values(record: ex.Record, index: int) -> None:
    """Every feature with all its values: long lists folded, text as text, binary as a hex
    preview with a download, tensors with dtype, shape and values. Bounded whatever the
    record holds: :data:`FEATURES_PER_PAGE` features per page, :data:`_VALUES_SHOWN` bytes
    values and :data:`NUMBERS_SHOWN` numbers each, the rest as downloads."""
    names = _values_needing_a_view(record)
    if len(names) > FEATURES_PER_PAGE:
        pages = -(-len(names) // FEATURES_PER_PAGE)
        st.caption(
            f"{plural(len(names), 'feature has', 'features have')} more values than the table"
            " shows:"
            f" {FEATURES_PER_PAGE} per page."
        )
        page = st.pagination(pages, key=state.widget_key(f"values:page:{index}"))
        start = (max(1, int(page)) - 1) * FEATURES_PER_PAGE
        names = names[start : start + FEATURES_PER_PAGE]
    for name in names:
        f = record.features[name]
        n = len(f.values)
        title = f"{view.md_text(name)} — {f.type}, {view.plural(n, 'value')}"
        with st.expander(title, expanded=False):
            if f.type == BYTES:
                for i, v in enumerate(f.values[:_VALUES_SHOWN]):
                    _bytes_value(name, i, v, f"val:{index}:{name}:{i}")
                if n > _VALUES_SHOWN:
                    st.caption(
                        f"… {n - _VALUES_SHOWN:,} more values (showing the first {_VALUES_SHOWN})"
                    )
            else:
                shown = f.values[:NUMBERS_SHOWN]
                # Floats as their shortest float32 text (a number column rounds 7.974931e-05
                # to 0.00008); int64 as numbers.
                values = [format_float(v) for v in shown] if f.type == FLOAT else shown
                df = pd.DataFrame({"value": values})
                st.dataframe(df, height=min(n, 10) * 35 + 38, width="stretch")
                if n > NUMBERS_SHOWN:
                    st.caption(
                        f"The first {NUMBERS_SHOWN:,} of {n:,} values; the download has all."
                    )
                _download(
                    "Download values (text)",
                    functools.partial(_values_text, f),
                    f"{name.replace('/', '_')}.txt",
                    f"vals:{index}:{name}",
                    "text/plain",
                )


def _sequence(record: ex.Record) -> None:
    cols, rows = view.sequence_table(record)
    cols = cols[:1] + sorted(cols[1:])  # step, then the feature lists by name
    st.markdown("**Feature lists** (steps × feature lists)")
    df = pd.DataFrame(rows, columns=cols)
    st.dataframe(df, hide_index=True, width="stretch", height=min(len(df), 12) * 35 + 38)


def _not_an_example(src: Source, path: str, payload: bytes, index: int) -> None:
    """A record that is not an Example: a TensorBoard ``Event`` of an event file, a
    serialized tensor (a ``tf.data.Dataset.save`` element, a ``tf.io.serialize_tensor``
    record: dtype, shape, values, a picture when it is one), else its bytes."""
    if media.event_record(src, path, payload, index):
        with st.expander("Raw payload"):
            _raw(payload, index, title=False)
        return
    if ex.classify_bytes(payload) == "tensor":
        where = media.saved_element(src, path, index)
        if where is not None:  # a tf.data.Dataset.save element's component
            st.markdown(f"**Tensor** · {view.md_text(where)} of the saved dataset")
        else:
            st.markdown("**Tensor** (the record is one serialized TensorProto)")
        _tensor("record", payload, f"rec:{index}")
        with st.expander("Raw payload"):
            _raw(payload, index, title=False)
        return
    _raw(payload, index)


def _raw(payload: bytes, index: int, title: bool = True) -> None:
    if title:
        st.markdown("**Raw payload** (not an Example or SequenceExample)")
    left, right = st.columns(2)
    with left:
        st.caption("Hex")
        st.code(view.hex_dump(payload, 2048) or "(empty)", language=None)
    with right:
        st.caption("Text preview")
        st.code(view.text_preview(payload) or "(empty)", language=None, wrap_lines=True)
    _download(
        "Download payload",
        payload,
        f"record_{index}.bin",
        f"raw:{index}",
        "application/octet-stream",
    )


def _unchecked_bytes(src: Source, index: int) -> bytes | None:
    ds = src.dataset
    try:
        k, j = ds.locate(index)
        return ds.files[k].read(j, check_crc=False)
    except (IndexError, codec.CodecError):
        return None


def record_detail(src: Source, slot: codec.Slot, boxes: bool) -> None:
    """Everything about one record (or one skipped region)."""
    rel = view.md_text(src.rel(slot.path))  # in Markdown from here on
    if slot.index is None:
        p = slot.problem
        why = view.md_text(p.message) if p else ""
        st.markdown(f"#### Skipped region at byte {slot.offset:,}")
        st.warning(
            f"{format_bytes(slot.length)} of {rel} starting at byte {slot.offset:,}"
            f" could not be read as records: {why}. Reading resumed after them.",
            icon=":material/warning:",
        )
        return
    head = f"#### Record {slot.index:,}"
    st.markdown(head)
    st.caption(
        f"{rel}  ·  header at byte {slot.offset:,}  ·  payload {slot.length:,} bytes"
        f"  ·  [link](?file={_q(src.link)}&record={slot.index})"
        if not state.is_upload(src.spec)
        else f"{rel}  ·  header at byte {slot.offset:,}  ·  payload {slot.length:,} bytes"
    )
    if slot.payload is None:
        assert slot.offset is not None
        st.error(
            f"**Record {slot.index:,} is damaged:** its data CRC does not match its"
            f" {slot.length:,} payload bytes (header at byte {slot.offset:,}, payload at byte"
            f" {slot.offset + 12:,}). The records around it are intact and readable.",
            icon=":material/error:",
        )
        raw = _unchecked_bytes(src, slot.index)
        if raw is not None:
            with st.expander("Bytes as stored (unchecked)"):
                st.code(view.hex_dump(raw, 1024), language=None)
                _download(
                    "Download bytes as stored",
                    raw,
                    f"record_{slot.index}_damaged.bin",
                    f"dmg:{slot.index}",
                    "application/octet-stream",
                )
        return
    if slot.recovered:
        st.warning(
            f"**Recovered record.** Its CRCs check out, but it was found by searching past"
            f" damaged bytes earlier in {rel}, not by following the record lengths from the"
            " start of the file. It is most likely a record of the file; it could also be"
            " content of the damaged record before it (a TFRecord stored inside a record looks"
            " the same).",
            icon=":material/find_replace:",
        )
    record = ex.decode(slot.payload, "auto")
    if record.kind == RAW:
        _not_an_example(src, slot.path, slot.payload, slot.index)
        return
    frames = vm.find_frames(record, media.hints(src), class_names.for_source(src))
    if frames is not None:
        media.frames_player(src, record, slot.index, frames, boxes)
    media.audio_section(src, record, slot.index)
    media.token_section(record, slot.path, slot.index)
    chosen = state.label_map(src.spec)
    names = chosen[1].names if chosen else None
    how = picture_view.BoxSettings(
        src.spec,
        services.box_scale(src, schema.stored(src)).normalized,
        names,
        boxes,
        layer_controls.session_options(src.spec, names),
    )
    start = _pictures_start(slot.index)
    shown = vm.without_frames(record, frames) if frames is not None else record
    pics = view.record_pictures(
        shown,
        boxes=boxes,
        limit=PICTURES_SHOWN,
        normalized=how.normalized,
        label_map=how.label_map,
        hidden=state.hidden_classes(src.spec),
        options=how.options,
        start=start,
    )
    if pics.start != start:  # the record has fewer pictures than the part asked for
        pics = view.record_pictures(
            shown,
            boxes=boxes,
            limit=PICTURES_SHOWN,
            normalized=how.normalized,
            label_map=how.label_map,
            hidden=state.hidden_classes(src.spec),
            options=how.options,
        )
    kind = "SequenceExample" if record.kind == SEQUENCE_EXAMPLE else "Example"
    if pics:
        left, right = st.columns([3, 2])
    else:
        left, right = st.container(), None
    with left:
        title = "Context" if record.kind == SEQUENCE_EXAMPLE else "Features"
        st.markdown(f"**{title}** · {kind} · {view.plural(len(record.features), 'feature')}")
        if record.features:
            feature_table(record)
        else:
            st.caption("(no features)")
    if right is not None:
        with right:
            bar = st.container(
                horizontal=True, vertical_alignment="center", horizontal_alignment="distribute"
            )
            bar.markdown(f"**Pictures** · {pics.words}", width="content")
            with bar:
                has_layers = any(p.layers for p in pics)
                boxes_toggle("detail", disabled=boxes and not has_layers)
            if pics.total > PICTURES_SHOWN:
                _pictures_part(slot.index, pics)
            pictures(pics, shown, how, slot.index)
    if record.kind == SEQUENCE_EXAMPLE:
        _sequence(record)
    feature_values(record, slot.index)
    _json(slot.payload, record.kind, slot.index)
    _download(
        "Download record payload (.pb)",
        slot.payload,
        f"record_{slot.index}.pb",
        f"pb:{slot.index}",
        "application/octet-stream",
    )


def _json(payload: bytes, kind: str, index: int) -> None:
    """The record's JSON, drawn only while its expander is open: closed, it costs nothing at
    each record of a review (a record's JSON holds its pictures' bytes, in base64)."""
    title = "JSON (as TensorFlow's MessageToDict gives it)"
    if len(payload) > JSON_VIEW_BYTES:
        with st.expander(title):
            st.info(
                f"This record is {format_bytes(len(payload))}: its JSON is not drawn here"
                f" (at most {format_bytes(JSON_VIEW_BYTES)}). Download the payload, or run"
                f" `tfrecord-browser dump --json --records {index}`.",
                icon=":material/data_object:",
            )
        return
    box = st.expander(title, key=state.widget_key("detail:json"), on_change="rerun")
    if not box.open:
        return
    with box:
        try:
            st.json(ex.to_json(payload, kind), expanded=2)
        except codec.CodecError as exc:
            st.error(view.md_text(str(exc)))


def _pictures_start(number: int) -> int:
    """The first picture drawn of record ``number`` (a part chosen by :func:`_pictures_part`)."""
    value = state.widget_value(f"pictures:part:{number}")
    if isinstance(value, str) and "–" in value:
        try:
            return max(0, int(value.split("–", 1)[0].replace(",", "")) - 1)
        except ValueError:
            return 0
    return 0


def _pictures_part(number: int, pics: view.Pictures) -> None:
    """A choice of which part of a record's many pictures is drawn: every picture stays
    reachable, :data:`PICTURES_SHOWN` at a time."""
    parts = [
        f"{a + 1:,}–{min(a + PICTURES_SHOWN, pics.total):,}"
        for a in range(0, pics.total, PICTURES_SHOWN)
    ]
    st.segmented_control(
        f"Pictures · {pics.total:,} in this record",
        parts,
        default=parts[0],
        key=state.widget_key(f"pictures:part:{number}"),
        help="Every picture of the record, a part at a time (the main picture first)",
    )


def _q(text: str) -> str:
    return quote(text, safe="/*@")
