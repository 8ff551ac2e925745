"""Filter: find the records matching an expression such as ``label == 3 and width > 100``,
page through them, open one, or hand them to the export.

The matches are kept in the session (:func:`browser_app.ui.state.filter_selection`) as
``{"spec", "key", "expression", "records", "complete"}``; the export reads them from there."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from browser_app.selection import Selection
from browser_app.ui import frame, navigation, services, state
from browser_app.ui.services.names import names_key
from browser_app.ui.source import Source
from browser_app.ui.widgets import jobs, layers, names, schema
from browser_app.view import match_rows, md_text, plural
from codec.filters import (
    FilterSyntaxError,
    UnknownClassError,
    UnknownFeatureError,
    compile_filter,
)
from codec.jobs import FilterJob, tasks_of

EXAMPLES = (
    "label == 3 and width > 100",
    '"dog" in feature2',
    "has(weight) and len(tags) >= 2",
    "not intact",
    "any(image/object/bbox/xmin >= image/object/bbox/xmax)",
    "all(image/object/class/label in [1, 2, 3])",
    "image/height > 50 or `my feature` != 'x'",
)
HELP = (
    "Compare features with numbers or strings (`== != < <= > >=`), combine with `and`, `or`,"
    ' `not` and parentheses. `"dog" in name` finds a substring or a list member;'
    " `has(name)`, `len(name)`; `index` is the record number, `intact` its CRC status.\n\n"
    "A feature stands for its list of values. A list against one value compares every value"
    " with it; two lists of the same length are compared position by position (box by box);"
    " lists of different lengths cannot be compared (the record matches neither the"
    " condition nor its `not`). A comparison holds when it holds at some position:"
    " `any(…)` says so explicitly, `all(…)` asks for every position.\n\n"
    "A name no record has is an error with a suggestion, except inside `has(…)`. Names may"
    " contain `/ . -`; put any other name in backquotes: `` `my feature` ``.\n\n"
    'A feature with class names (the sidebar\'s "Class names") compares with a name:'
    ' `label == "cat"`, `label in ["cat", "dog"]`.'
)


def _cannot(err: FilterSyntaxError, what: str) -> None:
    st.error(f"{what}: {md_text(err.message)}.", icon=":material/error:")
    st.code(f"{err.expression}\n{' ' * err.position}^", language=None)


def _run(src: Source, text: str, limit: int, fresh: bool) -> state.FilterSelection | None:
    """Run the filter ``text`` as a job on the session's executor (its first ``limit``
    matches), keep its result for the session and return it; None when it cannot run (said)
    or was cancelled (said; it runs again when asked: ``fresh``). Class names compare with
    the features they name (``label == "cat"``); a record's evaluation (``fp > 3``) reads its
    classes with the label map found with the data, as ``evaluate`` does."""
    classes = names.for_evaluation(src)
    try:
        compile_filter(text, classes)
    except UnknownClassError as err:
        _cannot(err, "This filter names a class its names file does not hold")
        return None
    except FilterSyntaxError as err:
        _cannot(err, "This filter cannot be read")
        return None
    try:
        run = jobs.run(
            FilterJob(text, limit=limit + 1, names=classes),
            tasks_of(src.dataset.files, executor=state.executor()),
            key=f"filter:{src.tag}:{text}:{abs(hash(names_key(classes))) % 10**8}",
            what="The filter",
            fresh=fresh,
        )
    except jobs.Stopped:
        return None
    except UnknownFeatureError as err:
        _cannot(err, "This filter names a feature no record has")
        return None
    found = run.matches
    result: state.FilterSelection = {
        "spec": src.spec,
        "key": repr(src.key),
        "expression": text,
        "records": found[:limit],
        "complete": len(found) <= limit,
    }
    state.set_filter_selection(result)
    state.reset_widget("filter:page")
    return result


def render() -> None:
    src = frame.start("Filter")
    if src is None:
        return
    c = st.columns([5, 1.3, 1], vertical_alignment="bottom")
    text = c[0].text_input(
        "Filter expression",
        key=state.widget_key("filter:expr"),
        placeholder=EXAMPLES[0],
        help=HELP,
    )
    limit = int(
        c[1].number_input(
            "Stop after",
            min_value=1,
            value=10_000,
            step=1_000,
            key=state.widget_key("filter:limit"),
        )
    )
    clicked = c[2].button("Run", key=state.widget_key("filter:run"), icon=":material/filter_alt:")
    st.caption("Examples: " + " · ".join(f"`` {e} ``" for e in EXAMPLES))
    result = state.filter_selection(repr(src.key))
    text = (text or "").strip()
    if text and (clicked or result is None or result["expression"] != text):
        result = _run(src, text, limit, fresh=clicked)
    if result is None:
        if not text:
            st.info("Type a filter and press Enter.", icon=":material/filter_alt:")
        return
    _show(src, result)


def _show(src: Source, result: state.FilterSelection) -> None:
    found = result["records"]
    what = plural(len(found), "matching record")
    if not result["complete"]:
        what = f"the first {what} (stopped there; raise “Stop after” for more)"
    st.markdown(f"**{what}** for {md_text(result['expression'])}")
    if not found:
        return
    size = state.page_size()
    pages = max(1, -(-len(found) // size))
    page = st.pagination(pages, key=state.widget_key("filter:page")) if pages > 1 else 1
    start = (max(1, int(page)) - 1) * size
    chunk = found[start : start + size]
    _thumbnails(src, chunk)
    rows = match_rows(src.dataset, chunk, names=names.for_source(src))
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    c = st.columns([2, 1, 1.6, 1.4, 2], vertical_alignment="bottom")
    pick = c[0].selectbox("Record", chunk, key=state.widget_key("filter:pick"))
    if c[1].button("Open", key=state.widget_key("filter:open"), icon=":material/open_in_new:"):
        state.set_record(int(pick))
        navigation.goto("records")
    # Names bound in this session only are spelled as labels: a link shows the same records.
    selected = Selection("filter", names.spelled(src, result["expression"]))
    if c[2].button(
        "Open in gallery",
        key=state.widget_key("filter:gallery"),
        icon=":material/photo_library:",
        help="Make the matches the selection and page through their pictures",
    ):
        state.set_selection(selected, found[0])
        navigation.goto("gallery")
    if c[3].button(
        "Select these",
        key=state.widget_key("filter:select"),
        icon=":material/checklist:",
        help="Make the matches the selection of the records table, the gallery and the review"
        " buttons (the sidebar shows it)",
        disabled=state.selection() == selected,
    ):
        state.set_selection(selected, found[0])
        st.rerun()
    if c[4].button(
        f"Export these {len(found):,}",
        key=state.widget_key("filter:export"),
        icon=":material/download:",
    ):
        state.set_filter_selection({**result, "for_export": True})
        if navigation.page("export") is not None:
            navigation.goto("export")
        st.success(
            "Selection handed to the export: it will offer these records.",
            icon=":material/check:",
        )


def _thumbnails(src: Source, chunk: list[int]) -> None:
    """The page's matches as small pictures (when the records have any), each captioned with
    its record number."""
    tiles = services.gallery_items(
        src,
        0,
        0,
        sel=state.selection(),
        schema=schema.stored(src),
        hidden=state.hidden_classes(src.spec),
        size=96,
        records=chunk,
        layers=layers.for_source(src.spec),
        names=names.for_source(src),
    )
    tiles = [t for t in tiles if t.data]
    if not tiles:
        return
    per_row = 12
    with st.container(key="tfb-filter-thumbs"):
        for row in range(0, len(tiles), per_row):
            cols = st.columns(per_row)
            for col, tile in zip(cols, tiles[row : row + per_row]):
                if tile.data is not None:
                    col.image(tile.data, caption=md_text(tile.caption), width="stretch")


if __name__ == "__main__":
    render()
