"""A picture's boxes on screen: the legend under the record's picture (a colour swatch, the
class, how many boxes, and a switch that shows or hides the class on the record view, the
full view and the gallery) and the full view, a dialog that shows the picture large at fit,
100, 200 or 400 % with its boxes drawn at that scale, panned with two sliders."""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st

from browser_app import view
from browser_app.ui import state
from browser_app.view.pictures import ZOOMS, LegendEntry, full_view
from codec import example as ex
from codec.detection import ClassKey
from codec.layers import LayerOptions

__all__ = ["BoxSettings", "full_view_button", "legend"]

LEGEND_SHOWN = 40  # classes listed under a picture; the rest are named in a line


@dataclass(frozen=True)
class BoxSettings:
    """How a source's boxes are read and drawn: its ``spec``, the dataset's ``normalized``
    decision, its ``label_map`` (or None), whether layers are drawn at all (``boxes``, the
    page's switch) and which (``options``: the session's layer switches, score threshold and
    opacity for the source)."""

    spec: str
    normalized: bool | None
    label_map: Mapping[int, str] | None
    boxes: bool
    options: LayerOptions | None = None


def _class_name(entry: LegendEntry) -> str:
    """A widget's name for the switch of ``entry``'s class (text and label both count)."""
    text, label = entry.key
    return f"class:{'-' if label is None else label}:{'-' if text is None else text}"


def _on_class(spec: str, key: ClassKey, name: str) -> None:
    state.set_class_shown(spec, key, bool(state.widget_value(name)))


def _swatch(color: str, bad: bool) -> str:
    border = "2px dashed #ff00ff" if bad else "1px solid #000"
    return (
        f'<div style="width:14px;height:14px;margin-top:3px;border-radius:3px;'
        f'background:{html.escape(color)};border:{border}"></div>'
    )


def legend(spec: str, entries: tuple[LegendEntry, ...]) -> None:
    """The classes of a picture's boxes: a swatch in the class colour, ``text (label)``, how
    many boxes (and how many of them have a problem), and a switch to show or hide the class
    (on the record view, the full view and the gallery of this source)."""
    if not entries:
        return
    hidden = state.hidden_classes(spec)
    with st.container(key="tfb-legend"):
        head = st.container(
            horizontal=True, vertical_alignment="center", horizontal_alignment="distribute"
        )
        head.caption(
            f"**Classes** · {len(entries)} · untick one to hide its boxes", width="content"
        )
        if hidden:
            head.button(
                "Show all",
                key=state.widget_key("classes:show-all"),
                on_click=state.show_all_classes,
                args=(spec,),
                type="tertiary",
            )
        for entry in entries[:LEGEND_SHOWN]:
            name = _class_name(entry)
            state.set_widget_value(name, entry.key not in hidden)
            row = st.container(horizontal=True, vertical_alignment="center", gap="small")
            row.html(_swatch(entry.color, entry.bad == entry.count), width="content")
            count = view.plural(entry.count, "box", "boxes")
            if entry.bad:
                count += f", {entry.bad} with a problem"
            row.checkbox(
                f"{view.md_text(entry.caption)} · {count}",
                key=state.widget_key(name),
                on_change=_on_class,
                args=(spec, entry.key, name),
            )
        rest = entries[LEGEND_SHOWN:]
        if rest:
            st.caption(
                f"… and {view.plural(len(rest), 'more class', 'more classes')}: "
                + ", ".join(view.md_text(e.caption) for e in rest[:50])
            )


# -- the full view -----------------------------------------------------------------------


def _pan(name: str, label: str) -> float:
    """A pan slider (percent of the picture) as a fraction."""
    value = st.slider(
        label, 0, 100, 50, step=1, format="%d %%", key=state.widget_key(f"fullview:{name}")
    )
    return value / 100


def _close() -> None:
    state.set_full_view(None)


@st.dialog("Full view", width="large", on_dismiss=_close)
def _full_view(record: ex.Record, feature: str, index: int, how: BoxSettings) -> None:
    choice = st.segmented_control(
        "Zoom",
        list(ZOOMS),
        default="Fit",
        key=state.widget_key("fullview:zoom"),
        help="Fit shows the whole picture; 100 % shows one picture pixel per screen pixel",
    )
    zoom = ZOOMS.get(choice or "Fit")
    center = (0.5, 0.5)
    if zoom is not None:
        left, right = st.columns(2)
        with left:
            across = _pan("x", "Across")
        with right:
            down = _pan("y", "Down")
        center = (across, down)
    shown = full_view(
        record,
        feature,
        index,
        zoom,
        center,
        boxes=how.boxes,
        normalized=how.normalized,
        label_map=how.label_map,
        hidden=state.hidden_classes(how.spec),
        options=how.options,
    )
    if shown.error is not None or shown.data is None:
        st.error(view.md_text(shown.error or "Cannot show this picture."))
        return
    with st.container(key="tfb-fullview"):
        st.image(shown.data, output_format="PNG", width="content")
    x0, y0, x1, y1 = shown.region
    where = (
        "the whole picture"
        if shown.whole
        else f"pixels {x0:,}–{x1:,} across, {y0:,}–{y1:,} down (move the sliders to pan)"
    )
    boxes = f" · {view.plural(shown.boxes, 'box', 'boxes')} in view" if how.boxes else ""
    others = [x.words for x in shown.layers if x.kind != "boxes" and x.shapes is not None]
    if how.boxes and others:
        boxes += " · " + ", ".join(others)
    hidden = len(state.hidden_classes(how.spec))
    if how.boxes and hidden:
        boxes += f" ({view.plural(hidden, 'class', 'classes')} hidden)"
    st.caption(
        f"{view.md_text(feature)}[{index}] · {shown.width:,}×{shown.height:,} pixels"
        f" · {shown.zoom:.0%} · {where}{boxes}"
    )


def full_view_button(record: ex.Record, number: int, pic: view.Picture, how: BoxSettings) -> None:
    """A button under picture ``pic`` of record ``number`` that opens it in the full view
    (which stays open, across reruns, until it is closed or another record is shown)."""
    if pic.step is not None or pic.data is None:
        return
    which: state.FullView = (how.spec, number, pic.feature, pic.index)
    st.button(
        "Full view",
        key=state.widget_key(f"fullview:button:{pic.feature}:{pic.index}"),
        icon=":material/zoom_in:",
        type="tertiary",
        help="Open the picture large, with zoom (fit, 100, 200, 400 %) and pan",
        on_click=state.set_full_view,
        args=(which,),
    )
    if state.full_view() == which:
        _full_view(record, pic.feature, pic.index, how)
