"""The layers over a record's main picture on screen: one switch per layer the picture has
(ground-truth boxes, predictions, instance masks, the class map, keypoints), each with its
words and legend; the predictions' score threshold (a slider, remembered per source and
carried in the URL) with how many predictions it hides; the opacity of masks and class
maps. The same settings draw the record view, the full view, the gallery's tiles and the
records table's thumbnails."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import streamlit as st

from browser_app import view
from browser_app.ui import state
from browser_app.ui.services import datasets
from codec.layers import (
    CLASS_MAP_LAYER,
    KEYPOINTS,
    MASKS,
    PREDICTIONS,
    Layer,
    LayerOptions,
)

__all__ = ["LAYER_NAMES", "controls", "for_source", "gallery_controls", "session_options"]

LAYER_NAMES = {
    "boxes": "Boxes",
    PREDICTIONS: "Predictions",
    MASKS: "Masks",
    CLASS_MAP_LAYER: "Class map",
    KEYPOINTS: "Keypoints",
}
_LEGEND_SHOWN = 24  # legend entries listed per layer; the rest are named in a line


def session_options(spec: str, label_map: Mapping[int, str] | None = None) -> LayerOptions:
    """What this session draws over the pictures of ``spec``: the layers switched on, the
    score threshold and the opacity chosen for it, its hidden classes and ``label_map``; and
    for a split of a TFDS dataset, the boxes its ``features.json`` declares (``BBoxFeature``,
    named by their ClassLabel: :func:`browser_app.ui.services.datasets.boxes_of_spec`)."""
    off = state.hidden_layers(spec)
    return LayerOptions(
        boxes="boxes" not in off,
        predictions=PREDICTIONS not in off,
        masks=MASKS not in off,
        class_map=CLASS_MAP_LAYER not in off,
        keypoints=KEYPOINTS not in off,
        score_threshold=state.score_threshold(spec),
        opacity=state.layer_opacity(spec),
        label_map=label_map,
        hidden=state.hidden_classes(spec),
        box_features=datasets.boxes_of_spec(state.app_args().root, spec, anon=state.anon()),
    )


def for_source(spec: str) -> LayerOptions:
    """:func:`session_options` of ``spec`` with the label map chosen for it in this session."""
    chosen = state.label_map(spec)
    return session_options(spec, chosen[1].names if chosen else None)


def _on_layer(spec: str, kind: str, name: str) -> None:
    state.set_layer_shown(spec, kind, bool(state.widget_value(name)))


def _on_score(spec: str, name: str) -> None:
    state.set_score_threshold(spec, float(state.widget_value(name, state.DEFAULT_SCORE)))


def _on_opacity(spec: str, name: str) -> None:
    state.set_layer_opacity(spec, float(state.widget_value(name, state.DEFAULT_OPACITY)))


def _switch(spec: str, kind: str, label: str, where: str) -> None:
    name = f"layer:{where}:{kind}"
    state.set_widget_value(name, kind not in state.hidden_layers(spec))
    st.toggle(label, key=state.widget_key(name), on_change=_on_layer, args=(spec, kind, name))


def _score_slider(spec: str, where: str) -> None:
    name = f"layer:{where}:score"
    state.set_widget_value(name, state.score_threshold(spec))
    st.slider(
        "Score threshold",
        0.0,
        1.0,
        step=0.05,
        key=state.widget_key(name),
        on_change=_on_score,
        args=(spec, name),
        help="Predictions scoring below this are not drawn (remembered for this dataset, and"
        " kept in the page's link)",
    )


def _opacity_slider(spec: str, where: str) -> None:
    name = f"layer:{where}:opacity"
    state.set_widget_value(name, state.layer_opacity(spec))
    st.slider(
        "Opacity of masks and class maps",
        0.0,
        1.0,
        step=0.05,
        key=state.widget_key(name),
        on_change=_on_opacity,
        args=(spec, name),
    )


def _swatches(layer: Layer) -> str:
    """The legend of ``layer`` as coloured swatches with captions and counts, after the
    layer's name (the legends of several layers stand one under the other)."""
    name = html.escape(LAYER_NAMES.get(layer.kind, layer.kind))
    items = [f'<span style="font-weight:600;margin-right:8px">{name}</span>']
    for item in layer.legend[:_LEGEND_SHOWN]:
        color = html.escape(item.color)
        border = "2px dashed #ff00ff" if item.bad else "1px solid #000"
        hatch = (
            "background-image:repeating-linear-gradient(45deg,#fff 0 2px,transparent 2px 5px);"
            if layer.kind == CLASS_MAP_LAYER and item.key[1] == 255
            else ""
        )
        count = "" if layer.kind == CLASS_MAP_LAYER else f" · {item.count:,}"
        items.append(
            '<span style="display:inline-flex;align-items:center;margin:0 10px 2px 0">'
            f'<span style="width:12px;height:12px;border-radius:2px;background:{color};'
            f'{hatch}border:{border};margin-right:4px;display:inline-block"></span>'
            f"{html.escape(item.caption)}{count}</span>"
        )
    rest = len(layer.legend) - _LEGEND_SHOWN
    if rest > 0:
        items.append(f"<span>… and {rest:,} more</span>")
    return f'<div style="font-size:0.8rem;line-height:1.5">{"".join(items)}</div>'


def controls(spec: str, layers: Sequence[Layer]) -> None:
    """Under a main picture: a switch per layer it has (the ground-truth boxes keep the
    class legend of :func:`picture_view.legend`), the score threshold when it has
    predictions (saying how many it hides), the opacity when it has masks or a class map,
    and the legends of the class map, predictions, masks and keypoints."""
    if not layers:
        return
    options = session_options(spec)
    kinds = {layer.kind for layer in layers}
    with st.container(key="tfb-layers"):
        st.caption("**Layers** · " + " · ".join(layer.words for layer in layers))
        # A row that wraps: the pictures' column is narrow, and a column per switch there
        # left no room for their labels.
        with st.container(horizontal=True, gap="medium", key="tfb-layer-switches"):
            for kind in [k for k in LAYER_NAMES if k in kinds]:
                _switch(spec, kind, LAYER_NAMES[kind], "detail")
        for layer in layers:
            if layer.kind == PREDICTIONS:
                if options.predictions and layer.threshold is not None:
                    _score_slider(spec, "detail")
                    if layer.below:
                        st.caption(
                            f"{view.plural(layer.below, 'prediction')} of {layer.total:,}"
                            f" scored below {layer.threshold:g} and are hidden."
                        )
                elif layer.threshold is None:
                    st.caption("These predictions have no scores: every one is drawn.")
            if layer.kind != "boxes" and layer.legend and options.shows(layer.kind):
                st.html(_swatches(layer))
            for problem in layer.problems[:5] if layer.kind != "boxes" else ():
                st.caption(f"⚠ {view.md_text(problem)}")
        if (MASKS in kinds and options.masks) or (CLASS_MAP_LAYER in kinds and options.class_map):
            _opacity_slider(spec, "detail")


def gallery_controls(spec: str) -> None:
    """The gallery bar's "Layers" popover: a switch per layer kind, the score threshold and
    the opacity, for every tile of ``spec``."""
    with st.popover("Layer settings", icon=":material/layers:"):
        for kind, label in LAYER_NAMES.items():
            _switch(spec, kind, label, "gallery")
        _score_slider(spec, "gallery")
        _opacity_slider(spec, "gallery")
