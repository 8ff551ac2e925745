"""The Statistics page's charts of one feature: a histogram of its numbers, its most common
values, its list lengths and its image sizes, whichever it has."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

__all__ = ["feature_charts"]


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
