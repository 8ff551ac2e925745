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

from PIL import Image

import codec
from codec import detection
from codec import example as ex
from codec import images as im
from codec.detection import ClassKey
from codec.kinds import BYTES, INT64
from codec.values import format_bytes, image_size

from .values import plural

__all__ = [
    "BOX_SAMPLE",
    "BROKEN_PICTURE",
    "FULL_VIEW",
    "ZOOMS",
    "BoxScale",
    "FullView",
    "LegendEntry",
    "Picture",
    "Thumb",
    "boxes_normalized",
    "data_url",
    "full_view",
    "legend",
    "record_pictures",
    "shown_boxes",
    "thumbnail",
]

# Shown in the table's picture column in place of a picture that cannot be decoded.
BROKEN_PICTURE = "data:image/svg+xml;base64," + base64.b64encode(
    b'<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48" viewBox="0 0 48 48">'
    b'<rect x="2" y="2" width="44" height="44" rx="4" fill="#fdecea" stroke="#d93025"'
    b' stroke-width="2" stroke-dasharray="4 3"/><path d="M16 16 L32 32 M32 16 L16 32"'
    b' stroke="#d93025" stroke-width="3" stroke-linecap="round"/></svg>'
).decode("ascii")

_BOXES_PRESENT = "image/object/bbox/xmin"  # the Object Detection feature that means "boxes"


@dataclass(frozen=True)
class LegendEntry:
    """One class of a picture's boxes: its ``key`` (``(text, label)``), ``caption``
    (``text (label)``), ``color``, how many of its boxes can be drawn (``count``; ``bad`` of
    them have a problem and are drawn dashed) and whether it is ``hidden``."""

    key: ClassKey
    caption: str
    color: str
    count: int
    bad: int = 0
    hidden: bool = False


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
    tensors, boxes, formats browsers do not show). ``error`` replaces the picture when it
    cannot be decoded; ``note`` warns about a declared size that does not match."""

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
    """Whether the boxes of a dataset are normalised, from the coordinates of ``records``
    (payloads, taken one at a time; ``None`` for a damaged one) — the dataset's first
    records, of ``total``: at least 90 % of the finite coordinates in [0, 1] means normalised
    (:func:`codec.detection.decide_normalized`), so a few bad values stay bad values."""
    values: list[float] = []
    seen = False
    count = 0
    for payload in records:
        count += 1
        if payload is None:
            continue
        rec = ex.decode(payload, "auto")
        found = detection.layouts(rec.features)
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


@dataclass(frozen=True)
class _BoxOptions:
    normalized: bool | None = None
    label_map: Mapping[int, str] | None = None
    hidden: frozenset[ClassKey] = frozenset()


def _picture(
    record: ex.Record, ref: im.ImageRef, with_boxes: bool, decode: bool, how: _BoxOptions
) -> Picture:
    """One picture ready to show (drawn with the record's boxes when ``with_boxes``)."""
    caption = _where(ref)
    try:
        if ref.source == "encoded":
            img = im.decode_image(ref.data) if decode else None
        else:
            img = ref.image()
    except codec.ImageError as exc:
        error = f"Cannot show this picture: {exc}"
        return Picture(
            ref.feature, ref.index, ref.source, caption, None, "", error=error, step=ref.step
        )
    width, height = img.size if img is not None else (ref.width, ref.height)
    note = None
    if ref.source == "encoded" and img is not None:
        note = _size_note(record, ref, width, height)
    drawn = 0
    problems: list[str] = []
    classes: list[LegendEntry] = []
    if with_boxes and img is not None and ref.step is None:
        found = im.find_boxes(
            record, width, height, normalized=how.normalized, label_map=how.label_map
        )
        classes = legend(found, how.hidden)
        shown = shown_boxes(found, how.hidden)
        if found:
            img = im.draw_boxes(img, shown)
            drawn = sum(1 for b in shown if b.drawable)
        problems = im.box_problems(
            record, width, height, normalized=how.normalized, label_map=how.label_map
        )
    if img is None or (not drawn and ref.format in im.BROWSER_FORMATS):
        # As stored: what a browser shows (or, undecoded, what there is).
        data, out_fmt = ref.data, ref.format.upper()
    else:
        data, out_fmt = _png(img), "PNG"
    detail = f"{_SOURCE_WORDS.get(ref.source, ref.format.upper())} {width}×{height}"
    if ref.source == "encoded":
        detail += f", {format_bytes(len(ref.data))}"
    if classes:
        detail += f", {plural(drawn, 'box', 'boxes')}"
        hidden_boxes = sum(e.count for e in classes if e.hidden)
        if hidden_boxes:
            detail += f" ({plural(hidden_boxes, 'more box', 'more boxes')} hidden)"
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
        boxes=drawn,
        step=ref.step,
        box_problems=tuple(problems),
        legend=tuple(classes),
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
) -> list[Picture]:
    """Every picture of a record (up to ``limit``), ready to show, then raw-pixel features
    whose declared size does not match (as messages).

    Encoded JPEG/PNG/GIF/WebP go out as they are stored; with ``boxes`` and Object Detection
    boxes present, the first picture is drawn with its boxes (a lossless PNG), bad boxes
    clipped and marked, and what is wrong with them in ``box_problems``; its ``legend`` lists
    the classes, and the boxes of ``hidden`` classes are left out of the drawing.
    ``normalized`` is the dataset's decision (:func:`boxes_normalized`); ``label_map`` marks
    labels outside it."""
    refs = im.find_images(record)[:limit]
    with_boxes = boxes and _BOXES_PRESENT in record.features
    how = _BoxOptions(normalized, label_map, frozenset(hidden))
    pictures = [
        _picture(record, ref, with_boxes and n == 0, decode, how) for n, ref in enumerate(refs)
    ]
    return pictures + _raw_candidates(record, {(r.feature, r.index) for r in refs})


# -- thumbnails --------------------------------------------------------------------------


def _thumb_image(ref: im.ImageRef, size: int) -> tuple[Image.Image, tuple[int, int]]:
    """A small PIL image of ``ref`` and the full size (:func:`codec.images.thumbnail_image`
    for encoded pictures: JPEG in draft mode, giant pictures refused before decoding)."""
    if ref.source == "encoded":
        return im.thumbnail_image(ref.data, size)
    img = ref.image()
    full = img.size
    img.thumbnail((size, size))
    return img, full


def _moved(
    boxes: Sequence[im.PixelBox], scale: tuple[float, float], origin: tuple[float, float] = (0, 0)
) -> list[im.PixelBox]:
    """``boxes`` in the pixels of a picture drawn at ``scale`` (x, y) from ``origin`` (a
    point of the full picture)."""
    (sx, sy), (ox, oy) = scale, origin
    return [
        dataclasses.replace(
            b,
            xmin=(b.xmin - ox) * sx,
            ymin=(b.ymin - oy) * sy,
            xmax=(b.xmax - ox) * sx,
            ymax=(b.ymax - oy) * sy,
        )
        for b in boxes
    ]


def _thumb_boxes(
    img: Image.Image, boxes: Sequence[im.PixelBox], sx: float, sy: float, captions: bool
) -> Image.Image:
    """Boxes on a small picture, scaled to it: thin outlines in their class colours, class
    text only when asked and when the picture has room for it
    (:func:`codec.images.caption_size`)."""
    return im.draw_boxes(img, _moved(boxes, (sx, sy)), captions)


@dataclass(frozen=True)
class Thumb:
    """A small picture of a record: ``data`` in ``mime``, the full picture's size, and how
    many of the boxes drawn on it have a problem."""

    data: bytes
    mime: str
    width: int
    height: int
    bad_boxes: int = 0


def thumbnail(
    record: ex.Record,
    size: int = 72,
    boxes: bool = True,
    captions: bool = False,
    normalized: bool | None = None,
    hidden: Iterable[ClassKey] = (),
) -> Thumb | None:
    """A small picture of the record's first image, with its boxes drawn when asked (bad ones
    marked, and counted; those of ``hidden`` classes left out); None when the record has no
    picture. ``normalized`` is the dataset's decision (:func:`boxes_normalized`).
    Raises :class:`codec.ImageError` when it cannot be decoded."""
    refs = im.find_images(record)
    if not refs:
        return None
    ref = refs[0]
    img, (fw, fh) = _thumb_image(ref, size)
    bad = 0
    if boxes and ref.step is None and _BOXES_PRESENT in record.features:
        found = shown_boxes(im.find_boxes(record, fw, fh, normalized=normalized), hidden)
        if found:
            img = _thumb_boxes(img, found, img.width / fw, img.height / fh, captions)
            bad = sum(1 for b in found if b.problems)
    out = io.BytesIO()
    if img.mode in ("RGBA", "LA", "P"):
        img.save(out, format="PNG")
        mime = "image/png"
    else:
        if img.mode not in ("RGB", "L"):
            img = img.convert("RGB")
        img.save(out, format="JPEG", quality=85)
        mime = "image/jpeg"
    return Thumb(out.getvalue(), mime, fw, fh, bad)


# -- the full view: zoom and pan -----------------------------------------------------------

ZOOMS = {"Fit": None, "100 %": 1.0, "200 %": 2.0, "400 %": 4.0}
"""The full view's zoom levels: ``None`` fits the whole picture in the view."""

FULL_VIEW = (1000, 640)  # the full view's size in screen pixels: what is drawn is never larger
_VIEW_LINE = 2  # box lines in the full view, at every zoom
_VIEW_TEXT = 14  # caption font size in the full view


@dataclass(frozen=True)
class FullView:
    """A part of a picture drawn at ``zoom`` with its boxes: ``data`` (PNG) shows the
    picture's ``region`` (x0, y0, x1, y1 in its own pixels) of a ``width`` × ``height``
    picture; ``boxes`` boxes are drawn on it. ``error`` replaces it when the picture cannot
    be shown."""

    data: bytes | None
    width: int = 0
    height: int = 0
    zoom: float = 1.0
    region: tuple[int, int, int, int] = (0, 0, 0, 0)
    boxes: int = 0
    error: str | None = None

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
    ref: im.ImageRef, size: tuple[int, int], zoom: float, region: tuple[int, int, int, int]
) -> Image.Image:
    """The pixels of ``region`` at ``zoom``: a reduced decode (JPEGs in draft mode) below
    100 %, the full picture cut to the region above; never more than the view holds."""
    x0, y0, x1, y1 = region
    out_size = (max(1, round((x1 - x0) * zoom)), max(1, round((y1 - y0) * zoom)))
    if zoom < 1 and ref.source == "encoded":
        img, _full = im.thumbnail_image(ref.data, max(1, math.ceil(max(size) * zoom)))
        k = img.width / size[0]
        part = img.crop((round(x0 * k), round(y0 * k), round(x1 * k), round(y1 * k)))
    else:
        part = ref.image().crop(region)
    resample = Image.Resampling.NEAREST if zoom >= 2 else Image.Resampling.LANCZOS
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
) -> FullView:
    """Picture ``feature[index]`` of ``record`` as a ``view`` (width, height) shows it:
    whole (``zoom`` None: fitted, small pictures enlarged) or at ``zoom`` (1 = 100 %)
    around ``center`` (fractions of the picture), with its boxes (those of ``hidden``
    classes left out) drawn at that scale in thin lines. What is drawn is never larger than
    the view, whatever the picture's size (within the decode limits of
    :mod:`codec.images`)."""
    where = (feature, index, None)
    ref = next((r for r in im.find_images(record) if (r.feature, r.index, r.step) == where), None)
    if ref is None:
        return FullView(None, error=f"This record has no picture {feature}[{index}].")
    try:
        size = _full_size(ref)
        if size is None:
            size = ref.image().size
        fit = min(view[0] / size[0], view[1] / size[1])
        scale = fit if zoom is None else zoom
        region = _region(size, scale, center, view)
        img = _region_image(ref, size, scale, region)
    except codec.ImageError as exc:
        return FullView(None, error=f"Cannot show this picture: {exc}")
    drawn = 0
    if boxes and _BOXES_PRESENT in record.features:
        found = im.find_boxes(record, size[0], size[1], normalized=normalized, label_map=label_map)
        x0, y0, x1, y1 = region
        seen = [
            b
            for b in shown_boxes(found, hidden)
            if b.drawable and b.xmax >= x0 and b.xmin <= x1 and b.ymax >= y0 and b.ymin <= y1
        ]
        sx, sy = img.width / (x1 - x0), img.height / (y1 - y0)
        img = im.draw_boxes(
            img, _moved(seen, (sx, sy), (x0, y0)), line_width=_VIEW_LINE, text_size=_VIEW_TEXT
        )
        drawn = len(seen)
    return FullView(_png(img), size[0], size[1], scale, region, drawn)
