"""Statistics: charts of one feature at a time — numeric histograms, the most common values,
list lengths and image sizes — for the whole dataset or one shard."""

from __future__ import annotations

import streamlit as st

from browser_app.ui import frame, state
from browser_app.ui.widgets import charts, schema
from browser_app.view import label_text

ALL_FILES = "all files"


def render() -> None:
    src = frame.start("Statistics")
    if src is None:
        return
    result = schema.inferred(src, "statistics")
    if result is None:
        return
    stats = result.statistics
    names = sorted(stats.get("features", {})) + sorted(stats.get("feature_lists", {}))
    if not names:
        st.info("No features to chart: the records are raw payloads or empty Examples.")
        return
    c = st.columns([2, 2, 1], vertical_alignment="bottom")
    name = c[0].selectbox(
        "Feature", names, key=state.widget_key("statistics:feature"), format_func=label_text
    )
    log = c[2].toggle(
        "Log scale",
        key=state.widget_key("statistics:log"),
        help="Counts on a logarithmic scale, so a value seen once still shows beside one seen"
        " thousands of times",
    )
    shards = result.shards
    scope = ALL_FILES
    if shards:
        scope = c[1].selectbox(
            "Files",
            [ALL_FILES, *shards],
            key=state.widget_key("statistics:shard"),
            format_func=label_text,
        )
    if scope != ALL_FILES:
        stats = stats.get("shards", {}).get(shards[scope], {})
    if name:
        charts.feature_charts(stats, name, log=bool(log))


if __name__ == "__main__":
    render()
