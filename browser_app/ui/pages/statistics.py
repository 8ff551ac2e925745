"""Statistics: charts of one feature at a time — numeric histograms, the most common values,
list lengths and image sizes — for the whole dataset or one shard; and for a split of a
dataset that describes itself (a TFDS dataset, a TFX ExampleGen output), two splits side by
side: per feature, the share of records that have it in each, its mean, the L-infinity
distance of its values and the Jensen–Shannon divergence of its numbers (TFDV's skew and
drift measures, :mod:`browser_app.view.compare`), and both distributions in one chart."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd
import streamlit as st

from browser_app.errors import InputError
from browser_app.ui import frame, opening, services, state
from browser_app.ui.services import datasets
from browser_app.ui.source import Source
from browser_app.ui.state import splits as split_state
from browser_app.ui.widgets import charts, schema
from browser_app.view import SchemaResult, label_text, md_text, plural
from browser_app.view.compare import compare_splits, distribution
from codec.errors import RemoteError

ALL_FILES = "all files"
# The split a comparison starts with, by preference: the one the model is checked against.
COMPARED_FIRST = ("eval", "validation", "valid", "val", "test", "dev", "train")


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
    others = _other_splits(src)
    if others and st.toggle(
        f"Compare {src.split} with another split",
        key=state.widget_key(f"statistics:compare:{src.folder_spec}"),
        help="Two splits side by side: per feature, how many records have it, its mean and"
        " how far its distributions lie apart (L-infinity distance, Jensen–Shannon"
        " divergence), as TensorFlow Data Validation measures skew and drift",
    ):
        _compare(src, result, others)
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


# -- two splits side by side ------------------------------------------------------------------


def _other_splits(src: Source) -> list[str]:
    """The splits of the source's dataset folder other than the open one, that have files;
    the one to compare with first."""
    folder = src.split_folder
    if folder is None or src.split is None:
        return []
    others = [s.name for s in folder.splits if s.name != src.split and s.files]
    rank = {n: i for i, n in enumerate(COMPARED_FIRST)}
    return sorted(others, key=lambda n: (rank.get(n, len(rank)), others.index(n)))


def _on_other(folder_spec: str, name: str) -> None:
    split_state.set_compare_split(folder_spec, state.widget_value(name))


def _small(other: Source) -> bool:
    """Whether the other split is small enough to have its schema inferred on its own."""
    if other.remote:
        return False
    total = 0
    for p in other.paths:
        try:
            total += os.path.getsize(p)
        except OSError:
            return False
    return total <= services.AUTO_VERIFY_BYTES


def _other_result(src: Source, other: Source) -> SchemaResult | None:
    """The schema of the other split: kept, inferred now when it is small, or on a click."""
    got = schema.stored(other)
    if got is not None:
        return got
    if _small(other):
        return schema.infer(other, None)
    st.info(
        f"The schema of **{md_text(other.split or other.spec)}** has not been inferred yet.",
        icon=":material/schema:",
    )
    if st.button(
        f"Infer the schema of {label_text(other.split or other.spec)}",
        key=state.widget_key(f"statistics:infer_other:{other.tag}"),
        icon=":material/play_arrow:",
    ):
        return schema.infer(other, None, fresh=True)
    return None


def _names(src: Source) -> dict[str, dict[int, str]]:
    return {k: dict(v.names) for k, v in datasets.class_names(src).items()}


def _compare(src: Source, result: SchemaResult, others: list[str]) -> None:
    folder_spec = src.folder_spec or src.spec
    widget = f"statistics:other:{folder_spec}"
    chosen = split_state.compare_split(folder_spec)
    state.set_widget_value(widget, chosen if chosen in others else others[0])
    c = st.columns([2, 2, 1], vertical_alignment="bottom")
    other_split = c[0].selectbox(
        f"Compare {src.split} with",
        others,
        key=state.widget_key(widget),
        on_change=_on_other,
        args=(folder_spec, widget),
        format_func=label_text,
    )
    log = c[2].toggle("Log scale", key=state.widget_key("statistics:compare:log"))
    try:
        other = opening.open_source(src.split_spec(other_split))
    except (InputError, RemoteError) as exc:
        st.error(f"{md_text(other_split)} cannot be opened: {md_text(str(exc))}")
        return
    b = _other_result(src, other)
    if b is None:
        return
    schema.sample_note(b)
    a_name, b_name = str(src.split), str(other_split)
    names = _names(src)
    rows = compare_splits(result, b, names)
    if not rows:
        st.info("Neither split has features to compare.")
        return
    st.caption(
        f"**{md_text(a_name)}**: {plural(int(result.schema.get('records') or 0), 'record')}"
        f" · **{md_text(b_name)}**: {plural(int(b.schema.get('records') or 0), 'record')}."
        " L-infinity distance: the largest difference between the shares of a value in the"
        " two splits (categorical values: text, and integers with few distinct values);"
        " Jensen–Shannon divergence: how far the distributions of numbers lie apart (0 the"
        " same, 1 nothing shared)."
    )
    _table(rows, a_name, b_name)
    feature = c[1].selectbox(
        "Feature",
        [r["feature"] for r in rows],
        index=_most_apart(rows),
        key=state.widget_key(f"statistics:compare:feature:{folder_spec}"),
        format_func=label_text,
    )
    if feature:
        _chart(result, b, feature, a_name, b_name, names.get(feature), bool(log))
        with st.expander(f"Every chart of {label_text(feature)}, split by split"):
            left, right = st.columns(2)
            with left:
                st.markdown(f"**{md_text(a_name)}**")
                charts.feature_charts(result.statistics, feature, log=bool(log))
            with right:
                st.markdown(f"**{md_text(b_name)}**")
                charts.feature_charts(b.statistics, feature, log=bool(log))


def _most_apart(rows: list[dict[str, Any]]) -> int:
    """The row whose distributions lie furthest apart (the feature shown first)."""

    def apart(r: dict[str, Any]) -> float:
        linf = r["linf"].value if r["linf"] is not None else 0.0
        return max(linf, r["js"] or 0.0)

    best = max(range(len(rows)), key=lambda i: apart(rows[i]))
    return best if apart(rows[best]) > 0 else 0


def _table(rows: list[dict[str, Any]], a: str, b: str) -> None:
    table = pd.DataFrame(
        [
            {
                "feature": r["feature"],
                "type": r["type"],
                f"in {a}": r["present_a"],
                f"in {b}": r["present_b"],
                f"mean {a}": r["mean_a"],
                f"mean {b}": r["mean_b"],
                "L∞ distance": r["linf"].value if r["linf"] is not None else None,
                "largest difference": r["largest"]
                + ("" if r["linf"] is None or r["linf"].exact else " (most common values)"),
                "JS divergence": r["js"],
            }
            for r in rows
        ]
    )
    percent = {
        col: st.column_config.NumberColumn(col, format="percent", help="share of its records")
        for col in (f"in {a}", f"in {b}")
    }
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=min(len(table), 16) * 35 + 38,
        column_config={
            **percent,
            f"mean {a}": st.column_config.NumberColumn(format="%.6g"),
            f"mean {b}": st.column_config.NumberColumn(format="%.6g"),
            "L∞ distance": st.column_config.NumberColumn(
                format="%.3f",
                help="TFDV's L-infinity distance: the largest difference between the shares of"
                " one value in the two splits",
            ),
            "JS divergence": st.column_config.NumberColumn(
                format="%.3f",
                help="Jensen–Shannon divergence of the numbers' histograms (log base 2)",
            ),
        },
    )


def _chart(
    a: SchemaResult,
    b: SchemaResult,
    feature: str,
    a_name: str,
    b_name: str,
    names: dict[int, str] | None,
    log: bool,
) -> None:
    """Both splits' distributions of ``feature`` in one chart, as shares, side by side."""
    kind, rows = distribution(a, b, feature, names)
    if not kind:
        st.caption(
            f"{md_text(feature)} has no values to compare as a distribution (pictures, long"
            " bytes, or values in one split only); its charts are below."
        )
        return
    df = pd.DataFrame(rows)
    df["split"] = df["split"].map({"a": a_name, "b": b_name})
    order = list(dict.fromkeys(df["value"]))
    spec: dict[str, Any] = {
        "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "x": {
                "field": "value",
                "type": "nominal",
                "sort": order,
                "title": "value" if kind == "values" else "bin",
                "axis": {"labelAngle": -45 if len(order) > 12 else 0},
            },
            "xOffset": {"field": "split", "sort": [a_name, b_name]},
            "y": {
                "field": "share",
                "type": "quantitative",
                "title": "share of its values" + (" (log scale)" if log else ""),
                "axis": {"format": "%"},
                "scale": {"type": "symlog"} if log else {},
            },
            "color": {"field": "split", "sort": [a_name, b_name], "title": "split"},
        },
    }
    st.markdown(f"**{md_text(feature)}** in {md_text(a_name)} and {md_text(b_name)}")
    st.vega_lite_chart(df, spec, width="stretch")


if __name__ == "__main__":
    render()
