"""The records page's table: one row per record of the page, damaged ones in red, skipped
regions in amber, recovered records in italics, records with pending edits tinted, all in
place, with each record's review (passed / flagged with the comment / unreviewed). Selecting a
row makes that record the current one; the columns shown and pinned are chosen per dataset.

Speed: the table is drawn from the cached page (:func:`browser_app.ui.services.page_view`);
the pandas Styler (slow to send) is used only on pages with rows to colour; selecting a row
runs only the record view again (:mod:`.parts`); the widget keeps its key while rows are
selected in it, and gets a new one (with the current record selected, and scrolled into
view) only when the current record changed elsewhere: the pager, "Go to record", the review
keys once they rest. (A row selected from the server into the same widget would race with
the browser's own selection: a key typed before the table is drawn again sends the old row
back.)"""

from __future__ import annotations

import base64
import functools
import math
import time
from typing import Any

import pandas as pd
import streamlit as st

from browser_app.edits import ADDED, DELETED, EDITED
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import parts
from browser_app.view import BROKEN_PICTURE, PageView, label_text, review_cells
from codec.dataset import DAMAGED, RECOVERED, SKIPPED
from codec.values import format_float

__all__ = [
    "REVIEW",
    "column_chooser",
    "column_config",
    "records_table",
    "selected_gap",
    "shown_columns",
]

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
ROW_STYLES: dict[str, str] = {
    DAMAGED: DAMAGED_STYLE,
    SKIPPED: SKIPPED_STYLE,
    RECOVERED: RECOVERED_STYLE,
    **EDIT_STYLES,
}
REVIEW = "review"  # the review column's name
PINNED = ("#",)  # pinned until the person chooses otherwise
ROWS_SHOWN = 14  # rows in view before the table scrolls
HEADER_PX = 38
TABLE_KEY = "tfb-records-table"  # the table's container (its CSS class is st-key-<this>)

# Scrolls the table's own scroller so that row ROW (of height H px) is in view; the grid is
# drawn a little after the element arrives, so it tries again for two seconds.
_SCROLL_JS = """<script>(() => {{
  const row = {row}, h = {height}, header = {header}; let tries = 0;
  const go = () => {{
    const s = document.querySelector(
      '.st-key-{box} [data-testid="stDataFrame"] .dvn-scroller');
    if (!s || s.scrollHeight <= s.clientHeight) {{ if (tries++ < 40) setTimeout(go, 50); return; }}
    const top = row * h, bottom = top + h + header;
    if (top < s.scrollTop || bottom > s.scrollTop + s.clientHeight)
      s.scrollTop = Math.max(0, top - (s.clientHeight - header) / 2);
  }};
  go();
}})(); /* {nonce} */</script>"""


def _cell(v: Any) -> Any:
    """A float as the shortest decimal that reads back as the same float32 (what the rest of
    the app shows), still a number so the column sorts as numbers."""
    if isinstance(v, float) and math.isfinite(v):
        return float(format_float(v))
    return v


_PICTURES = "tfb-records-table.pictures"  # where the table's thumbnails are registered


def _served(cells: list[Any]) -> list[Any]:
    """The table's thumbnails by URL: served by the app's server (content-addressed, fetched
    by the browser as the grid draws them) instead of inline in the run's message, which for
    a page of 100 rows was some 285 KB to send and parse before the first row showed. A cell
    stays as it is where there is no server (no media file manager) or it is not a picture
    of the page (the broken-picture mark, a few bytes)."""
    pictures: list[tuple[bytes | None, str]] = []
    for cell in cells:
        head, _, body = cell.partition(",") if isinstance(cell, str) else ("", "", "")
        if head.startswith("data:image/") and head.endswith(";base64") and cell != BROKEN_PICTURE:
            pictures.append((base64.b64decode(body), head[5 : -len(";base64")]))
        else:
            pictures.append((None, ""))
    urls = services.picture_urls(pictures, _PICTURES)
    return [cell if url is None else url for cell, url in zip(cells, urls)]


def _frame(view: PageView, review: list[str | None]) -> pd.DataFrame:
    """The page's rows as columns (built column by column: a frame from row dicts, then
    converted, took most of the table's time)."""
    data: dict[str, Any] = {}
    for name, kind in view.columns:
        cells = [r.get(name) for r in view.rows]
        if kind == "image":
            cells = _served(cells)
        if kind == "int":
            data[name] = pd.array(cells, dtype="Int64")
        elif kind == "float":
            data[name] = pd.array([_cell(v) for v in cells], dtype="Float64")
        else:
            data[name] = pd.array(cells, dtype=object)
        if name == "status":
            data[REVIEW] = pd.array(review, dtype=object)
    if REVIEW not in data:
        data[REVIEW] = pd.array(review, dtype=object)
    return pd.DataFrame(data)


def column_config(view: PageView, pinned: set[str]) -> dict[str, Any]:
    """How the table shows each column of ``view`` (``pinned`` ones kept on the left)."""
    cfg: dict[str, Any] = {
        "#": st.column_config.NumberColumn("#", width="small", format="%d"),
        "status": st.column_config.TextColumn("status", width="medium"),
        REVIEW: st.column_config.TextColumn(
            REVIEW, width="medium", help="Passed ✓ or flagged ⚑, with the comment"
        ),
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
    for name, c in cfg.items():
        c["pinned"] = name in pinned
    return cfg


def _names(view: PageView) -> list[str]:
    names = [name for name, _ in view.columns]
    at = names.index("status") + 1 if "status" in names else len(names)
    return [*names[:at], REVIEW, *names[at:]]


def shown_columns(src: Source, view: PageView) -> tuple[list[str], set[str]]:
    """The columns of the page's table shown (in order) and pinned, as chosen for this
    dataset (every column, ``#`` pinned, until chosen otherwise); a chosen column the page
    lacks is left out, and ``#`` is always shown."""
    names = _names(view)
    chosen = state.table_columns(repr(src.key))
    if chosen is None:
        return names, set(PINNED)
    wanted = chosen["shown"]
    shown = names if wanted is None else [n for n in names if n in wanted or n == "#"]
    return shown, {n for n in chosen["pinned"] if n in shown}


def _chooser_name(src: Source, part: str) -> str:
    return f"columns:{part}:{abs(hash(repr(src.key))) % 10**10}"


def _on_columns(src: Source, names: list[str]) -> None:
    shown = state.widget_value(_chooser_name(src, "shown"))
    pinned = state.widget_value(_chooser_name(src, "pinned"))
    picked = [n for n in names if shown is None or n in shown]
    state.set_table_columns(
        repr(src.key),
        {
            "shown": None if picked == names else picked,
            "pinned": [n for n in names if pinned and n in pinned],
        },
    )


def column_chooser(src: Source, view: PageView) -> None:
    """The "Columns" menu: which columns the table shows, and which stay pinned on the left
    while it scrolls sideways (remembered for this dataset)."""
    names = _names(view)
    shown, pinned = shown_columns(src, view)
    shown_name, pinned_name = _chooser_name(src, "shown"), _chooser_name(src, "pinned")
    state.set_widget_value(shown_name, [n for n in shown if n != "#"])
    state.set_widget_value(pinned_name, [n for n in shown if n in pinned])
    with st.popover("Columns", icon=":material/view_column:"):
        st.multiselect(
            "Columns shown",
            [n for n in names if n != "#"],
            key=state.widget_key(shown_name),
            on_change=_on_columns,
            args=(src, names),
            format_func=label_text,
            help="The record number is always shown",
        )
        st.multiselect(
            "Pinned on the left",
            names,
            key=state.widget_key(pinned_name),
            on_change=_on_columns,
            args=(src, names),
            format_func=label_text,
        )


def _style(df: pd.DataFrame, view: PageView) -> Any:
    """``df`` with its rows coloured by status (a Styler), or ``df`` itself when every row
    is plain: sending a Styler costs its display values and per-cell styles."""
    styles = [ROW_STYLES.get(s, "") for s in view.status]
    if not any(styles):
        return df

    def style(row: pd.Series) -> list[str]:
        return [styles[int(row.name)]] * len(row)  # type: ignore[call-overload]

    float_cols = [n for n, k in view.columns if k == "float"]
    return (
        df.style.apply(style, axis=1)
        .format(na_rep="")
        .format(lambda v: "" if pd.isna(v) else format_float(v), subset=float_cols)
    )


def _table_name(src: Source) -> str:
    # One widget for every page of the source: turning the page changes its rows in place
    # (a new widget per page is drawn anew by the browser, some 0.2 s more).
    return f"table:{src.tag}:{state.page_size()}"


ECHO_S = 1.5
"""How long after the server selected a row in the table a message from the browser may
still carry the row selected before (sent while the page was being drawn)."""


def _page_name(src: Source) -> str:
    return f"table:{src.tag}:page"


def _selected_rows(value: object) -> list[int]:
    rows = list(getattr(getattr(value, "selection", None), "rows", None) or [])
    if not rows and isinstance(value, dict):
        rows = list(value.get("selection", {}).get("rows", []))
    return [r for r in rows if isinstance(r, int)]


def _selection(rows: list[int]) -> dict[str, Any]:
    return {"selection": {"rows": rows, "columns": [], "cells": []}}


def _set_name(name: str) -> str:
    return f"{name}:set"


def _select(name: str, rows: list[int]) -> None:
    """Select ``rows`` in the table ``name`` from the server, remembering the rows the
    browser showed selected until then (:func:`_echo`)."""
    before = _selected_rows(state.widget_value(name))
    state.set_widget_value(name, _selection(rows))
    state.set_widget_value(_set_name(name), (before, rows, time.monotonic()))


def _echo(name: str, rows: list[int]) -> bool:
    """Whether ``rows``, told by the browser as a new selection, are the rows it showed
    before the server selected others a moment ago: a message sent while the page was being
    drawn, not a click. (A click on that very row within :data:`ECHO_S` is taken for one.)"""
    got = state.widget_value(_set_name(name))
    if not isinstance(got, tuple) or len(got) != 3:
        return False
    before, now, when = got
    return rows == before and rows != now and time.monotonic() - when < ECHO_S


def _on_select(src: Source, view: PageView, name: str) -> None:
    """A row was selected: its record becomes the current one, and only the record view runs
    again (a skipped region is shown from the selection itself)."""
    rows = _selected_rows(state.widget_value(name))
    if _echo(name, rows):
        state.set_widget_value(name, _selection(state.widget_value(_set_name(name))[1]))
        return
    state.set_widget_value(_set_name(name), None)
    if rows and 0 <= rows[0] < len(view.records):
        chosen = view.records[rows[0]]
        if chosen is not None and chosen != state.record():
            state.set_record(chosen)
            state.set_table_shows(src.tag, chosen)
    parts.after_select()


def selected_gap(src: Source, view: PageView) -> int | None:
    """The row of the skipped region selected in the page's table, or None (no row, or a
    record's row)."""
    rows = _selected_rows(state.widget_value(_table_name(src)))
    if rows and 0 <= rows[0] < len(view.records) and view.records[rows[0]] is None:
        return rows[0]
    return None


def records_table(src: Source, view: PageView, start: int) -> int | None:
    """The page's records, one row each; damaged ones in red, skipped regions in amber, in
    place, with their reviews. Selecting a record's row makes it the current record;
    selecting a skipped region returns its row number."""
    j = services.shared_journal(src)
    marks = j.marks() if j is not None else {}
    df = _frame(view, review_cells(view.records, view.status, marks))
    shown, pinned = shown_columns(src, view)
    current = state.record()
    pos = view.records.index(current) if current in view.records else None
    # The current record chosen elsewhere (the pager, "Go to record", the review keys once
    # they rest) has its row selected from here, and scrolled into view.
    name = _table_name(src)
    moved = state.table_shows(src.tag) != current or state.widget_value(_page_name(src)) != start
    if moved:
        state.set_table_shows(src.tag, current)
        state.set_widget_value(_page_name(src), start)
        _select(name, [pos] if pos is not None else [])
    parts.remember_table(src, view.records)
    row_height = 52 if view.has_images else 35
    height = min(len(df), ROWS_SHOWN) * row_height + HEADER_PX if len(df) else "auto"
    with st.container(key=TABLE_KEY):
        event: Any = st.dataframe(  # type: ignore[call-overload]
            _style(df, view),
            hide_index=True,
            column_order=shown,
            column_config=column_config(view, pinned),
            key=state.widget_key(name),
            on_select=functools.partial(_on_select, src, view, name),
            selection_mode="single-row",
            selection_default={"selection": {"rows": [pos] if pos is not None else []}},
            row_height=row_height,
            height=height,
            width="stretch",
            placeholder="",
        )
        if moved and pos is not None and pos >= ROWS_SHOWN // 2:
            st.html(
                _SCROLL_JS.format(
                    row=pos,
                    height=row_height,
                    header=HEADER_PX,
                    box=TABLE_KEY,
                    nonce=f"{name}:{start}:{current}",
                ),
                unsafe_allow_javascript=True,
            )
    rows = _selected_rows(event)
    if rows and 0 <= rows[0] < len(view.records):
        chosen = view.records[rows[0]]
        if chosen is None:
            return rows[0]  # a skipped region: the caller shows it
        if chosen != current:  # selected without the callback (a script driving the app)
            state.set_record(chosen)
            state.set_table_shows(src.tag, chosen)
            st.rerun()
    return None
