"""The Statistics page's charts of one feature: its numbers (one exact bar per value for an
integer feature with few distinct values, else a histogram on a fixed grid, integer-aligned
for integers), its most common values, its list lengths and its image sizes, whichever it
has. Counts can be drawn on a logarithmic scale, so a single outlier stays visible."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from browser_app.view import md_text, plural

__all__ = ["feature_charts", "histogram_frame"]


def _bin_label(lo: float, hi: float, integers: bool) -> str:
    if integers:
        a, b = int(lo), int(hi) - 1  # bins hold whole numbers lo .. hi-1
        return f"{a}" if a == b else f"{a} … {b}"
    return f"{lo:.4g} … {hi:.4g}"


def histogram_frame(h: dict[str, list[Any]], integers: bool) -> pd.DataFrame:
    """A histogram's bins as rows: ``bin`` (its label: the whole numbers it holds for an
    integer feature, else ``from … to``), ``from`` and ``count``."""
    edges, counts = h["edges"], h["counts"]
    labels = [_bin_label(edges[i], edges[i + 1], integers) for i in range(len(counts))]
    return pd.DataFrame({"bin": labels, "from": edges[:-1], "count": counts})


def _bars(df: pd.DataFrame, x: str, y: str, log: bool, title: str, sort: bool = False) -> None:
    """A bar chart of ``y`` by ``x`` in the frame's order (or by count), counts on a
    logarithmic scale when asked (``symlog``: a bar of 0 stays at 0, a bar of 1 shows)."""
    spec: dict[str, Any] = {
        "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "x": {
                "field": x,
                "type": "nominal",
                "sort": "-y" if sort else None,
                "title": title,
                "axis": {"labelAngle": -45 if len(df) > 12 else 0},
            },
            "y": {
                "field": y,
                "type": "quantitative",
                "title": y + (" (log scale)" if log else ""),
                "scale": {"type": "symlog"} if log else {},
            },
        },
    }
    st.vega_lite_chart(df, spec, width="stretch")


def feature_charts(stats: dict[str, Any], name: str, log: bool = False) -> None:
    """Draw every chart there is for feature ``name`` of ``stats`` (statistics() data),
    counts on a log scale with ``log``."""
    f = stats.get("features", {}).get(name) or stats.get("feature_lists", {}).get(name)
    if f is None:
        st.info(f"{md_text(name)} does not occur here.")
        return
    drawn = False
    integers = "int64" in f.get("types", {}) and len(f.get("types", {})) == 1
    if f.get("bars"):
        bars = f["bars"]
        st.markdown(
            f"**Every value** · {plural(len(bars), 'distinct value')}, one bar each, exact counts"
        )
        df = pd.DataFrame(bars, columns=["value", "count"])
        df["value"] = df["value"].astype(str)
        _bars(df, "value", "count", log, "value")
        drawn = True
    elif f.get("histogram", {}).get("counts"):
        h = f["histogram"]
        width = h["edges"][1] - h["edges"][0]
        what = (
            f"bins of {plural(int(width), 'whole number')}"
            if integers
            else f"bins {width:.4g} wide"
        )
        st.markdown(f"**Histogram of values** · {len(h['counts'])} {what}")
        _bars(histogram_frame(h, integers), "bin", "count", log, "value")
        drawn = True
    if f.get("values"):
        st.markdown("**Most common values**")
        df = pd.DataFrame(f["values"], columns=["value", "count"])
        df["value"] = df["value"].astype(str)
        _bars(df, "value", "count", log, "value", sort=True)
        drawn = True
    if f.get("lengths"):
        st.markdown("**Values per record**" if "steps" not in f else "**Values per step**")
        df = pd.DataFrame(f["lengths"], columns=["values", "records"])
        df["values"] = df["values"].astype(str)
        _bars(df, "values", "records", log, "values")
        drawn = True
    if f.get("image_sizes"):
        st.markdown("**Image sizes (width × height)**")
        df = pd.DataFrame(f["image_sizes"], columns=["width", "height", "images"])
        st.scatter_chart(df, x="width", y="height", size="images")
        drawn = True
    if not drawn:
        st.info(f"{md_text(name)} has no values to chart.")
