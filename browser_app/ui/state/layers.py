"""How the layers over a record's picture are drawn, per source: which layers are on
(ground-truth boxes, predictions, instance masks, the class map, keypoints), the score
threshold of predictions and the opacity of masks and class maps.

The score threshold is remembered per source and carried in the URL (``&score=0.3``) while
it differs from :data:`DEFAULT_SCORE`, so a link shows the predictions its sender saw."""

from __future__ import annotations

import math

import streamlit as st

from browser_app.ui.state.store import flash, read, write

__all__ = [
    "DEFAULT_OPACITY",
    "DEFAULT_SCORE",
    "LAYER_KINDS",
    "Q_SCORE",
    "hidden_layers",
    "layer_opacity",
    "link_score",
    "score_param",
    "score_threshold",
    "set_layer_opacity",
    "set_layer_shown",
    "set_score_threshold",
]

LAYER_KINDS = ("boxes", "predictions", "masks", "class_map", "keypoints")
DEFAULT_SCORE = 0.5
DEFAULT_OPACITY = 0.5
Q_SCORE = "score"


def hidden_layers(spec: str) -> frozenset[str]:
    """The layers turned off on the source ``spec`` (kinds of :data:`LAYER_KINDS`)."""
    return read(f"layers_off:{spec}", frozenset) or frozenset()


def set_layer_shown(spec: str, kind: str, shown: bool) -> None:
    """Turn layer ``kind`` on or off on the source ``spec`` (every view of it)."""
    if kind not in LAYER_KINDS:
        raise ValueError(f"no layer {kind!r}")
    now = hidden_layers(spec)
    write(f"layers_off:{spec}", now - {kind} if shown else now | {kind})


def score_threshold(spec: str) -> float:
    """The score below which predictions of ``spec`` are not drawn (0 to 1)."""
    value = read(f"score:{spec}", float)
    return DEFAULT_SCORE if value is None else value


def set_score_threshold(spec: str, value: float) -> None:
    """Draw the predictions of ``spec`` whose score is at least ``value`` (clamped to 0–1)."""
    if not math.isfinite(value):
        return
    write(f"score:{spec}", min(1.0, max(0.0, float(value))))


def layer_opacity(spec: str) -> float:
    """How opaque masks and class maps are drawn over the picture of ``spec`` (0 to 1)."""
    value = read(f"opacity:{spec}", float)
    return DEFAULT_OPACITY if value is None else value


def set_layer_opacity(spec: str, value: float) -> None:
    if math.isfinite(value):
        write(f"opacity:{spec}", min(1.0, max(0.0, float(value))))


def link_score(spec: str) -> None:
    """Adopt a link's ``score=`` for the source it opens (a number from 0 to 1; anything
    else is ignored with a message)."""
    raw = st.query_params.get(Q_SCORE)
    if raw is None:
        return
    try:
        value = float(str(raw).strip())
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        flash(f"The link's {Q_SCORE}={raw!r} is not a score from 0 to 1; it was ignored.")
        return
    set_score_threshold(spec, value)


def score_param(spec: str) -> list[str]:
    """The URL's ``score`` values for the source ``spec``: none at the default."""
    value = score_threshold(spec)
    return [] if value == DEFAULT_SCORE else [f"{value:g}"]
