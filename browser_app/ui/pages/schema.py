"""Schema: every feature's types, presence, lengths and values; the checks of pictures and
Object Detection data; and the drift — each finding with links to the records involved.

The schema is inferred over every record (or a sample when the person asks for one, labelled
as such) and kept for the files and the label map it was inferred with, for every session;
the Statistics page draws the same result.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from browser_app.ui import frame
from browser_app.ui.widgets import names, schema
from browser_app.view import (
    DETECTION_CHECKS,
    DRIFT_CHECKS,
    finding_lines,
    md_text,
    plural,
    record_links,
    schema_rows,
)
from browser_app.view.schema import names_findings


def render() -> None:
    src = frame.start("Schema")
    if src is None:
        return
    result = schema.inferred(src, "schema")
    if result is None:
        return
    doc = result.schema
    link = schema.record_link(src)
    drift = finding_lines(doc, link, checks=DRIFT_CHECKS)
    checks = finding_lines(doc, link, checks=DETECTION_CHECKS)
    m = st.columns(5)
    m[0].metric("Records read", f"{doc['records']:,}")
    m[1].metric("Features", f"{len(doc['features']) + len(doc.get('feature_lists', {})):,}")
    m[2].metric("Data checks", f"{len(checks):,}", help="findings about pictures and boxes")
    m[3].metric("Drift findings", f"{len(drift):,}")
    m[4].metric("Damaged records", f"{doc['damaged']:,}")
    if doc["damaged"]:
        st.error(
            plural(doc["damaged"], "record fails its CRC and is", "records fail their CRC and are")
            + " not counted:"
            f" {record_links(doc['damaged_records'], doc['damaged'], link)}",
            icon=":material/broken_image:",
        )
    if not doc["records"]:
        st.warning(
            "No record could be read, so there is nothing to describe: no features, no findings.",
            icon=":material/block:",
        )
        return
    st.markdown("##### Features")
    classes = names.for_source(src)
    rows = schema_rows(doc, classes)
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    else:
        st.info("No features: the records are raw payloads or empty Examples.")
    _names(doc, classes)
    _checks(doc, checks, result.label_map)
    st.markdown("##### Drift")
    if drift:
        for line in drift:
            st.markdown(f"- {line}")
    else:
        st.success(
            "No drift: every feature has one type, is in every record and keeps its length.",
            icon=":material/check_circle:",
        )


def _names(doc: dict[str, Any], classes: names.Names) -> None:
    """Which names file names which feature, and the labels each leaves unnamed (read from
    the schema's figures: the names are how it reads, not what it is)."""
    present = {**doc["features"], **doc.get("feature_lists", {})}
    used = {k: v for k, v in classes.items() if k in present}
    if not used:
        return
    st.markdown("##### Class names")
    st.caption(" · ".join(f"**{md_text(k)}**: {md_text(v.describe())}" for k, v in used.items()))
    for finding in names_findings(doc, used):
        st.warning(md_text(finding.message), icon=":material/label_off:")


def _checks(doc: dict[str, Any], lines: list[str], label_map: str | None) -> None:
    """The pictures and Object Detection checks, when the data has pictures or boxes."""
    detection = doc.get("detection", {})
    pictures = any(f.get("images") for f in doc["features"].values())
    if not detection and not pictures and not lines:
        return
    st.markdown("##### Pictures and boxes")
    if detection:
        how = []
        for prefix, d in detection.items():
            scale = "normalised (0–1)" if d.get("normalized", True) else "pixels"
            how.append(f"**{md_text(prefix)}**: coordinates read as {scale}")
        labels = (
            f"labels checked against **{md_text(label_map)}**"
            if label_map
            else "no label map chosen: each label is checked for one class text (choose a"
            " label map above to check labels against it)"
        )
        st.caption("; ".join(how) + f"; {labels}.")
    if lines:
        for line in lines:
            st.markdown(f"- {line}")
    else:
        what = "boxes, object lists, labels and picture sizes" if detection else "pictures"
        st.success(f"Every check of the {what} passes.", icon=":material/check_circle:")


if __name__ == "__main__":
    render()
