"""What the Schema and Statistics pages share: the schema inferred over every record (or a
sample when the person asks for one, labelled as such) with a progress bar, kept in the
session for the source; the sample's note; and links from record numbers to the Records page.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

import streamlit as st

from browser_app.ui import state
from browser_app.ui.source import Source
from browser_app.view import SchemaResult, schema_result
from codec.schema import infer_schema

__all__ = ["AUTO_RECORDS", "ensure", "infer", "inferred", "record_link", "sample_note"]

AUTO_RECORDS = 200_000  # below this many records the schema is inferred on opening the page


def infer(src: Source, sample: int | None) -> SchemaResult:
    """Infer now, with a progress bar, and keep the result for this source."""
    bar = st.progress(0.0, text="Reading records…")

    def progress(done: int, total: int) -> None:
        bar.progress(min(1.0, done / total) if total else 1.0, text=f"Read {done:,} of {total:,}")

    try:
        result = infer_schema(src.dataset, sample=sample, progress=progress)
    finally:
        bar.empty()
    value = schema_result(result, sample, src.rel)
    state.set_schema_result(repr(src.key), value)
    return value


def ensure(src: Source, where: str) -> SchemaResult | None:
    """The stored schema, or the controls to infer it (run at once for small sources)."""
    got = state.schema_result(repr(src.key))
    ds = src.dataset
    total = ds.indexed if ds.index_complete else None
    if got is None and total is not None and total <= AUTO_RECORDS:
        got = infer(src, None)
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
        what = f"a sample of {int(n):,} records" if use_sample else "every record"
        if total is None:
            st.caption("The record count is still being established.")
        clicked = c[2].button(
            f"Read {what}", key=state.widget_key(f"{where}:infer"), icon=":material/play_arrow:"
        )
    if clicked:
        got = infer(src, int(n) if use_sample else None)
    return got


def sample_note(result: SchemaResult) -> None:
    """A warning that the figures describe a sample, when they do."""
    doc = result.schema
    if doc.get("sampled"):
        st.warning(
            f"A **sample** of {doc['sample']['records']:,} of {doc['sample']['of']:,} records:"
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
    spec = quote(src.spec, safe="")
    return lambda n: f"[{n}](./?file={spec}&record={n})"
