"""Export: write the open source, with its pending edits applied, to TFRecord, JSON Lines,
CSV, Parquet, JSON or image files inside the root folder.

Every export is atomic (temporary files beside the destination, renamed into place only
after they were verified). The source file is never touched, except by "Write the edits into
the source file", which asks for an explicit confirmation and keeps the old file as a backup.
"""

from __future__ import annotations

import os
from typing import Any

import streamlit as st

from browser_app import app_pages, edit_session, exporting, loading, presenters, state, widgets
from browser_app.errors import AppError
from browser_app.journal import Journal
from browser_app.paths import PathRefused, relative_to_root, resolve_inside
from browser_app.selection import SpecError, parse_record_spec
from codec.errors import CodecError

FORMAT_LABELS = {
    "tfrecord": "TFRecord",
    "jsonl": "JSON Lines (one record per line, TensorFlow's JSON form)",
    "csv": "CSV (one row per record)",
    "parquet": "Parquet (one row per record)",
    "json": "JSON (an array of rows)",
    "images": "Pictures (a .zip, or a folder)",
}
SUFFIX = {
    "tfrecord": ".tfrecord",
    "jsonl": ".jsonl",
    "csv": ".csv",
    "parquet": ".parquet",
    "json": ".json",
    "images": "-pictures.zip",
}
COMPRESSION_SUFFIX = {"none": "", "gzip": ".gz", "zlib": ".zlib"}
DOWNLOAD_LIMIT = 32 << 20  # exports up to this size get a download button
REPORT = "export:report"
FILTER_SELECTION = "filter:selection"  # where the filter page keeps its result
ALL, RANGE, FILTERED = "All records", "Records by number", "The filter's result"


def _stem(src: loading.Source) -> str:
    base = os.path.basename(src.label.rstrip("/")) or "export"
    for ext in (".gz", ".zlib", ".tfrecords", ".tfrecord", ".records", ".record", ".tfrec"):
        if base.lower().endswith(ext):
            base = base[: -len(ext)]
    base = base.replace("*", "all").replace("@", "-")
    return base or "export"


def default_destination(src: loading.Source, fmt: str, compression: str = "none") -> str:
    """``exports/<name>-edited<ext>`` relative to the root."""
    suffix = SUFFIX[fmt] + (COMPRESSION_SUFFIX.get(compression, "") if fmt == "tfrecord" else "")
    return f"exports/{_stem(src)}-edited{suffix}"


def _filter_selection(src: loading.Source) -> dict[str, Any] | None:
    """The filter page's last result for this source (see app_pages/filter.py)."""
    try:
        from browser_app.app_pages import filter as filter_page

        value = filter_page.selection()
    except ImportError:  # pragma: no cover - the filter page is optional
        value = state.get(FILTER_SELECTION)
    if not isinstance(value, dict) or value.get("key") != repr(src.key):
        return None
    if not isinstance(value.get("records"), list):
        return None
    return value


def _on_format(src: loading.Source) -> None:
    fmt = str(state.widget_value("export:format") or "tfrecord")
    comp = str(state.widget_value("export:compression") or "none")
    state.set_widget_value("export:dest", default_destination(src, fmt, comp))


def _progress_bar() -> tuple[Any, exporting.Progress]:
    bar = st.progress(0.0, text="Starting…")
    words = {"write": "Writing", "verify": "Verifying", "scan": "Reading the columns"}

    def progress(stage: str, done: int, total: int) -> None:
        frac = min(1.0, done / total) if total else 1.0
        bar.progress(frac, text=f"{words.get(stage, stage)}… {done:,} of {total:,}")

    return bar, progress


def _report_dict(src: loading.Source, report: exporting.ExportReport) -> dict[str, Any]:
    summary = report.summary()
    for p in report.outputs:  # paths as the person sees them: relative to the root
        summary = summary.replace(p, relative_to_root(src.root, p))
    if report.backup:
        summary = summary.replace(report.backup, relative_to_root(src.root, report.backup))
    return {
        "format": report.format,
        "summary": summary,
        "outputs": list(report.outputs),
        "shown": [relative_to_root(src.root, p) for p in report.outputs],
        "records": report.records,
        "bytes": report.bytes,
        "verified": report.verified,
        "skipped": [p.describe() for p in report.skipped],
        "backup": report.backup,
        "seconds": report.seconds,
        "source": src.spec,
    }


def _selection(src: loading.Source, how: str) -> tuple[list[int] | None, str | None]:
    """``(records or None for all, error)``."""
    if how == RANGE:
        spec = str(state.widget_value("export:range") or "").strip()
        ds = src.dataset
        total = ds.indexed if ds.index_complete else len(ds)
        try:
            return parse_record_spec(spec, total), None
        except SpecError as exc:
            return None, f"The record numbers cannot be read: {exc}."
    if how == FILTERED:
        sel = _filter_selection(src)
        if sel is None:
            return None, "There is no filter result for this file any more; run the filter again."
        return [int(r) for r in sel["records"]], None
    return None, None


def _destination(src: loading.Source, text: str) -> str:
    """The real path of ``text`` inside the root; raises PathRefused."""
    real = resolve_inside(src.root, text)
    if os.path.isdir(real) and not text.endswith("/"):
        fmt = str(state.widget_value("export:format") or "tfrecord")
        if fmt != "images":
            raise PathRefused(f"{text} is a folder; give a file name")
    return real


def _run(src: loading.Source, j: Journal | None) -> None:
    fmt = str(state.widget_value("export:format") or "tfrecord")
    comp = str(state.widget_value("export:compression") or "none")
    shards = int(state.widget_value("export:shards") or 1)
    how = str(state.widget_value("export:selection") or ALL)
    text = str(state.widget_value("export:dest") or "").strip()
    records, err = _selection(src, how)
    if err is not None:
        st.error(err, icon=":material/error:")
        return
    if records is not None and not records:
        st.error("The selection is empty: nothing to export.", icon=":material/error:")
        return
    try:
        dst = _destination(src, text)
    except PathRefused as exc:
        st.error(f"Refused: {exc}. Exports are written inside the root folder.")
        return
    if os.path.lexists(dst) and not state.widget_value("export:overwrite"):
        st.error(
            f"{text} exists. Tick “Replace it” to overwrite it (the new file replaces it"
            " only once it is complete and verified).",
            icon=":material/error:",
        )
        return
    parent = os.path.dirname(dst)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        st.error(f"Cannot create the folder {relative_to_root(src.root, parent)}: {exc}.")
        return
    source: Any = j if j is not None else src.dataset
    bar, progress = _progress_bar()
    options: dict[str, Any] = {"selection": records, "progress": progress}
    try:
        if fmt == "tfrecord":
            report = exporting.export_tfrecord(
                source, dst, compression=comp, shards=shards if shards > 1 else None, **options
            )
        elif fmt == "jsonl":
            report = exporting.export_jsonl(source, dst, **options)
        elif fmt in ("csv", "parquet", "json"):
            report = exporting.export_table(source, dst, format=fmt, **options)
        else:
            report = exporting.export_images(source, dst, **options)
    except (AppError, CodecError, OSError) as exc:
        bar.empty()
        st.error(f"The export failed and nothing was written: {exc}", icon=":material/error:")
        state.put(REPORT, None)
        return
    bar.progress(1.0, text="Done")
    state.put(REPORT, _report_dict(src, report))


def _replace_source(src: loading.Source, j: Journal) -> None:
    bar, progress = _progress_bar()
    try:
        report = exporting.export_tfrecord(j, replace_source=True, progress=progress)
    except (AppError, CodecError, OSError) as exc:
        bar.empty()
        st.error(f"The source was not changed: {exc}", icon=":material/error:")
        return
    bar.progress(1.0, text="Done")
    state.put("export:reset_confirm", True)
    state.put(REPORT, _report_dict(src, report))
    edit_session.bump()
    st.rerun()


def _open_output(spec: str) -> None:
    state.set_source(spec, 0)
    app_pages.goto("records")


def _show_report(src: loading.Source, rep: dict[str, Any]) -> None:
    with st.container(border=True, key="tfb-export-report"):
        ok = rep["verified"] and not rep["skipped"]
        verdict = "verified ✓" if rep["verified"] else "not verified"
        (st.success if ok else st.warning)(
            f"**Export done** ({verdict}): {rep['summary']}.",
            icon=":material/task_alt:" if ok else ":material/warning:",
        )
        took = f" · {rep['seconds']:.1f} s" if rep["seconds"] >= 0.05 else ""
        st.caption(
            f"{presenters.format_bytes(rep['bytes'])}{took} · "
            + ", ".join(f"`{s}`" for s in rep["shown"][:8])
            + (f" … {len(rep['shown']) - 8} more" if len(rep["shown"]) > 8 else "")
        )
        if rep["backup"]:
            st.info(
                f"The previous source file is kept as"
                f" `{relative_to_root(src.root, rep['backup'])}`.",
                icon=":material/inventory_2:",
            )
        if rep["skipped"]:
            st.warning(
                "Left out because they are damaged: " + "; ".join(rep["skipped"][:10]),
                icon=":material/warning:",
            )
        c = st.columns([1, 1, 3])
        outs = rep["outputs"]
        if (
            len(outs) == 1
            and os.path.isfile(outs[0])
            and os.path.getsize(outs[0]) <= DOWNLOAD_LIMIT
        ):
            with open(outs[0], "rb") as f:
                data = f.read()
            c[0].download_button(
                "Download",
                data,
                file_name=os.path.basename(outs[0]),
                key=state.widget_key("export:download"),
                on_click="ignore",
                icon=":material/download:",
            )
        if rep["format"] == "tfrecord" and not rep["backup"]:
            shown = rep["shown"]
            spec = shown[0] if len(shown) == 1 else shown[0].replace("-00000-of-", "-*-of-")
            if not spec.startswith("/"):
                c[1].button(
                    "Open it here",
                    key=state.widget_key("export:open"),
                    icon=":material/open_in_new:",
                    on_click=_open_output,
                    args=(spec,),
                    help="Open the exported file in the Records page",
                )


def render() -> None:
    src = loading.current_source()
    widgets.show_flashes()
    if src is None:
        st.subheader("Export", anchor=False)
        widgets.no_source()
        return
    widgets.source_header(src, "Export")
    j = edit_session.journal(src)
    if j is None:
        st.caption("The source is exported as it is (its pending edits cannot be applied).")
        pending = 0
    else:
        pending = j.pending
        st.caption(
            f"{presenters.plural(pending, 'pending change')} will be applied."
            if pending
            else "No pending changes: the records are exported as they are."
        )
    if state.widget_value("export:format") is None:
        state.set_widget_value("export:format", "tfrecord")
    if state.widget_value("export:dest") is None:
        state.set_widget_value("export:dest", default_destination(src, "tfrecord"))
    c = st.columns([2, 1, 1])
    fmt = c[0].selectbox(
        "Format",
        list(FORMAT_LABELS),
        format_func=lambda f: FORMAT_LABELS[f],
        key=state.widget_key("export:format"),
        on_change=_on_format,
        args=(src,),
    )
    if fmt == "tfrecord":
        c[1].selectbox(
            "Compression",
            exporting.COMPRESSIONS,
            key=state.widget_key("export:compression"),
            on_change=_on_format,
            args=(src,),
        )
        c[2].number_input(
            "Shards",
            min_value=1,
            max_value=4096,
            value=1,
            step=1,
            key=state.widget_key("export:shards"),
            help="Split into N files named like TensorFlow's: name-00000-of-0000N.tfrecord",
        )
    sel = _filter_selection(src)
    options = [ALL, RANGE] + ([FILTERED] if sel is not None else [])
    if sel is not None and sel.get("for_export"):
        # Handed over by the filter page's "Export these": offer exactly those, once.
        state.set_widget_value("export:selection", FILTERED)
        state.put(FILTER_SELECTION, {**sel, "for_export": False})
    how = st.radio(
        "Records",
        options,
        horizontal=True,
        key=state.widget_key("export:selection"),
        format_func=lambda o: (
            f"{o} ({presenters.plural(len(sel['records']), 'record')}: `{sel['expression']}`)"
            if o == FILTERED and sel is not None
            else o
        ),
    )
    if how == RANGE:
        st.text_input(
            "Record numbers",
            key=state.widget_key("export:range"),
            placeholder="0:100, 150, -1",
            help="Numbers and ranges (A:B, end excluded; negative counts from the end). New"
            " records placed after a chosen record come with it.",
        )
    elif how == ALL and j is not None and pending:
        st.caption("Deleted records are left out; new records are written in place.")
    st.text_input(
        "Destination (inside the root folder)",
        key=state.widget_key("export:dest"),
        help=f"A path relative to {src.root}; folders are created as needed",
    )
    dest_text = str(state.widget_value("export:dest") or "")
    exists = False
    try:
        exists = bool(dest_text.strip()) and os.path.lexists(resolve_inside(src.root, dest_text))
    except PathRefused as exc:
        st.error(f"Refused: {exc}.", icon=":material/block:")
    if exists:
        st.checkbox(
            "It exists: replace it",
            key=state.widget_key("export:overwrite"),
        )
    if st.button(
        "Export",
        key=state.widget_key("export:go"),
        type="primary",
        icon=":material/download:",
    ):
        _run(src, j)
    rep = state.get(REPORT)
    if isinstance(rep, dict) and rep.get("source") == src.spec:
        _show_report(src, rep)
    _replace_section(src, j)


def _replace_section(src: loading.Source, j: Journal | None) -> None:
    if j is None or not j.pending:
        return
    if len(src.paths) != 1 or state.is_upload(src.spec):
        return
    rel = src.rel(src.paths[0])
    if state.get("export:reset_confirm"):
        state.put("export:reset_confirm", False)
        state.set_widget_value("export:confirm_replace", False)
    with st.expander("Write the edits into the source file"):
        st.markdown(
            f"This **replaces `{rel}`** with the edited records. The current file is kept"
            f" first as a backup (`{rel}.bak`, or with the time in its name when that"
            " exists), and the new file is verified before it takes the old one's place."
            " The pending changes are then part of the file and the edit journal starts"
            " empty."
        )
        confirm = st.checkbox(
            f"Yes, replace {rel} (a backup is kept)",
            key=state.widget_key("export:confirm_replace"),
        )
        if st.button(
            "Replace the source file",
            key=state.widget_key("export:replace"),
            icon=":material/save:",
            disabled=not confirm,
        ):
            _replace_source(src, j)


if __name__ == "__main__":
    render()
