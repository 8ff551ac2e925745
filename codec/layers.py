"""What is drawn over a record's main picture, and how: its layers.

A record's main picture (:func:`codec.roles.main_picture`) carries up to five kinds of layer
(:data:`LAYER_KINDS`), drawn bottom to top in this order (the ground truth over the
predictions, so that its captions stay readable):

- ``class_map``: a semantic class map (a picture whose role is ``class_map`` and whose size
  matches or scales to the photo's, :func:`codec.roles.fits`), blended over the photo at
  ``opacity`` in a fixed palette (:data:`PALETTE`, the PASCAL VOC one). Value 0 is the
  background and is left clear; 255 is "void" (VOC's border), drawn hatched in
  :data:`VOID_COLOR` and named ``void`` in the legend; other values take their names from
  the label map.
- ``masks``: instance masks of the ground truth — ``<prefix>mask`` as one PNG per object
  (values > 0 inside; scaled to the photo when their size differs but scales to it) or as
  N·H·W floats (> 0 inside; H and W from ``<root>height`` / ``<root>width``, else the
  photo's) — tinted at ``opacity`` in their object's class colour
  (:func:`codec.detection.class_color`), with a one-pixel outline in full colour; smaller
  objects over larger ones. A mask picture outside a detection layout (a feature named
  ``mask``) is tinted in its feature's colour.
- ``predictions``: a model's boxes (a layout whose :attr:`~codec.detection.Layout.kind` is
  ``"predictions"``: ``image/detection/…``): dashed in their class colour, captioned
  ``name 0.87`` on pictures of :data:`PREDICTION_CAPTION_SIDE` pixels or more; only those
  scoring at least ``score_threshold`` are drawn, and the layer says how many the threshold
  hides (``total`` − ``count``; ``below``).
- ``boxes``: the ground truth's boxes, drawn as everywhere else
  (:func:`codec.images.draw_boxes`: class colours and captions, bad boxes dashed magenta).
- ``keypoints``: ``<prefix>keypoint/x`` / ``y`` (K per object, normalised or pixels) as dots
  in their object's class colour — filled when visible (``visibility`` 2, or no visibility
  list), hollow when labelled but not visible (1), not drawn when not labelled (0) or not a
  number — joined by COCO's 17-point skeleton (:data:`COCO_SKELETON`) when K = 17.

Boxes, predictions, masks and keypoints of the classes in ``hidden`` are left out (and a
class map's values whose ``(name, value)`` is there). :func:`record_layers` reads a record's
layers once, in the main picture's full pixels; :func:`draw_layers` draws them on any
rendering of it — the whole picture, a region at any zoom, a thumbnail — given the ``scale``
and ``origin`` of that rendering. Masks and class maps are sampled with numpy at the
output's resolution and blended by one composite per layer, so a thumbnail costs what its
pixels cost; decoded masks and class maps are kept (:data:`DECODED_CACHE_BYTES`, least
recently used out), so drawing a record again after a switch or a slider moved decodes
nothing.
"""

from __future__ import annotations

import bisect
import functools
import io
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image, ImageDraw

from codec import detection
from codec.detection import ClassKey, Layout, class_caption, class_color
from codec.errors import CodecError
from codec.example import Record
from codec.images import caption_art, ink, paste_caption
from codec.kinds import BYTES, FLOAT, INT64
from codec.png import nonzero_part
from codec.png import values as png_values
from codec.roles import CLASS_MAP, MASK, fits, picture_facts, picture_roles
from codec.values import image_size

if TYPE_CHECKING:
    from codec.images import ImageRef, PixelBox
    from codec.tfds import BoxFeature

__all__ = [
    "BOXES",
    "CLASS_MAP_LAYER",
    "COCO_SKELETON",
    "KEYPOINTS",
    "LAYER_KINDS",
    "MASKS",
    "PALETTE",
    "PREDICTIONS",
    "VOID",
    "VOID_COLOR",
    "Layer",
    "LayerOptions",
    "LayerRefs",
    "LegendItem",
    "browser_overlay",
    "draw_layers",
    "record_layers",
]

BOXES = "boxes"
PREDICTIONS = "predictions"
MASKS = "masks"
CLASS_MAP_LAYER = "class_map"
KEYPOINTS = "keypoints"
LAYER_KINDS = (BOXES, PREDICTIONS, MASKS, CLASS_MAP_LAYER, KEYPOINTS)
_DRAW_ORDER = (CLASS_MAP_LAYER, MASKS, PREDICTIONS, BOXES, KEYPOINTS)

VOID = 255  # the class map value of VOC's "void" border
VOID_COLOR = "#e0e0c0"  # VOC's own colour for it; drawn hatched with white


def _voc_palette() -> np.ndarray:
    """The PASCAL VOC palette: value ``i``'s bits spread over the high bits of R, G and B."""
    i = np.arange(256)
    out = np.zeros((256, 3), dtype=np.int64)
    for j in range(8):
        for c in range(3):
            out[:, c] |= ((i >> (3 * j + c)) & 1) << (7 - j)
    return out.astype(np.uint8)


PALETTE = _voc_palette()
"""Class map colours: ``PALETTE[value]`` is (R, G, B), VOC's palette (255 is VOC's void)."""

# COCO's person skeleton (person_keypoints annotations' "skeleton", 1-based there).
COCO_SKELETON = tuple(
    (a - 1, b - 1)
    for a, b in (
        (16, 14),
        (14, 12),
        (17, 15),
        (15, 13),
        (12, 13),
        (6, 12),
        (7, 13),
        (6, 7),
        (6, 8),
        (7, 9),
        (8, 10),
        (9, 11),
        (2, 3),
        (1, 2),
        (1, 3),
        (2, 4),
        (3, 5),
        (4, 6),
        (5, 7),
    )
)

_EDGE = (0, 0, 0)


@dataclass(frozen=True)
class LayerOptions:
    """How layers are drawn: a switch per kind (all on by default), the predictions'
    ``score_threshold`` (a prediction scoring at least this is drawn), the ``opacity`` of
    class maps and masks (0–1), the dataset's ``normalized`` decision for boxes and
    keypoints (None: each record's coordinates decide by majority), a ``label_map``
    (label → name) and the ``hidden`` classes, whose boxes, masks and keypoints are left
    out. ``box_features``: the TFDS ``BBoxFeature`` of the dataset, read from its
    ``features.json`` (:func:`codec.tfds.box_features`), whose flat ``[ymin, xmin, ymax,
    xmax]`` boxes are drawn as ground truth with their ClassLabel's names
    (:func:`codec.tfds.with_boxes`). Hashable (a cache key)."""

    boxes: bool = True
    predictions: bool = True
    masks: bool = True
    class_map: bool = True
    keypoints: bool = True
    score_threshold: float = 0.5
    opacity: float = 0.5
    normalized: bool | None = None
    label_map: Mapping[int, str] | None = None
    hidden: frozenset[ClassKey] = frozenset()
    box_features: tuple[BoxFeature, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", frozenset(self.hidden))
        object.__setattr__(self, "box_features", tuple(self.box_features))
        if self.label_map is not None:
            object.__setattr__(self, "label_map", dict(self.label_map))
        opacity = float(self.opacity)
        object.__setattr__(
            self, "opacity", min(1.0, max(0.0, opacity)) if opacity == opacity else 0.5
        )

    def __hash__(self) -> int:
        names = None if self.label_map is None else tuple(sorted(self.label_map.items()))
        return hash(
            (
                self.boxes,
                self.predictions,
                self.masks,
                self.class_map,
                self.keypoints,
                self.score_threshold,
                self.opacity,
                self.normalized,
                names,
                self.hidden,
                self.box_features,
            )
        )

    def shows(self, kind: str) -> bool:
        """Whether layers of ``kind`` are drawn."""
        return bool(getattr(self, kind, False))

    @property
    def any(self) -> bool:
        """Whether any kind of layer is drawn."""
        return any(self.shows(k) for k in LAYER_KINDS)


@dataclass(frozen=True)
class LegendItem:
    """One entry of a layer's legend: a class (``key`` = ``(text, label)``; for a class map
    ``(name, value)``), its ``caption``, ``color`` (``#rrggbb``), ``count`` (boxes, masks or
    keypoints drawn; pixels for a class map value), how many of them have a problem
    (``bad``) and whether the class is ``hidden``."""

    key: ClassKey
    caption: str
    color: str
    count: int
    bad: int = 0
    hidden: bool = False


@dataclass(frozen=True)
class Layer:
    """One layer of a main picture.

    ``kind`` is one of :data:`LAYER_KINDS`; ``source`` the feature or prefix it comes from
    (``image/object/``, ``image/detection/``, ``image/segmentation/class/encoded``…);
    ``count`` what is drawn (boxes, predictions at or above the threshold, masks, class map
    values other than background, keypoints); for predictions ``total`` (before the
    threshold), ``threshold`` (None when they have no scores) and ``below`` (how many the
    threshold hides). ``legend``: the classes drawn, with colours and counts. ``problems``:
    what is wrong, in words (ground-truth boxes: as :func:`codec.images.box_problems`; masks
    or a class map that cannot be laid over). ``bad``: boxes drawn with a problem.
    ``size``: the main picture's (width, height), which the layer's shapes are in.
    ``shapes`` (not compared) is what :func:`draw_layers` draws; None when the layer is
    switched off in the options it was read with (then nothing was decoded for it)."""

    kind: str
    source: str
    count: int
    total: int | None = None
    threshold: float | None = None
    below: int = 0
    legend: tuple[LegendItem, ...] = ()
    problems: tuple[str, ...] = ()
    bad: int = 0
    size: tuple[int, int] = (0, 0)
    shapes: Any = field(default=None, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        """``{"kind", "source", "count"}``, and ``"total"`` and ``"threshold"`` for
        predictions: the layer as ``tfrecord-browser show --json`` prints it."""
        out: dict[str, Any] = {"kind": self.kind, "source": self.source, "count": self.count}
        if self.kind == PREDICTIONS:
            out["total"] = self.total
            out["threshold"] = self.threshold
        return out

    @property
    def words(self) -> str:
        """The layer in a few words: ``3 boxes``, ``5 of 20 predictions (score ≥ 0.5)``,
        ``2 masks``, ``class map: 4 classes``, ``30 keypoints``."""
        n = self.count
        if self.kind == BOXES:
            return _plural(n, "box", "boxes")
        if self.kind == PREDICTIONS:
            total = self.total if self.total is not None else n
            head = (
                f"{n:,} of {_plural(total, 'prediction')}"
                if total != n
                else _plural(n, "prediction")
            )
            if self.threshold is not None and self.below:
                head += f" (score ≥ {self.threshold:g})"
            return head
        if self.kind == MASKS:
            return _plural(n, "mask")
        if self.kind == CLASS_MAP_LAYER:
            return f"class map: {_plural(n, 'class', 'classes')}"
        return _plural(n, "keypoint")


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


# --------------------------------------------------------------------------------------------
# Reading a record's layers


@dataclass(frozen=True)
class _Prediction:
    box: PixelBox
    score: float | None
    caption: str


@dataclass(frozen=True)
class _Mask:
    """One object's mask: ``crop`` (bool) is the part of a ``size`` mask (its own pixels)
    from ``origin`` (x, y) that holds all of it; ``color`` its RGB."""

    crop: np.ndarray
    origin: tuple[int, int]
    size: tuple[int, int]
    color: tuple[int, int, int]


@dataclass(frozen=True)
class _ClassMap:
    values: np.ndarray  # uint8 (h, w), at the class map's own size
    hidden: frozenset[int] = frozenset()
    void: bool = True  # whether any value is VOID


@dataclass(frozen=True)
class _Keypoints:
    xs: np.ndarray  # (N, K) in pixels of the main picture; NaN where not drawn
    ys: np.ndarray
    visible: np.ndarray  # (N, K) bool: True filled, False hollow
    colors: tuple[str, ...]  # one per object
    skeleton: tuple[tuple[int, int], ...]


def _pick(found: list[Layout], main: str) -> Layout | None:
    """The layout whose picture is ``main``, else the first."""
    for layout in found:
        if layout.image == main:
            return layout
    return found[0] if found else None


def _values(features: Mapping[str, Any], name: str | None, types: tuple[str, ...]) -> list[Any]:
    if name is None:
        return []
    f = features.get(name)
    if f is None or f.type not in types:
        return []
    return list(f.values)


def _scalar(features: Mapping[str, Any], name: str) -> int | None:
    f = features.get(name)
    if f is not None and f.type == INT64 and len(f.values) == 1 and int(f.values[0]) > 0:
        return int(f.values[0])
    return None


def _normalized(options: LayerOptions, coords: Iterable[float]) -> bool:
    if options.normalized is not None:
        return options.normalized
    return detection.decide_normalized(coords, share=0.5)


def _pixel_boxes(
    features: Mapping[str, Any],
    layout: Layout,
    width: int,
    height: int,
    normalized: bool,
    label_map: Mapping[int, str] | None,
) -> tuple[list[PixelBox], list[str]]:
    """The layout's boxes in pixels and the record's box problems in words (as
    :func:`codec.images.find_boxes` and :func:`codec.images.box_problems` give them)."""
    from codec.images import PixelBox

    got = detection.record_boxes(
        features, layout, normalized=normalized, width=width, height=height, label_map=label_map
    )
    boxes = []
    problems = list(got.problems)
    for b in got.boxes:
        px = b.pixels(width, height, normalized)
        x0, y0, x1, y1 = px if px is not None else (0.0, 0.0, 0.0, 0.0)
        boxes.append(
            PixelBox(
                x0, y0, x1, y1, b.text, b.label, normalized, b.index, b.problems, px is not None
            )
        )
        if b.problems:
            named = f" ({b.caption})" if b.caption else ""
            problems.append(f"box {b.index}{named}: {'; '.join(b.problems)}")
    return boxes, problems


def _class_order(key: ClassKey) -> tuple[bool, int, bool, str]:
    text, label = key
    return (label is None, label or 0, text is None, text or "")


def _legend(
    keys: Sequence[ClassKey],
    hidden: frozenset[ClassKey],
    bad: Sequence[bool] = (),
    captions: Mapping[ClassKey, str] | None = None,
) -> tuple[LegendItem, ...]:
    counts: dict[ClassKey, list[int]] = {}
    for i, key in enumerate(keys):
        c = counts.setdefault(key, [0, 0])
        c[0] += 1
        c[1] += bool(bad[i]) if i < len(bad) else 0
    return tuple(
        LegendItem(
            key,
            (captions or {}).get(key) or class_caption(*key) or "(no class)",
            class_color(key),
            n,
            b,
            key in hidden,
        )
        for key, (n, b) in sorted(counts.items(), key=lambda kv: _class_order(kv[0]))
    )


def _boxes_layer(
    features: Mapping[str, Any], layout: Layout, width: int, height: int, options: LayerOptions
) -> tuple[Layer, list[PixelBox]]:
    normalized = _normalized(options, detection.coordinates(features, layout))
    boxes, problems = _pixel_boxes(features, layout, width, height, normalized, options.label_map)
    drawable = [b for b in boxes if b.drawable]
    shown = [b for b in drawable if b.key not in options.hidden]
    layer = Layer(
        BOXES,
        layout.prefix,
        len(shown),
        legend=_legend(
            [b.key for b in drawable], options.hidden, [bool(b.problems) for b in drawable]
        ),
        problems=tuple(problems),
        bad=sum(1 for b in boxes if b.problems and b.key not in options.hidden),
        size=(width, height),
        shapes=shown if options.boxes else None,
    )
    return layer, boxes


def _predictions_layer(
    features: Mapping[str, Any], layout: Layout, width: int, height: int, options: LayerOptions
) -> Layer:
    """Predictions read straight from their lists (a model's output is not checked the way
    ground truth is: a box that cannot be placed is simply not drawn)."""
    from codec.images import PixelBox

    label_key, score_key = layout.label, layout.score
    coords = [_values(features, name, (FLOAT, INT64)) for name in layout.boxes]
    total = min(len(c) for c in coords)
    normalized = _normalized(options, (float(v) for c in coords for v in c))
    labels = [int(v) for v in _values(features, label_key, (INT64,))]
    scores = [float(v) for v in _values(features, score_key, (FLOAT,))]
    texts = [bytes(t).decode("utf-8", "replace") for t in _values(features, layout.text, (BYTES,))]
    names = options.label_map or {}
    drawn: list[_Prediction] = []
    keys: list[ClassKey] = []
    below = 0
    captions: dict[ClassKey, str] = {}
    xs0, ys0, xs1, ys1 = coords
    for i in range(total):
        score = scores[i] if i < len(scores) else None
        if score_key is not None and not (score is not None and score >= options.score_threshold):
            below += 1
            continue
        label = labels[i] if i < len(labels) else None
        text = texts[i] if i < len(texts) else None
        px = detection.box_pixels(
            float(xs0[i]), float(ys0[i]), float(xs1[i]), float(ys1[i]), width, height, normalized
        )
        if px is None:
            continue
        key: ClassKey = (text, label)
        mapped = names.get(label) if label is not None else None
        captions[key] = class_caption(mapped or text, label)
        keys.append(key)
        if key in options.hidden:
            continue
        name = mapped or text or ("" if label is None else str(label))
        caption = f"{name} {score:.2f}" if score is not None else name
        box = PixelBox(*px, text, label, normalized, i, (), True)
        drawn.append(_Prediction(box, score, caption.strip()))
    return Layer(
        PREDICTIONS,
        layout.prefix,
        len(drawn),
        total=total,
        threshold=options.score_threshold if score_key is not None else None,
        below=below,
        legend=_legend(keys, options.hidden, captions=captions),
        size=(width, height),
        shapes=drawn if options.predictions else None,
    )


def _rgb_hex(rgb: Iterable[Any]) -> str:
    r, g, b = (int(c) for c in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"


def _hex_rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


_Cut = tuple[np.ndarray, tuple[int, int], tuple[int, int]]
"""A mask kept small: the bool part that holds all of it, where that part starts (x, y) in
the mask, and the mask's (width, height)."""


def _cut(mask: np.ndarray) -> _Cut | None:
    """The part of a bool mask that holds all of it; None when it is empty."""
    rows = np.flatnonzero(mask.any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero(mask.any(axis=0))
    y0, y1, x0, x1 = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
    crop = np.ascontiguousarray(mask[y0:y1, x0:x1])
    return crop, (x0, y0), (mask.shape[1], mask.shape[0])


class _Decoded:
    """Decoded masks and class maps by their encoded bytes, least recently used first out,
    at most ``limit`` bytes of arrays: the record view is drawn again on every change of a
    switch, a threshold or the opacity, and decoding its PNGs is most of what that costs."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.items: OrderedDict[tuple[str, bytes], tuple[Any, int]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[str, bytes]) -> Any:
        with self.lock:
            found = self.items.get(key)
            if found is None:
                return None
            self.items.move_to_end(key)
            return found[0]

    def put(self, key: tuple[str, bytes], value: Any, nbytes: int) -> None:
        nbytes += len(key[1])
        if nbytes > self.limit // 4:
            return
        with self.lock:
            if key in self.items:
                return
            self.items[key] = (value, nbytes)
            self.size += nbytes
            while self.size > self.limit:
                _, (_, gone) = self.items.popitem(last=False)
                self.size -= gone

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.size = 0


DECODED_CACHE_BYTES = 64 * 1024 * 1024
_DECODED = _Decoded(DECODED_CACHE_BYTES)
_EMPTY = "empty"


def clear_decoded() -> None:
    """Forget the decoded masks and class maps kept for drawing again (for measuring)."""
    _DECODED.clear()


def _decoded_cut(data: bytes) -> _Cut | str | None:
    """A PNG mask decoded and kept small (None: empty), or why it cannot be decoded. Safe in
    a worker thread: Pillow alone, no warnings filters (the header's size is checked before,
    under :data:`codec.images.MAX_DECODE_PIXELS`, which is below Pillow's bomb limit). An
    8-bit grey or palette PNG is read by :func:`codec.png.nonzero_part` (the object's part
    only, libdeflate when there is one), any other picture by Pillow."""
    read = nonzero_part(data)
    if read is not None:
        if read.values is None:
            return None
        return read.values > 0, read.origin, read.size
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except Exception as exc:  # any decoder failure is this mask's problem, in words
        return f"cannot be decoded: {_OBJECT_REPR.sub('', str(exc)).strip()}"
    if img.mode in ("L", "P", "1"):
        # Pillow finds the part that holds the mask without copying the whole of it.
        box = img.getbbox()
        if box is None:
            return None
        part = np.asarray(img.crop(box)) > 0
        return (part, (box[0], box[1]), img.size) if part.any() else None
    arr = np.asarray(img)
    if arr.ndim == 3:
        arr = arr[:, :, : 3 if arr.shape[2] >= 3 else 1].max(axis=2)
    return _cut(arr > 0)


_OBJECT_REPR = re.compile(r"\s*<[^<>]*object at 0x[0-9a-fA-F]+>")  # Pillow names its file object
_POOL: tuple[int, ThreadPoolExecutor] | None = None
_POOL_LOCK = threading.Lock()
PARALLEL_MASKS = 3  # a record with this many masks to decode has them decoded in threads


def _pool() -> ThreadPoolExecutor | None:
    """The threads masks are decoded in (Pillow and zlib let go of the GIL while they work),
    one pool per process: a pool inherited through fork has no threads."""
    global _POOL
    workers = min(4, os.cpu_count() or 1)
    if workers < 2:
        return None
    with _POOL_LOCK:
        if _POOL is None or _POOL[0] != os.getpid():
            _POOL = (os.getpid(), ThreadPoolExecutor(workers, thread_name_prefix="tfb-masks"))
        return _POOL[1]


def _mask_header(data: bytes, photo: tuple[int, int]) -> str | None:
    """Why an encoded mask cannot be laid over a ``photo`` (width, height) picture, from its
    header alone; None when it can."""
    from codec.images import MAX_DECODE_PIXELS

    header = image_size(data)
    if header is None:
        return "is not a picture"
    if not fits((header[1], header[2]), photo):
        return f"is {header[1]}×{header[2]}, not the picture's {photo[0]}×{photo[1]}"
    if header[1] * header[2] > MAX_DECODE_PIXELS:
        return f"of {header[1]:,}×{header[2]:,} pixels: too large to decode here"
    return None


def _png_cuts(
    datas: Sequence[bytes], photo: tuple[int, int]
) -> list[tuple[_Cut | None, str | None]]:
    """Each object's PNG mask (> 0 inside) kept small, or why it cannot be laid over the photo
    (None and None: an empty mask). Masks decoded before are taken from the cache; three or
    more new ones are decoded in threads."""
    out: list[tuple[_Cut | None, str | None]] = [(None, None)] * len(datas)
    todo: list[int] = []
    for i, data in enumerate(datas):
        why = _mask_header(data, photo)
        if why is not None:
            out[i] = (None, why)
        else:
            found = _DECODED.get(("mask", data))
            if found is None:
                todo.append(i)
            else:
                out[i] = (None if found is _EMPTY else found, None)
    pool = _pool() if len(todo) >= PARALLEL_MASKS else None
    decoded = (
        list(pool.map(_decoded_cut, [datas[i] for i in todo]))
        if pool is not None
        else [_decoded_cut(datas[i]) for i in todo]
    )
    for i, got in zip(todo, decoded):
        if isinstance(got, str):
            out[i] = (None, got)
            continue
        _DECODED.put(
            ("mask", datas[i]), _EMPTY if got is None else got, 0 if got is None else got[0].nbytes
        )
        out[i] = (got, None)
    return out


def _masks_layer(
    features: Mapping[str, Any],
    layout: Layout,
    keys: Sequence[ClassKey],
    width: int,
    height: int,
    options: LayerOptions,
) -> Layer | None:
    name = layout.prefix + "mask"
    feat = features.get(name)
    if feat is None or feat.type not in (BYTES, FLOAT) or not feat.values:
        return None
    problems: list[str] = []
    cuts: list[tuple[int, _Cut]] = []  # (object, its mask)
    if feat.type == BYTES:
        count = len(feat.values)
        if options.masks:
            wanted = [
                i
                for i in range(count)
                if (keys[i] if i < len(keys) else (None, None)) not in options.hidden
            ]
            found = _png_cuts([bytes(feat.values[i]) for i in wanted], (width, height))
            for i, (cut, why) in zip(wanted, found):
                if why is not None:
                    problems.append(f"mask {i} {why}")
                elif cut is not None:
                    cuts.append((i, cut))
    else:
        h = _scalar(features, layout.height) or height
        w = _scalar(features, layout.width) or width
        n, rest = divmod(len(feat.values), h * w)
        count = n
        if rest or n == 0:
            return Layer(
                MASKS,
                name,
                0,
                problems=(f"{name} has {_plural(len(feat.values), 'value')}, not N·{h}·{w}",),
                size=(width, height),
            )
        if not fits((w, h), (width, height)):
            return Layer(
                MASKS,
                name,
                0,
                problems=(
                    f"{name} is {n}·{h}·{w}: masks of {w}×{h}, not the picture's {width}×{height}",
                ),
                size=(width, height),
            )
        if options.masks:
            stack = np.asarray(feat.values, dtype=np.float32).reshape(n, h, w) > 0
            for i in range(n):
                key = keys[i] if i < len(keys) else (None, None)
                cut = _cut(stack[i]) if key not in options.hidden else None
                if cut is not None:
                    cuts.append((i, cut))
    object_keys = [keys[i] if i < len(keys) else (None, None) for i in range(count)]
    legend = _legend(object_keys, options.hidden)
    if not options.masks:
        shown = sum(1 for k in object_keys if k not in options.hidden)
        return Layer(MASKS, name, shown, legend=legend, size=(width, height))
    masks = [
        _Mask(crop, origin, size, _hex_rgb(class_color(object_keys[i])))
        for i, (crop, origin, size) in cuts
    ]
    # Larger objects first, so that smaller ones are drawn over them; ties by object number.
    order = sorted(range(len(masks)), key=lambda j: -int(masks[j].crop.sum()))
    return Layer(
        MASKS,
        name,
        len(masks),
        legend=legend,
        problems=tuple(problems),
        size=(width, height),
        shapes=[masks[j] for j in order],
    )


def _lone_mask_layer(ref: ImageRef, width: int, height: int, options: LayerOptions) -> Layer:
    """A mask picture outside a detection layout, tinted in its feature's colour."""
    key: ClassKey = (ref.feature, None)
    legend = _legend([key], options.hidden)
    if not options.masks:
        return Layer(MASKS, ref.feature, 1, legend=legend, size=(width, height))
    cut: _Cut | None = None
    why: str | None = None
    if ref.source == "encoded":
        ((cut, why),) = _png_cuts([ref.data], (width, height))
    else:
        try:
            mask = np.asarray(ref.image().convert("L")) > 0
        except CodecError as exc:
            why = str(exc)
        else:
            if fits((mask.shape[1], mask.shape[0]), (width, height)):
                cut = _cut(mask)
            else:
                why = f"is {mask.shape[1]}×{mask.shape[0]}, not the picture's {width}×{height}"
    if cut is None or key in options.hidden:
        problems = (f"{ref.feature} {why}",) if why else ()
        return Layer(MASKS, ref.feature, 0, legend=legend, problems=problems, size=(width, height))
    crop, origin, size = cut
    shape = _Mask(crop, origin, size, _hex_rgb(class_color(key)))
    return Layer(MASKS, ref.feature, 1, legend=legend, size=(width, height), shapes=[shape])


def _class_values(ref: ImageRef) -> tuple[np.ndarray, np.ndarray] | str:
    """A class map's values (uint8, at its own size) and the count of each value, or why it
    is not a map of class values."""
    key = ("class_map", ref.data)
    found = _DECODED.get(key) if ref.source == "encoded" else None
    if found is not None:
        return found  # type: ignore[no-any-return]
    read = _png_values(ref)
    if read is not None:
        h, w = read.shape
        counted = Image.frombuffer("L", (w, h), read, "raw", "L", 0, 1).histogram()[:256]
        counts = np.asarray(counted, dtype=np.int64)  # Pillow counts faster than numpy
        _DECODED.put(key, (read, counts), read.nbytes + counts.nbytes)
        return read, counts
    try:
        img = ref.image()
    except CodecError as exc:
        return str(exc)
    if img.mode in ("L", "P"):
        values = np.asarray(img, dtype=np.uint8)
        counts = np.asarray(img.histogram()[:256], dtype=np.int64)  # Pillow counts faster
    else:
        arr = np.asarray(img)
        if arr.ndim == 3 or arr.dtype.kind not in "ui" or (arr.size and arr.max() > 255):
            return f"is not a map of class values 0–255 (mode {img.mode})"
        values = arr.astype(np.uint8)
        counts = np.bincount(values.reshape(-1), minlength=256)
    if ref.source == "encoded":
        _DECODED.put(key, (values, counts), values.nbytes + counts.nbytes)
    return values, counts


def _png_values(ref: ImageRef) -> np.ndarray | None:
    """An encoded 8-bit grey or palette PNG's values read by :func:`codec.png.values`
    (libdeflate and numpy), when its header's size is one to decode here; else None."""
    from codec.images import MAX_DECODE_PIXELS

    if ref.source != "encoded":
        return None
    header = image_size(ref.data)
    if header is None or header[0] != "png" or header[1] * header[2] > MAX_DECODE_PIXELS:
        return None
    return png_values(ref.data)


def _class_map_layer(ref: ImageRef, width: int, height: int, options: LayerOptions) -> Layer:
    size = picture_facts(ref).size
    if size is not None and not fits(size, (width, height)):
        why: str | tuple[np.ndarray, np.ndarray] = (
            f"is {size[0]}×{size[1]}, not the picture's {width}×{height}"
        )
    else:
        why = _class_values(ref)
    if isinstance(why, str):
        return Layer(
            CLASS_MAP_LAYER,
            ref.feature,
            0,
            problems=(f"{ref.feature} {why}",),
            size=(width, height),
        )
    values, counts = why
    if not fits((values.shape[1], values.shape[0]), (width, height)):
        return Layer(
            CLASS_MAP_LAYER,
            ref.feature,
            0,
            problems=(
                f"{ref.feature} is {values.shape[1]}×{values.shape[0]},"
                f" not the picture's {width}×{height}",
            ),
            size=(width, height),
        )
    names = options.label_map or {}
    legend: list[LegendItem] = []
    hidden: set[int] = set()
    for value in np.flatnonzero(counts).tolist():
        v = int(value)
        if v == 0:
            continue
        name = "void" if v == VOID else names.get(v)
        key: ClassKey = (name, v)
        if key in options.hidden:
            hidden.add(v)
        color = VOID_COLOR if v == VOID else _rgb_hex(PALETTE[v])
        legend.append(
            LegendItem(key, class_caption(name, v), color, int(counts[v]), 0, key in options.hidden)
        )
    return Layer(
        CLASS_MAP_LAYER,
        ref.feature,
        len(legend) - len(hidden),
        legend=tuple(legend),
        size=(width, height),
        shapes=_ClassMap(values, frozenset(hidden), bool(counts[VOID]))
        if options.class_map
        else None,
    )


def _keypoint_count(xs: Sequence[float], ys: Sequence[float], n: int) -> int | None:
    """K, the keypoints per object, for drawing: ``len(x) / N`` when ``x`` and ``y`` have
    the same length and N divides it. (:func:`codec.detection.keypoint_count` checks every
    keypoint list of a record, for its problems; drawing needs only these two, and this
    costs nothing.)"""
    if n <= 0 or not xs or len(xs) != len(ys) or len(xs) % n:
        return None
    return len(xs) // n


def _keypoints_layer(
    features: Mapping[str, Any],
    layout: Layout,
    keys: Sequence[ClassKey],
    width: int,
    height: int,
    options: LayerOptions,
) -> Layer | None:
    x_key, y_key = layout.prefix + "keypoint/x", layout.prefix + "keypoint/y"
    if x_key not in features or y_key not in features:
        return None
    n = len(_values(features, layout.boxes[0], (FLOAT, INT64)))
    x_list = _values(features, x_key, (FLOAT,))
    y_list = _values(features, y_key, (FLOAT,))
    k = _keypoint_count(x_list, y_list, n)
    source = layout.prefix + "keypoint/"
    if k is None:
        return Layer(KEYPOINTS, source, 0, size=(width, height))
    xs = np.asarray(x_list, dtype=np.float64).reshape(n, k)
    ys = np.asarray(y_list, dtype=np.float64).reshape(n, k)
    vis_list = _values(features, layout.prefix + "keypoint/visibility", (INT64,))
    if len(vis_list) == n * k:
        vis = np.asarray(vis_list[: n * k], dtype=np.int64).reshape(n, k)
    else:
        vis = np.full((n, k), 2, dtype=np.int64)
    labelled = (vis > 0) & np.isfinite(xs) & np.isfinite(ys)
    object_keys = [keys[i] if i < len(keys) else (None, None) for i in range(n)]
    kept = np.array([key not in options.hidden for key in object_keys], dtype=bool)
    drawn = labelled & kept[:, None]
    normalized = _normalized(options, np.concatenate([xs[labelled], ys[labelled]]))
    sx, sy = (width, height) if normalized else (1, 1)
    px = np.where(drawn, xs * sx, np.nan)
    py = np.where(drawn, ys * sy, np.nan)
    has_points = np.asarray(labelled.any(axis=1))
    with_points = [key for key, there in zip(object_keys, has_points.tolist()) if there]
    return Layer(
        KEYPOINTS,
        source,
        int(drawn.sum()),
        legend=_legend(with_points, options.hidden),
        size=(width, height),
        shapes=_Keypoints(
            px,
            py,
            vis != 1,
            tuple(class_color(key) for key in object_keys),
            COCO_SKELETON if k == 17 else (),
        )
        if options.keypoints
        else None,
    )


# --------------------------------------------------------------------------------------------
# Masks and class maps left for a front end to draw


@dataclass
class LayerRefs:
    """The masks and class maps of a record as their stored PNGs, for a front end that draws
    them itself (the gallery's tiles: :func:`browser_overlay`), collected by
    :func:`record_layers` (``refs=``) instead of decoding them. ``class_maps``: each map's
    PNG, how its values are read (:func:`codec.png.browser_values`) and the values hidden;
    ``masks``: groups of masks (a group is blended as one, as :func:`draw_layers` blends one
    layer), each mask's PNG, how its values are read and its class colour, in object order.
    ``drawable`` is false when something cannot be drawn by a front end exactly (N·H·W float
    masks, a 16-bit or colour-managed PNG, pictures that are not stored PNGs): ``why`` says
    what, and the picture is then drawn here (:func:`draw_layers`).

    A mask that cannot be laid over the picture (its header's size) is left out, as
    :func:`draw_layers` leaves it out."""

    class_maps: list[tuple[bytes, str, frozenset[int]]] = field(default_factory=list)
    masks: list[list[tuple[bytes, str, str]]] = field(default_factory=list)
    drawable: bool = True
    why: str = ""

    def refuse(self, why: str) -> None:
        if self.drawable:
            self.drawable, self.why = False, why


def _mask_refs(
    features: Mapping[str, Any],
    layout: Layout,
    keys: Sequence[ClassKey],
    width: int,
    height: int,
    options: LayerOptions,
    refs: LayerRefs,
) -> Layer | None:
    """The masks layer of :func:`_masks_layer`, its PNGs collected in ``refs`` undecoded."""
    from codec.png import browser_values

    name = layout.prefix + "mask"
    feat = features.get(name)
    if feat is None or feat.type not in (BYTES, FLOAT) or not feat.values:
        return None
    if feat.type == FLOAT:
        refs.refuse(f"{name} holds N·H·W numbers")
        return _masks_layer(features, layout, keys, width, height, options)
    count = len(feat.values)
    object_keys = [keys[i] if i < len(keys) else (None, None) for i in range(count)]
    legend = _legend(object_keys, options.hidden)
    group: list[tuple[bytes, str, str]] = []
    if options.masks:
        for i, key in enumerate(object_keys):
            data = bytes(feat.values[i])
            if key in options.hidden or _mask_header(data, (width, height)) is not None:
                continue
            kind = browser_values(data, exact=False)
            if kind is None:
                refs.refuse(f"mask {i} is not a PNG a browser reads as stored")
                return None
            group.append((data, kind, class_color(key)))
        refs.masks.append(group)
    shown = sum(1 for k in object_keys if k not in options.hidden)
    return Layer(
        MASKS, name, len(group) if options.masks else shown, legend=legend, size=(width, height)
    )


def _lone_mask_ref(
    ref: ImageRef, width: int, height: int, options: LayerOptions, refs: LayerRefs
) -> Layer:
    """The layer of :func:`_lone_mask_layer`, its PNG collected in ``refs`` undecoded."""
    from codec.png import browser_values

    key: ClassKey = (ref.feature, None)
    legend = _legend([key], options.hidden)
    if not options.masks:
        return Layer(MASKS, ref.feature, 1, legend=legend, size=(width, height))
    if ref.source != "encoded":
        refs.refuse(f"{ref.feature} is not a stored picture")
        return _lone_mask_layer(ref, width, height, options)
    if key in options.hidden:
        return Layer(MASKS, ref.feature, 0, legend=legend, size=(width, height))
    if _mask_header(ref.data, (width, height)) is not None:
        return _lone_mask_layer(ref, width, height, options)  # its problem, nothing decoded
    kind = browser_values(ref.data, exact=False)
    if kind is None:
        refs.refuse(f"{ref.feature} is not a PNG a browser reads as stored")
        return Layer(MASKS, ref.feature, 0, legend=legend, size=(width, height))
    refs.masks.append([(ref.data, kind, class_color(key))])
    return Layer(MASKS, ref.feature, 1, legend=legend, size=(width, height))


def _class_map_ref(
    ref: ImageRef, width: int, height: int, options: LayerOptions, refs: LayerRefs
) -> Layer:
    """The layer of :func:`_class_map_layer` (its count and legend not known: nothing is
    decoded), its PNG collected in ``refs``; one whose header's size cannot be laid over the
    picture is not drawn, as there."""
    from codec.images import MAX_DECODE_PIXELS
    from codec.png import browser_values

    size = picture_facts(ref).size
    if size is not None and not fits(size, (width, height)):
        return _class_map_layer(ref, width, height, options)  # its problem, nothing decoded
    kind = browser_values(ref.data, exact=True) if ref.source == "encoded" else None
    if size is None or kind is None or size[0] * size[1] > MAX_DECODE_PIXELS:
        refs.refuse(f"{ref.feature} is not a PNG of class values a browser reads as stored")
        return Layer(CLASS_MAP_LAYER, ref.feature, 0, size=(width, height))
    names = options.label_map or {}
    hidden = frozenset(
        v
        for name, v in options.hidden
        if isinstance(v, int) and 0 < v < 256 and name == ("void" if v == VOID else names.get(v))
    )
    refs.class_maps.append((ref.data, kind, hidden))
    return Layer(CLASS_MAP_LAYER, ref.feature, 0, size=(width, height))


def _xy(v: float) -> float:
    return round(float(v), 2)


def _ordered(a: float, b: float) -> tuple[float, float]:
    """``sorted((a, b))`` as a pair (no list built)."""
    return (b, a) if b < a else (a, b)


def browser_overlay(
    layers: Sequence[Layer],
    refs: LayerRefs,
    options: LayerOptions,
    scale: tuple[float, float],
    size: tuple[int, int],
    *,
    captions: bool = True,
    picture: tuple[int, int] | None = None,
) -> tuple[dict[str, Any], list[bytes]]:
    """What a front end needs to draw ``layers`` (read with ``refs``: :func:`record_layers`)
    over a ``size`` rendering of the main picture at ``scale`` (output pixels per picture
    pixel) exactly as :func:`draw_layers` draws them there, as plain data in the output's
    pixels, and the PNGs it refers to (``"src"``: an index into that list). ``picture``, the
    main picture's own size (``"fw"``, ``"fh"``), lets the front end sample a mask or a
    class map at the very pixels the server samples (``scale`` being ``w / fw``, ``h / fh``).

    ``{"w", "h", "fw", "fh", "line", "font", "opacity", "class_maps": [{"src", "kind",
    "hidden"}], "masks": [[[src, kind, colour], …] per layer], "predictions": [[x0, y0, x1,
    y1, colour, caption, band, ink], …], "dash", "boxes": [[x0, y0, x1, y1, colour, dashed,
    caption, band, ink], …], "keypoints": [{"r", "skeleton", "objects": [[colour, [x, y,
    visible, …]], …]}]}``:
    rectangles are drawn as Pillow draws them (corners truncated to whole pixels, outlines
    ``line`` pixels wide inside them, a ground-truth box over a dark edge one pixel out and
    ``line`` + 2 wide); a caption is its text (already cut to fit, in a ``font`` of that
    many pixels, None: no captions) in ``ink`` on its
    ``band`` (left, top, right, bottom, exclusive), None without one; predictions dashed by
    diagonal stripes ``dash`` pixels wide; keypoints (None where not drawn) as dots of radius
    ``r``, hollow when not ``visible``, joined by the ``skeleton``'s pairs. Only the layers
    switched on in ``options`` are there."""
    from codec.images import box_color, caption_place, caption_size

    w, h = size
    sx, sy = scale
    width = max(1, round(min(size) / 100))
    font = caption_size(w, h) if captions else None
    out: dict[str, Any] = {
        "w": w,
        "h": h,
        "line": width,
        "font": font,
        "opacity": options.opacity,
    }
    if picture is not None:
        out["fw"], out["fh"] = picture
    blobs: list[bytes] = []
    where: dict[bytes, int] = {}

    def blob(data: bytes) -> int:
        at = where.get(data)
        if at is None:
            at = where[data] = len(blobs)
            blobs.append(data)
        return at

    if options.class_map and refs.class_maps:
        out["class_maps"] = [
            {"src": blob(data), "kind": kind, "hidden": sorted(hidden)}
            for data, kind, hidden in refs.class_maps
        ]
    if options.masks and any(refs.masks):
        out["masks"] = [
            [[blob(data), kind, color] for data, kind, color in group]
            for group in refs.masks
            if group
        ]
    wanted = [x for x in layers if x.shapes is not None and options.shows(x.kind)]
    for layer in wanted:
        if layer.kind == PREDICTIONS and layer.shapes:
            preds = out.setdefault("predictions", [])
            out["dash"] = max(4, width * 4)
            captioned = font is not None and min(size) >= PREDICTION_CAPTION_SIDE
            for p in layer.shapes:
                b = p.box  # in the output's pixels: its corners times ``scale``
                x0, x1 = _ordered(b.xmin * sx, b.xmax * sx)
                y0, y1 = _ordered(b.ymin * sy, b.ymax * sy)
                if x1 < 0 or y1 < 0 or x0 > w or y0 > h:
                    continue
                color = class_color(b.key)
                text = band = paint = None
                if captioned and font is not None and p.caption:
                    art = caption_art(font, p.caption, w - 4)
                    band = list(_below((x0, y0, x1, y1), (art.size[0] + 4, art.size[1] + 2), size))
                    text, paint = art.text, ink(color)
                preds.append([_xy(x0), _xy(y0), _xy(x1), _xy(y1), color, text, band, paint])
        elif layer.kind == BOXES and layer.shapes:
            boxes = out.setdefault("boxes", [])
            for box in layer.shapes:
                if not box.drawable:
                    continue
                b = box  # in the output's pixels: its corners times ``scale``
                x0, x1 = _ordered(box.xmin * sx, box.xmax * sx)
                y0, y1 = _ordered(box.ymin * sy, box.ymax * sy)
                color = box_color(b)
                caption = ("! " if b.problems else "") + b.caption
                text = band = paint = None
                if font and caption.strip():
                    art = caption_art(font, caption, w - 4)
                    place = caption_place(
                        (x0, y0, x1, y1), (art.size[0] + 4, art.size[1] + 2), size
                    )
                    text, band, paint = art.text, list(place), ink(color)
                boxes.append(
                    [_xy(x0), _xy(y0), _xy(x1), _xy(y1), color, bool(b.problems), text, band, paint]
                )
        elif layer.kind == KEYPOINTS:
            kp: _Keypoints = layer.shapes
            xs, ys = np.round(kp.xs * sx, 2), np.round(kp.ys * sy, 2)
            shown = np.isfinite(xs) & np.isfinite(ys)
            objects = []
            for i in np.flatnonzero(shown.any(axis=1)).tolist():
                triples = np.stack([xs[i], ys[i], kp.visible[i]], axis=1).tolist()
                flat: list[Any] = []
                for (x, y, v), there in zip(triples, shown[i].tolist()):
                    flat += [x, y, bool(v)] if there else [None, None, False]
                objects.append([kp.colors[i], flat])
            if objects:
                out.setdefault("keypoints", []).append(
                    {
                        "r": max(2.0, width + 1.0),
                        "skeleton": [list(pair) for pair in kp.skeleton],
                        "objects": objects,
                    }
                )
    return out, blobs


def record_layers(
    record: Record,
    main: ImageRef,
    width: int,
    height: int,
    options: LayerOptions | None = None,
    roles: Sequence[tuple[ImageRef, str]] | None = None,
    *,
    refs: LayerRefs | None = None,
) -> list[Layer]:
    """The layers of ``record`` over its main picture ``main`` (a ``width`` × ``height``
    picture), bottom to top: class maps, masks, predictions, boxes, keypoints (see the
    module's docstring). Every layer the record has is listed, switched on or not; the
    pixels of one switched off are not read (its ``shapes`` is None). A picture of a
    SequenceExample's steps has no layers. ``roles`` is :func:`codec.roles.picture_roles`
    when the caller has it. Never raises for odd values: what cannot be drawn is named in
    the layer's ``problems``.

    With ``refs``, no mask or class map is decoded: their PNGs are collected in ``refs``
    for a front end to draw (:class:`LayerRefs`, :func:`browser_overlay`), and their layers
    carry no shapes."""
    options = options or LayerOptions()
    if main.step is not None or width <= 0 or height <= 0:
        return []
    features: Mapping[str, Any] = record.features
    if options.box_features:
        from codec.tfds import with_boxes

        features = with_boxes(features, options.box_features)
    found = detection.layouts(features)
    truth = _pick([lay for lay in found if lay.kind == detection.OBJECTS], main.feature)
    model = _pick([lay for lay in found if lay.kind == detection.PREDICTIONS], main.feature)
    out: dict[str, list[Layer]] = {k: [] for k in LAYER_KINDS}
    keys: list[ClassKey] = []
    if truth is not None:
        layer, boxes = _boxes_layer(features, truth, width, height, options)
        out[BOXES].append(layer)
        keys = [b.key for b in boxes]
        if refs is None:
            masks = _masks_layer(features, truth, keys, width, height, options)
        else:
            masks = _mask_refs(features, truth, keys, width, height, options, refs)
        if masks is not None:
            out[MASKS].append(masks)
        points = _keypoints_layer(features, truth, keys, width, height, options)
        if points is not None:
            out[KEYPOINTS].append(points)
    if model is not None:
        out[PREDICTIONS].append(_predictions_layer(features, model, width, height, options))
    layout_masks = {lay.prefix + "mask" for lay in found}
    for ref, role in roles if roles is not None else picture_roles(record):
        if (
            ref.step is not None
            or ref is main
            or (ref.feature, ref.index) == (main.feature, main.index)
        ):
            continue
        if role == CLASS_MAP:
            if options.class_map and refs is not None:
                out[CLASS_MAP_LAYER].append(_class_map_ref(ref, width, height, options, refs))
            elif options.class_map:
                out[CLASS_MAP_LAYER].append(_class_map_layer(ref, width, height, options))
            else:
                out[CLASS_MAP_LAYER].append(
                    Layer(CLASS_MAP_LAYER, ref.feature, 0, size=(width, height))
                )
        elif role == MASK and ref.feature not in layout_masks and refs is not None:
            out[MASKS].append(_lone_mask_ref(ref, width, height, options, refs))
        elif role == MASK and ref.feature not in layout_masks:
            out[MASKS].append(_lone_mask_layer(ref, width, height, options))
    return [layer for kind in _DRAW_ORDER for layer in out[kind]]


# --------------------------------------------------------------------------------------------
# Drawing


def _axis(n_out: int, scale: float, origin: float) -> np.ndarray:
    """The main picture's coordinate at the centre of each of ``n_out`` output pixels."""
    return origin + (np.arange(n_out, dtype=np.float64) + 0.5) / scale


def _sample(coords: np.ndarray, full: int, size: int) -> np.ndarray:
    """Indices into a grid of ``size`` cells spread over ``full`` pixels (-1 outside it)."""
    idx = np.floor(coords * (size / full)).astype(np.int64)
    idx[(idx < 0) | (idx >= size)] = -1
    return idx


def _span(inside: np.ndarray) -> tuple[int, int] | None:
    """The first and past-the-last True of a bool vector; None when there is none."""
    hits = np.flatnonzero(inside)
    return (int(hits[0]), int(hits[-1]) + 1) if hits.size else None


def _paste(out: Image.Image, over: Image.Image, alpha: np.ndarray, corner: tuple[int, int]) -> None:
    """``over`` blended onto ``out`` at ``corner`` through ``alpha`` (uint8, 255 = opaque)."""
    out.paste(over, corner, Image.fromarray(np.ascontiguousarray(alpha), mode="L"))


def _indexed(values: np.ndarray, palette: bytes) -> Image.Image:
    """An RGB picture of uint8 ``values`` coloured through ``palette`` (768 bytes)."""
    h, w = values.shape
    img = Image.frombytes("P", (w, h), np.ascontiguousarray(values).tobytes())
    img.putpalette(palette)
    return img.convert("RGB")


_PALETTE_BYTES = PALETTE.tobytes()


def _draw_class_map(
    out: Image.Image,
    shape: _ClassMap,
    size: tuple[int, int],
    xs: np.ndarray,
    ys: np.ndarray,
    opacity: float,
) -> None:
    h, w = shape.values.shape
    cols = _sample(xs, size[0], w)
    rows = _sample(ys, size[1], h)
    span_c, span_r = _span(cols >= 0), _span(rows >= 0)
    if span_c is None or span_r is None:
        return
    (c0, c1), (r0, r1) = span_c, span_r
    if (
        (c0, r0, c1, r1) == (0, 0, w, h)
        and (cols == np.arange(w)).all()
        and (rows == np.arange(h)).all()
    ):
        vals = shape.values
    else:
        vals = shape.values.take(rows[r0:r1], axis=0).take(cols[c0:c1], axis=1)
    a = round(opacity * 255)
    alpha_of = np.full(256, a, dtype=np.uint8)
    alpha_of[0] = 0
    alpha_of[VOID] = max(a, 153)
    for v in shape.hidden:
        alpha_of[v] = 0
    alpha = alpha_of.take(vals)
    if not alpha.any():
        return
    over = _indexed(vals, _PALETTE_BYTES)
    if alpha_of[VOID] and shape.void:
        void = vals == VOID
        if void.any():
            stripes = void & _hatch(out.width, out.height)[r0:r1, c0:c1]
            white = Image.fromarray(stripes.view(np.uint8) * np.uint8(255), "L")
            over.paste((255, 255, 255), (0, 0), white)
    _paste(out, over, alpha, (c0, r0))


@functools.lru_cache(maxsize=8)
def _hatch(width: int, height: int) -> np.ndarray:
    """Where void is drawn white: diagonal stripes three pixels wide, in output pixels."""
    rows = np.arange(height, dtype=np.int32)[:, None]
    cols = np.arange(width, dtype=np.int32)[None, :]
    out = ((rows + cols) // 3) % 2 == 0
    out.setflags(write=False)
    return out


def _draw_masks(
    out: Image.Image,
    masks: Sequence[_Mask],
    size: tuple[int, int],
    xs: np.ndarray,
    ys: np.ndarray,
    opacity: float,
) -> None:
    blocks: list[tuple[int, int, int, np.ndarray]] = []  # (object, row, column, bools)
    grids: dict[tuple[int, int], tuple[np.ndarray, list[int], np.ndarray, list[int]]] = {}
    for i, m in enumerate(masks):
        grid = grids.get(m.size)
        if grid is None:
            # The mask pixel under each output pixel, by column and by row: never decreasing,
            # so a crop's output span is found by bisection.
            mw, mh = m.size
            cols = np.floor(xs * (mw / size[0])).astype(np.int64)
            rows = np.floor(ys * (mh / size[1])).astype(np.int64)
            grid = grids[m.size] = (cols, cols.tolist(), rows, rows.tolist())
        cols, col_list, rows, row_list = grid
        ch, cw = m.crop.shape
        x0, y0 = m.origin
        c0, c1 = bisect.bisect_left(col_list, x0), bisect.bisect_left(col_list, x0 + cw)
        r0, r1 = bisect.bisect_left(row_list, y0), bisect.bisect_left(row_list, y0 + ch)
        if c0 >= c1 or r0 >= r1:
            continue
        block = m.crop.take(rows[r0:r1] - y0, axis=0).take(cols[c0:c1] - x0, axis=1)
        blocks.append((i, r0, c0, block))
    if not blocks:
        return
    top = min(r for _, r, _, _ in blocks)
    left = min(c for _, _, c, _ in blocks)
    bottom = max(r + b.shape[0] for _, r, _, b in blocks)
    right = max(c + b.shape[1] for _, _, c, b in blocks)
    # Object numbers + 1 (0: none), in as many bytes as there are objects.
    index = np.zeros((bottom - top, right - left), dtype=np.uint8 if len(masks) < 255 else np.int32)
    for i, r, c, block in blocks:
        part = index[r - top : r - top + block.shape[0], c - left : c - left + block.shape[1]]
        part[block] = i + 1
    inside = index > 0
    # An object's outline: its pixels next to another object's or to none (outside the
    # part drawn counts as none).
    framed = np.pad(index, 1)
    edge = (
        (framed[1:-1, 1:-1] != framed[1:-1, :-2])
        | (framed[1:-1, 1:-1] != framed[1:-1, 2:])
        | (framed[1:-1, 1:-1] != framed[:-2, 1:-1])
        | (framed[1:-1, 1:-1] != framed[2:, 1:-1])
    ) & inside
    alpha = inside.astype(np.uint8) * np.uint8(round(opacity * 255))
    alpha[edge] = 255
    colors = np.zeros((max(256, len(masks) + 1), 3), dtype=np.uint8)
    colors[1 : len(masks) + 1] = [m.color for m in masks]
    if index.dtype == np.uint8:
        over = _indexed(index, colors[:256].tobytes())
    else:
        over = Image.fromarray(colors[index])
    _paste(out, over, alpha, (left, top))


@functools.lru_cache(maxsize=8)
def _dashes(width: int, height: int, dash: int) -> np.ndarray:
    """255 where a dashed line shows, 0 in its gaps: stripes ``dash`` pixels wide across the
    diagonal, so that horizontal and vertical lines alike are cut into dashes."""
    rows = np.arange(height, dtype=np.int32)[:, None]
    cols = np.arange(width, dtype=np.int32)[None, :]
    on = ((rows + cols) // dash) % 2 == 0
    out = on.astype(np.uint8) * np.uint8(255)
    out.setflags(write=False)
    return out


PREDICTION_CAPTION_SIDE = 240
"""Predictions are captioned only on pictures at least this large on their smaller side (the
record view, the full view, exports): on a gallery tile their colour tells the class, and a
caption per prediction would cover the picture."""


def _draw_predictions(
    out: Image.Image,
    preds: Sequence[_Prediction],
    width: int,
    font_size: int | None,
    scale: tuple[float, float],
    origin: tuple[float, float],
) -> None:
    """Predictions dashed in their class colour over a dark edge (drawn solid on an overlay,
    cut into dashes by one mask, pasted once), captioned ``name 0.87``."""

    placed = []
    for p in preds:
        b = p.box.moved(scale, origin)
        x0, x1 = sorted((b.xmin, b.xmax))
        y0, y1 = sorted((b.ymin, b.ymax))
        if x1 < 0 or y1 < 0 or x0 > out.width or y0 > out.height:
            continue
        placed.append(((x0, y0, x1, y1), class_color(b.key), p.caption))
    if not placed:
        return
    over = Image.new("RGB", out.size)
    alpha = Image.new("L", out.size, 0)
    draw_over, draw_alpha = ImageDraw.Draw(over), ImageDraw.Draw(alpha)
    for (x0, y0, x1, y1), _color, _caption in placed:
        edge = [x0 - 1, y0 - 1, x1 + 1, y1 + 1]
        draw_over.rectangle(edge, outline=_EDGE, width=width + 2)
        draw_alpha.rectangle(edge, outline=255, width=width + 2)
    for box, color, _caption in placed:
        draw_over.rectangle(box, outline=color, width=width)
    cut = np.asarray(alpha) & _dashes(out.width, out.height, max(4, width * 4))
    out.paste(over, (0, 0), Image.fromarray(cut, mode="L"))
    if font_size is None or min(out.size) < PREDICTION_CAPTION_SIDE:
        return
    draw = ImageDraw.Draw(out)
    for box, color, caption in placed:
        if not caption:
            continue
        art = caption_art(font_size, caption, out.width - 4)
        right, bottom = art.size
        place = _below(box, (right + 4, bottom + 2), out.size)
        draw.rectangle([place[0], place[1], place[2] - 1, place[3] - 1], fill=color, outline=_EDGE)
        paste_caption(out, art, (place[0] + 2, place[1]), ink(color))


def _below(
    box: tuple[float, float, float, float], text: tuple[int, int], picture: tuple[int, int]
) -> tuple[int, int, int, int]:
    """Where a prediction's caption goes: under its box's bottom-left corner (just inside the
    box when the picture ends there), so it never sits where the ground truth's caption does
    (above the box, :func:`codec.images.caption_place`) for a prediction that matches it."""
    x0, y1 = box[0], box[3]
    pw, ph = picture
    tw, th = min(text[0], pw), min(text[1], ph)
    top = int(y1) if y1 + th <= ph else max(0, int(y1) - th)
    left = int(min(max(0.0, x0), pw - tw))
    return left, top, left + tw, top + th


def _draw_keypoints(
    out: Image.Image,
    kp: _Keypoints,
    width: int,
    scale: tuple[float, float],
    origin: tuple[float, float],
) -> None:
    draw = ImageDraw.Draw(out)
    (sx, sy), (ox, oy) = scale, origin
    xs = (kp.xs - ox) * sx
    ys = (kp.ys - oy) * sy
    r = max(2.0, width + 1.0)
    for i in range(xs.shape[0]):
        color = kp.colors[i]
        for a, b in kp.skeleton:
            if np.isfinite(xs[i, a]) and np.isfinite(xs[i, b]):
                line = [(xs[i, a], ys[i, a]), (xs[i, b], ys[i, b])]
                draw.line(line, fill=_EDGE, width=width + 2)
                draw.line(line, fill=color, width=width)
        for j in np.flatnonzero(np.isfinite(xs[i])):
            x, y = float(xs[i, j]), float(ys[i, j])
            if x < -r or y < -r or x > out.width + r or y > out.height + r:
                continue
            box = [x - r, y - r, x + r, y + r]
            if kp.visible[i, j]:
                draw.ellipse(box, fill=color, outline=_EDGE, width=1)
            else:
                draw.ellipse(box, fill=None, outline=color, width=max(1, width))


def draw_layers(
    img: Image.Image,
    layers: Sequence[Layer],
    options: LayerOptions | None = None,
    scale: tuple[float, float] = (1.0, 1.0),
    origin: tuple[float, float] = (0.0, 0.0),
    *,
    captions: bool = True,
    line_width: int | None = None,
    text_size: int | None = None,
) -> Image.Image:
    """A copy of ``img`` (as RGB) with ``layers`` drawn on it, those switched on in
    ``options``. ``img`` shows the main picture at ``scale`` (output pixels per picture
    pixel, x and y) from ``origin`` (the picture point at its top left corner): (1, 1) and
    (0, 0) for the picture itself, (w / W, h / H) for a thumbnail, the zoom and the region's
    corner for part of it. Lines are ``line_width`` wide (default: a hundredth of the output's
    smaller side), captions in a font of ``text_size`` (default: from the output's size,
    :func:`codec.images.caption_size`; none when ``captions`` is false or the output is
    tiny)."""
    from codec.images import caption_size, draw_boxes

    options = options or LayerOptions()
    out = img.convert("RGB")
    if out is img:
        out = img.copy()
    wanted = [layer for layer in layers if layer.shapes is not None and options.shows(layer.kind)]
    if not wanted:
        return out
    sx, sy = scale
    ox, oy = origin
    grids = [layer for layer in wanted if layer.kind in (CLASS_MAP_LAYER, MASKS)]
    if grids:
        xs = _axis(out.width, sx, ox)
        ys = _axis(out.height, sy, oy)
        for layer in grids:
            if layer.kind == CLASS_MAP_LAYER:
                _draw_class_map(out, layer.shapes, layer.size, xs, ys, options.opacity)
            else:
                _draw_masks(out, layer.shapes, layer.size, xs, ys, options.opacity)
    width = line_width or max(1, round(min(out.size) / 100))
    size = text_size or caption_size(*out.size)
    font_size = size if captions and size else None
    for layer in wanted:
        if layer.kind == BOXES and layer.shapes:
            moved = [b.moved(scale, origin) for b in layer.shapes]
            out = draw_boxes(out, moved, captions, line_width=width, text_size=size or None)
        elif layer.kind == PREDICTIONS and layer.shapes:
            _draw_predictions(out, layer.shapes, width, font_size, scale, origin)
        elif layer.kind == KEYPOINTS:
            _draw_keypoints(out, layer.shapes, width, scale, origin)
    return out
