"""Statistics: charts of one feature at a time — numeric histograms, the most common values,
list lengths and image sizes — for the whole dataset or one shard."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from browser_app import loading, state, widgets
from browser_app.app_pages import schema as schema_page


def _hist_frame(h: dict[str, list[Any]]) -> pd.DataFrame:
    edges, counts = h["edges"], h["counts"]
    labels = [f"{edges[i]:.4g} … {edges[i + 1]:.4g}" for i in range(len(counts))]
    return pd.DataFrame({"bin": labels, "records": counts, "from": edges[:-1]})


def feature_charts(stats: dict[str, Any], name: str) -> None:
    """Draw every chart there is for feature ``name`` of ``stats`` (statistics() data)."""
    f = stats.get("features", {}).get(name) or stats.get("feature_lists", {}).get(name)
    if f is None:
        st.info(f"{name} does not occur here.")
        return
    drawn = False
    if f.get("histogram", {}).get("counts"):
        st.markdown("**Histogram of values**")
        df = _hist_frame(f["histogram"])
        st.bar_chart(df, x="bin", y="records", sort=False, x_label="value", y_label="values")
        drawn = True
    if f.get("values"):
        st.markdown("**Most common values**")
        df = pd.DataFrame(f["values"], columns=["value", "count"])
        df["value"] = df["value"].astype(str)
        st.bar_chart(df, x="value", y="count", sort="-count", horizontal=True)
        drawn = True
    if f.get("lengths"):
        st.markdown("**Values per record**" if "steps" not in f else "**Values per step**")
        df = pd.DataFrame(f["lengths"], columns=["values", "records"])
        df["values"] = df["values"].astype(str)
        st.bar_chart(df, x="values", y="records", sort=False)
        drawn = True
    if f.get("image_sizes"):
        st.markdown("**Image sizes (width × height)**")
        df = pd.DataFrame(f["image_sizes"], columns=["width", "height", "images"])
        st.scatter_chart(df, x="width", y="height", size="images")
        drawn = True
    if not drawn:
        st.info(f"{name} has no values to chart.")


def render() -> None:
    src = loading.current_source()
    widgets.show_flashes()
    if src is None:
        st.subheader("Statistics", anchor=False)
        widgets.no_source()
        return
    widgets.source_header(src, "Statistics")
    if widgets.empty_source(src):
        return
    result = schema_page.ensure(src, "statistics")
    if result is None:
        return
    schema_page.sample_note(result)
    stats = result["statistics"]
    names = sorted(stats.get("features", {})) + sorted(stats.get("feature_lists", {}))
    if not names:
        st.info("No features to chart: the records are raw payloads or empty Examples.")
        return
    c = st.columns([2, 2])
    name = c[0].selectbox("Feature", names, key=state.widget_key("statistics:feature"))
    shards = result.get("shards") or {}
    scope = "all files"
    if shards:
        scope = c[1].selectbox(
            "Files", ["all files", *shards], key=state.widget_key("statistics:shard")
        )
    if scope != "all files":
        stats = stats.get("shards", {}).get(shards[scope], {})
    if name:
        feature_charts(stats, name)


if __name__ == "__main__":
    render()
