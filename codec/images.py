"""Pictures inside records: encoded images, raw pixel buffers and image-shaped tensors.

- :func:`sniff_image` names the format of encoded bytes from the ordered magic-number table
  ``codec.values.IMAGE_MAGIC`` (JPEG, PNG, GIF, BMP, WebP, TIFF).
- :func:`find_images` finds every picture in a decoded :class:`~codec.example.Record` and
  returns :class:`ImageRef` values; ``ref.display_bytes()`` gives bytes a browser shows as they
  are (JPEG, PNG, GIF and WebP are passed through untouched; raw pixels, tensors, BMP and TIFF
  are encoded once as PNG).
- :func:`find_boxes` / :func:`draw_boxes` read and draw Object Detection API boxes.

Pillow's decompression-bomb guard stays on; every Pillow failure becomes an
:class:`~codec.errors.ImageError` with a message saying what was being decoded.
"""

from __future__ import annotations

import io
import re
import struct
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFile, ImageFont, UnidentifiedImageError

from codec.detection import (
    ClassKey,
    RecordBoxes,
    class_caption,
    class_color,
    coordinates,
    decide_normalized,
    layouts,
    record_boxes,
)
from codec.errors import CodecError, ImageError
from codec.example import Feature, Record
from codec.tensor import describe_tensor, is_serialized_tensor, parse_tensor
from codec.values import IMAGE_MAGIC, image_magic, image_size, sniff_image

__all__ = [
    "BAD_BOX_COLOR",
    "IMAGE_MAGIC",
    "ImageRef",
    "PixelBox",
    "box_color",
    "box_problems",
    "caption_place",
    "caption_size",
    "decode_image",
    "draw_boxes",
    "find_boxes",
    "find_images",
    "raw_pixels_to_image",
    "sniff_image",
    "tensor_to_image",
    "thumbnail_bytes",
    "thumbnail_image",
]

# Formats a browser shows as they are; anything else is re-encoded as PNG for display.
BROWSER_FORMATS = {
    "jpeg": "image/jpeg",
    "png": "image/png",
    "gif": "image/gif",
    "webp": "image/webp",
}

_PIL_ERRORS = (
    UnidentifiedImageError,
    OSError,
    ValueError,
    SyntaxError,
    EOFError,
    Image.DecompressionBombError,
    struct.error,
)


_OBJECT_REPR = re.compile(r"\s*<[^<>]*object at 0x[0-9a-fA-F]+>")


def decode_image(b: bytes) -> Image.Image:
    """Decode encoded image bytes fully. Raises :class:`ImageError` for truncated or corrupt
    data, for a picture larger than :data:`MAX_DECODE_PIXELS` (read from its header, before
    anything is allocated) and for decompression bombs (Pillow's guard stays on)."""
    fmt = sniff_image(b) or "image"
    header = image_size(b)
    if header is not None and header[1] * header[2] > MAX_DECODE_PIXELS:
        raise _too_large(fmt, b, (header[1], header[2]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(b))
            if img.width * img.height > MAX_DECODE_PIXELS:  # formats without a header read
                raise _too_large(fmt, b, img.size)
            img.load()
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise _too_large(fmt, b) from exc
    except _PIL_ERRORS as exc:
        # Pillow names its in-memory file object ("<_io.BytesIO object at 0x…>"), which means
        # nothing to the person reading the message.
        reason = _OBJECT_REPR.sub("", str(exc)).strip()
        raise ImageError(f"{fmt} ({len(b)} bytes) cannot be decoded: {reason}") from exc
    return img


def raw_pixels_to_image(
    buf: bytes, height: int, width: int, depth: int = 1, dtype: Any = np.uint8
) -> Image.Image:
    """An image from a raw row-major pixel buffer of ``height × width × depth`` values.
    Raises :class:`ImageError` when the sizes do not match or the shape is not a picture."""
    dt = np.dtype(dtype)
    if height <= 0 or width <= 0 or depth not in (1, 2, 3, 4):
        raise ImageError(
            f"raw pixels: height {height} × width {width} × depth {depth} is not an image shape"
            " (positive height and width, depth 1, 2, 3 or 4)"
        )
    values = height * width * depth
    need = values * dt.itemsize
    if len(buf) != need:
        per = f" × {dt.itemsize} bytes ({dt.name})" if dt.itemsize != 1 else ""
        raise ImageError(
            f"raw pixels: {len(buf)} bytes do not match height {height} × width {width}"
            f" × depth {depth}{per} = {need} bytes"
        )
    arr = np.frombuffer(buf, dtype=dt.newbyteorder("<") if dt.itemsize > 1 else dt)
    return tensor_to_image(arr.reshape(height, width, depth))


def _to_uint8(arr: np.ndarray) -> np.ndarray:
    if arr.dtype == np.uint8:
        return arr
    if arr.dtype == np.bool_:
        return arr.astype(np.uint8) * 255
    if arr.dtype.kind in "iu":
        lo, hi = (int(arr.min()), int(arr.max())) if arr.size else (0, 0)
        if lo < 0 or hi > 255:
            raise ImageError(
                f"tensor image: {arr.dtype} values in [{lo}, {hi}] are outside [0, 255]"
            )
        return arr.astype(np.uint8)
    if arr.dtype.kind == "f":
        f = arr.astype(np.float64)
        finite = f[np.isfinite(f)]
        if finite.size == 0:
            return np.zeros(arr.shape, dtype=np.uint8)
        flo, fhi = float(finite.min()), float(finite.max())
        if flo < 0.0 or fhi > 255.0:
            raise ImageError(
                f"tensor image: float values in [{flo:g}, {fhi:g}] are not in [0, 1] or [0, 255]"
            )
        scale = 255.0 if fhi <= 1.0 else 1.0
        f = np.nan_to_num(f, nan=0.0, posinf=255.0 / scale, neginf=0.0)
        return np.clip(np.rint(f * scale), 0, 255).astype(np.uint8)
    raise ImageError(f"tensor image: dtype {arr.dtype} cannot be shown as an image")


_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def tensor_to_image(array: np.ndarray) -> Image.Image:
    """An image from an ``H×W`` or ``H×W×{1,2,3,4}`` array: uint8 as is, bool as 0/255,
    other integers when they lie in [0, 255], floats in [0, 1] (scaled by 255) or [0, 255]."""
    arr = np.asarray(array)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3 or arr.shape[2] not in _MODES or arr.shape[0] <= 0 or arr.shape[1] <= 0:
        raise ImageError(f"tensor image: shape {list(np.shape(array))} is not H×W or H×W×1/2/3/4")
    data = np.ascontiguousarray(_to_uint8(arr))
    mode = _MODES[data.shape[2]]
    if mode == "L":
        data = data[:, :, 0]
    return Image.fromarray(data, mode=mode) if mode == "L" else Image.fromarray(data)


def _png_bytes(img: Image.Image) -> bytes:
    out = io.BytesIO()
    if img.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
        img = img.convert("RGBA" if "A" in img.getbands() else "RGB")
    img.save(out, format="PNG")
    return out.getvalue()


MAX_DECODE_PIXELS = 40_000_000  # pictures are decoded at most this large (after JPEG scaling)


def _too_large(fmt: str, b: bytes, size: tuple[int, int] | None = None) -> ImageError:
    w, h = size if size is not None else (image_size(b) or ("", 0, 0))[1:]
    what = f"{w:,}×{h:,} pixels" if w and h else "too many pixels"
    return ImageError(f"{fmt} of {what}: too large to decode here")


def thumbnail_image(b: bytes, max_side: int = 128) -> tuple[Image.Image, tuple[int, int]]:
    """A reduced picture whose longer side is at most ``max_side``, and the picture's full
    ``(width, height)``. JPEGs decode in Pillow's draft mode (DCT scaling, up to 1/8), which
    is what makes this cheap and lets large JPEGs through; any picture that would still take
    more than :data:`MAX_DECODE_PIXELS` is refused with an :class:`ImageError` naming its size,
    before anything is allocated. Raises :class:`ImageError`."""
    fmt = sniff_image(b) or "image"
    header = image_size(b)
    if header is not None:
        w, h = header[1], header[2]
        scale = 8 if fmt == "jpeg" else 1
        if (w // scale) * (h // scale) > MAX_DECODE_PIXELS:
            raise _too_large(fmt, b, (w, h))
    try:
        with warnings.catch_warnings():
            # Above Pillow's warning size a JPEG is still fine: draft mode scales it down.
            warnings.simplefilter(
                "ignore" if fmt == "jpeg" else "error", Image.DecompressionBombWarning
            )
            img: Image.Image = Image.open(io.BytesIO(b))
            full = img.size
            if fmt == "jpeg" and isinstance(img, ImageFile.ImageFile):
                img.draft(
                    "RGB" if img.mode not in ("L", "CMYK") else img.mode, (max_side, max_side)
                )
            if img.width * img.height > MAX_DECODE_PIXELS:
                raise _too_large(fmt, b, full)
            img.thumbnail((max_side, max_side))
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise _too_large(fmt, b) from exc
    except _PIL_ERRORS as exc:
        reason = _OBJECT_REPR.sub("", str(exc)).strip()
        raise ImageError(f"{fmt} ({len(b)} bytes) cannot be decoded: {reason}") from exc
    return img, full


def thumbnail_bytes(b: bytes, max_side: int = 128) -> bytes:
    """A small JPEG (for JPEG input) or PNG (anything else) whose longer side is at most
    ``max_side`` (see :func:`thumbnail_image`). Raises :class:`ImageError`."""
    img, _full = thumbnail_image(b, max_side)
    if (sniff_image(b) or "") == "jpeg":
        out = io.BytesIO()
        if img.mode not in ("L", "RGB"):
            img = img.convert("RGB")
        img.save(out, format="JPEG", quality=85)
        return out.getvalue()
    return _png_bytes(img)


# --------------------------------------------------------------------------------------------
# Finding pictures in a record


@dataclass(frozen=True)
class ImageRef:
    """One picture found in a record.

    ``feature`` and ``index`` locate the value (``step`` too for a SequenceExample feature
    list); ``source`` is ``"encoded"``, ``"raw"`` or ``"tensor"``; ``format`` the encoded
    format (``"jpeg"``, ``"png"``…), ``"raw"`` or ``"tensor"``; ``width``/``height``/``depth``
    are known for raw and tensor pictures (0 for encoded ones until decoded)."""

    feature: str
    index: int
    source: str
    format: str
    data: bytes = field(repr=False, compare=False)
    height: int = 0
    width: int = 0
    depth: int = 0
    step: int | None = None

    @property
    def mime(self) -> str:
        """MIME type of :meth:`display_bytes`."""
        if self.source == "encoded" and self.format in BROWSER_FORMATS:
            return BROWSER_FORMATS[self.format]
        return "image/png"

    def image(self) -> Image.Image:
        """The decoded picture. Raises :class:`ImageError`."""
        if self.source == "encoded":
            return decode_image(self.data)
        if self.source == "raw":
            return raw_pixels_to_image(self.data, self.height, self.width, self.depth)
        try:
            return tensor_to_image(parse_tensor(self.data))
        except ImageError:
            raise
        except CodecError as exc:
            raise ImageError(f"tensor image: {exc}") from exc

    def display_bytes(self) -> bytes:
        """Bytes to show as :attr:`mime`: the stored bytes themselves for JPEG, PNG, GIF and
        WebP (no re-encoding), else the picture encoded once as PNG."""
        if self.source == "encoded" and self.format in BROWSER_FORMATS:
            return self.data
        return _png_bytes(self.image())

    def thumbnail(self, max_side: int = 128) -> bytes:
        """A small JPEG/PNG of the picture (see :func:`thumbnail_bytes`)."""
        if self.source == "encoded":
            return thumbnail_bytes(self.data, max_side)
        img = self.image()
        img.thumbnail((max_side, max_side))
        return _png_bytes(img)


_HEIGHT_NAMES = ("height", "image/height", "img_height", "image_height", "rows")
_WIDTH_NAMES = ("width", "image/width", "img_width", "image_width", "cols")
_DEPTH_NAMES = ("depth", "channels", "image/channels", "image/depth", "image_depth", "img_depth")
_RAW_NAME = re.compile(r"raw|pixel|^image$|^img$|/image$|^image/encoded$|picture|frame", re.I)


def _scalar_int(features: dict[str, Feature], names: Sequence[str], prefix: str) -> int | None:
    for n in [prefix + n.rsplit("/", 1)[-1] for n in names if prefix] + list(names):
        f = features.get(n)
        if f is not None and f.type == "int64" and len(f.values) == 1:
            v = int(f.values[0])
            if v > 0:
                return v
    return None


def _raw_shape(features: dict[str, Feature], name: str, size: int) -> tuple[int, int, int] | None:
    """(height, width, depth) describing a raw buffer of ``size`` bytes in feature ``name``."""
    prefix = name.rsplit("/", 1)[0] + "/" if "/" in name else ""
    h = _scalar_int(features, _HEIGHT_NAMES, prefix)
    w = _scalar_int(features, _WIDTH_NAMES, prefix)
    if h is None or w is None or h * w == 0:
        return None
    d = _scalar_int(features, _DEPTH_NAMES, prefix)
    if d is None:
        d, rem = divmod(size, h * w)
        if rem or d not in (1, 3, 4):
            return None
    return (h, w, d) if h * w * d == size and d in (1, 2, 3, 4) else None


def _image_tensor(b: bytes) -> tuple[int, int, int] | None:
    try:
        dtype, shape = describe_tensor(b)
    except CodecError:
        return None
    if dtype != "uint8" or len(shape) != 3 or shape[2] not in (1, 3, 4):
        return None
    if shape[0] <= 0 or shape[1] <= 0 or not is_serialized_tensor(b):
        return None
    return shape[0], shape[1], shape[2]


def _refs_in(
    name: str,
    feat: Feature,
    context: dict[str, Feature],
    step: int | None,
) -> list[ImageRef]:
    if feat.type != "bytes":
        return []
    out = []
    for i, v in enumerate(feat.values):
        row = image_magic(v)
        if row is not None:
            out.append(ImageRef(name, i, "encoded", row.format, v, step=step))
            continue
        if v[:1] == b"\x08":
            shape = _image_tensor(v)
            if shape is not None:
                h, w, d = shape
                out.append(ImageRef(name, i, "tensor", "tensor", v, h, w, d, step=step))
                continue
        if _RAW_NAME.search(name):
            raw = _raw_shape(context, name, len(v))
            if raw is not None:
                h, w, d = raw
                out.append(ImageRef(name, i, "raw", "raw", v, h, w, d, step=step))
    return out


def find_images(record: Record) -> list[ImageRef]:
    """Every picture in ``record``: encoded images in any bytes feature (by magic number),
    image-shaped serialized tensors (uint8 H×W×1/3/4), and raw pixel buffers in a bytes
    feature named like an image (``image_raw``, ``*raw*``, ``image``, ``pixels``…) whose length
    is height × width × depth from ``height``/``width``/``depth`` features (also
    ``image/height``, ``image/width``, ``image/channels``; depth inferred when missing)."""
    out: list[ImageRef] = []
    for name, feat in record.features.items():
        out.extend(_refs_in(name, feat, record.features, None))
    for name, steps in record.feature_lists.items():
        for s, feat in enumerate(steps):
            out.extend(_refs_in(name, feat, record.features, s))
    return out


# --------------------------------------------------------------------------------------------
# Object Detection API boxes


@dataclass(frozen=True)
class PixelBox:
    """One bounding box in pixels of the picture (ordered and clipped to it), with the class
    text and label when the record has them; ``normalized`` tells whether the coordinates were
    read as normalised; ``problems`` says what is wrong with the box as stored (see
    :func:`codec.detection.record_boxes`), and ``drawable`` is false when a coordinate is not
    a finite number (the box has no place to be drawn)."""

    xmin: float
    ymin: float
    xmax: float
    ymax: float
    text: str | None = None
    label: int | None = None
    normalized: bool = True
    index: int = 0
    problems: tuple[str, ...] = ()
    drawable: bool = True

    @property
    def caption(self) -> str:
        """``"text (label)"``, or whichever of the two the record has."""
        return class_caption(self.text, self.label)

    @property
    def key(self) -> ClassKey:
        """The box's class: ``(text, label)``."""
        return (self.text, self.label)


def _record_boxes(
    record: Record,
    image_width: int,
    image_height: int,
    normalized: bool | None,
    label_map: Mapping[int, str] | None,
) -> tuple[RecordBoxes, bool] | None:
    found = layouts(record.features)
    if not found:
        return None
    layout = found[0]
    if normalized is None:
        normalized = decide_normalized(coordinates(record.features, layout), share=0.5)
    got = record_boxes(
        record.features,
        layout,
        normalized=normalized,
        width=image_width,
        height=image_height,
        label_map=label_map,
    )
    return got, normalized


def find_boxes(
    record: Record,
    image_width: int,
    image_height: int,
    *,
    normalized: bool | None = None,
    label_map: Mapping[int, str] | None = None,
) -> list[PixelBox]:
    """Boxes of the first detection layout of ``record`` (``image/object/bbox/*`` in the
    Object Detection API's own layout), in pixels of an image of the given size.

    ``normalized`` is the dataset's decision (:func:`codec.detection.decide_normalized`);
    without it the record's own coordinates decide by majority, so one out-of-range value
    does not turn every box into pixels. Boxes whose coordinates are out of range, inverted or
    not finite are kept, with their problems; lists of unequal length give as many boxes as
    the shortest. Never raises for odd values."""
    found = _record_boxes(record, image_width, image_height, normalized, label_map)
    if found is None:
        return []
    got, normalized = found
    out = []
    for b in got.boxes:
        px = b.pixels(image_width, image_height, normalized)
        x0, y0, x1, y1 = px if px is not None else (0.0, 0.0, 0.0, 0.0)
        out.append(
            PixelBox(
                x0, y0, x1, y1, b.text, b.label, normalized, b.index, b.problems, px is not None
            )
        )
    return out


def box_problems(
    record: Record,
    image_width: int,
    image_height: int,
    *,
    normalized: bool | None = None,
    label_map: Mapping[int, str] | None = None,
) -> list[str]:
    """What is wrong with the boxes :func:`find_boxes` gives, in words: the record's own
    problems (object lists of different lengths) and one line per box with a problem
    (``box 2 (cat (1)): a coordinate is outside [0, 1]``). Empty when all is well."""
    found = _record_boxes(record, image_width, image_height, normalized, label_map)
    if found is None:
        return []
    got = found[0]
    out = list(got.problems)
    for b in got.boxes:
        if b.problems:
            named = f" ({b.caption})" if b.caption else ""
            out.append(f"box {b.index}{named}: {'; '.join(b.problems)}")
    return out


BAD_BOX_COLOR = "#ff00ff"  # boxes with a problem: dashed in this colour, whatever their class
_EDGE = "#000000"  # the thin edge around each line and caption: readable on light pictures


def box_color(box: PixelBox) -> str:
    """The colour a box is drawn in: its class's (:func:`codec.detection.class_color`), or
    :data:`BAD_BOX_COLOR` when it has a problem."""
    return BAD_BOX_COLOR if box.problems else class_color(box.key)


def caption_size(width: int, height: int) -> int | None:
    """The font size of box captions on a ``width`` × ``height`` picture: about a thirtieth
    of its smaller side, 9 to 16 pixels; None (no captions) when a caption's band would take
    more than an eighth of the picture."""
    side = min(width, height)
    size = min(16, max(9, side // 30))
    return size if (size + 2) * 8 <= side else None


def caption_place(
    box: tuple[float, float, float, float], text: tuple[int, int], picture: tuple[int, int]
) -> tuple[int, int, int, int]:
    """Where a caption of ``text`` (width, height) goes for ``box`` (x0, y0, x1, y1) on a
    ``picture`` (width, height): above the box when there is room, else just inside its top,
    moved left as needed; always inside the picture (a caption wider than it is cut to it)."""
    x0, y0 = box[0], box[1]
    pw, ph = picture
    tw, th = min(text[0], pw), min(text[1], ph)
    top = int(y0) - th if y0 - th >= 0 else int(max(0.0, min(y0, ph - th)))
    if top < 0 or top + th > ph:
        top = max(0, ph - th)
    left = int(min(max(0.0, x0), pw - tw))
    return left, top, left + tw, top + th


def _dashed_rectangle(
    draw: Any, xy: tuple[float, float, float, float], color: str, width: int
) -> None:
    x0, y0, x1, y1 = xy
    dash = max(3, width * 3)
    for ax, ay, bx, by in ((x0, y0, x1, y0), (x1, y0, x1, y1), (x0, y1, x1, y1), (x0, y0, x0, y1)):
        length = max(abs(bx - ax), abs(by - ay))
        steps = max(1, int(length // (2 * dash)))
        for k in range(steps + 1):
            t0 = min(1.0, (2 * k * dash) / length) if length else 0.0
            t1 = min(1.0, ((2 * k + 1) * dash) / length) if length else 0.0
            draw.line(
                [
                    (ax + (bx - ax) * t0, ay + (by - ay) * t0),
                    (ax + (bx - ax) * t1, ay + (by - ay) * t1),
                ],
                fill=color,
                width=width,
            )


def _fit_text(font: Any, text: str, room: float) -> str:
    """``text``, cut with "…" to fit ``room`` pixels."""
    if font.getlength(text) <= room:
        return text
    while text and font.getlength(text + "…") > room:
        text = text[:-1]
    return text + "…" if text else ""


def _ink(color: str) -> str:
    """Black or white, whichever reads better on ``color``."""
    r, g, b = (int(color[k : k + 2], 16) for k in (1, 3, 5))
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#ffffff"


def draw_boxes(
    img: Image.Image,
    boxes: Sequence[PixelBox],
    captions: bool = True,
    *,
    line_width: int | None = None,
    text_size: int | None = None,
) -> Image.Image:
    """A copy of ``img`` (as RGB) with each drawable box drawn in its class colour
    (:func:`box_color`) with a thin dark edge, and, with ``captions``, labelled
    ``text (label)`` in a band inside the picture (:func:`caption_place`) whose font follows
    the picture's size (:func:`caption_size`; ``text_size`` overrides it; tiny pictures get
    none). A box with a problem is drawn clipped, dashed, in :data:`BAD_BOX_COLOR`, and its
    caption starts with ``!``. ``line_width`` defaults to a hundredth of the smaller side."""
    out = img.convert("RGB")
    draw = ImageDraw.Draw(out)
    width = line_width or max(1, round(min(out.size) / 100))
    size = text_size or caption_size(*out.size)
    font = ImageFont.load_default(size=size) if captions and size else None
    for box in boxes:
        if not box.drawable:
            continue
        x0, x1 = sorted((box.xmin, box.xmax))
        y0, y1 = sorted((box.ymin, box.ymax))
        color = box_color(box)
        if box.problems:
            _dashed_rectangle(draw, (x0, y0, x1, y1), color, width)
        else:
            draw.rectangle([x0 - 1, y0 - 1, x1 + 1, y1 + 1], outline=_EDGE, width=width + 2)
            draw.rectangle([x0, y0, x1, y1], outline=color, width=width)
        caption = ("! " if box.problems else "") + box.caption
        if font is None or not caption.strip():
            continue
        caption = _fit_text(font, caption, out.width - 4)
        right, bottom = font.getbbox(caption)[2:]
        place = caption_place((x0, y0, x1, y1), (int(right) + 4, int(bottom) + 2), out.size)
        draw.rectangle([place[0], place[1], place[2] - 1, place[3] - 1], fill=color)
        draw.text((place[0] + 2, place[1]), caption, fill=_ink(color), font=font)
    return out
