"""The SQL box: a query over the source's columnar index, its result as a table whose rows
link to their records, and a button that makes the query the selection (its records in its
order: ``sel=sql:<query>`` in the URL).

The index (:mod:`codec.columns_index`) is read from the cache when every file's table is
stored; else it is built as a job (progress bar, Cancel) when the page opens on a dataset of
at most :data:`AUTO_RECORDS` records, and when asked on a larger one. The query runs on every
run of the page from the text in the box (DuckDB answers from the Parquet files in
milliseconds to a second), read-only (:mod:`codec.sql`), with the review marks of this
source's journal as the ``mark`` column."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pandas as pd
import pyarrow as pa
import streamlit as st

from browser_app.selection import Selection
from browser_app.ui import services, state
from browser_app.ui.services.order import forget_index_looks
from browser_app.ui.source import Source
from browser_app.ui.widgets import jobs
from browser_app.view import md_text, plural
from codec.columns_index import ColumnsIndex, columns_index, stored_index
from codec.sql import EXAMPLES, SqlError, SqlRefused, SqlTimeout, query

__all__ = ["AUTO_RECORDS", "TIMEOUT", "examples", "render", "selection_of"]

AUTO_RECORDS = 50_000  # an index is built on opening the page up to this many records
TIMEOUT = 30.0  # seconds a query of the page may run
ROWS = 10_000  # rows shown at most, by default
_TEXT = "sql:text"
_PICK = "sql:example"


def _key(src: Source) -> str:
    return f"sql:index:{src.tag}"


def _index(src: Source) -> ColumnsIndex | None:
    """The source's index: stored, or built now (automatically for a dataset of at most
    :data:`AUTO_RECORDS` records, else when asked); None when it is not there (said why)."""
    files = src.dataset.files
    got = stored_index(files)
    if got is not None:
        return got
    ds = src.dataset
    small = ds.index_complete and len(ds) <= AUTO_RECORDS
    key = _key(src)
    asked = False
    if not small or jobs.cancelled(key, "Building the index"):
        count = f"all {plural(len(ds), 'record')}" if ds.index_complete else "every record"
        st.info(
            f"SQL reads a columnar index of the records' facts and short features. Building it"
            f" reads {count} once; it is kept for the next queries, in every session.",
            icon=":material/database:",
        )
        asked = st.button(
            "Build the index", key=state.widget_key("sql:build"), icon=":material/build:"
        )
        if not asked:
            return None
    try:
        index = columns_index(
            files,
            runner=lambda job, tasks: jobs.run(
                job, tasks, key=key, what="Building the index", fresh=asked
            ),
            executor=state.executor(),
        )
    except jobs.Stopped:
        return None
    forget_index_looks()  # facets and sorts read it from the next run on
    return index


def examples(index: ColumnsIndex) -> list[str]:
    """Queries to start from: one on a feature of the dataset, when it has a scalar one,
    then those every index answers."""
    out: list[str] = []
    for col in index.columns:
        if col.scalar and col.type in ("int64", "string"):
            name = '"' + col.name.replace('"', '""') + '"'
            out.append(
                f"SELECT {name}, count(*) AS records FROM records GROUP BY 1 ORDER BY 2 DESC"
            )
            break
    return [*out, *EXAMPLES]


def _use_example() -> None:
    picked = state.widget_value(_PICK)
    if picked:
        state.set_widget_value(_TEXT, picked)
    state.reset_widget(_PICK)


def selection_of(text: str) -> Selection:
    """The selection of the query ``text``: the records of its ``record`` column, in its
    order (every row, not only those the page shows)."""
    return Selection("sql", text.strip())


def render(src: Source) -> None:
    index = _index(src)
    if index is None:
        return
    _about(index)
    st.pills(
        "Examples",
        examples(index),
        key=state.widget_key(_PICK),
        on_change=_use_example,
        help="Put this query in the box",
    )
    text = st.text_area(
        "SQL over the table records",
        key=state.widget_key(_TEXT),
        placeholder=EXAMPLES[0],
        height=110,
        help="DuckDB's SQL. One row per record: record, file, local, status, bytes, boxes,"
        ' classes, mark, then the features (a name with / in double quotes: "image/height").'
        " Only queries run: nothing is written, attached or read besides the index.",
    )
    c = st.columns([1, 1, 4], vertical_alignment="bottom")
    limit = int(
        c[0].number_input(
            "Rows", min_value=1, value=ROWS, step=1_000, key=state.widget_key("sql:limit")
        )
    )
    c[1].button("Run", key=state.widget_key("sql:run"), icon=":material/play_arrow:")
    text = (text or "").strip()
    if not text:
        st.caption("Type a query, or pick an example, and press Ctrl+Enter or Run.")
        return
    try:
        result = query(index, text, marks=services.marks(src), limit=limit, timeout=TIMEOUT)
    except SqlRefused as exc:
        st.error("This query is not allowed here.", icon=":material/block:")
        st.code(str(exc), language=None, wrap_lines=True)
        return
    except SqlTimeout as exc:
        st.error(f"{exc}.", icon=":material/timer_off:")
        return
    except SqlError as exc:
        st.error("DuckDB could not run this query:", icon=":material/error:")
        st.code(str(exc), language=None, wrap_lines=True)
        return
    rows = result.table.num_rows
    words = f"**{plural(rows, 'row')}** in {result.seconds:.2f} s"
    if result.truncated:
        words += f": the first {plural(rows, 'row')} only (raise “Rows” for more)"
    if not index.complete:
        words += " — files that could not be read are not in the index (see below)"
    st.markdown(words)
    _table(src, result.table)
    records = result.records()
    if records:
        _select(text, records, result.truncated)


def _about(index: ColumnsIndex) -> None:
    """What the index holds, folded: its columns and what was left out."""
    what = f"{plural(index.records, 'record')}, {plural(len(index.columns), 'feature column')}"
    if index.left_out:
        what += f", {plural(len(index.left_out), 'feature')} left out"
    with st.expander(f"The table records: {what}", icon=":material/table_chart:"):
        facts = [
            ("record", "BIGINT", "the record's number in the dataset"),
            ("file", "VARCHAR", "its file"),
            ("local", "BIGINT", "its number in that file"),
            ("status", "VARCHAR", "intact, recovered (after damage) or damaged (features NULL)"),
            ("bytes", "BIGINT", "the payload's size"),
            ("boxes", "BIGINT", "its ground-truth boxes"),
            ("classes", "VARCHAR[]", "the class of each box"),
            ("mark", "VARCHAR", "its review mark: passed, flagged or NULL"),
        ]
        rows = [{"column": n, "type": t, "what": w} for n, t, w in facts]
        rows += [
            {
                "column": col.name,
                "type": col.sql_type,
                "what": "feature" if col.name == col.feature else f"feature {col.feature}",
            }
            for col in index.columns
        ]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        if index.left_out:
            st.markdown("Left out:")
            left = [{"feature": k, "why": v} for k, v in sorted(index.left_out.items())]
            st.dataframe(pd.DataFrame(left), hide_index=True, width="stretch")
        for path, why in index.unreadable:
            st.warning(
                f"{md_text(path)} could not be read; its records are not in the index:"
                f" {md_text(why)}",
                icon=":material/warning:",
            )


def _unique(names: list[str]) -> list[str]:
    """Column names made distinct for the table (``SELECT a, a``)."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        k = seen.get(n, 0)
        seen[n] = k + 1
        out.append(n if not k else f"{n} ({k + 1})")
    return out


def _table(src: Source, table: pa.Table) -> None:
    """The result, with a link to each row's record when it has a ``record`` column."""
    table = table.rename_columns(_unique(table.column_names))
    config: dict[str, Any] = {}
    numbered = "record" in table.column_names and pa.types.is_integer(table.column("record").type)
    if numbered and not state.is_upload(src.spec):
        spec = quote(src.link, safe="")
        urls = [
            None if n is None else f"./?file={spec}&record={n}"
            for n in table.column("record").to_pylist()
        ]
        table = table.add_column(0, "open", pa.array(urls, pa.string()))
        config["open"] = st.column_config.LinkColumn(
            "open", display_text=r"record=(\d+)$", help="Open the record", width="small"
        )
    st.dataframe(
        table, hide_index=True, width="stretch", column_config=config, key="tfb-sql-result"
    )


def _select(text: str, records: list[int], truncated: bool) -> None:
    distinct = len(set(records))
    if truncated:
        label = "Select the query's records"
        why = (
            "Make every record of the query (all its rows, not only those shown) the selection"
            " of the records table, the gallery and the review buttons, in the query's order"
        )
    else:
        label = f"Select these {plural(distinct, 'record')}"
        why = (
            "Make these records the selection of the records table, the gallery and the"
            " review buttons, in the query's order (the sidebar shows it; the link keeps the"
            " query)"
        )
    if st.button(label, key=state.widget_key("sql:select"), icon=":material/checklist:", help=why):
        state.set_selection(selection_of(text), records[0])
        what = "records" if truncated else plural(distinct, "record")
        state.flash(f"The selection is now the {what} of the query, in its order.", "success")
        st.rerun()
