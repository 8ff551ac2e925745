"""Schema: every feature's types, presence, lengths and values, and the drift with links to
the records involved.

The schema is inferred over every record (or a sample when the person asks for one, labelled
as such) and kept in the session for this source; the Statistics page draws the same result.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from browser_app.ui import frame
from browser_app.ui.widgets import schema
from browser_app.view import finding_lines, plural, record_links, schema_rows


def render() -> None:
    src = frame.start("Schema")
    if src is None:
        return
    result = schema.inferred(src, "schema")
    if result is None:
        return
    doc = result.schema
    link = schema.record_link(src)
    drift = finding_lines(doc, link)
    m = st.columns(4)
    m[0].metric("Records read", f"{doc['records']:,}")
    m[1].metric("Features", f"{len(doc['features']) + len(doc.get('feature_lists', {})):,}")
    m[2].metric("Drift findings", f"{len(drift):,}")
    m[3].metric("Damaged records", f"{doc['damaged']:,}")
    if doc["damaged"]:
        st.error(
            f"{plural(doc['damaged'], 'record')} fail their CRC and are not counted:"
            f" {record_links(doc['damaged_records'], doc['damaged'], link)}",
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
