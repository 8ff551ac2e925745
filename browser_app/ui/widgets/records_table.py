"""The records page's table: one row per record of the page, damaged ones in red, skipped
regions in amber, recovered records in italics, records with pending edits tinted, all in
place. Selecting a row makes that record the current one."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from browser_app.edits import ADDED, DELETED, EDITED
from browser_app.ui import state
from browser_app.ui.source import Source
from browser_app.view import PageView, label_text
from codec.dataset import DAMAGED, RECOVERED, SKIPPED
from codec.values import format_float

__all__ = ["records_table"]

# Text colours that read on a light and on a dark page alike (the app follows the browser's).
DAMAGED_STYLE = "background-color: rgba(255, 43, 43, 0.12); color: #d93025"
SKIPPED_STYLE = "background-color: rgba(255, 170, 0, 0.14); color: #b26a00"
RECOVERED_STYLE = "background-color: rgba(255, 170, 0, 0.06); font-style: italic"
# Rows with pending edits (their status in PageView.status).
EDIT_STYLES: dict[str, str] = {
    EDITED: "background-color: rgba(37, 99, 235, 0.08)",
    DELETED: "text-decoration: line-through; color: #8a8a8a",
    ADDED: "background-color: rgba(22, 163, 74, 0.10)",
}


def _frame(view: PageView) -> pd.DataFrame:
    names = [name for name, _ in view.columns]
    df = pd.DataFrame([{n: r.get(n) for n in names} for r in view.rows], columns=names)
    for name, kind in view.columns:
        if kind == "int":
            df[name] = pd.array(df[name], dtype="Int64")
        elif kind == "float":
            df[name] = pd.to_numeric(df[name], errors="coerce")
        else:
            df[name] = df[name].astype("object")
    return df


def _column_config(view: PageView) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "#": st.column_config.NumberColumn("#", width="small", format="%d", pinned=True),
        "status": st.column_config.TextColumn("status", width="medium"),
        "offset": st.column_config.NumberColumn("offset", format="%d", help="byte offset"),
        "bytes": st.column_config.NumberColumn("bytes", format="%d", help="payload length"),
    }
    if view.has_images:
        cfg["picture"] = st.column_config.ImageColumn("picture", width="small")
    for name, kind in view.columns:
        if name in cfg:
            continue
        title = label_text(name)  # a feature's name: its bidirectional controls are shown
        if kind == "int":
            cfg[name] = st.column_config.NumberColumn(title, format="%d")
        elif kind == "float":
            cfg[name] = st.column_config.NumberColumn(title)
        else:
            cfg[name] = st.column_config.TextColumn(title)
    return cfg


def records_table(src: Source, view: PageView, start: int) -> int | None:
    """The page's records, one row each; damaged ones in red, skipped regions in amber, in
    place. Selecting a record's row makes it the current record (shown below); selecting a
    skipped region returns its row number."""
    df = _frame(view)

    def style(row: pd.Series) -> list[str]:
        status = view.status[int(row.name)]  # type: ignore[call-overload]
        if status == DAMAGED:
            return [DAMAGED_STYLE] * len(row)
        if status == SKIPPED:
            return [SKIPPED_STYLE] * len(row)
        if status == RECOVERED:
            return [RECOVERED_STYLE] * len(row)
        return [EDIT_STYLES.get(status, "")] * len(row)

    # Styled: damaged rows red, skipped regions amber, and empty cells empty (not "None").
    float_cols = [n for n, k in view.columns if k == "float"]
    styled = (
        df.style.apply(style, axis=1)
        .format(na_rep="")
        .format(lambda v: "" if pd.isna(v) else format_float(v), subset=float_cols)
    )
    current = state.record()
    pos = view.records.index(current) if current in view.records else None
    name = f"table:{src.spec}:{start}:{state.page_size()}:{current}"
    row_height = 52 if view.has_images else None
    height = min(len(df), 14) * (row_height or 35) + 38 if len(df) else "auto"
    event: Any = st.dataframe(  # type: ignore[call-overload]
        styled,
        hide_index=True,
        column_config=_column_config(view),
        key=state.widget_key(name),
        on_select="rerun",
        selection_mode="single-row",
        selection_default={"selection": {"rows": [pos] if pos is not None else []}},
        row_height=row_height,
        height=height,
        width="stretch",
        placeholder="",
    )
    rows = list(event.selection.rows) if event is not None else []
    if rows and 0 <= rows[0] < len(view.records):
        chosen = view.records[rows[0]]
        if chosen is None:
            return rows[0]  # a skipped region: the caller shows it
        if chosen != current:
            state.set_record(chosen)
            st.rerun()
    return None
