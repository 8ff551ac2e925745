"""Pictures of a record ready to show: the stored bytes where a browser shows them as they are,
a lossless PNG where they had to be drawn (raw pixels, tensors, boxes), small thumbnails for the
table and the gallery, and the messages that stand in for a picture that cannot be shown."""

from __future__ import annotations

import base64
import dataclasses
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

import codec
from codec import detection
from codec import example as ex
from codec import images as im
from codec import layers as lay
from codec import roles as rl
from codec.detection import ClassKey
from codec.kinds import BYTES, INT64
from codec.layers import Layer, LayerOptions
from codec.values import format_bytes, image_size

from .values import plural

__all__ = [
    "BOX_SAMPLE",
    "BROKEN_PICTURE",
    "FULL_VIEW",
    "ROLE_WORDS",
    "ZOOMS",
    "BoxScale",
    "FullView",
    "Layer",
    "LayerOptions",
    "LegendEntry",
    "Picture",
    "PictureInfo",
    "Pictures",
    "Thumb",
    "boxes_normalized",
    "data_url",
    "full_view",
    "layer_options",
    "legend",
    "main_view_png",
    "record_pictures",
    "shown_boxes",
    "thumbnail",
    "view_summary",
]

# Shown in the table's picture column in place of a picture that cannot be decoded.
BROKEN_PICTURE = "data:image/svg+xml;base64," + base64.b64encode(
    b'<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48" viewBox="0 0 48 48">'
    b'<rect x="2" y="2" width="44" height="44" rx="4" fill="#fdecea" stroke="#d93025"'
    b' stroke-width="2" stroke-dasharray="4 3"/><path d="M16 16 L32 32 M32 16 L16 32"'
    b' stroke="#d93025" stroke-width="3" stroke-linecap="round"/></svg>'
).decode("ascii")

LegendEntry = lay.LegendItem
"""One class of a picture's boxes: its ``key`` (``(text, label)``), ``caption``
(``text (label)``), ``color``, how many of its boxes can be drawn (``count``; ``bad`` of
them have a problem and are drawn dashed) and whether it is ``hidden``. The legend of every
layer (:attr:`codec.layers.Layer.legend`) is made of the same entries."""

ROLE_WORDS = {
    rl.PHOTO: "photo",
    rl.CLASS_MAP: "class map",
    rl.MASK: "mask",
    rl.DEPTH: "depth map",
    rl.OTHER: "other",
}
"""A picture's role (:data:`codec.roles.ROLES`) in words."""


def _class_order(key: ClassKey) -> tuple[bool, int, bool, str]:
    text, label = key
    return (label is None, label or 0, text is None, text or "")


def legend(boxes: Sequence[im.PixelBox], hidden: Iterable[ClassKey] = ()) -> list[LegendEntry]:
    """The classes of ``boxes``, by label then text, each with its colour and how many of its
    boxes are drawn (boxes with no place to be drawn, a coordinate not a number, are left
    out: they are named in the picture's box problems)."""
    off = set(hidden)
    counts: dict[ClassKey, list[int]] = {}
    for b in boxes:
        if b.drawable:
            c = counts.setdefault(b.key, [0, 0])
            c[0] += 1
            c[1] += bool(b.problems)
    return [
        LegendEntry(
            key,
            detection.class_caption(*key) or "(no class)",
            detection.class_color(key),
            n,
            bad,
            key in off,
        )
        for key, (n, bad) in sorted(counts.items(), key=lambda kv: _class_order(kv[0]))
    ]


def shown_boxes(boxes: Sequence[im.PixelBox], hidden: Iterable[ClassKey] = ()) -> list[im.PixelBox]:
    """The boxes drawn: those of the classes not ``hidden``."""
    off = set(hidden)
    return [b for b in boxes if b.key not in off] if off else list(boxes)


@dataclass(frozen=True)
class Picture:
    """A picture ready to show: ``data`` in ``format`` (``JPEG``/``PNG``/``GIF``/``WEBP``):
    the stored bytes as they are, or a lossless PNG when it had to be drawn (raw pixels,
    tensors, layers, class maps and masks made visible, formats browsers do not show).
    ``error`` replaces the picture when it cannot be decoded; ``note`` warns about a declared
    size that does not match.

    ``role`` is the picture's role (:data:`codec.roles.ROLES`); ``main`` is true for the
    record's main picture (:func:`codec.roles.main_picture`), the one that carries the
    ``layers`` (:class:`codec.layers.Layer`, bottom to top, each with its legend). ``boxes``,
    ``box_problems`` and ``legend`` are those of the ground-truth boxes layer."""

    feature: str
    index: int
    source: str
    caption: str
    data: bytes | None
    format: str
    width: int = 0
    height: int = 0
    error: str | None = None
    note: str | None = None
    boxes: int = 0
    step: int | None = None
    box_problems: tuple[str, ...] = ()
    legend: tuple[LegendEntry, ...] = ()
    role: str = rl.PHOTO
    main: bool = False
    layers: tuple[Layer, ...] = ()

    def layer(self, kind: str) -> Layer | None:
        """The first layer of ``kind`` (:data:`codec.layers.LAYER_KINDS`), or None."""
        return next((x for x in self.layers if x.kind == kind), None)


@dataclass(frozen=True)
class PictureInfo:
    """One picture of a record as its header tells it (nothing decoded): where it is, its
    role, format and size (0 when the header does not say), and whether it is the main
    picture."""

    feature: str
    index: int
    step: int | None
    role: str
    format: str
    width: int = 0
    height: int = 0
    main: bool = False


class Pictures(list[Picture]):
    """The pictures :func:`record_pictures` drew (a list of :class:`Picture`, raw-pixel
    messages after them), and the record's every picture: ``listed`` (:class:`PictureInfo`,
    in the order of :func:`codec.roles.picture_roles`, main picture first), of which
    ``listed[start : start + shown]`` were drawn. ``words``: ``"26 pictures"``, or
    ``"16 of 26 shown"`` when some were left out."""

    listed: tuple[PictureInfo, ...]
    start: int
    shown: int

    def __init__(
        self,
        pictures: Iterable[Picture] = (),
        listed: Iterable[PictureInfo] = (),
        start: int = 0,
        shown: int | None = None,
    ) -> None:
        super().__init__(pictures)
        self.listed = tuple(listed)
        self.start = start
        self.shown = len(self) if shown is None else shown

    @property
    def total(self) -> int:
        """How many pictures the record has."""
        return len(self.listed)

    @property
    def rest(self) -> int:
        """How many pictures were not drawn."""
        return self.total - self.shown

    @property
    def words(self) -> str:
        if self.shown >= self.total:
            return plural(self.total, "picture")
        first, last = self.start + 1, self.start + self.shown
        if self.start == 0:
            return f"{self.shown:,} of {self.total:,} shown"
        return f"{first:,}–{last:,} of {self.total:,} shown"


# -- how boxes are read: one decision per dataset ------------------------------------------

BOX_SAMPLE = 500  # records whose coordinates decide whether a dataset's boxes are normalised


@dataclass(frozen=True)
class BoxScale:
    """How a dataset's boxes are read: ``normalized`` (fractions of the picture) or pixels,
    decided from the coordinates of the first ``records`` records (a sample when ``sampled``).
    ``normalized`` is None when those records have no boxes."""

    normalized: bool | None
    records: int
    sampled: bool

    @property
    def words(self) -> str:
        if self.normalized is None:
            return "no boxes in the first records"
        how = "normalised (0–1)" if self.normalized else "pixels"
        sample = (
            f"first {plural(self.records, 'record')}, a sample" if self.sampled else "every record"
        )
        return f"box coordinates read as {how}, decided from {sample}"


def boxes_normalized(records: Iterable[bytes | None], total: int | None = None) -> BoxScale:
    """Whether the boxes of a dataset are normalised, from the ground truth's coordinates of
    ``records`` (payloads, taken one at a time; ``None`` for a damaged one; a model's
    predictions never decide) — the dataset's first records, of ``total``: at least 90 % of
    the finite coordinates in [0, 1] means normalised
    (:func:`codec.detection.decide_normalized`), so a few bad values stay bad values."""
    values: list[float] = []
    seen = False
    count = 0
    for payload in records:
        count += 1
        if payload is None:
            continue
        rec = ex.decode(payload, "auto")
        found = [x for x in detection.layouts(rec.features) if x.kind == detection.OBJECTS]
        if found:
            seen = True
            values.extend(detection.coordinates(rec.features, found[0]))
    sampled = total is None or total > count
    if not seen:
        return BoxScale(None, count, sampled)
    return BoxScale(detection.decide_normalized(values), count, sampled)


def data_url(data: bytes, mime: str) -> str:
    """``data:<mime>;base64,…``: a picture inline in a table cell."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _scalar_int(feats: dict[str, ex.Feature], *names: str) -> int | None:
    """The value of the first of ``names`` that is a single int64."""
    for n in names:
        f = feats.get(n)
        if f is not None and f.type == INT64 and len(f.values) == 1:
            return int(f.values[0])
    return None


def _declared_size(record: ex.Record, ref: im.ImageRef) -> tuple[int | None, int | None]:
    """``(height, width)`` the record declares for ``ref`` (beside it, or image-wide)."""
    prefix = ref.feature.rsplit("/", 1)[0] + "/" if "/" in ref.feature else ""
    feats = record.features
    return (
        _scalar_int(feats, prefix + "height", "height", "image/height"),
        _scalar_int(feats, prefix + "width", "width", "image/width"),
    )


def _png(img: Image.Image) -> bytes:
    out = io.BytesIO()
    if img.mode not in ("1", "L", "LA", "P", "RGB", "RGBA"):
        img = img.convert("RGBA" if "A" in img.getbands() else "RGB")
    img.save(out, format="PNG")
    return out.getvalue()


def _where(ref: im.ImageRef) -> str:
    name = ref.feature if ref.step is None else f"{ref.feature}[{ref.step}]"
    return name if ref.index == 0 else f"{name}[{ref.index}]"


def _raw_candidates(record: ex.Record, found: set[tuple[str, int]]) -> list[Picture]:
    """Raw-pixel features whose declared size does not match: shown as a message."""
    out: list[Picture] = []
    feats = record.features
    h, w = _scalar_int(feats, "height", "image/height"), _scalar_int(feats, "width", "image/width")
    d = _scalar_int(feats, "depth", "channels", "image/channels") or 1
    if h is None or w is None:
        return out
    for name, feat in feats.items():
        if feat.type != BYTES or len(feat.values) != 1 or (name, 0) in found:
            continue
        low = name.lower()
        if not ("raw" in low or "pixel" in low):
            continue
        v = feat.values[0]
        if ex.classify_bytes(v) != "binary":
            continue
        need = h * w * d
        out.append(
            Picture(
                name,
                0,
                "raw",
                name,
                None,
                "",
                w,
                h,
                error=(
                    f"Size mismatch: {len(v):,} bytes, but height × width × depth ="
                    f" {h} × {w} × {d} = {need:,} bytes."
                ),
            )
        )
    return out


def _size_note(record: ex.Record, ref: im.ImageRef, width: int, height: int) -> str | None:
    dh, dw = _declared_size(record, ref)
    if (dh is not None and dh != height) or (dw is not None and dw != width):
        return (
            f"Size mismatch: the record declares {dw if dw is not None else '?'}×"
            f"{dh if dh is not None else '?'} but the picture is {width}×{height}."
        )
    return None


_SOURCE_WORDS = {"raw": "raw pixels", "tensor": "uint8 tensor"}


def layer_options(
    options: LayerOptions | None = None,
    boxes: bool = True,
    normalized: bool | None = None,
    label_map: Mapping[int, str] | None = None,
    hidden: Iterable[ClassKey] = (),
) -> LayerOptions | None:
    """The layers drawn: None when ``boxes`` is false (nothing drawn over pictures, the
    switch the app has had for boxes); else ``options`` (default: every layer on), its
    ``normalized`` and ``label_map`` taken from the arguments when it has none, and the
    ``hidden`` classes added to its own."""
    if not boxes:
        return None
    if options is None:
        return LayerOptions(normalized=normalized, label_map=label_map, hidden=frozenset(hidden))
    return dataclasses.replace(
        options,
        normalized=options.normalized if options.normalized is not None else normalized,
        label_map=options.label_map if options.label_map is not None else label_map,
        hidden=options.hidden | frozenset(hidden),
    )


def _visible(img: Image.Image, role: str) -> Image.Image:
    """A class map in the layers' palette (void hatched as on the photo) and a 0/1 mask as
    black and white, so that neither shows as a black square; other pictures as they are."""
    if role not in (rl.CLASS_MAP, rl.MASK) or img.mode not in ("L", "P", "1", "I", "I;16"):
        return img
    values = np.asarray(img)
    if role == rl.MASK:
        return Image.fromarray(((values > 0) * 255).astype(np.uint8), mode="L")
    if values.dtype != np.uint8:
        values = np.clip(values, 0, 255).astype(np.uint8)
    palette = lay.PALETTE.copy()
    palette[lay.VOID] = [int(lay.VOID_COLOR[k : k + 2], 16) for k in (1, 3, 5)]
    out = Image.fromarray(values, mode="L").convert("P")
    out.putpalette(palette.tobytes())
    return out.convert("RGB")


def _drawn(layers: Sequence[Layer], options: LayerOptions) -> bool:
    """Whether any of ``layers`` puts something on the picture."""
    return any(x.shapes is not None and x.count and options.shows(x.kind) for x in layers)


def _layer_words(layers: Sequence[Layer], options: LayerOptions) -> str:
    words = [
        x.words
        for x in layers
        if x.kind != lay.BOXES and options.shows(x.kind) and (x.count or x.total)
    ]
    return "".join(f", {w}" for w in words)


def _picture(
    record: ex.Record,
    ref: im.ImageRef,
    role: str,
    main: bool,
    decode: bool,
    how: LayerOptions | None,
    roles: Sequence[tuple[im.ImageRef, str]],
) -> Picture:
    """One picture ready to show (the main one drawn with its layers when ``how``)."""
    caption = _where(ref)
    visible = role in (rl.CLASS_MAP, rl.MASK)
    # More than 8 bits per value (a 16-bit depth PNG): a browser keeps only the high byte of
    # the stored picture, so it is drawn stretched and in its colour map instead.
    high = ref.source == "encoded" and ref.high_depth
    try:
        if ref.source == "encoded":
            img = ref.image() if decode or visible or high else None
        else:
            img = ref.image()
    except codec.ImageError as exc:
        error = f"Cannot show this picture: {exc}"
        return Picture(
            ref.feature,
            ref.index,
            ref.source,
            caption,
            None,
            "",
            error=error,
            step=ref.step,
            role=role,
            main=main,
        )
    width, height = img.size if img is not None else (ref.width, ref.height)
    note = None
    if ref.source == "encoded" and img is not None and role == rl.PHOTO:
        note = _size_note(record, ref, width, height)
    layers: list[Layer] = []
    drawn = False
    if main and how is not None and img is not None and ref.step is None:
        layers = lay.record_layers(record, ref, width, height, how, roles)
        drawn = _drawn(layers, how)
    if img is not None and visible:
        shown = _visible(img, role)
        drawn = drawn or shown is not img
        img = shown
    if drawn and img is not None:
        img = lay.draw_layers(img, layers, how) if layers and how is not None else img
        data, out_fmt = _png(img), "PNG"
    elif img is None or (ref.format in im.BROWSER_FORMATS and not high):
        # As stored: what a browser shows (or, undecoded, what there is).
        data, out_fmt = ref.data, ref.format.upper()
    else:
        data, out_fmt = _png(img), "PNG"
    boxes = next((x for x in layers if x.kind == lay.BOXES), None)
    detail = f"{_SOURCE_WORDS.get(ref.source, ref.format.upper())} {width}×{height}"
    if role != rl.PHOTO:
        detail = f"{ROLE_WORDS.get(role, role)} · {detail}"
    if ref.source == "encoded":
        detail += f", {format_bytes(len(ref.data))}"
    count = 0
    if boxes is not None and boxes.legend:
        count = boxes.count if how is not None and how.boxes else 0
        detail += f", {plural(count, 'box', 'boxes')}"
        hidden_boxes = sum(e.count for e in boxes.legend if e.hidden)
        if hidden_boxes:
            detail += f" ({plural(hidden_boxes, 'more box', 'more boxes')} hidden)"
    if how is not None:
        detail += _layer_words(layers, how)
    return Picture(
        feature=ref.feature,
        index=ref.index,
        source=ref.source,
        caption=f"{caption} · {detail}",
        data=data,
        format=out_fmt,
        width=width,
        height=height,
        note=note,
        boxes=count,
        step=ref.step,
        box_problems=boxes.problems if boxes is not None else (),
        legend=boxes.legend if boxes is not None else (),
        role=role,
        main=main,
        layers=tuple(layers),
    )


def _info(ref: im.ImageRef, role: str, main: bool) -> PictureInfo:
    facts = rl.picture_facts(ref)
    return PictureInfo(
        ref.feature, ref.index, ref.step, role, ref.format, facts.width, facts.height, main
    )


def record_pictures(
    record: ex.Record,
    boxes: bool = True,
    limit: int = 16,
    decode: bool = True,
    *,
    normalized: bool | None = None,
    label_map: Mapping[int, str] | None = None,
    hidden: Iterable[ClassKey] = (),
    options: LayerOptions | None = None,
    start: int = 0,
) -> Pictures:
    """The pictures of a record, ready to show: ``limit`` of them from ``start`` in the order
    of :func:`codec.roles.picture_roles` (the main picture first; the returned
    :class:`Pictures` lists every picture, says how many were left out, and ``start`` shows
    the rest), then raw-pixel features whose declared size does not match (as messages).

    Encoded JPEG/PNG/GIF/WebP go out as they are stored; the main picture is drawn with its
    layers (:mod:`codec.layers`: class map, masks, boxes, predictions, keypoints, as
    ``options`` say; a lossless PNG) when ``boxes`` is true; bad boxes are clipped and
    marked, and what is wrong with them is in ``box_problems``; its ``legend`` lists the
    boxes' classes, and the boxes, masks and keypoints of ``hidden`` classes are left out.
    Class maps and masks are shown in colour, never as black squares. ``normalized`` is the
    dataset's decision (:func:`boxes_normalized`); ``label_map`` names classes and marks
    labels outside it."""
    roles = rl.picture_roles(record)
    how = layer_options(options, boxes, normalized, label_map, hidden)
    main = roles[0][0] if roles else None
    listed = [_info(ref, role, ref is main) for ref, role in roles]
    start = max(0, start)
    window = roles[start : start + max(0, limit)]
    pictures = [
        _picture(record, ref, role, ref is main, decode, how, roles) for ref, role in window
    ]
    extra = _raw_candidates(record, {(r.feature, r.index) for r, _ in roles}) if not start else []
    return Pictures(pictures + extra, listed, start, len(window))


def _listed(ref: im.ImageRef, role: str) -> dict[str, object]:
    """A picture as :func:`view_summary` lists it."""
    out: dict[str, object] = {"feature": ref.feature, "index": ref.index, "role": role}
    if ref.step is not None:
        out["step"] = ref.step
    return out


def view_summary(record: ex.Record, options: LayerOptions | None = None) -> dict[str, object]:
    """The record's view as plain data (``tfrecord-browser show --json``): ``picture``, its
    main picture (``feature``, ``index``, ``format``, ``width``, ``height``) or None;
    ``layers`` (:meth:`codec.layers.Layer.as_dict`, bottom to top); ``pictures``, every
    picture's ``feature``, ``index`` and ``role`` in order (and ``step``, the frame of a
    SequenceExample's feature list it is in, for a picture in one). Layers are read, never
    drawn."""
    roles = rl.picture_roles(record)
    pictures = [_listed(r, role) for r, role in roles]
    if not roles:
        return {"picture": None, "layers": [], "pictures": pictures}
    main = roles[0][0]
    size = _full_size(main)
    layers: list[Layer] = []
    if size is None:
        try:
            size = main.image().size
        except codec.ImageError:
            size = None
    if size is not None:
        how = options or LayerOptions()
        layers = lay.record_layers(record, main, size[0], size[1], how, roles)
    picture = {
        "feature": main.feature,
        "index": main.index,
        "format": main.format,
        "width": size[0] if size else None,
        "height": size[1] if size else None,
    }
    return {"picture": picture, "layers": [x.as_dict() for x in layers], "pictures": pictures}


def main_view_png(record: ex.Record, options: LayerOptions | None = None) -> bytes | None:
    """The record's main picture with its layers, as the record view draws it, as PNG
    (``tfrecord-browser show --out``); None without a picture; ``options`` None draws no
    layers. Raises :class:`codec.ImageError` when the picture cannot be decoded."""
    roles = rl.picture_roles(record)
    if not roles:
        return None
    main, role = roles[0]
    img = _visible(main.image(), role)
    if options is not None and main.step is None:
        layers = lay.record_layers(record, main, img.width, img.height, options, roles)
        img = lay.draw_layers(img, layers, options)
    return _png(img)


# -- thumbnails --------------------------------------------------------------------------


def _thumb_image(ref: im.ImageRef, size: int) -> tuple[Image.Image, tuple[int, int]]:
    """A small PIL image of ``ref`` and the full size (:func:`codec.images.thumbnail_image`
    for encoded pictures: JPEG in draft mode, giant pictures refused before decoding)."""
    if ref.source == "encoded":
        return im.thumbnail_image(ref.data, size, cmap=ref.colormap)
    img = ref.image()
    full = img.size
    img.thumbnail((size, size))
    return img, full


@dataclass(frozen=True)
class Thumb:
    """A small picture of a record: ``data`` in ``mime``, the full picture's size, how many
    of the boxes drawn on it have a problem, and the ``layers`` read for it (their counts:
    a tile's predictions below the threshold are not drawn, ``Layer.below`` says how
    many). ``overlay`` (None: the layers, if any, are drawn in ``data``) is what a browser
    draws over ``data`` itself (:func:`codec.layers.browser_overlay`, in ``data``'s pixels),
    ``blobs`` the PNGs it refers to by position."""

    data: bytes
    mime: str
    width: int
    height: int
    bad_boxes: int = 0
    layers: tuple[Layer, ...] = ()
    overlay: dict[str, object] | None = dataclasses.field(default=None, hash=False)
    blobs: tuple[bytes, ...] = ()


def thumbnail(
    record: ex.Record,
    size: int = 72,
    boxes: bool = True,
    captions: bool = False,
    normalized: bool | None = None,
    hidden: Iterable[ClassKey] = (),
    options: LayerOptions | None = None,
    in_browser: bool = False,
) -> Thumb | None:
    """A small picture of the record's main picture (:func:`codec.roles.main_picture`),
    with its layers drawn when ``boxes`` (as ``options`` say: class map, masks, boxes,
    predictions at or above the threshold, keypoints; bad boxes marked and counted; the
    classes ``hidden`` left out); captions only when asked and when the tile has room. None
    when the record has no picture. ``normalized`` is the dataset's decision
    (:func:`boxes_normalized`). Raises :class:`codec.ImageError` when it cannot be
    decoded.

    ``in_browser``: the layers are left for the browser to draw (``Thumb.overlay``, its
    masks and class maps as their stored PNGs, never decoded here) over the picture alone,
    which is then the very thumbnail of the photograph without layers; a record whose layers
    a browser cannot draw exactly (:class:`codec.layers.LayerRefs`) is drawn here as
    without ``in_browser``."""
    roles = rl.picture_roles(record)
    if not roles:
        return None
    ref, role = roles[0]
    img, (fw, fh) = _thumb_image(ref, size)
    img = _visible(img, role)
    how = layer_options(options, boxes, normalized, None, hidden)
    bad = 0
    layers: list[Layer] = []
    overlay: dict[str, object] | None = None
    blobs: list[bytes] = []
    if how is not None and ref.step is None:
        refs = lay.LayerRefs() if in_browser else None
        layers = lay.record_layers(record, ref, fw, fh, how, roles, refs=refs)
        if refs is not None and not refs.drawable:
            refs = None  # drawn here: the layers read again, masks and class maps decoded
            layers = lay.record_layers(record, ref, fw, fh, how, roles)
        scale = (img.width / fw, img.height / fh)
        if refs is not None:
            if _drawn(layers, how) or any(refs.masks) or refs.class_maps:
                overlay, blobs = lay.browser_overlay(
                    layers, refs, how, scale, img.size, captions=captions, picture=(fw, fh)
                )
        elif _drawn(layers, how):
            img = lay.draw_layers(img, layers, how, scale, captions=captions)
        bad = sum(x.bad for x in layers if x.kind == lay.BOXES and how.boxes)
    out = io.BytesIO()
    if img.mode in ("RGBA", "LA", "P"):
        img.save(out, format="PNG")
        mime = "image/png"
    else:
        if img.mode not in ("RGB", "L"):
            img = img.convert("RGB")
        img.save(out, format="JPEG", quality=85)
        mime = "image/jpeg"
    return Thumb(out.getvalue(), mime, fw, fh, bad, tuple(layers), overlay, tuple(blobs))


# -- the full view: zoom and pan -----------------------------------------------------------

ZOOMS = {"Fit": None, "100 %": 1.0, "200 %": 2.0, "400 %": 4.0}
"""The full view's zoom levels: ``None`` fits the whole picture in the view."""

FULL_VIEW = (1000, 640)  # the full view's size in screen pixels: what is drawn is never larger
_VIEW_LINE = 2  # box lines in the full view, at every zoom
_VIEW_TEXT = 14  # caption font size in the full view


@dataclass(frozen=True)
class FullView:
    """A part of a picture drawn at ``zoom`` with its layers: ``data`` (PNG) shows the
    picture's ``region`` (x0, y0, x1, y1 in its own pixels) of a ``width`` × ``height``
    picture; ``boxes`` ground-truth boxes are drawn in it; ``layers`` are the main picture's
    (empty for another picture). ``error`` replaces it when the picture cannot be shown."""

    data: bytes | None
    width: int = 0
    height: int = 0
    zoom: float = 1.0
    region: tuple[int, int, int, int] = (0, 0, 0, 0)
    boxes: int = 0
    error: str | None = None
    layers: tuple[Layer, ...] = ()

    @property
    def whole(self) -> bool:
        """Whether the whole picture is in view (nothing to pan)."""
        return self.region == (0, 0, self.width, self.height)


def _full_size(ref: im.ImageRef) -> tuple[int, int] | None:
    if ref.source != "encoded":
        return ref.width, ref.height
    header = image_size(ref.data)
    return (header[1], header[2]) if header is not None and header[1] and header[2] else None


def _region(
    size: tuple[int, int], zoom: float, center: tuple[float, float], view: tuple[int, int]
) -> tuple[int, int, int, int]:
    """The part of a picture of ``size`` that a ``view`` shows at ``zoom`` around ``center``
    (fractions of the picture), kept inside the picture, in whole pixels."""
    out = []
    for full, room, c in zip(size, view, center):
        span = min(full, max(1, math.ceil(room / zoom)))
        start = round(min(max(c * full - span / 2, 0), full - span))
        out.append((start, start + span))
    (x0, x1), (y0, y1) = out
    return x0, y0, x1, y1


def _region_image(
    ref: im.ImageRef,
    size: tuple[int, int],
    zoom: float,
    region: tuple[int, int, int, int],
    role: str = rl.PHOTO,
) -> Image.Image:
    """The pixels of ``region`` at ``zoom``: a reduced decode (JPEGs in draft mode) below
    100 %, the full picture cut to the region above; never more than the view holds. A class
    map or a mask is coloured first (:func:`_visible`) and scaled without mixing values."""
    x0, y0, x1, y1 = region
    out_size = (max(1, round((x1 - x0) * zoom)), max(1, round((y1 - y0) * zoom)))
    values = role in (rl.CLASS_MAP, rl.MASK)
    if zoom < 1 and ref.source == "encoded" and not values:
        img, _full = im.thumbnail_image(ref.data, max(1, math.ceil(max(size) * zoom)))
        k = img.width / size[0]
        part = img.crop((round(x0 * k), round(y0 * k), round(x1 * k), round(y1 * k)))
    else:
        part = _visible(ref.image(), role).crop(region)
    nearest = zoom >= 2 or values
    resample = Image.Resampling.NEAREST if nearest else Image.Resampling.LANCZOS
    return part if part.size == out_size else part.resize(out_size, resample)


def full_view(
    record: ex.Record,
    feature: str,
    index: int = 0,
    zoom: float | None = None,
    center: tuple[float, float] = (0.5, 0.5),
    *,
    view: tuple[int, int] = FULL_VIEW,
    boxes: bool = True,
    normalized: bool | None = None,
    label_map: Mapping[int, str] | None = None,
    hidden: Iterable[ClassKey] = (),
    options: LayerOptions | None = None,
) -> FullView:
    """Picture ``feature[index]`` of ``record`` as a ``view`` (width, height) shows it:
    whole (``zoom`` None: fitted, small pictures enlarged) or at ``zoom`` (1 = 100 %)
    around ``center`` (fractions of the picture). The main picture has its layers drawn at
    that scale in thin lines (as ``options`` say, when ``boxes``; those of ``hidden``
    classes left out). What is drawn is never larger than the view, whatever the picture's
    size (within the decode limits of :mod:`codec.images`)."""
    where = (feature, index, None)
    roles = rl.picture_roles(record)
    found = next(((r, role) for r, role in roles if (r.feature, r.index, r.step) == where), None)
    if found is None:
        return FullView(None, error=f"This record has no picture {feature}[{index}].")
    ref, role = found
    try:
        size = _full_size(ref)
        if size is None:
            size = ref.image().size
        fit = min(view[0] / size[0], view[1] / size[1])
        scale = fit if zoom is None else zoom
        region = _region(size, scale, center, view)
        img = _region_image(ref, size, scale, region, role)
    except codec.ImageError as exc:
        return FullView(None, error=f"Cannot show this picture: {exc}")
    how = layer_options(options, boxes, normalized, label_map, hidden)
    drawn = 0
    layers: list[Layer] = []
    if how is not None and ref is roles[0][0]:
        layers = lay.record_layers(record, ref, size[0], size[1], how, roles)
        x0, y0, x1, y1 = region
        sx, sy = img.width / (x1 - x0), img.height / (y1 - y0)
        if _drawn(layers, how):
            img = lay.draw_layers(
                img, layers, how, (sx, sy), (x0, y0), line_width=_VIEW_LINE, text_size=_VIEW_TEXT
            )
        for layer in layers:
            if layer.kind == lay.BOXES and layer.shapes and how.boxes:
                drawn += sum(
                    1
                    for b in layer.shapes
                    if b.xmax >= x0 and b.xmin <= x1 and b.ymax >= y0 and b.ymin <= y1
                )
    return FullView(_png(img), size[0], size[1], scale, region, drawn, layers=tuple(layers))
