"""Object Detection data: where the boxes are, what a record's boxes are, what is wrong.

The Object Detection API stores boxes as parallel lists under a prefix: the four
``<prefix>bbox/{xmin,ymin,xmax,ymax}`` lists, ``<prefix>class/text`` and
``<prefix>class/label``, and any other ``<prefix>*`` list (``difficult``, ``area``...), one
value per object; the picture is ``<root>encoded`` with ``<root>height`` / ``<root>width``
(``image/object/`` and ``image/`` in the API's own layout). :func:`layouts` finds every such
prefix among a dataset's feature names, so the same code serves any naming.

Coordinates are normalised ([0, 1] of the picture) or pixels. That is decided per dataset
(:func:`decide_normalized`), never per record, so one bad value cannot turn a record's
boxes into pixel positions. A box whose coordinates are out of range, not finite or inverted
is kept, with its problems named, and drawn clipped and marked.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .kinds import BYTES, FLOAT, INT64

__all__ = [
    "BBOX",
    "CLASS_COLORS",
    "ClassKey",
    "Layout",
    "RecordBoxes",
    "StoredBox",
    "class_caption",
    "class_color",
    "coordinates",
    "decide_normalized",
    "layouts",
    "record_boxes",
]

BBOX = ("xmin", "ymin", "xmax", "ymax")
_SUFFIX = "bbox/xmin"
NORMALIZED_SHARE = 0.9  # coordinates count as normalised when this share of them is in [0, 1]


@dataclass(frozen=True)
class Layout:
    """One set of parallel object lists: ``prefix`` (``"image/object/"``), ``root``
    (``"image/"``) and ``parallel``, every list under the prefix (the four bbox lists first)."""

    prefix: str
    root: str
    parallel: tuple[str, ...]

    def bbox(self, side: str) -> str:
        return f"{self.prefix}bbox/{side}"

    @property
    def boxes(self) -> tuple[str, str, str, str]:
        xmin, ymin, xmax, ymax = (self.bbox(s) for s in BBOX)
        return xmin, ymin, xmax, ymax

    @property
    def text(self) -> str:
        return f"{self.prefix}class/text"

    @property
    def label(self) -> str:
        return f"{self.prefix}class/label"

    @property
    def image(self) -> str:
        return f"{self.root}encoded"

    @property
    def height(self) -> str:
        return f"{self.root}height"

    @property
    def width(self) -> str:
        return f"{self.root}width"


def layouts(names: Iterable[str]) -> list[Layout]:
    """Every detection layout among feature ``names``: a prefix under which all four
    ``bbox/{xmin,ymin,xmax,ymax}`` lists exist."""
    have = set(names)
    out = []
    for name in sorted(have):
        if not name.endswith(_SUFFIX):
            continue
        prefix = name[: -len(_SUFFIX)]
        if not all(f"{prefix}bbox/{s}" in have for s in BBOX):
            continue
        root = prefix[: -len("object/")] if prefix.endswith("object/") else prefix
        boxes = tuple(f"{prefix}bbox/{s}" for s in BBOX)
        rest = sorted(n for n in have if n.startswith(prefix) and n not in boxes)
        out.append(Layout(prefix, root, boxes + tuple(rest)))
    return out


def decide_normalized(values: Iterable[float], share: float = NORMALIZED_SHARE) -> bool:
    """Whether coordinates are normalised: when at least ``share`` of the finite values lie
    in [0, 1] (so a few out-of-range values stay out of range instead of turning every box
    into pixels). No finite value: normalised."""
    inside = total = 0
    for v in values:
        if math.isfinite(v):
            total += 1
            inside += 0.0 <= v <= 1.0
    return total == 0 or inside >= share * total


ClassKey = tuple[str | None, int | None]
"""A class of objects: ``(text, label)`` as a record stores them (either may be missing)."""

# One colour per class: bright enough to read on dark pictures (a dark edge around each line
# keeps them readable on light ones), far apart in hue and lightness, and none of them the
# magenta that marks a box with a problem.
CLASS_COLORS = (
    "#ff3b30",  # red
    "#ff9500",  # orange
    "#ffcc00",  # yellow
    "#34c759",  # green
    "#00c7be",  # teal
    "#5ac8fa",  # sky
    "#007aff",  # blue
    "#af52de",  # purple
    "#a2845e",  # brown
    "#b8e986",  # pale green
    "#ff8a80",  # salmon
    "#9ad0ff",  # pale blue
    "#c8a2ff",  # lavender
    "#ffe08a",  # pale yellow
    "#2e8b57",  # sea green
    "#5856d6",  # indigo
    "#ffffff",  # white
    "#8e8e93",  # grey
)


def class_caption(text: str | None, label: int | None) -> str:
    """``"text (label)"``, or whichever of the two there is ("" for neither)."""
    if text is not None and label is not None:
        return f"{text} ({label})"
    if text is not None:
        return text
    return "" if label is None else str(label)


def class_color(key: ClassKey) -> str:
    """The colour of a class, from the class alone (never from where it stands on a page),
    so it is the same on every record, page and run: the label picks it when there is one
    (classes whose labels differ by less than ``len(CLASS_COLORS)`` never share a colour),
    else a digest of the text."""
    text, label = key
    if label is not None:
        return CLASS_COLORS[label % len(CLASS_COLORS)]
    digest = hashlib.blake2b((text or "").encode("utf-8", "surrogatepass"), digest_size=4)
    return CLASS_COLORS[int.from_bytes(digest.digest(), "big") % len(CLASS_COLORS)]


@dataclass(frozen=True)
class StoredBox:
    """One box as stored (``xmin``... may be anything, NaN included), with its class text and
    label when the record has them, and ``problems``: what is wrong with it, in words."""

    index: int
    xmin: float
    ymin: float
    xmax: float
    ymax: float
    text: str | None = None
    label: int | None = None
    problems: tuple[str, ...] = ()

    @property
    def caption(self) -> str:
        """``"text (label)"``, or whichever of the two the record has."""
        return class_caption(self.text, self.label)

    def pixels(
        self, width: int, height: int, normalized: bool
    ) -> tuple[float, float, float, float] | None:
        """``(x0, y0, x1, y1)`` in pixels of a ``width`` × ``height`` picture, ordered and
        clipped to it; ``None`` when a coordinate is not finite (it cannot be drawn)."""
        coords = (self.xmin, self.ymin, self.xmax, self.ymax)
        if not all(math.isfinite(c) for c in coords):
            return None
        sx, sy = (width, height) if normalized else (1, 1)
        x0, x1 = sorted((self.xmin * sx, self.xmax * sx))
        y0, y1 = sorted((self.ymin * sy, self.ymax * sy))
        clip_x = lambda v: min(max(v, 0.0), float(width))  # noqa: E731
        clip_y = lambda v: min(max(v, 0.0), float(height))  # noqa: E731
        return clip_x(x0), clip_y(y0), clip_x(x1), clip_y(y1)


@dataclass(frozen=True)
class RecordBoxes:
    """A record's boxes under one layout, and what is wrong with the record as a whole
    (parallel lists of different lengths)."""

    layout: Layout
    boxes: list[StoredBox] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def bad(self) -> int:
        """How many boxes have a problem."""
        return sum(1 for b in self.boxes if b.problems)


def _values(features: Mapping[str, Any], name: str, types: tuple[str, ...]) -> list[Any] | None:
    f = features.get(name)
    if f is None or f.type not in types:
        return None
    return list(f.values)


def record_boxes(
    features: Mapping[str, Any],
    layout: Layout,
    *,
    normalized: bool,
    width: int | None = None,
    height: int | None = None,
    label_map: Mapping[int, str] | None = None,
) -> RecordBoxes:
    """The boxes of one record's ``features`` (an Example's features) under ``layout``, each
    with its problems: a coordinate that is not finite, outside [0, 1] (normalised) or outside
    the ``width`` × ``height`` picture (pixels), xmin ≥ xmax or ymin ≥ ymax, a label outside
    ``label_map``. Lists of different lengths give as many boxes as the shortest bbox list,
    and a record problem."""
    coords = [_values(features, name, (FLOAT, INT64)) or [] for name in layout.boxes]
    problems: list[str] = []
    lengths = {
        name: len(_values(features, name, (FLOAT, INT64, BYTES)) or []) for name in layout.parallel
    }
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"{name} {n}" for name, n in lengths.items())
        problems.append(f"the object lists have different lengths: {described}")
    n = min(len(c) for c in coords)
    texts_raw = _values(features, layout.text, (BYTES,)) or []
    texts = [bytes(t).decode("utf-8", "replace") for t in texts_raw]
    labels = [int(v) for v in _values(features, layout.label, (INT64,)) or []]
    boxes = []
    for i in range(n):
        x0, y0, x1, y1 = (float(c[i]) for c in coords)
        bad: list[str] = []
        finite = all(math.isfinite(v) for v in (x0, y0, x1, y1))
        if not finite:
            bad.append("a coordinate is not a finite number")
        else:
            if normalized and not all(0.0 <= v <= 1.0 for v in (x0, y0, x1, y1)):
                bad.append("a coordinate is outside [0, 1]")
            if not normalized and (
                min(x0, y0, x1, y1) < 0
                or (width is not None and max(x0, x1) > width)
                or (height is not None and max(y0, y1) > height)
            ):
                bad.append("the box reaches outside the picture")
            if x0 >= x1 or y0 >= y1:
                bad.append("xmin ≥ xmax or ymin ≥ ymax")
        label = labels[i] if i < len(labels) else None
        if label_map is not None and label is not None and label not in label_map:
            bad.append(f"label {label} is not in the label map")
        boxes.append(
            StoredBox(
                i,
                x0,
                y0,
                x1,
                y1,
                texts[i] if i < len(texts) else None,
                label,
                tuple(bad),
            )
        )
    return RecordBoxes(layout, boxes, problems)


def coordinates(features: Mapping[str, Any], layout: Layout) -> Sequence[float]:
    """Every stored coordinate of a record under ``layout`` (for :func:`decide_normalized`)."""
    out: list[float] = []
    for name in layout.boxes:
        out.extend(float(v) for v in _values(features, name, (FLOAT, INT64)) or [])
    return out
