"""What the Schema and Statistics pages share: the schema inferred over every record (or a
sample when the person asks for one, labelled as such) with a progress bar, kept for the
files and the label map it was inferred with (:func:`browser_app.ui.services.schema_result`,
shared by every session); the sample's note; and links from record numbers to the Records
page.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from urllib.parse import quote

import streamlit as st

from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import jobs
from browser_app.view import SchemaResult, md_text, plural, schema_result
from codec.errors import DecodeError
from codec.jobs import SchemaJob, tasks_of
from codec.labelmap import (
    MAX_LABEL_MAP_BYTES,
    find_label_map,
    parse_label_map_bytes,
    read_label_map,
)
from codec.schema import Schema, infer_schema

__all__ = [
    "AUTO_RECORDS",
    "ensure",
    "infer",
    "inferred",
    "label_map_choice",
    "record_link",
    "sample_note",
    "stored",
]

AUTO_RECORDS = 200_000  # below this many records the schema is inferred on opening the page
INFERRING = "Inferring the schema"


def stored(src: Source) -> SchemaResult | None:
    """The schema inferred over the files of ``src`` with the label map chosen for it in this
    session, else the last one inferred over them (with another label map), else None: what
    the views read finding records and how boxes are read from."""
    chosen = state.label_map(src.spec)
    return services.schema_result(src, chosen) or services.last_schema_result(src)


def infer(src: Source, sample: int | None, *, fresh: bool = False) -> SchemaResult | None:
    """Infer now and keep the result for the files and the label map; None when the job was
    cancelled (the page has said so; ``fresh``: the person asked again, so it runs). Every
    record: the schema job on the session's executor (:class:`codec.jobs.SchemaJob`), with
    its progress and Cancel button; a sample: read here, with a progress bar. The labels are
    checked against the label map chosen for the source, when there is one."""
    chosen = state.label_map(src.spec)
    names = chosen[1].names if chosen else None
    if sample is None:
        job = SchemaJob(label_map=names)
        try:
            result = jobs.run(
                job,
                tasks_of(src.dataset.files, executor=state.executor()),
                key=_job_key(src),
                what=INFERRING,
                fresh=fresh,
            )
        except jobs.Stopped:
            return None
    else:
        result = _sample(src, sample, names)
    value = schema_result(result, sample, src.rel, chosen[0] if chosen else None)
    services.keep_schema_result(src, chosen, value)
    return value


def _job_key(src: Source) -> str:
    return f"schema:{src.tag}"


def _sample(src: Source, sample: int, names: Mapping[int, str] | None) -> Schema:
    bar = st.progress(0.0, text="Reading records…")

    def progress(done: int, total: int) -> None:
        bar.progress(min(1.0, done / total) if total else 1.0, text=f"Read {done:,} of {total:,}")

    try:
        return infer_schema(src.dataset, sample=sample, progress=progress, label_map=names)
    finally:
        bar.empty()


def _beside(src: Source) -> str | None:
    """A label map lying beside the source's first file (never for an upload)."""
    if state.is_upload(src.spec) or not src.paths:
        return None
    return find_label_map(os.path.dirname(src.paths[0]))


def label_map_choice(src: Source, where: str) -> None:
    """Choose the label map the labels are checked against: one found beside the data
    (used unless turned off), or an uploaded ``label_map.pbtxt``. Bad files get a clear
    message and change nothing."""
    found = _beside(src)
    chosen = state.label_map(src.spec)
    up = st.file_uploader(
        "Label map (the Object Detection API's label_map.pbtxt)",
        type=["pbtxt", "txt"],
        key=state.widget_key(f"{where}:label_map"),
        help="Labels outside it, and class texts that differ from its names, become findings",
    )
    if up is not None:
        name = up.name
        refused = state.label_map_refused(up.file_id)
        if refused is not None:  # read once: a bad upload is not parsed on every run
            st.error(f"{md_text(name)} cannot be used: {md_text(refused)}", icon=":material/error:")
        elif chosen is None or chosen[0] != name:
            try:
                if up.size > MAX_LABEL_MAP_BYTES:
                    raise DecodeError(f"{up.size:,} bytes is too large for a label map")
                state.set_label_map(src.spec, name, parse_label_map_bytes(up.getvalue()))
            except DecodeError as exc:
                state.set_label_map_refused(up.file_id, str(exc))
                st.error(
                    f"{md_text(name)} cannot be used: {md_text(str(exc))}",
                    icon=":material/error:",
                )
    elif found is not None:
        use = st.toggle(
            f"Check labels against {md_text(src.rel(found))} (found beside the data)",
            value=not state.label_map_beside_off(src.spec),
            key=state.widget_key(f"{where}:label_map_beside"),
        )
        state.set_label_map_beside_off(src.spec, not use)
        if use and (chosen is None or chosen[0] != src.rel(found)):
            try:
                state.set_label_map(src.spec, src.rel(found), read_label_map(found))
            except (OSError, DecodeError) as exc:
                st.error(
                    f"{md_text(src.rel(found))} cannot be used: {md_text(str(exc))}",
                    icon=":material/error:",
                )
        elif not use:
            state.set_label_map(src.spec, None, None)
    chosen = state.label_map(src.spec)
    if chosen is not None:
        st.caption(
            f"Labels are checked against **{md_text(chosen[0])}**"
            f" ({plural(len(chosen[1].names), 'class', 'classes')})."
        )


def ensure(src: Source, where: str) -> SchemaResult | None:
    """The stored schema, or the controls to infer it (run at once for small sources, and
    again when the label map changed)."""
    with st.expander("Label map", expanded=False):
        label_map_choice(src, where)
    chosen = state.label_map(src.spec)
    got = services.schema_result(src, chosen)
    current = got is not None  # else the last one inferred, with another label map
    got = got or services.last_schema_result(src)
    ds = src.dataset
    total = ds.indexed if ds.index_complete else None
    small = total is not None and total <= AUTO_RECORDS
    if got is None and small:
        got = infer(src, None)
        current = True
    elif got is None:
        jobs.cancelled(_job_key(src), INFERRING)
    if got is not None and not current:
        again = infer(src, None) if small and not got.schema.get("sampled") else None
        if again is not None:
            got = again
        else:
            st.info(
                "The label map changed since the schema was inferred: infer again to check"
                " the labels against it.",
                icon=":material/label:",
            )
    with st.expander(
        "Infer again" if got is not None else "Infer the schema", expanded=got is None
    ):
        c = st.columns([1.2, 1.2, 2], vertical_alignment="bottom")
        use_sample = c[0].toggle("Only a sample", key=state.widget_key(f"{where}:use_sample"))
        n = c[1].number_input(
            "Records in the sample",
            min_value=1,
            value=10_000,
            step=1_000,
            key=state.widget_key(f"{where}:sample"),
            disabled=not use_sample,
        )
        what = f"a sample of {plural(int(n), 'record')}" if use_sample else "every record"
        if total is None:
            st.caption("The record count is still being established.")
        clicked = c[2].button(
            f"Read {what}", key=state.widget_key(f"{where}:infer"), icon=":material/play_arrow:"
        )
    if clicked:
        got = infer(src, int(n) if use_sample else None, fresh=True) or got
    return got


def sample_note(result: SchemaResult) -> None:
    """A warning that the figures describe a sample, when they do."""
    doc = result.schema
    if doc.get("sampled"):
        st.warning(
            f"A **sample** of {doc['sample']['records']:,} of"
            f" {plural(doc['sample']['of'], 'record')}:"
            " figures describe the sample, not every record.",
            icon=":material/science:",
        )


def inferred(src: Source, where: str) -> SchemaResult | None:
    """What the Schema and Statistics pages open with: :func:`ensure`, and the sample's note
    when the result describes a sample."""
    result = ensure(src, where)
    if result is not None:
        sample_note(result)
    return result


def record_link(src: Source) -> Callable[[int], str]:
    """How a record number of ``src`` is written: a link to it on the Records page, which is
    the app's default page at its root (``./?file=..&record=N``: a ``records`` path does not
    exist), or the bare number for an upload (never in a URL)."""
    if state.is_upload(src.spec):
        return str
    spec = quote(src.link, safe="")
    return lambda n: f"[{n}](./?file={spec}&record={n})"
