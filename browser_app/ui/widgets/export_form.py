"""The Export page's pieces: the form (format, compression and shards or CSV's formula
neutralising, which records, where), running the export with a progress bar, its report with
a download and "Open it here", and "Write the edits into the source file".

The export itself is :func:`browser_app.export.export`'s: atomic, verified, and never over
the source (except when replacing it on purpose, which keeps a backup). Before it runs, every
file it would write over (the destination, or any of the shards) is listed, and it runs only
once "replace" is ticked for exactly those.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import streamlit as st

from browser_app import export
from browser_app.edits import Journal
from browser_app.errors import AppError, PathRefused, SpecError
from browser_app.export import COMPRESSIONS, ExportFormat, ExportProgress
from browser_app.export.base import CSV, IMAGES, JSON, JSONL, PARQUET, TFRECORD
from browser_app.paths import relative_to_root, resolve_inside
from browser_app.selection import parse_record_spec
from browser_app.ui import navigation, services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import jobs
from browser_app.ui.widgets.schema import record_link
from browser_app.view import (
    ExportOutcome,
    damage_left_out,
    export_outcome,
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
from codec.values import format_bytes

__all__ = ["cancelled", "form", "replace_section", "report"]

# The formats in the order the menu offers them.
FORMATS: tuple[ExportFormat, ...] = (TFRECORD, JSONL, CSV, PARQUET, JSON, IMAGES)
DOWNLOAD_LIMIT = 32 << 20  # exports up to this size get a download button
ALL, RANGE, FILTERED = "All records", "Records by number", "The filter's result"
_REPORT_OUTPUTS_SHOWN = 8
_LEFT_OUT_SHOWN = 10
_PREVIEW_SHOWN = 8  # output names listed in a line; more go into an expander


def _format() -> str:
    return str(state.widget_value("export:format") or TFRECORD)


def _on_format(src: Source) -> None:
    comp = str(state.widget_value("export:compression") or NO_COMPRESSION)
    state.set_widget_value("export:dest", export.default_destination(src.label, _format(), comp))


_STAGES = {"write": "Writing", "verify": "Verifying", "scan": "Reading the columns"}


def _stage(bar: jobs.Bar) -> ExportProgress:
    """The export's own progress (records written, outputs verified) on the job's bar."""

    def progress(stage: str, done: int, total: int) -> None:
        frac = min(1.0, done / total) if total else 1.0
        bar.stage(f"{_STAGES.get(stage, stage)}… {done:,} of {total:,}", frac)

    return progress


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
    if not is_url(real) and os.path.isdir(real) and not text.endswith("/") and _format() != IMAGES:
        raise PathRefused(f"{text} is a folder; give a file name")
    return real


def _job_key(src: Source) -> str:
    return f"export:{src.tag}"


def _exported(
    src: Source, what: str, run: Callable[[Any, jobs.Bar], export.ExportReport]
) -> ExportOutcome | None:
    """Run an export (``run(executor, bar)``) as a job on the session's executor, with a
    progress bar and a Cancel button, and keep its outcome for the page; on failure say
    ``what`` (was not written or changed) and why. A cancelled export is said on the next
    run (:func:`cancelled`)."""
    try:
        report = jobs.run_work(run, key=_job_key(src), what="The export", fresh=True)
    except jobs.Stopped:
        return None
    except (AppError, CodecError, OSError) as exc:
        st.error(f"{what}: {md_text(str(exc))}", icon=":material/error:")
        return None
    outcome = export_outcome(report, src.root, src.spec)
    state.set_export_outcome(outcome)
    return outcome


def cancelled(src: Source) -> None:
    """Say so when the last export of ``src`` was cancelled (its Cancel button stopped it:
    nothing was written, no temporary file is left), until the next export."""
    if jobs.cancelled(_job_key(src), "The export"):
        state.set_export_outcome(None)


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
            f"{_listed(src, existing)} {'exists' if len(existing) == 1 else 'exist'}. Tick"
            " “replace” under the destination to overwrite (the new files take their place"
            " only once every one is complete and verified).",
            icon=":material/error:",
        )
        return
    parent = os.path.dirname(dst)
    try:
        if not is_url(dst):  # an object store has no folders to make
            os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        st.error(
            f"Cannot create the folder {md_text(relative_to_root(src.root, parent))}:"
            f" {md_text(str(exc))}."
        )
        return
    options = _options(fmt)
    source = j if j is not None else src.dataset
    done = _exported(
        src,
        "The export failed and nothing was written",
        lambda ex, bar: export.export(
            source,
            dst,
            format=fmt,
            selection=records,
            progress=_stage(bar),
            executor=ex,
            job_progress=bar.job,
            **options,
        ),
    )
    if done is None:
        state.set_export_outcome(None)


def _listed(src: Source, paths: list[str]) -> str:
    """Paths for a Markdown message, relative to the root, at most
    :data:`_REPORT_OUTPUTS_SHOWN` of them."""
    shown = ", ".join(md_text(relative_to_root(src.root, p)) for p in paths[:_REPORT_OUTPUTS_SHOWN])
    more = len(paths) - _REPORT_OUTPUTS_SHOWN
    return shown + (f" and {more:,} more" if more > 0 else "")


def _replace_source(src: Source, j: Journal) -> None:
    done = _exported(
        src,
        "The source was not changed",
        lambda ex, bar: export.export_tfrecord(
            j, replace_source=True, progress=_stage(bar), executor=ex, job_progress=bar.job
        ),
    )
    if done is None:
        return
    state.set_replace_confirm_reset(True)
    state.bump_edit_revision()
    st.rerun()


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
        what = f"{len(existing):,} of the files this export writes exist: {_listed(src, existing)}."
    elif _format() == IMAGES and os.path.isdir(existing[0]):
        what = "The folder exists: the pictures go into it, replacing any of the same name."
    else:
        what = f"{_listed(src, existing)} exists."
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


# -- the report ------------------------------------------------------------------------------


def _open_output(spec: str) -> None:
    state.set_source(spec, 0)
    navigation.goto("records")


def report(src: Source) -> None:
    """What the last export of this source did: verdict, sizes, outputs, backup, what was left
    out, a download (small single files) and "Open it here" (TFRecord)."""
    rep = state.export_outcome()
    if rep is None or rep.source != src.spec:
        return
    with st.container(border=True, key="tfb-export-report"):
        verdict = "verified ✓" if rep.verified else "not verified"
        (st.success if rep.ok else st.warning)(
            f"**Export done** ({verdict}): {md_text(rep.summary)}.",
            icon=":material/task_alt:" if rep.ok else ":material/warning:",
        )
        took = f" · {rep.seconds:.1f} s" if rep.seconds >= 0.05 else ""
        st.caption(f"{format_bytes(rep.bytes)}{took} · {_listed(src, list(rep.outputs))}")
        if rep.backup:
            st.info(
                f"The previous source file is kept as `{rep.backup}`.",
                icon=":material/inventory_2:",
            )
        if rep.left_out:
            st.warning(
                "Left out because they are damaged: "
                + md_text("; ".join(rep.left_out[:_LEFT_OUT_SHOWN])),
                icon=":material/warning:",
            )
        if rep.formula_warning:
            st.warning(
                f"{md_text(rep.formula_warning)}. Tick “Neutralise formulas” and export again"
                " to write them as text.",
                icon=":material/warning:",
            )
        c = st.columns([1, 1, 3])
        outs = rep.outputs
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
        spec = rep.reopen_spec
        if spec is not None:
            c[1].button(
                "Open it here",
                key=state.widget_key("export:open"),
                icon=":material/open_in_new:",
                on_click=_open_output,
                args=(spec,),
                help="Open the exported file in the Records page",
            )


# -- replacing the source --------------------------------------------------------------------


def replace_section(src: Source, j: Journal | None) -> None:
    """ "Write the edits into the source file", for a one-file source with pending edits:
    only after an explicit confirmation, keeping the old file as a backup."""
    if j is None or not j.pending:
        return
    if len(src.paths) != 1 or state.is_upload(src.spec):
        return
    rel = src.rel(src.paths[0])
    if state.replace_confirm_reset():
        state.set_replace_confirm_reset(False)
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
