"""Reusable pieces of the app: file picker, source header with indexing progress, pager,
record table, feature table, pictures, record detail and messages.

Widgets read and write session values only through :mod:`browser_app.state`, and get data
only through :mod:`browser_app.loading` (caches) and :mod:`browser_app.presenters` (pure).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

import codec
from browser_app import loading, presenters, state
from browser_app.loading import Source
from browser_app.paths import is_pattern
from codec import example as ex
from codec.values import format_float

__all__ = [
    "boxes_toggle",
    "file_picker",
    "pager",
    "pictures",
    "record_detail",
    "records_table",
    "show_flashes",
    "source_header",
]

DAMAGED_STYLE = "background-color: rgba(255, 43, 43, 0.12); color: #b3261e"
SKIPPED_STYLE = "background-color: rgba(255, 170, 0, 0.14); color: #8a5300"
# Rows with pending edits (statuses set by browser_app.edit_session.page_view).
EDIT_STYLES = {
    "edited": "background-color: rgba(37, 99, 235, 0.08)",
    "deleted": "text-decoration: line-through; color: #8a8a8a",
    "added": "background-color: rgba(22, 163, 74, 0.10)",
}
_SHARD = re.compile(r"^(?P<stem>.*-)(?P<k>\d{5})-of-(?P<n>\d{5})(?P<ext>(\.[^/]*)?)$")

CSS = """
<style>
/* Compact, product-like spacing. */
.block-container { padding-top: 2.2rem; padding-bottom: 2rem; }
[data-testid="stSidebar"] [data-testid="stCaptionContainer"] { margin-bottom: -0.4rem; }
/* Small pictures are shown enlarged with their pixels visible, not blurred. */
.st-key-tfb-pictures img, .st-key-tfb-tensor img { image-rendering: pixelated; }
.st-key-tfb-gallery img { image-rendering: auto; border-radius: 4px; }
.st-key-tfb-gallery [data-testid="stCaptionContainer"] { text-align: center; }
</style>
"""


def page_css() -> None:
    st.html(CSS)


def show_flashes() -> None:
    """Messages queued by callbacks and by opening a source, shown once."""
    for kind, message in state.pop_flashes():
        {"error": st.error, "warning": st.warning, "info": st.info, "success": st.success}.get(
            kind, st.warning
        )(message)


# -- opening data ------------------------------------------------------------------------


def _group_shards(entries: list[Any]) -> list[tuple[str, str]]:
    """``(spec, label)`` options: shard sets first (as one pattern), then single files."""
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for e in entries:
        m = _SHARD.match(e.rel)
        if m:
            groups.setdefault((m["stem"], m["n"], m["ext"]), []).append(e)
    options: list[tuple[str, str]] = []
    for (stem, n, ext), members in sorted(groups.items()):
        if len(members) > 1:
            total = sum(m.size for m in members)
            spec = f"{stem}*-of-{n}{ext}"
            options.append(
                (
                    spec,
                    f"{spec}  ·  {len(members)} of {int(n)} shards,"
                    f" {presenters.format_bytes(total)}",
                )
            )
    for e in entries:
        options.append((e.rel, f"{e.rel}  ·  {presenters.format_bytes(e.size)}"))
    return options


def _open(spec: str, record: int = 0) -> None:
    spec = spec.strip()
    if not spec:
        return
    root = state.app_args().root
    try:
        loading.open_source(spec, root)
    except loading.OpenFailed as exc:
        state.flash(str(exc), exc.level)
        return
    state.set_source(spec, record)


def _on_pick() -> None:
    spec = state.widget_value("pick")
    if spec:
        _open(spec)


def _on_path() -> None:
    text = (state.widget_value("path") or "").strip()
    if not text:
        return
    root = state.app_args().root
    # Absolute paths inside the root are shown and linked relative to it.
    if os.path.isabs(os.path.expanduser(text)) and not is_pattern(text):
        real = os.path.realpath(os.path.expanduser(text))
        try:
            if os.path.commonpath([real, root]) == root:
                text = os.path.relpath(real, root).replace(os.sep, "/")
        except ValueError:
            pass
    _open(text)


def _on_upload() -> None:
    up = state.widget_value("upload")
    if up is None:
        return
    seen = state.get("uploaded", {})
    spec = seen.get(up.file_id)
    if spec is None or not state.upload_path(spec):
        spec = loading.store_upload(up.name, up)
        seen[up.file_id] = spec
        state.put("uploaded", seen)
    _open(spec)


def file_picker() -> None:
    """The sidebar's "Open data" section: search the root, pick a file or shard set, type a
    path or pattern, reopen a recent one, or upload a small file."""
    root = state.app_args().root
    sb = st.sidebar
    sb.caption(f"Root: `{root}`")
    query = sb.text_input(
        "Search files",
        key=state.widget_key("search"),
        placeholder="name, *.tfrecord, train-*…",
        help="Filters the TFRecord files under the root by name (substring or glob).",
    )
    entries, truncated = loading.list_files(root, query or "")
    options = _group_shards(entries)
    labels = dict(options)
    current = state.source_spec()
    if current in labels:
        state.set_widget_value("pick", current)
    elif state.widget_value("pick") not in labels:
        state.set_widget_value("pick", None)
    sb.selectbox(
        "Files under the root",
        [spec for spec, _ in options],
        format_func=lambda s: labels.get(s, s),
        key=state.widget_key("pick"),
        index=None,
        placeholder=("No TFRecord files found" if not options else f"{len(entries)} files…"),
        on_change=_on_pick,
    )
    if truncated:
        sb.caption("Showing the first matches only; refine the search.")
    sb.text_input(
        "TFRecord path",
        key=state.widget_key("path"),
        placeholder="path, folder, glob or name@N",
        help="Relative to the root, or absolute inside it. Globs (data/*.tfrecord),"
        " shard patterns (train-*-of-00010) and name@N open several files as one.",
        on_change=_on_path,
    )
    recent = [r for r in state.recent() if r != current][:5]
    if recent:
        sb.caption("Recent")
        for spec in recent:
            label = (
                spec[len(state.UPLOAD_PREFIX) :] + " (upload)" if state.is_upload(spec) else spec
            )
            sb.button(
                label,
                key=state.widget_key(f"recent:{spec}"),
                type="tertiary",
                icon=":material/history:",
                on_click=_open,
                args=(spec,),
            )
    with sb.expander("Upload a file", icon=":material/upload:"):
        st.file_uploader(
            "TFRecord file (GZIP/ZLIB detected)",
            key=state.widget_key("upload"),
            on_change=_on_upload,
            max_upload_size=loading.UPLOAD_LIMIT_MB,
            help="For small files: the upload is stored in a private temporary file and"
            " read from there. Files on this machine are better opened by path.",
        )


# -- header and progress -----------------------------------------------------------------


def _kind_label(kinds: dict[str, int]) -> str:
    names = {"example": "Example", "sequence_example": "SequenceExample", "raw": "raw bytes"}
    if not kinds:
        return "—"
    ordered = sorted(kinds.items(), key=lambda kv: -kv[1])
    if len(ordered) == 1:
        return names.get(ordered[0][0], ordered[0][0])
    return " / ".join(f"{names.get(k, k)} ({v})" for k, v in ordered)


def source_header(src: Source, title: str) -> None:
    """Page title, what is open, and indexing progress while the index grows."""
    ds = src.dataset
    st.subheader(f"{title}", anchor=False)
    size = sum(f.file_size for f in ds.files)
    comps = sorted({f.compression for f in ds.files})
    parts = [f"**{src.label}**"]
    if len(ds.files) > 1:
        parts.append(presenters.plural(len(ds.files), "file"))
    if ds.index_complete:
        parts.append(presenters.plural(ds.indexed, "record"))
    else:
        parts.append(f"{ds.indexed:,}+ records (counting…)")
    parts.append(presenters.format_bytes(size))
    if comps != ["none"]:
        parts.append(", ".join(comps))
    st.caption("  ·  ".join(parts))
    index_progress(src)


def index_progress(src: Source) -> None:
    """While the index is incomplete: index more in short steps (a fragment that reruns on
    its own) and show the count filling in; rerun the page once it is complete."""
    ds = src.dataset
    if ds.index_complete:
        return

    @st.fragment(run_every=0.5)
    def _tick() -> None:
        deadline = time.monotonic() + 0.25
        try:
            while not ds.index_complete and time.monotonic() < deadline:
                ds.index_more(1 << 16)
        except codec.ReaderClosedError:
            return
        if ds.index_complete:
            st.rerun(scope="app")
        st.progress(
            min(1.0, ds.index_progress),
            text=f"Indexing… {ds.indexed:,} records so far ({ds.index_progress:.0%} of the file)",
        )

    _tick()


# -- paging ------------------------------------------------------------------------------


def _go(n: int) -> None:
    state.set_record(n)


def _on_size() -> None:
    state.set_page_size(int(state.widget_value("page_size") or state.DEFAULT_PAGE_SIZE))


def _on_jump() -> None:
    value = state.widget_value("jump")
    if value is not None:
        state.set_record(int(value))


def pager(src: Source, where: str = "records") -> tuple[int, int, int | None]:
    """First/previous/next/last, page size and "go to record". Returns ``(start, stop,
    total)``; ``total`` is None while the index is still being built."""
    ds = src.dataset
    total = ds.indexed if ds.index_complete else None
    size = state.page_size()
    if total is not None and total > 0 and state.record() >= total:
        st.warning(
            f"Record {state.record():,} does not exist: {src.label} has"
            f" {presenters.plural(total, 'record')}. Showing the last one.",
            icon=":material/last_page:",
        )
        state.set_record(total - 1)
    start = state.page_start(total)
    stop = start + size if total is None else min(start + size, total)
    known = ds.indexed
    last_start = ((total - 1) // size) * size if total else 0
    c = st.columns([1.05, 1.25, 2.2, 1.05, 1.05, 1.2, 1.5], vertical_alignment="bottom")
    c[0].button(
        "First",
        key=state.widget_key(f"{where}:first"),
        icon=":material/first_page:",
        disabled=start == 0,
        on_click=_go,
        args=(0,),
        width="stretch",
    )
    c[1].button(
        "Previous",
        key=state.widget_key(f"{where}:prev"),
        icon=":material/chevron_left:",
        disabled=start == 0,
        on_click=_go,
        args=(max(0, start - size),),
        width="stretch",
    )
    if total == 0:
        label = "No records"
    else:
        shown_stop = stop if total is not None else min(stop, max(known, stop))
        of = f"{total:,}" if total is not None else f"{known:,}+"
        label = f"Records <b>{start:,}–{max(start, shown_stop - 1):,}</b> of {of}"
    c[2].html(f"<div style='text-align:center;padding-bottom:0.55rem'>{label}</div>")
    has_next = (total is None and known > stop) or (total is not None and stop < total)
    if total is None and known <= stop:
        has_next = True  # unknown yet: try the next page; it may be empty
    c[3].button(
        "Next",
        key=state.widget_key(f"{where}:next"),
        icon=":material/chevron_right:",
        icon_position="right",
        disabled=not has_next,
        on_click=_go,
        args=(start + size,),
        width="stretch",
    )
    c[4].button(
        "Last",
        key=state.widget_key(f"{where}:last"),
        icon=":material/last_page:",
        icon_position="right",
        disabled=total is None or start >= last_start,
        on_click=_go,
        args=(last_start,),
        width="stretch",
        help=None if total is not None else "Available once the whole file is indexed",
    )
    state.set_widget_value("page_size", size)
    c[5].selectbox(
        "Per page",
        state.PAGE_SIZES,
        key=state.widget_key("page_size"),
        on_change=_on_size,
    )
    state.set_widget_value("jump", state.record())
    c[6].number_input(
        "Go to record",
        min_value=0,
        max_value=max(0, total - 1) if total else None,
        step=1,
        key=state.widget_key("jump"),
        on_change=_on_jump,
        help="Record number (counting from 0); press Enter",
    )
    return start, stop, total


# -- the records table -------------------------------------------------------------------


def _frame(view: presenters.PageView) -> pd.DataFrame:
    names = [name for name, _ in view.columns]
    df = pd.DataFrame([{n: r.get(n) for n in names} for r in view.rows], columns=names)
    for name, kind in view.columns:
        if kind == "int":
            df[name] = pd.array(df[name], dtype="Int64")
        elif kind == "float":
            df[name] = pd.to_numeric(df[name], errors="coerce")
        else:
            df[name] = df[name].astype("object")
    return df


def _column_config(view: presenters.PageView) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "#": st.column_config.NumberColumn("#", width="small", format="%d", pinned=True),
        "status": st.column_config.TextColumn("status", width="medium"),
        "offset": st.column_config.NumberColumn("offset", format="%d", help="byte offset"),
        "bytes": st.column_config.NumberColumn("bytes", format="%d", help="payload length"),
    }
    if view.has_images:
        cfg["picture"] = st.column_config.ImageColumn("picture", width="small")
    for name, kind in view.columns:
        if name in cfg:
            continue
        if kind == "int":
            cfg[name] = st.column_config.NumberColumn(name, format="%d")
        elif kind == "float":
            cfg[name] = st.column_config.NumberColumn(name)
        else:
            cfg[name] = st.column_config.TextColumn(name)
    return cfg


def records_table(src: Source, view: presenters.PageView, start: int) -> int | None:
    """The page's records, one row each; damaged ones in red, skipped regions in amber, in
    place. Selecting a record's row makes it the current record (shown below); selecting a
    skipped region returns its row number."""
    df = _frame(view)

    def style(row: pd.Series) -> list[str]:
        status = view.status[int(row.name)]  # type: ignore[call-overload]
        if status == presenters.STATUS_DAMAGED:
            return [DAMAGED_STYLE] * len(row)
        if status == presenters.STATUS_SKIPPED:
            return [SKIPPED_STYLE] * len(row)
        return [EDIT_STYLES.get(status, "")] * len(row)

    # Styled: damaged rows red, skipped regions amber, and empty cells empty (not "None").
    float_cols = [n for n, k in view.columns if k == "float"]
    styled = (
        df.style.apply(style, axis=1)
        .format(na_rep="")
        .format(lambda v: "" if pd.isna(v) else format_float(v), subset=float_cols)
    )
    current = state.record()
    pos = view.records.index(current) if current in view.records else None
    name = f"table:{src.spec}:{start}:{state.page_size()}:{current}"
    row_height = 52 if view.has_images else None
    height = min(len(df), 14) * (row_height or 35) + 38 if len(df) else "auto"
    event: Any = st.dataframe(  # type: ignore[call-overload]
        styled,
        hide_index=True,
        column_config=_column_config(view),
        key=state.widget_key(name),
        on_select="rerun",
        selection_mode="single-row",
        selection_default={"selection": {"rows": [pos] if pos is not None else []}},
        row_height=row_height,
        height=height,
        width="stretch",
        placeholder="",
    )
    rows = list(event.selection.rows) if event is not None else []
    if rows and 0 <= rows[0] < len(view.records):
        chosen = view.records[rows[0]]
        if chosen is None:
            return rows[0]  # a skipped region: the caller shows it
        if chosen != current:
            state.set_record(chosen)
            st.rerun()
    return None


# -- pictures ----------------------------------------------------------------------------


def _on_boxes(name: str) -> None:
    state.set_show_boxes(bool(state.widget_value(name)))


def boxes_toggle(where: str, disabled: bool = False) -> bool:
    """The "Boxes" switch (one setting shared by every page)."""
    name = f"boxes:{where}"
    state.set_widget_value(name, state.show_boxes())
    st.toggle(
        "Boxes",
        key=state.widget_key(name),
        on_change=_on_boxes,
        args=(name,),
        disabled=disabled,
        help="Draw Object Detection API boxes (image/object/bbox/*) with their class text",
    )
    return state.show_boxes()


def _st_format(fmt: str) -> Any:
    return fmt if fmt in ("JPEG", "PNG") else "auto"


def pictures(pics: list[presenters.Picture]) -> None:
    """Each picture at its stored bytes (JPEG/PNG as they are; drawn ones as PNG), a clear
    message in place of any that cannot be shown."""
    with st.container(key="tfb-pictures"):
        for p in pics:
            if p.error or p.data is None:
                st.error(f"**{p.caption}** — {p.error}", icon=":material/broken_image:")
                continue
            width: Any = "stretch" if p.width < 480 else "content"
            st.image(p.data, caption=p.caption, output_format=_st_format(p.format), width=width)
            if p.note:
                st.warning(p.note, icon=":material/aspect_ratio:")


# -- record detail -----------------------------------------------------------------------


def _download(label: str, data: bytes, name: str, key: str, mime: str) -> None:
    payload: Any = data if len(data) <= 256 << 10 else (lambda: data)
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
    rows = presenters.feature_rows(record)
    df = pd.DataFrame(
        [
            {"feature": r.name, "type": r.type, "length": r.length, "values": r.preview}
            for r in rows
            if r.section != "feature_lists"
        ],
        columns=["feature", "type", "length", "values"],
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
    view = presenters.value_view(v)
    label = f"`{name}[{i}]`" if i else f"`{name}`"
    if view.kind == "text":
        st.caption(f"{label} · text · {len(v):,} bytes")
        st.code(view.text or "", language=None, wrap_lines=True)
        return
    if view.kind == "tensor":
        t = presenters.tensor_view(v)
        dims = "×".join(str(d) for d in t.shape) or "scalar"
        st.caption(f"{label} · serialized tensor · {t.dtype} · shape {dims} · {len(v):,} bytes")
        if t.error:
            st.error(f"Cannot read this tensor: {t.error}")
        else:
            if t.picture is not None:
                with st.container(key=f"tfb-tensor-{key}"):
                    st.image(t.picture, output_format="PNG", width=min(320, 4 * max(t.shape[1], 1)))
            st.code(t.values, language=None)
        _download(
            "Download tensor bytes",
            v,
            f"{name.replace('/', '_')}_{i}.pb",
            key,
            "application/octet-stream",
        )
        return
    if view.kind.startswith("image/"):
        st.caption(f"{label} · {view.summary}")
        ext = view.kind.split("/")[1]
        _download("Download picture", v, f"{name.replace('/', '_')}_{i}.{ext}", key, view.kind)
        return
    st.caption(f"{label} · binary · {len(v):,} bytes")
    st.code(presenters.hex_dump(v, 512), language=None)
    _download(
        "Download bytes", v, f"{name.replace('/', '_')}_{i}.bin", key, "application/octet-stream"
    )


def feature_values(record: ex.Record, index: int) -> None:
    """Every feature with all its values: long lists folded, text as text, binary as a hex
    preview with a download, tensors with dtype, shape and values."""
    for name, f in record.features.items():
        n = len(f.values)
        if f.type != "bytes" and n <= presenters.PREVIEW_VALUES:
            continue
        if (
            f.type == "bytes"
            and n == 1
            and presenters.value_view(f.values[0]).kind == "text"
            and len(f.values[0]) <= 60
        ):
            continue
        title = f"{name} — {f.type}, {presenters.plural(n, 'value')}"
        with st.expander(title, expanded=False):
            if f.type == "bytes":
                for i, v in enumerate(f.values[:50]):
                    _bytes_value(name, i, v, f"val:{index}:{name}:{i}")
                if n > 50:
                    st.caption(f"… {n - 50:,} more values (showing the first 50)")
            else:
                values = f.values
                df = pd.DataFrame({"value": values})
                st.dataframe(df, height=min(n, 10) * 35 + 38, width="stretch")
                text = ", ".join(presenters.all_values(f))
                _download(
                    "Download values (text)",
                    text.encode(),
                    f"{name.replace('/', '_')}.txt",
                    f"vals:{index}:{name}",
                    "text/plain",
                )


def _sequence(record: ex.Record) -> None:
    cols, rows = presenters.sequence_table(record)
    st.markdown("**Feature lists** (steps × feature lists)")
    df = pd.DataFrame(rows, columns=cols)
    st.dataframe(df, hide_index=True, width="stretch", height=min(len(df), 12) * 35 + 38)


def _raw(payload: bytes, index: int) -> None:
    st.markdown("**Raw payload** (not an Example or SequenceExample)")
    left, right = st.columns(2)
    with left:
        st.caption("Hex")
        st.code(presenters.hex_dump(payload, 2048) or "(empty)", language=None)
    with right:
        st.caption("Text preview")
        st.code(presenters.text_preview(payload) or "(empty)", language=None, wrap_lines=True)
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


def record_detail(src: Source, slot: presenters.Slot, boxes: bool) -> None:
    """Everything about one record (or one skipped region)."""
    rel = src.rel(slot.path)
    if slot.index is None:
        p = slot.problem
        st.markdown(f"#### Skipped region at byte {slot.offset:,}")
        st.warning(
            f"{presenters.format_bytes(slot.length)} of {rel} starting at byte {slot.offset:,}"
            f" could not be read as records: {p.message if p else ''}. Reading resumed after them.",
            icon=":material/warning:",
        )
        return
    head = f"#### Record {slot.index:,}"
    st.markdown(head)
    st.caption(
        f"{rel}  ·  header at byte {slot.offset:,}  ·  payload {slot.length:,} bytes"
        f"  ·  [link](?file={_q(src.spec)}&record={slot.index})"
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
                st.code(presenters.hex_dump(raw, 1024), language=None)
                _download(
                    "Download bytes as stored",
                    raw,
                    f"record_{slot.index}_damaged.bin",
                    f"dmg:{slot.index}",
                    "application/octet-stream",
                )
        return
    record = ex.decode(slot.payload, "auto")
    if record.kind == "raw":
        _raw(slot.payload, slot.index)
        return
    pics = presenters.record_pictures(record, boxes=boxes)
    kind = "SequenceExample" if record.kind == "sequence_example" else "Example"
    if pics:
        left, right = st.columns([3, 2])
    else:
        left, right = st.container(), None
    with left:
        title = "Context" if record.kind == "sequence_example" else "Features"
        st.markdown(f"**{title}** · {kind} · {presenters.plural(len(record.features), 'feature')}")
        if record.features:
            feature_table(record)
        else:
            st.caption("(no features)")
    if right is not None:
        with right:
            head_l, head_r = st.columns([2, 1], vertical_alignment="center")
            head_l.markdown(f"**Pictures** · {len(pics)}")
            with head_r:
                has_boxes = "image/object/bbox/xmin" in record.features
                boxes_toggle("detail", disabled=not has_boxes)
            pictures(pics)
    if record.kind == "sequence_example":
        _sequence(record)
    feature_values(record, slot.index)
    with st.expander("JSON (as TensorFlow's MessageToDict gives it)"):
        try:
            st.json(ex.to_json(slot.payload, record.kind), expanded=2)
        except codec.CodecError as exc:
            st.error(str(exc))
    _download(
        "Download record payload (.pb)",
        slot.payload,
        f"record_{slot.index}.pb",
        f"pb:{slot.index}",
        "application/octet-stream",
    )


def _q(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="/*@")


def find_slot(slots: list[presenters.Slot], record_no: int) -> presenters.Slot | None:
    for s in slots:
        if s.index == record_no:
            return s
    return None


def no_source(message: str = "") -> None:
    st.info(
        message
        or "Open a TFRecord file from the sidebar: pick one under the root, type a path or a"
        " pattern, or upload a small file.",
        icon=":material/folder_open:",
    )


def empty_source(src: Source, on_problem: Callable[[], None] | None = None) -> bool:
    """Say clearly why a source has no records. Returns True when it has none."""
    ds = src.dataset
    if not ds.index_complete or ds.indexed:
        return False
    problems = ds.problems
    size = sum(f.file_size for f in ds.files)
    if size == 0:
        st.warning(
            f"{src.label} is empty (0 bytes): there are no records to show.",
            icon=":material/draft:",
        )
    elif problems:
        skipped = sum(p.skipped for p in problems)
        st.error(
            f"No records found in {src.label}: this does not look like a TFRecord file"
            f" ({presenters.format_bytes(skipped)} of {presenters.format_bytes(size)} could not"
            " be read as records). First problem: " + problems[0].message,
            icon=":material/block:",
        )
    else:
        st.warning(f"{src.label} holds no records.")
    return True
