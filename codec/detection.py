"""Object Detection data: where the boxes are, what a record's boxes are, what is wrong.

The Object Detection API stores boxes as parallel lists under a prefix: the four
``<prefix>bbox/{xmin,ymin,xmax,ymax}`` lists, ``<prefix>class/text`` and
``<prefix>class/label``, and other ``<prefix>*`` lists (``difficult``, ``area``, masks,
keypoints...); the picture is ``<root>encoded`` with ``<root>height`` / ``<root>width``
(``image/object/`` and ``image/`` in the API's own layout). :func:`layouts` finds every such
prefix among a dataset's feature names, so the same code serves any naming.

A layout is ground truth (``"objects"``) or a model's ``"predictions"``
(``image/detection/`` as ``infer_detections.py`` writes it, with ``label`` and ``score``
lists; :func:`layout_kind`). :func:`layouts` gives the ground truth first, so ``[0]`` is
what a record's boxes are whenever it has some.

Object lists are checked by what they hold (:func:`list_kind`, :func:`object_lengths`: one
rule for a record and for the dataset's schema): N values per object, N·K per keypoint list,
N PNGs or N·H·W numbers for masks, one value per DensePose point.

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
from functools import cached_property, lru_cache
from typing import Any, Literal, get_args

import numpy as np

from .kinds import BYTES, FLOAT, INT64

__all__ = [
    "BBOX",
    "CLASS_COLORS",
    "FACTORS",
    "LAYOUT_KINDS",
    "LIST_KINDS",
    "OBJECTS",
    "PREDICTIONS",
    "ClassKey",
    "Layout",
    "LayoutKind",
    "ListKind",
    "ObjectLengths",
    "RecordBoxes",
    "StoredBox",
    "class_caption",
    "class_color",
    "coordinates",
    "decide_normalized",
    "factor_lists",
    "keypoint_count",
    "layout_kind",
    "layout_of",
    "layout_rank",
    "layout_root",
    "layouts",
    "list_kind",
    "object_lengths",
    "record_boxes",
]

BBOX = ("xmin", "ymin", "xmax", "ymax")
_SUFFIX = "bbox/xmin"
NORMALIZED_SHARE = 0.9  # coordinates count as normalised when this share of them is in [0, 1]


LayoutKind = Literal["objects", "predictions"]
OBJECTS: LayoutKind = "objects"  # ground truth (``image/object/``)
PREDICTIONS: LayoutKind = "predictions"  # a model's output (``image/detection/``)
LAYOUT_KINDS: tuple[LayoutKind, ...] = get_args(LayoutKind)

_SCORES = ("score", "scores")


def layout_kind(prefix: str, names: Iterable[str]) -> LayoutKind:
    """What the lists under ``prefix`` are: ``"predictions"`` when the prefix ends with
    ``detection/`` (``image/detection/``, as ``infer_detections.py`` writes them) or, unless
    it ends with ``object/``, when a ``<prefix>score`` / ``<prefix>scores`` list stands beside
    the boxes; ``"objects"`` (ground truth) otherwise."""
    if prefix.endswith("detection/"):
        return PREDICTIONS
    if prefix.endswith("object/"):
        return OBJECTS
    have = set(names)
    return PREDICTIONS if any(prefix + s in have for s in _SCORES) else OBJECTS


def layout_root(prefix: str) -> str:
    """Where a layout's picture lives: ``image/`` for both ``image/object/`` and
    ``image/detection/``; the prefix itself for any other naming."""
    for tail in ("object/", "detection/"):
        if prefix.endswith(tail):
            return prefix[: -len(tail)]
    return prefix


@dataclass(frozen=True)
class Layout:
    """One set of parallel object lists: ``prefix`` (``"image/object/"``), ``root``
    (``"image/"``), ``parallel``, every list under the prefix (the four bbox lists first), and
    ``kind``: ``"objects"`` (ground truth) or ``"predictions"`` (:func:`layout_kind`; worked
    out from the prefix and ``parallel`` when not given).

    The class lists are :attr:`label` and :attr:`text`, the score list :attr:`score`: the keys
    actually used, which depend on the kind and on the lists there are."""

    prefix: str
    root: str
    parallel: tuple[str, ...]
    kind: str = ""

    def __post_init__(self) -> None:
        if self.kind not in LAYOUT_KINDS:
            object.__setattr__(self, "kind", layout_kind(self.prefix, self.parallel))

    def bbox(self, side: str) -> str:
        return f"{self.prefix}bbox/{side}"

    @cached_property
    def boxes(self) -> tuple[str, str, str, str]:
        """The four bbox lists' names (worked out once per layout: every list is checked
        against them)."""
        xmin, ymin, xmax, ymax = (self.bbox(s) for s in BBOX)
        return xmin, ymin, xmax, ymax

    @property
    def is_predictions(self) -> bool:
        return self.kind == PREDICTIONS

    @property
    def text(self) -> str:
        """The class text list: ``<prefix>class/text``."""
        return f"{self.prefix}class/text"

    @property
    def label(self) -> str:
        """The class label list: ``<prefix>class/label``; for predictions ``<prefix>label``
        (``image/detection/label``) when the record has it."""
        if self.kind == PREDICTIONS and f"{self.prefix}label" in self.parallel:
            return f"{self.prefix}label"
        return f"{self.prefix}class/label"

    @property
    def score(self) -> str | None:
        """The score list of predictions (``<prefix>score``, else ``<prefix>scores``); None
        for ground truth, or predictions without scores."""
        if self.kind != PREDICTIONS:
            return None
        for s in _SCORES:
            if self.prefix + s in self.parallel:
                return self.prefix + s
        return None

    @property
    def image(self) -> str:
        return f"{self.root}encoded"

    @property
    def height(self) -> str:
        return f"{self.root}height"

    @property
    def width(self) -> str:
        return f"{self.root}width"


def layout_of(prefix: str, names: Iterable[str]) -> Layout:
    """The layout under ``prefix`` among feature ``names``: every name under it is one of its
    lists, except those under a longer prefix that holds boxes of its own (another layout)."""
    have = set(names)
    boxes = tuple(f"{prefix}bbox/{s}" for s in BBOX)
    nested = {
        n[: -len(_SUFFIX)]
        for n in have
        if n.endswith(_SUFFIX) and n.startswith(prefix) and len(n) - len(_SUFFIX) > len(prefix)
    }
    rest = sorted(
        n
        for n in have
        if n.startswith(prefix) and n not in boxes and not any(n.startswith(p) for p in nested)
    )
    return Layout(prefix, layout_root(prefix), boxes + tuple(rest), layout_kind(prefix, have))


def layout_rank(prefix: str, kind: str) -> tuple[bool, bool, str]:
    """The order of layouts: ground truth first (``image/object/`` first of all), then
    predictions (``image/detection/`` first), each by prefix."""
    usual = "image/detection/" if kind == PREDICTIONS else "image/object/"
    return (kind == PREDICTIONS, prefix != usual, prefix)


def layouts(names: Iterable[str]) -> list[Layout]:
    """Every detection layout among feature ``names``: a prefix under which all four
    ``bbox/{xmin,ymin,xmax,ymax}`` lists exist. Ground truth first (``image/object/`` first
    of all), then predictions (``image/detection/`` first), each by prefix: so ``[0]`` is
    the ground truth whenever a record has some; callers wanting one kind filter on
    :attr:`Layout.kind`."""
    return list(_layouts(frozenset(names)))


@lru_cache(maxsize=512)
def _layouts(have: frozenset[str]) -> tuple[Layout, ...]:
    """:func:`layouts` of a set of names, worked out once per set: the records of a dataset
    mostly share their feature names, and a record's layouts are asked for more than once
    (its pictures' roles, its layers)."""
    out = []
    for name in have:
        if not name.endswith(_SUFFIX):
            continue
        prefix = name[: -len(_SUFFIX)]
        if all(f"{prefix}bbox/{s}" in have for s in BBOX):
            out.append(layout_of(prefix, have))
    return tuple(sorted(out, key=lambda lay: layout_rank(lay.prefix, lay.kind)))


def decide_normalized(values: Iterable[float], share: float = NORMALIZED_SHARE) -> bool:
    """Whether coordinates are normalised: when at least ``share`` of the finite values lie
    in [0, 1] (so a few out-of-range values stay out of range instead of turning every box
    into pixels). No finite value: normalised."""
    v = (
        np.asarray(values, np.float64).reshape(-1)
        if isinstance(values, np.ndarray)
        else np.fromiter(values, np.float64)
    )
    finite = v[np.isfinite(v)]
    total = int(finite.size)
    inside = int(np.count_nonzero((finite >= 0.0) & (finite <= 1.0)))
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


@lru_cache(maxsize=4096)
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
    score: float | None = None

    @property
    def caption(self) -> str:
        """``"text (label)"``, or whichever of the two the record has."""
        return class_caption(self.text, self.label)

    def pixels(
        self, width: int, height: int, normalized: bool
    ) -> tuple[float, float, float, float] | None:
        """``(x0, y0, x1, y1)`` in pixels of a ``width`` × ``height`` picture, ordered and
        clipped to it; ``None`` when a coordinate is not finite (it cannot be drawn)."""
        return box_pixels(self.xmin, self.ymin, self.xmax, self.ymax, width, height, normalized)


def box_pixels(
    xmin: float, ymin: float, xmax: float, ymax: float, width: int, height: int, normalized: bool
) -> tuple[float, float, float, float] | None:
    """:meth:`StoredBox.pixels` of a box's four coordinates (no box built for it)."""
    isfinite = math.isfinite
    if not (isfinite(xmin) and isfinite(ymin) and isfinite(xmax) and isfinite(ymax)):
        return None
    if normalized:
        xmin, xmax, ymin, ymax = xmin * width, xmax * width, ymin * height, ymax * height
    else:
        xmin, xmax, ymin, ymax = xmin * 1, xmax * 1, ymin * 1, ymax * 1
    x0, x1 = (xmax, xmin) if xmax < xmin else (xmin, xmax)
    y0, y1 = (ymax, ymin) if ymax < ymin else (ymin, ymax)
    fw, fh = float(width), float(height)
    return (
        min(max(x0, 0.0), fw),
        min(max(y0, 0.0), fh),
        min(max(x1, 0.0), fw),
        min(max(y1, 0.0), fh),
    )


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


# -- object lists checked by what they are ---------------------------------------------------

ListKind = Literal["box", "object", "keypoint", "class_score", "mask", "densepose"]
LIST_KINDS: tuple[ListKind, ...] = get_args(ListKind)
# Lists holding a constant number of values per object, that number taken from the data:
# the kind, and the letter its messages give the number.
FACTORS: dict[str, str] = {"keypoint": "K", "class_score": "C"}
_FIRST_OF = {"keypoint": ("keypoint/x", "keypoint/y")}  # a group's lists that vote first


def factor_lists(layout: Layout, names: Iterable[str], kind: str) -> list[str]:
    """The lists among ``names`` of a kind of :data:`FACTORS`, in the order they vote for the
    record's K (C): ``keypoint/x``, ``keypoint/y``, then the others by name."""
    have = set(names)
    return _factor_order(layout, have, [list_kind(layout, k) for k in have], kind)


def _factor_order(
    layout: Layout, names: Iterable[str], kinds: Iterable[str], kind: str
) -> list[str]:
    """:func:`factor_lists` of distinct ``names`` whose kinds are known (``kinds``)."""
    first = [layout.prefix + r for r in _FIRST_OF.get(kind, ())]
    mine = sorted(k for k, of in zip(names, kinds) if of == kind)
    return [k for k in first if k in mine] + [k for k in mine if k not in first]


def list_kind(layout: Layout, name: str) -> ListKind:
    """What list ``name`` of ``layout`` holds, which says how long it must be in a record
    with N objects (N: the length of the bbox lists):

    - ``box``: the four ``bbox/*`` lists, N values;
    - ``object``: one value per object, N — the class lists, ``score``, ``is_crowd``,
      ``area``, ``difficult``, ``keypoint/num``, ``mask/weight``, ``densepose/num`` and any
      list not named below;
    - ``keypoint``: every other ``keypoint/*`` list (``x``, ``y``, ``visibility``, ``text``,
      ``z``, ``z/weights``), N·K with K points per object, the same for every list and
      record (taken from the data: COCO has 17);
    - ``class_score``: ``class/multiclass_scores``, N·C with C classes;
    - ``mask``: ``mask``, N PNG pictures (bytes), or N·H·W numbers with H and W the
      picture's ``<root>height`` and ``<root>width``;
    - ``densepose``: every other ``densepose/*`` list, one value per DensePose point: the sum
      of ``densepose/num``.
    """
    if name in layout.boxes:
        return "box"
    rel = name[len(layout.prefix) :] if name.startswith(layout.prefix) else name
    if rel in ("keypoint/num", "densepose/num"):
        return "object"
    if rel.startswith("keypoint/"):
        return "keypoint"
    if rel == "class/multiclass_scores":
        return "class_score"
    if rel == "mask":
        return "mask"
    if rel.startswith("densepose/"):
        return "densepose"
    return "object"


def _mode(rows: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per column of ``rows`` (lists × records), the value most valid rows hold (ties: the
    earliest row's); -1 where no row is valid."""
    if not len(rows):
        return np.full(rows.shape[1], -1, np.int64)
    votes = ((rows[:, None, :] == rows[None, :, :]) & valid[None, :, :]).sum(axis=1)
    votes = np.where(valid, votes, -1)
    best = votes.argmax(axis=0)
    cols = np.arange(rows.shape[1])
    return np.where(valid[best, cols], rows[best, cols], -1)


@dataclass(frozen=True)
class ObjectLengths:
    """The object lists of records under one layout checked by what they are (see
    :func:`list_kind`); every array has one column per record.

    ``n`` is N (the length most of the four bbox lists have; ties: the earlier of
    xmin, ymin, xmax, ymax); ``factors[kind]`` K or C per record (-1: not known); ``expected``
    the length each list must have (-1: not known — a float mask whose picture size is not
    known must then hold a multiple of N values, DensePose points are not checked without a
    good ``densepose/num``); ``wrong`` the lists that do not have it."""

    layout: Layout
    names: tuple[str, ...]
    kinds: tuple[ListKind, ...]
    lengths: np.ndarray  # names × records
    numeric: np.ndarray  # names × records: a list of numbers (for masks)
    n: np.ndarray
    factors: dict[str, np.ndarray]
    pixels: np.ndarray  # H·W per record, -1 when not known
    points: np.ndarray  # DensePose points per record, -1 when not known
    expected: np.ndarray  # names × records
    wrong: np.ndarray  # names × records

    @property
    def bad(self) -> np.ndarray:
        """Per record: whether any list has a length its layout does not explain."""
        if not len(self.names):
            return np.zeros(len(self.n), bool)
        return np.asarray(self.wrong.any(axis=0))

    def expectation(self, j: int, i: int) -> str:
        """What list ``j`` of record ``i`` should hold, in words: ``N = 3``,
        ``N·K = 2·17 = 34``, ``N·H·W = 2·4·6 = 48``..."""
        kind = self.kinds[j]
        n = int(self.n[i])
        exp = int(self.expected[j, i])
        if kind in FACTORS:
            f = int(self.factors[kind][i])
            letter = FACTORS[kind]
            if f < 0:
                return f"N·{letter} with {letter} the same for every object (N = {n})"
            return f"N·{letter} = {n}·{f} = {exp}"
        if kind == "mask":
            if not self.numeric[j, i]:
                return f"N = {n} (one PNG per object)"
            px = int(self.pixels[i])
            if px < 0:
                return f"N·H·W, a multiple of N = {n} (the picture's size is not known)"
            return f"N·H·W = {n}·{px} = {exp}"
        if kind == "densepose":
            return f"the sum of {self.layout.prefix}densepose/num = {exp}"
        return f"N = {exp}"

    def problem(self, j: int, i: int) -> str:
        """List ``j`` of record ``i`` in words: ``image/object/keypoint/x has 30 values;
        expected N·K = 2·17 = 34``."""
        length = int(self.lengths[j, i])
        has = f"has {length} value{'s' if length != 1 else ''}" if length else "has no values"
        return f"{self.names[j]} {has}; expected {self.expectation(j, i)}"

    def problems(self, i: int) -> list[str]:
        """Every list of record ``i`` whose length its layout does not explain, in words."""
        return [self.problem(j, i) for j in range(len(self.names)) if self.wrong[j, i]]


def object_lengths(
    layout: Layout,
    lengths: Mapping[str, np.ndarray],
    *,
    numeric: Mapping[str, np.ndarray] | None = None,
    pixels: np.ndarray | None = None,
    points: np.ndarray | None = None,
    factors: Mapping[str, int] | None = None,
) -> ObjectLengths:
    """Check the lengths of a layout's lists in many records at once — the one rule, used
    for a record (:func:`record_boxes`) and by the dataset's schema.

    ``lengths``: per list name, its length in each record (0 where absent: an absent list
    counts as empty); ``numeric``: per list, whether it holds numbers (a float ``mask`` is
    N·H·W, a bytes one N); ``pixels``: H·W of each record's picture (-1 or NaN: not known);
    ``points``: the sum of ``densepose/num`` per record; ``factors``: K / C for the whole
    dataset (by kind, see :data:`FACTORS`) — without it each record's own, the value most of
    its lists of that kind agree on."""
    names = tuple(lengths)
    count = len(next(iter(lengths.values()))) if lengths else 0
    zeros = np.zeros(count, np.int64)
    lens = np.array([np.asarray(lengths[k], np.int64) for k in names], np.int64).reshape(
        len(names), count
    )
    kinds = tuple(list_kind(layout, k) for k in names)
    numbers = np.array(
        [np.asarray((numeric or {}).get(k, zeros), bool) for k in names], bool
    ).reshape(len(names), count)
    sides = np.array([np.asarray(lengths.get(b, zeros), np.int64) for b in layout.boxes])
    n = _mode(sides, np.ones_like(sides, bool))
    px = np.full(count, -1, np.int64) if pixels is None else _known(pixels, count)
    pts = np.full(count, -1, np.int64) if points is None else _known(points, count)
    num = f"{layout.prefix}densepose/num"
    if num in lengths:
        pts = np.where(np.asarray(lengths[num]) == n, pts, -1)
    else:
        pts = np.where(n == 0, 0, -1)
    expected = np.full((len(names), count), -1, np.int64)
    per: dict[str, np.ndarray] = {}
    for kind in FACTORS:
        if kind not in kinds:
            continue
        order = _factor_order(layout, names, kinds, kind)
        if not order:
            continue
        rows = [names.index(k) for k in order]
        if factors is not None and kind in factors:
            per[kind] = np.full(count, int(factors[kind]), np.int64)
        else:
            sub = lens[rows]
            safe = np.maximum(n, 1)
            valid = (n > 0) & (sub % safe == 0)
            per[kind] = np.where(n == 0, 0, _mode(sub // safe, valid))
    # Row by row as the kinds say, each kind's rows at once.
    by_kind: dict[str, list[int]] = {}
    for j, kind in enumerate(kinds):
        by_kind.setdefault(kind, []).append(j)
    for kind, rows in by_kind.items():
        if kind in ("box", "object"):
            expected[rows] = n
        elif kind in FACTORS:
            f = per[kind]
            expected[rows] = np.where(f >= 0, n * f, -1)
        elif kind == "mask":
            expected[rows] = np.where(numbers[rows], np.where(px >= 0, n * px, -1), n)
        else:
            expected[rows] = pts
    known = expected >= 0
    divides = np.where(n > 0, lens % np.maximum(n, 1) == 0, lens == 0)
    is_mask = np.array([k == "mask" for k in kinds], bool)[:, None]
    is_factor = np.array([k in FACTORS for k in kinds], bool)[:, None]
    loose = ~known & is_mask  # a float mask of a picture whose size is not known
    # No K (C) makes every list of its kind N·K: none of them is explained.
    wrong = (known & (lens != expected)) | (loose & ~divides) | (~known & is_factor)
    return ObjectLengths(layout, names, kinds, lens, numbers, n, per, px, pts, expected, wrong)


def _known(values: np.ndarray, count: int) -> np.ndarray:
    """Non-negative whole numbers as int64, -1 for NaN or negative ones."""
    v = np.asarray(values, np.float64).reshape(count)
    ok = np.isfinite(v) & (v >= 0)
    return np.where(ok, v, -1.0).astype(np.int64)


def _record_lengths(
    features: Mapping[str, Any],
    layout: Layout,
    factors: Mapping[str, int] | None = None,
) -> ObjectLengths:
    """:func:`object_lengths` of one record's ``features``. What it says depends only on
    the lists' lengths and types, the picture's size and the DensePose points, which records
    of a dataset mostly share (the same N, K…): it is worked out once per such set
    (:func:`_lengths_of`), its arrays read-only."""
    lengths: list[int] = []
    numeric: list[bool] = []
    for name in layout.parallel:
        f = features.get(name)
        if f is None or f.type not in (FLOAT, INT64, BYTES):
            lengths.append(0)
            numeric.append(False)
            continue
        lengths.append(len(f.values))
        numeric.append(f.type in (FLOAT, INT64))
    height = _values(features, layout.height, (INT64,)) or []
    width = _values(features, layout.width, (INT64,)) or []
    pixels = int(height[0]) * int(width[0]) if len(height) == 1 and len(width) == 1 else -1
    nums = _values(features, f"{layout.prefix}densepose/num", (INT64,))
    points = sum(int(v) for v in nums) if nums is not None else -1
    return _lengths_of(
        layout,
        tuple(lengths),
        tuple(numeric),
        pixels,
        points,
        None if factors is None else tuple(factors.items()),
    )


@lru_cache(maxsize=1024)
def _lengths_of(
    layout: Layout,
    lengths: tuple[int, ...],
    numeric: tuple[bool, ...],
    pixels: int,
    points: int,
    factors: tuple[tuple[str, int], ...] | None,
) -> ObjectLengths:
    """:func:`object_lengths` of one record whose ``layout.parallel`` lists have these
    ``lengths`` and hold numbers or not (``numeric``), its arrays read-only (it is shared)."""
    names = layout.parallel
    got = object_lengths(
        layout,
        {k: np.array([v], np.int64) for k, v in zip(names, lengths)},
        numeric={k: np.array([v], bool) for k, v in zip(names, numeric)},
        pixels=np.array([pixels], np.float64),
        points=np.array([points], np.float64),
        factors=None if factors is None else dict(factors),
    )
    arrays = [got.lengths, got.numeric, got.n, got.pixels, got.points, got.expected, got.wrong]
    for a in [*arrays, *got.factors.values()]:
        a.setflags(write=False)
    return got


def keypoint_count(features: Mapping[str, Any], layout: Layout) -> int | None:
    """K, the keypoints per object of a record (an Example's ``features``) under ``layout``;
    None when it has no keypoints (no ``keypoint/*`` list but ``keypoint/num``, or no
    object) or when its keypoint lists' lengths are not N·K for one K."""
    got = _record_lengths(features, layout)
    k = got.factors.get("keypoint")
    if k is None or int(k[0]) <= 0:
        return None
    rows = [j for j, kind in enumerate(got.kinds) if kind == "keypoint"]
    if got.wrong[rows, 0].any():
        return None
    return int(k[0])


def record_boxes(
    features: Mapping[str, Any],
    layout: Layout,
    *,
    normalized: bool,
    width: int | None = None,
    height: int | None = None,
    label_map: Mapping[int, str] | None = None,
    factors: Mapping[str, int] | None = None,
) -> RecordBoxes:
    """The boxes of one record's ``features`` (an Example's features) under ``layout``, each
    with its problems: a coordinate that is not finite, outside [0, 1] (normalised) or outside
    the ``width`` × ``height`` picture (pixels), xmin ≥ xmax or ymin ≥ ymax, a label outside
    ``label_map``; with its score for predictions. The record's own problems are its object
    lists whose lengths the layout does not explain (:func:`object_lengths`; ``factors``: the
    dataset's K / C, else the record's own), one sentence each; such lists give as many boxes
    as the shortest bbox list."""
    coords = [_values(features, name, (FLOAT, INT64)) or [] for name in layout.boxes]
    problems = _record_lengths(features, layout, factors).problems(0)
    n = min(len(c) for c in coords)
    texts_raw = _values(features, layout.text, (BYTES,)) or []
    texts = [bytes(t).decode("utf-8", "replace") for t in texts_raw]
    labels = [int(v) for v in _values(features, layout.label, (INT64,)) or []]
    scores = (
        [float(v) for v in _values(features, layout.score, (FLOAT,)) or []] if layout.score else []
    )
    boxes = []
    isfinite = math.isfinite
    xs0, ys0, xs1, ys1 = coords
    for i in range(n):
        x0, y0, x1, y1 = float(xs0[i]), float(ys0[i]), float(xs1[i]), float(ys1[i])
        bad: list[str] = []
        finite = isfinite(x0) and isfinite(y0) and isfinite(x1) and isfinite(y1)
        if not finite:
            bad.append("a coordinate is not a finite number")
        else:
            if normalized and not (
                0.0 <= x0 <= 1.0 and 0.0 <= y0 <= 1.0 and 0.0 <= x1 <= 1.0 and 0.0 <= y1 <= 1.0
            ):
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
                scores[i] if i < len(scores) else None,
            )
        )
    return RecordBoxes(layout, boxes, problems)


def coordinates(features: Mapping[str, Any], layout: Layout) -> Sequence[float]:
    """Every stored coordinate of a record under ``layout`` (for :func:`decide_normalized`)."""
    out: list[float] = []
    for name in layout.boxes:
        out.extend(float(v) for v in _values(features, name, (FLOAT, INT64)) or [])
    return out
