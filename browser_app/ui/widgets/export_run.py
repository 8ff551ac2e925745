"""Running an export from the Export page: as a job on the session's executor, with a
progress bar and a Cancel button; its report, with a download and "Open it here"; and "Write
the edits into the source file", which asks first and keeps the old file as a backup.

The export itself is :func:`browser_app.export.export`'s: atomic, verified, and never over
the source (except when replacing it on purpose, which keeps a backup). The form
(:mod:`browser_app.ui.widgets.export_form`) has checked what it is asked to write first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import streamlit as st

from browser_app import export
from browser_app.edits import Journal
from browser_app.errors import AppError
from browser_app.export import ExportProgress
from browser_app.paths import relative_to_root
from browser_app.ui import navigation, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import jobs
from browser_app.view import ExportOutcome, export_outcome, md_text
from codec.errors import CodecError
from codec.locations import is_url
from codec.values import format_bytes

__all__ = ["cancelled", "listed", "replace_section", "report", "write"]

DOWNLOAD_LIMIT = 32 << 20  # exports up to this size get a download button
_REPORT_OUTPUTS_SHOWN = 8
_LEFT_OUT_SHOWN = 10

_STAGES = {"write": "Writing", "verify": "Verifying", "scan": "Reading the columns"}


def _stage(bar: jobs.Bar) -> ExportProgress:
    """The export's own progress (records written, outputs verified) on the job's bar."""

    def progress(stage: str, done: int, total: int) -> None:
        frac = min(1.0, done / total) if total else 1.0
        bar.stage(f"{_STAGES.get(stage, stage)}… {done:,} of {total:,}", frac)

    return progress


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


def write(
    src: Source,
    j: Journal | None,
    dst: str,
    fmt: str,
    records: list[int] | None,
    options: dict[str, Any],
) -> None:
    """Export ``src`` (with the pending edits of ``j``) to ``dst`` as ``fmt`` with the
    format's ``options``: the ``records`` given, or all of them; the folder made first. The
    outcome is kept for :func:`report`; a failure is said."""
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


def listed(src: Source, paths: list[str]) -> str:
    """Paths for a Markdown message, relative to the root, at most
    :data:`_REPORT_OUTPUTS_SHOWN` of them."""
    shown = ", ".join(md_text(relative_to_root(src.root, p)) for p in paths[:_REPORT_OUTPUTS_SHOWN])
    more = len(paths) - _REPORT_OUTPUTS_SHOWN
    return shown + (f" and {more:,} more" if more > 0 else "")


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
        st.caption(f"{format_bytes(rep.bytes)}{took} · {listed(src, list(rep.outputs))}")
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
