"""The Export page's form: format, compression and shards or CSV's formula neutralising,
which records, where; what it will write and the damage it will leave out, before it runs.

Before the export runs (:func:`browser_app.ui.widgets.export_run.write`), every file it would
write over (the destination, or any of the shards) is listed, and it runs only once "replace"
is ticked for exactly those.
"""

from __future__ import annotations

import os
from typing import Any

import streamlit as st

from browser_app import export
from browser_app.edits import Journal
from browser_app.errors import AppError, PathRefused, SpecError
from browser_app.export import COMPRESSIONS, ExportFormat
from browser_app.export.base import COCO, CSV, IMAGES, JSON, JSONL, PARQUET, TFRECORD
from browser_app.paths import relative_to_root, resolve_inside
from browser_app.selection import parse_record_spec
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import export_run, jobs
from browser_app.ui.widgets import names as class_names
from browser_app.ui.widgets.export_run import listed
from browser_app.ui.widgets.schema import record_link
from browser_app.view import (
    damage_left_out,
    label_text,
    md_code,
    md_text,
    plural,
    problem_dict,
    record_links,
)
from codec.errors import CodecError
from codec.kinds import NO_COMPRESSION
from codec.locations import filesystem, is_url, remote_errors

__all__ = ["form"]

# The formats in the order the menu offers them.
FORMATS: tuple[ExportFormat, ...] = (TFRECORD, JSONL, CSV, PARQUET, JSON, IMAGES, COCO)
ALL, RANGE, FILTERED = "All records", "Records by number", "The filter's result"
_PREVIEW_SHOWN = 8  # output names listed in a line; more go into an expander


def _format() -> str:
    return str(state.widget_value("export:format") or TFRECORD)


def _on_format(src: Source) -> None:
    comp = str(state.widget_value("export:compression") or NO_COMPRESSION)
    state.set_widget_value("export:dest", export.default_destination(src.label, _format(), comp))


def _selection(src: Source, how: str) -> tuple[list[int] | None, str | None]:
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
        sel = state.filter_selection(repr(src.key))
        if sel is None:
            return None, "There is no filter result for this file any more; run the filter again."
        return [int(r) for r in sel["records"]], None
    return None, None


def _destination(src: Source, text: str) -> str:
    """The real path of ``text`` inside the root; raises PathRefused."""
    real = resolve_inside(src.root, text)
    folder_output = _format() in (IMAGES, COCO)
    if not is_url(real) and os.path.isdir(real) and not text.endswith("/") and not folder_output:
        raise PathRefused(f"{text} is a folder; give a file name")
    return real


def _options(fmt: str) -> dict[str, Any]:
    """The format's own options, from the form (which shows them only for that format)."""
    options: dict[str, Any] = {}
    if fmt == TFRECORD:
        shards = int(state.widget_value("export:shards") or 1)
        options["compression"] = str(state.widget_value("export:compression") or NO_COMPRESSION)
        options["shards"] = shards if shards > 1 else None
    if fmt == CSV:
        options["neutralize_formulas"] = bool(state.widget_value("export:neutralize"))
    return options


def _exists(path: str) -> bool:
    """Whether ``path`` (a file, or an object under a URL root) exists; an object that
    cannot be asked about counts as absent (the export itself then says what is wrong)."""
    if not is_url(path):
        return os.path.lexists(path)
    try:
        fs, inner = filesystem(path, anon=state.anon())
        with remote_errors(path, "asking whether it exists"):
            return bool(fs.exists(inner))
    except OSError:
        return False


def _existing_outputs(dst: str) -> list[str]:
    """The paths an export to ``dst`` as the form stands writes (every shard of a sharded
    one) that exist already."""
    fmt = _format()
    try:
        paths = export.output_paths(dst, format=fmt, **_options(fmt))
    except AppError:
        return []  # the export itself says what is wrong
    return [p for p in paths if _exists(p)]


def _confirmed(existing: list[str]) -> bool:
    """Whether "replace" is ticked for exactly these existing outputs."""
    ticked = bool(state.widget_value("export:overwrite"))
    return ticked and state.overwrite_confirmed_for() == tuple(existing)


def _run(src: Source, j: Journal | None) -> None:
    fmt = _format()
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
        st.error(f"Refused: {md_text(str(exc))}. Exports are written inside the root folder.")
        return
    existing = _existing_outputs(dst)
    if existing and not _confirmed(existing):
        st.error(
            f"{listed(src, existing)} {'exists' if len(existing) == 1 else 'exist'}. Tick"
            " “replace” under the destination to overwrite (the new files take their place"
            " only once every one is complete and verified).",
            icon=":material/error:",
        )
        return
    options = _options(fmt)
    if fmt == COCO:
        # Categories named, and class texts turned into labels, as the evaluation does.
        from codec.jobs.evaluate import PREDICTIONS_PREFIX, TRUTH_PREFIX, label_map_of

        found = class_names.for_evaluation(src)
        options["names"] = label_map_of(found, TRUTH_PREFIX, PREDICTIONS_PREFIX)
    export_run.write(src, j, dst, fmt, records, options)


def form(src: Source, j: Journal | None, pending: int) -> None:
    """The export form and its Export button (which runs the export)."""
    if state.widget_value("export:format") is None:
        state.set_widget_value("export:format", TFRECORD)
    if state.widget_value("export:dest") is None:
        state.set_widget_value("export:dest", export.default_destination(src.label, TFRECORD))
    c = st.columns([2, 1, 1])
    fmt = c[0].selectbox(
        "Format",
        FORMATS,
        format_func=lambda f: export.EXPORTERS[f].label,
        key=state.widget_key("export:format"),
        on_change=_on_format,
        args=(src,),
    )
    if fmt == TFRECORD:
        c[1].selectbox(
            "Compression",
            COMPRESSIONS,
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
    if fmt == CSV:
        st.checkbox(
            "Neutralise formulas",
            key=state.widget_key("export:neutralize"),
            help="Text cells that start with =, +, -, @, a tab or a carriage return run as"
            " formulas when a spreadsheet opens the file. Ticked, they are written with a"
            " leading ' so that it shows them as text (the file no longer holds their exact"
            " values); otherwise they are kept exact and the report counts them.",
        )
    how = _records_choice(src, j, pending)
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
    _destination_input(src)
    _preview(src, j)
    if st.button(
        "Export",
        key=state.widget_key("export:go"),
        type="primary",
        icon=":material/download:",
    ):
        _run(src, j)


def _records_choice(src: Source, j: Journal | None, pending: int) -> str:
    """Which records: all, by number, or the filter's result (when there is one)."""
    sel = state.filter_selection(repr(src.key))
    options = [ALL, RANGE] + ([FILTERED] if sel is not None else [])
    if sel is not None and sel.get("for_export"):
        # Handed over by the filter page's "Export these": offer exactly those, once.
        state.set_widget_value("export:selection", FILTERED)
        state.set_filter_selection({**sel, "for_export": False})
    return str(
        st.radio(
            "Records",
            options,
            horizontal=True,
            key=state.widget_key("export:selection"),
            format_func=lambda o: (
                f"{o} ({plural(len(sel['records']), 'record')}: `{sel['expression']}`)"
                if o == FILTERED and sel is not None
                else o
            ),
        )
    )


def _destination_input(src: Source) -> None:
    """The destination, and, when outputs of the export exist (the file, a folder, any of
    the shards), the list of them and the box that confirms overwriting exactly those."""
    st.text_input(
        "Destination (inside the root folder)",
        key=state.widget_key("export:dest"),
        help=f"A path relative to {state.link_spec(src.root)}; folders are created as needed",
    )
    dest_text = str(state.widget_value("export:dest") or "")
    existing: list[str] = []
    try:
        if dest_text.strip():
            existing = _existing_outputs(resolve_inside(src.root, dest_text.strip()))
    except PathRefused as exc:
        st.error(f"Refused: {md_text(str(exc))}.", icon=":material/block:")
    if tuple(existing) != state.overwrite_confirmed_for():
        # Other files than those confirmed: ask again.
        state.set_overwrite_confirmed_for(tuple(existing))
        state.set_widget_value("export:overwrite", False)
    if not existing:
        return
    if len(existing) > 1:
        what = f"{len(existing):,} of the files this export writes exist: {listed(src, existing)}."
    elif _format() == IMAGES and os.path.isdir(existing[0]):
        what = "The folder exists: the pictures go into it, replacing any of the same name."
    else:
        what = f"{listed(src, existing)} exists."
    st.caption(what)
    st.checkbox(
        "It exists: replace it" if len(existing) == 1 else "They exist: replace them",
        key=state.widget_key("export:overwrite"),
    )


# -- before it runs: the names it writes, the damage it leaves out -----------------------------


def _planned_outputs(src: Source) -> tuple[list[str], str] | None:
    """``(outputs, index map)``, real paths, of an export as the form stands; None when the
    form cannot be exported as it is (the Export button then says why)."""
    text = str(state.widget_value("export:dest") or "").strip()
    if not text:
        return None
    fmt = _format()
    try:
        dst = _destination(src, text)
        return export.output_paths(dst, format=fmt, **_options(fmt)), export.index_map_path(dst)
    except AppError:
        return None


def _preview(src: Source, j: Journal | None) -> None:
    """What the export will write (every output's name, and its index map) and the damaged
    records it will leave out, before Export is pressed."""
    planned = _planned_outputs(src)
    if planned is not None:
        outputs, index_map = planned
        names = [relative_to_root(src.root, p) for p in outputs]
        map_name = md_code(relative_to_root(src.root, index_map))
        if len(names) == 1:
            st.caption(f"Writes {md_code(names[0])}, and where each record went in {map_name}.")
        elif len(names) <= _PREVIEW_SHOWN:
            st.caption(
                f"Writes {plural(len(names), 'file')}: "
                + ", ".join(md_code(n) for n in names)
                + f"; and where each record went in {map_name}."
            )
        else:
            st.caption(
                f"Writes {plural(len(names), 'file')}, {md_code(names[0])} to"
                f" {md_code(names[-1])}; and where each record went in {map_name}."
            )
            with st.expander(f"Every output's name ({len(names):,})"):
                st.code("\n".join(label_text(n) for n in names), language=None)
    _damage_preview(src, j)


def _damage_preview(src: Source, j: Journal | None) -> None:
    """The damaged records (and regions) the export will leave out, with links to them."""
    how = str(state.widget_value("export:selection") or ALL)
    records, err = _selection(src, how)
    if err is not None:
        return
    # The Overview page's full CRC check, under the same session key.
    checked = services.should_auto_verify(src) or state.verify_asked(src.spec)
    try:
        reports = jobs.verify(src) if checked else None
        checked = reports is not None  # else cancelled (said): what the reader found so far
        if reports is not None:
            problems = [p for r in reports for p in r["problems"]]
        else:
            problems = [problem_dict(p) for p in src.dataset.problems]
        left = damage_left_out(
            src.dataset,
            problems,
            records,
            (lambda r: j.is_deleted(r)) if j is not None else (lambda _r: False),
        )
    except (AppError, CodecError, OSError) as exc:
        st.caption(f"The damage it would leave out cannot be listed: {md_text(str(exc))}")
        return
    found = "" if checked else " found so far (every CRC is checked as the export reads)"
    parts = []
    if left.records:
        n = len(left.records)
        parts.append(
            f"{plural(n, 'damaged record')}{found}: "
            + record_links(list(left.records), n, record_link(src))
        )
    if left.regions:
        parts.append(
            plural(left.regions, "damaged region that holds", "damaged regions that hold")
            + " no whole record"
        )
    if parts:
        st.warning(
            "This export leaves out " + ", and ".join(parts) + ".",
            icon=":material/broken_image:",
        )
    elif not checked:
        st.caption("No damaged record found so far; every CRC is checked as the export reads.")
