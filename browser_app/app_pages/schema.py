"""Schema: every feature's types, presence, lengths and values, and the drift with links to
the records involved.

The schema is inferred over every record (or a sample when the person asks for one, labelled
as such) and kept in the session for this source; the Statistics page draws the same result.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pandas as pd
import streamlit as st

from browser_app import loading, presenters, state, widgets
from codec.schema import infer_schema

AUTO_RECORDS = 200_000  # below this many records the schema is inferred on opening the page
LINKS_SHOWN = 20


# -- the shared result --------------------------------------------------------------------


def _key(src: loading.Source) -> str:
    return f"schema:{src.key!r}"


def stored(src: loading.Source) -> dict[str, Any] | None:
    """The inferred schema of ``src`` in this session: ``{"schema", "statistics",
    "sample"}`` (plain data), or None."""
    value = state.get(_key(src))
    return value if isinstance(value, dict) else None


def infer(src: loading.Source, sample: int | None) -> dict[str, Any]:
    """Infer now, with a progress bar, and keep the result for this source."""
    bar = st.progress(0.0, text="Reading records…")

    def progress(done: int, total: int) -> None:
        bar.progress(min(1.0, done / total) if total else 1.0, text=f"Read {done:,} of {total:,}")

    try:
        result = infer_schema(src.dataset, sample=sample, progress=progress)
    finally:
        bar.empty()
    value = {
        "schema": result.to_json(top=20),
        "statistics": result.statistics(top=20),
        "sample": sample,
        "shards": {src.rel(p): p for p in result.shards},
    }
    state.put(_key(src), value)
    return value


def ensure(src: loading.Source, where: str) -> dict[str, Any] | None:
    """The stored schema, or the controls to infer it (run at once for small sources)."""
    got = stored(src)
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


def sample_note(result: dict[str, Any]) -> None:
    doc = result["schema"]
    if doc.get("sampled"):
        st.warning(
            f"A **sample** of {doc['sample']['records']:,} of {doc['sample']['of']:,} records:"
            " figures describe the sample, not every record.",
            icon=":material/science:",
        )


def record_link(src: loading.Source, n: int) -> str:
    """A link to record ``n`` on the Records page (``records?file=..&record=N``)."""
    if state.is_upload(src.spec):
        return str(n)
    return f"[{n}](records?file={quote(src.spec, safe='')}&record={n})"


def _links(src: loading.Source, records: list[int], count: int) -> str:
    shown = ", ".join(record_link(src, r) for r in records[:LINKS_SHOWN])
    more = count - min(len(records), LINKS_SHOWN)
    return shown + (f" … and {more:,} more" if more > 0 else "")


# -- the page -------------------------------------------------------------------------------


def _num(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def schema_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per feature and feature list: what the table shows."""
    rows = []
    records = doc["records"]
    items = [(n, f, "feature") for n, f in doc["features"].items()]
    items += [(n, f, "feature list") for n, f in doc.get("feature_lists", {}).items()]
    for name, f, kind in items:
        num = f.get("numeric") or {}
        tops = (f.get("int_values") or f.get("bytes") or {}).get("top", [])
        distinct = (f.get("int_values") or f.get("bytes") or {}).get("distinct")
        images = f.get("images")
        rows.append(
            {
                "feature": name,
                "kind": kind,
                "types": ", ".join(f"{t} {c:,}" for t, c in f["types"].items()),
                "present": f"{f['present']:,} / {records:,}",
                "values": f"{_num(f['min_len'])} / {_num(f['mean_len'])} / {_num(f['max_len'])}",
                "steps": (
                    f"{f['min_steps']} / {_num(f['mean_steps'])} / {f['max_steps']}"
                    if kind == "feature list"
                    else ""
                ),
                "min": _num(num.get("min")),
                "max": _num(num.get("max")),
                "NaN/Inf": f"{num['nan']:,} / {num['inf']:,}" if num else "",
                "distinct": "" if distinct is None else f"{distinct:,}",
                "top values": ", ".join(f"{v} ({c:,})" for v, c in tops[:5]),
                "images": (
                    ", ".join(f"{k} {v:,}" for k, v in images["formats"].items())
                    + (f"; {images['undecodable']:,} undecodable" if images["undecodable"] else "")
                    if images
                    else ""
                ),
            }
        )
    return rows


def drift_lines(src: loading.Source, doc: dict[str, Any]) -> list[str]:
    lines = []
    for name, recs in doc["type_conflicts"].items():
        types = doc["features"][name]["types"]
        major = max(types.items(), key=lambda kv: kv[1])[0]
        lines.append(
            f"**{name}** is {major} in most records, another type in"
            f" {presenters.plural(len(recs), 'record')}: {_links(src, recs, len(recs))}"
        )
    for name, recs in doc["missing"].items():
        count = doc["missing_counts"][name]
        lines.append(
            f"**{name}** is missing from {presenters.plural(count, 'record')}:"
            f" {_links(src, recs, count)}"
        )
    for name, d in doc["length_drift"].items():
        lines.append(
            f"**{name}** has {d['usual_len']} value(s) in most records, a different number in"
            f" {presenters.plural(d['count'], 'record')}: {_links(src, d['records'], d['count'])}"
        )
    for name, f in doc.get("feature_lists", {}).items():
        if f.get("type_conflicts"):
            recs = f["type_conflicts"]
            lines.append(f"feature list **{name}** changes type in: {_links(src, recs, len(recs))}")
        if f.get("missing"):
            lines.append(
                f"feature list **{name}** is missing from"
                f" {presenters.plural(f['missing'], 'record')}:"
                f" {_links(src, f['missing_records'], f['missing'])}"
            )
    for name, f in doc["features"].items():
        im = f.get("images")
        if im and im["undecodable"]:
            lines.append(
                f"**{name}**: {presenters.plural(im['undecodable'], 'undecodable image')}:"
                f" {_links(src, im['undecodable_records'], im['undecodable'])}"
            )
    return lines


def render() -> None:
    src = loading.current_source()
    widgets.show_flashes()
    if src is None:
        st.subheader("Schema", anchor=False)
        widgets.no_source()
        return
    widgets.source_header(src, "Schema")
    if widgets.empty_source(src):
        return
    result = ensure(src, "schema")
    if result is None:
        return
    doc = result["schema"]
    sample_note(result)
    drift = drift_lines(src, doc)
    m = st.columns(4)
    m[0].metric("Records read", f"{doc['records']:,}")
    m[1].metric("Features", f"{len(doc['features']) + len(doc.get('feature_lists', {})):,}")
    m[2].metric("Drift findings", f"{len(drift):,}")
    m[3].metric("Damaged records", f"{doc['damaged']:,}")
    if doc["damaged"]:
        st.error(
            f"{presenters.plural(doc['damaged'], 'record')} fail their CRC and are not counted:"
            f" {_links(src, doc['damaged_records'], doc['damaged'])}",
            icon=":material/broken_image:",
        )
    st.markdown("##### Features")
    rows = schema_rows(doc)
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    else:
        st.info("No features: the records are raw payloads or empty Examples.")
    st.markdown("##### Drift")
    if drift:
        for line in drift:
            st.markdown(f"- {line}")
    else:
        st.success(
            "No drift: every feature has one type, is in every record and keeps its length.",
            icon=":material/check_circle:",
        )


if __name__ == "__main__":
    render()
