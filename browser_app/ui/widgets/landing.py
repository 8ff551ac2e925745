"""Jump to a percentage of the bytes: "Go to %" in the pager (and ``?at=50`` in a link) lands
at that byte of the dataset without indexing up to it (:meth:`codec.TFRecordDataset.land`).

When the index already reaches there, the jump is to the numbered page of the record found.
Otherwise the records found by the resynchronisation search are shown on their own, numbered
``≈ 512,000`` (an estimate from the average record size so far), with a caption saying so; the
index keeps growing in the background while the page is open (the header's indexing), and as
it reaches them their numbers turn exact, or "inside a record" where it finds that no record
of the file starts at the byte the search landed on. "Back to numbered pages" (or any move to
a record) leaves the jump.

The landing is kept for the session (per source, percentage and page size), so the records
shown stay the ones found while their numbers are filled in."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

import codec
from browser_app.ui import opening, services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import detail, gallery_grid, layers, remote, schema
from browser_app.ui.widgets.records_table import column_config
from browser_app.view import (
    LandedNumber,
    landed_caption,
    landed_rows,
    landed_tiles,
    md_text,
    percent_text,
)
from codec.errors import RemoteError
from codec.values import format_bytes

__all__ = ["bar", "current", "percent_input", "view"]

_REFRESH_SECONDS = 2.0  # how often estimated numbers are looked at again


def _percent_name(where: str, shown: float | None) -> str:
    """The "Go to %" box's name while it shows ``shown``: the server sets it (a jump
    elsewhere clears it), so its value is in its name, as with "Go to record"
    (:mod:`browser_app.ui.widgets.pager`): a message carrying the box as it was drawn is not a
    jump."""
    return f"{where}:at:{shown}"


def _on_percent(where: str, shown: float | None) -> None:
    value = state.widget_value(_percent_name(where, shown))
    if value != shown:
        state.set_landing(None if value is None else float(value))


def percent_input(where: str, container: Any = st) -> None:
    """The "Go to %" box: a percentage of the dataset's bytes to jump to."""
    shown = state.landing()
    state.set_widget_value(_percent_name(where, shown), shown)
    container.number_input(
        "Go to %",
        min_value=0.0,
        max_value=100.0,
        value=None,
        step=5.0,
        format="%g",
        key=state.widget_key(_percent_name(where, shown)),
        on_change=_on_percent,
        args=(where, shown),
        placeholder="0–100",
        help="Jump to this share of the bytes without waiting for the index: records are"
        " found by searching for a record boundary, and numbered as estimates until the index"
        " reaches them; press Enter",
    )


def current(src: Source) -> codec.DatasetLanding | None:
    """The jump the session asked for, when it shows records of its own: None when there is
    none, or when the index already reaches there (the current record is then the record
    found, and the views show its numbered page), or when a selection is active."""
    percent = state.landing()
    if percent is None:
        return None
    if services.order(src, state.selection(), schema.stored(src)) is not None:
        state.flash(
            "Go to % jumps into the bytes of the whole dataset: clear the selection in the"
            " sidebar first.",
            "info",
        )
        state.set_landing(None)
        return None
    tag = (src.tag, repr(src.key), percent, state.page_size())
    kept = state.kept_landing(tag)
    if kept is not None:
        return kept
    got = src.dataset.land(percent / 100.0, state.page_size())
    if got.exact and got.first is not None:
        state.set_record(got.first)  # leaves the jump
        return None
    state.keep_landing(tag, got)
    return got


def _spans(got: codec.DatasetLanding) -> tuple[tuple[int, int], ...]:
    return tuple((int(o), int(n)) for o, n in got.landing.spans)


def _where(src: Source, got: codec.DatasetLanding) -> str:
    offset = got.landing.offset
    name = src.rel(src.paths[got.file]) if got.file < len(src.paths) else got.path
    if offset is None:
        return name
    return f"{name}, byte {offset:,} of {format_bytes(src.dataset.files[got.file].size)}"


def _numbers(src: Source, got: codec.DatasetLanding) -> list[LandedNumber]:
    """The landed records' numbers (none when no record starts after the byte)."""
    if got.landing.offset is None:
        return []
    return services.landed_numbers(src, got.file, _spans(got), got.estimate)


def bar(src: Source, where: str) -> None:
    """Above landed records: where the jump went, another percentage, and the way back."""
    percent = state.landing() or 0.0
    c = st.columns([3.2, 1.3, 2.0], vertical_alignment="bottom")
    c[0].markdown(f"**Jumped to {percent_text(percent)} of the bytes**")
    percent_input(where, c[1])
    c[2].button(
        "Back to numbered pages",
        key=state.widget_key(f"{where}:landing:back"),
        icon=":material/format_list_numbered:",
        on_click=state.set_landing,
        args=(None,),
        width="stretch",
    )


def _nothing(src: Source, got: codec.DatasetLanding) -> bool:
    if got.landing.offset is not None:
        return False
    percent = state.landing() or 0.0
    st.info(
        f"No record starts after {percent_text(percent)} of the bytes of"
        f" {md_text(_where(src, got))}: the last records are on the last page.",
        icon=":material/last_page:",
    )
    return True


def _exact_button(numbers: list[LandedNumber], where: str) -> None:
    """Once the index reaches the landed records: the way to their numbered page."""
    first = next((n.exact for n in numbers if n.exact is not None), None)
    if first is None or any(n.exact is None and not n.inside for n in numbers):
        return
    st.button(
        f"Open record {first:,} on its numbered page",
        key=state.widget_key(f"{where}:landing:open"),
        icon=":material/open_in_new:",
        on_click=state.set_record,
        args=(first,),
    )


def _refresh(src: Source, numbers: list[LandedNumber]) -> float | None:
    """How often to look at the numbers again: while some are estimates and the index is
    still growing."""
    waiting = any(n.exact is None and not n.inside for n in numbers)
    return _REFRESH_SECONDS if waiting and not src.dataset.index_complete else None


def _records(src: Source, got: codec.DatasetLanding, numbers: list[LandedNumber]) -> None:
    """The landed records as table rows (pictures included, like the records page), with
    their numbers and the caption that says what they are."""
    spans = _spans(got)
    view = services.landed_page(
        src,
        got.file,
        spans,
        schema=schema.stored(src),
        boxes=state.show_boxes(),
        layers=layers.for_source(src.spec),
    )
    percent = state.landing() or 0.0
    st.caption(md_text(landed_caption(percent, numbers, _where(src, got))))
    rows = landed_rows(view, numbers)
    names = [name for name, _ in view.columns]
    df = pd.DataFrame(rows, columns=names)
    cfg = column_config(view, {"#"})
    cfg["#"] = st.column_config.TextColumn("#", width="small", pinned=True)
    row_height = 52 if view.has_images else 35
    st.dataframe(
        df,
        hide_index=True,
        column_config=cfg,
        row_height=row_height,
        height=min(len(df), 14) * row_height + 38 if len(df) else "auto",
        width="stretch",
    )
    _exact_button(numbers, "records")


def _tiles(
    src: Source, got: codec.DatasetLanding, numbers: list[LandedNumber], size: int, per_row: int
) -> None:
    """The landed records as gallery tiles, captioned with their numbers (opening none:
    their numbers are not known yet)."""
    spans = _spans(got)
    items = services.landed_tiles(
        src,
        got.file,
        spans,
        schema=schema.stored(src),
        hidden=state.hidden_classes(src.spec),
        size=size,
        boxes=state.show_boxes(),
        layers=layers.for_source(src.spec),
    )
    percent = state.landing() or 0.0
    st.caption(md_text(landed_caption(percent, numbers, _where(src, got))))
    shown = landed_tiles(items, numbers)
    with st.container(key="tfb-gallery"):
        for row_start in range(0, len(shown), per_row):
            cols = st.columns(per_row, gap="small")
            for col, item in zip(cols, shown[row_start : row_start + per_row]):
                with col:
                    if item.data is not None:
                        st.image(item.data, width="stretch")
                    else:
                        st.caption(md_text(item.error or "no picture"))
                    st.caption(md_text(item.caption))
    _exact_button(numbers, "gallery")


def _body(src: Source, where: str, timed: bool) -> None:
    """One run of the landing view (a fragment of its own, rerun every few seconds while
    numbers are estimates, ``timed``): the whole page again when the jump was left, or when
    the numbers no longer need looking at (the run that registers the fragment again without
    its timer: a fragment rerun for nothing redraws the page's records every few seconds)."""
    with remote.guard(src, where):
        got = current(src)
        if got is None:
            st.rerun(scope="app")  # left (or exact now): the page's usual view
        numbers = _numbers(src, got)
        if timed and _refresh(src, numbers) is None:
            st.rerun(scope="app")  # every number is known: stop looking again
        bar(src, where)
        if _nothing(src, got):
            return
        if where == "gallery":
            with st.container(horizontal=True, vertical_alignment="center", gap="small"):
                detail.boxes_toggle("gallery")
                _name, size = gallery_grid.tile_size()
            _tiles(src, got, numbers, size.thumb, size.per_row)
        else:
            _records(src, got, numbers)


def view(src: Source, where: str) -> bool:
    """The records found by the session's jump, on the Records page (``where`` ``records``)
    or the Gallery (``gallery``), in a fragment that looks at their numbers again every few
    seconds while some are estimates and the index grows. Returns False, drawing nothing,
    when there is no jump to show (the page then shows its usual view)."""
    if state.landing() is None:
        return False
    try:
        got = current(src)
    except RemoteError as exc:
        remote.trouble(opening.as_trouble(src.spec, exc), src, where)
        return True
    if got is None:
        return False
    every = _refresh(src, _numbers(src, got))
    st.fragment(run_every=every)(_body)(src, where, every is not None)
    return True
