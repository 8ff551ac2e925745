"""Pictures inside records: encoded images, raw pixel buffers and image-shaped tensors.

- :func:`sniff_image` names the format of encoded bytes from the ordered magic-number table
  ``codec.values.IMAGE_MAGIC`` (JPEG, PNG, GIF, BMP, WebP, TIFF).
- :func:`find_images` finds every picture in a decoded :class:`~codec.example.Record` and
  returns :class:`ImageRef` values; ``ref.display_bytes()`` gives bytes a browser shows as they
  are (8-bit JPEG, PNG, GIF and WebP are passed through untouched; raw pixels, tensors, BMP,
  TIFF and 16-bit grey PNGs are encoded once as an 8-bit PNG).
- Pictures of more than 8 bits per value (16-bit PNGs and TIFFs, 32-bit and float TIFFs,
  uint16 and float tensors outside [0, 1] / [0, 255]) are shown contrast-stretched: a
  percentile window of their valid values (:func:`stretch`, 1st–99th by default; zero is "no
  value" unless the picture has negative values) mapped to 0–255; a single-channel one is
  drawn in a colour map (:func:`colorize`, turbo or viridis) when its key names a depth,
  disparity or heat map, or when it is not stored under a photo's key
  (:func:`picture_colormap`). 8-bit pictures are never changed.
- :func:`find_boxes` / :func:`draw_boxes` read and draw Object Detection API boxes.

Pillow's decompression-bomb guard stays on; every Pillow failure becomes an
:class:`~codec.errors.ImageError` with a message saying what was being decoded.
"""

from __future__ import annotations

import functools
import io
import math
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
from codec.values import (
    HIGH_DEPTH_MODES,
    IMAGE_MAGIC,
    image_magic,
    image_size,
    is_high_depth,
    sniff_image,
)

__all__ = [
    "BAD_BOX_COLOR",
    "COLORMAPS",
    "IMAGE_MAGIC",
    "STRETCH_PERCENTILES",
    "TENSOR_PICTURE_DTYPES",
    "CaptionArt",
    "ImageRef",
    "PixelBox",
    "box_color",
    "box_problems",
    "caption_art",
    "caption_font",
    "caption_place",
    "caption_size",
    "colorize",
    "decode_image",
    "display_image",
    "draw_boxes",
    "find_boxes",
    "find_images",
    "fit_text",
    "ink",
    "invalid_pixels",
    "paste_caption",
    "picture_colormap",
    "raw_pixels_to_image",
    "sniff_image",
    "stretch",
    "stretch_window",
    "tensor_picture_shape",
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

# --------------------------------------------------------------------------------------------
# Pixels of more than 8 bits: a percentile window to 8 bits, and colour maps

STRETCH_PERCENTILES = (1.0, 99.0)  # the window :func:`stretch` keeps by default
_STRETCH_SAMPLE = 1_000_000  # percentiles are taken on at most about this many values
_STRETCH_CHUNK = 1 << 20  # values mapped at a time (bounds the float64 copy)

# 256 RGB entries each, 8 bits per channel, as hex. Turbo: Google's published table
# (Mikhailov, 2019); viridis: matplotlib's (van der Walt and Smith, CC0). Rounded to 8 bits.
_TURBO = (
    "30123b32154333184a341b51351e5836215f37246638276d392a733a2d793b2f803c32863d358b3e38913f3b"
    "973f3e9c4040a24143a74146ac4249b1424bb5434eba4451bf4454c34456c74559cb455ccf455ed34661d646"
    "64da4666dd4669e0466be3476ee64771e94773eb4776ee4778f0477bf2467df44680f64682f84685fa4687fb"
    "458afc458cfd448ffe4391fe4294ff4196ff4099ff3e9bfe3d9efe3ba0fd3aa3fc38a5fb37a8fa35abf833ad"
    "f731aff52fb2f42eb4f22cb7f02ab9ee28bceb27bee925c0e723c3e422c5e220c7df1fc9dd1ecbda1ccdd81b"
    "d0d51ad2d21ad4d019d5cd18d7ca18d9c818dbc518ddc218dec018e0bd19e2bb19e3b91ae4b61ce6b41de7b2"
    "1fe9af20eaac22ebaa25eca727eea42aefa12cf09e2ff19b32f29835f39438f4913cf58e3ff68a43f78746f8"
    "844af8804ef97d52fa7a55fa7659fb735dfc6f61fc6c65fd6969fd666dfe6271fe5f75fe5c79fe597dff5680"
    "ff5384ff5188ff4e8bff4b8fff4992ff4796fe4499fe429cfe409ffd3fa1fd3da4fc3ca7fc3aa9fb39acfb38"
    "affa37b1f936b4f836b7f735b9f635bcf534bef434c1f334c3f134c6f034c8ef34cbed34cdec34d0ea34d2e9"
    "35d4e735d7e535d9e436dbe236dde037dfdf37e1dd37e3db38e5d938e7d739e9d539ebd339ecd13aeecf3aef"
    "cd3af1cb3af2c93af4c73af5c53af6c33af7c13af8be39f9bc39faba39fbb838fbb637fcb336fcb136fdae35"
    "fdac34fea933fea732fea431fea130fe9e2ffe9b2dfe992cfe962bfe932afe9029fd8d27fd8a26fc8725fc84"
    "23fb8122fb7e21fa7b1ff9781ef9751df8721cf76f1af66c19f56918f46617f36315f26014f15d13f05b12ef"
    "5811ed5510ec530feb500eea4e0de84b0ce7490ce5470be4450ae2430ae14109df3f08dd3d08dc3b07da3907"
    "d83706d63506d43305d23105d02f05ce2d04cc2b04ca2a04c82803c52603c32503c12302be2102bc2002b91e"
    "02b71d02b41b01b21a01af1801ac1701a91601a71401a41301a112019e10019b0f01980e01950d01920b018e"
    "0a018b09028808028507028106027e05027a0403"
)
_VIRIDIS = (
    "44015444025645045745055946075a46085c460a5d460b5e470d60470e614710634711644713654814674816"
    "6848176948186a481a6c481b6d481c6e481d6f481f7048207148217348237448247548257648267748287848"
    "2979472a7a472c7a472d7b472e7c472f7d46307e46327e46337f463480453581453781453882443983443a83"
    "443b84433d84433e85423f854240864241864142874144874045884046883f47883f48893e49893e4a893e4c"
    "8a3d4d8a3d4e8a3c4f8a3c508b3b518b3b528b3a538b3a548c39558c39568c38588c38598c375a8c375b8d36"
    "5c8d365d8d355e8d355f8d34608d34618d33628d33638d32648e32658e31668e31678e31688e30698e306a8e"
    "2f6b8e2f6c8e2e6d8e2e6e8e2e6f8e2d708e2d718e2c718e2c728e2c738e2b748e2b758e2a768e2a778e2a78"
    "8e29798e297a8e297b8e287c8e287d8e277e8e277f8e27808e26818e26828e26828e25838e25848e25858e24"
    "868e24878e23888e23898e238a8d228b8d228c8d228d8d218e8d218f8d21908d21918c20928c20928c20938c"
    "1f948c1f958b1f968b1f978b1f988b1f998a1f9a8a1e9b8a1e9c891e9d891f9e891f9f881fa0881fa1881fa1"
    "871fa28720a38620a48621a58521a68522a78522a88423a98324aa8325ab8225ac8226ad8127ad8128ae8029"
    "af7f2ab07f2cb17e2db27d2eb37c2fb47c31b57b32b67a34b67935b77937b87838b9773aba763bbb753dbc74"
    "3fbc7340bd7242be7144bf7046c06f48c16e4ac16d4cc26c4ec36b50c46a52c56954c56856c66758c7655ac8"
    "645cc8635ec96260ca6063cb5f65cb5e67cc5c69cd5b6ccd5a6ece5870cf5773d05675d05477d1537ad1517c"
    "d2507fd34e81d34d84d44b86d54989d5488bd6468ed64590d74393d74195d84098d83e9bd93c9dd93ba0da39"
    "a2da37a5db36a8db34aadc32addc30b0dd2fb2dd2db5de2bb8de29bade28bddf26c0df25c2df23c5e021c8e0"
    "20cae11fcde11dd0e11cd2e21bd5e21ad8e219dae319dde318dfe318e2e418e5e419e7e419eae51aece51bef"
    "e51cf1e51df4e61ef6e620f8e621fbe723fde725"
)


def _table(hexdata: str) -> np.ndarray:
    table = np.frombuffer(bytes.fromhex(hexdata), dtype=np.uint8).reshape(256, 3).copy()
    table.setflags(write=False)
    return table


_GRAY = np.repeat(np.arange(256, dtype=np.uint8)[:, None], 3, axis=1)
_GRAY.setflags(write=False)
COLORMAPS: dict[str, np.ndarray] = {
    "turbo": _table(_TURBO),
    "viridis": _table(_VIRIDIS),
    "gray": _GRAY,
}


def _zero_invalid(a: np.ndarray, zero_invalid: bool | None) -> bool:
    if zero_invalid is not None:
        return zero_invalid
    if a.dtype.kind in "ub":
        return True
    with np.errstate(invalid="ignore"):
        return not bool(np.any(a < 0))


def _numeric(array: Any) -> np.ndarray:
    a = np.asarray(array)
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
    if a.dtype.kind not in "uif":
        raise ImageError(f"pixels of dtype {a.dtype} cannot be shown as a picture")
    return a


def invalid_pixels(array: Any, zero_invalid: bool | None = None) -> np.ndarray:
    """Where ``array`` has no value: NaN and infinities, and zeros when ``zero_invalid``
    (``None``: when no value is negative, as depth and disparity maps store "no
    measurement"). A boolean array of ``array``'s shape."""
    a = _numeric(array)
    out = np.zeros(a.shape, dtype=bool)
    if a.dtype.kind == "f":
        out |= ~np.isfinite(a)
    if _zero_invalid(a, zero_invalid):
        out |= a == 0
    return out


def stretch_window(
    array: Any,
    low: float = STRETCH_PERCENTILES[0],
    high: float = STRETCH_PERCENTILES[1],
    *,
    zero_invalid: bool | None = None,
) -> tuple[float, float] | None:
    """The ``(low, high)`` percentiles (numpy's default, linear interpolation) of the valid
    values of ``array`` (:func:`invalid_pixels` left out), or ``None`` when it has none.
    Above about a million values the percentiles are those of a regular sample (every k-th
    value in storage order), so the answer stays deterministic and fast."""
    a = _numeric(array)
    flat = a.reshape(-1)
    zi = _zero_invalid(a, zero_invalid)
    if flat.size > _STRETCH_SAMPLE:
        flat = flat[:: math.ceil(flat.size / _STRETCH_SAMPLE)]
    keep = ~invalid_pixels(flat, zi)
    values = flat[keep]
    if values.size == 0:
        return None
    lo, hi = np.percentile(values.astype(np.float64), [low, high])
    return float(lo), float(hi)


def _map_window(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """float64 values to 0–255 through the window (NaN is left to the caller)."""
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.rint((v - lo) * 255.0 / (hi - lo)) if hi > lo else np.where(v >= lo, 255.0, 0.0)
        return np.clip(np.nan_to_num(out, nan=0.0), 0, 255).astype(np.uint8)


def stretch(
    array: Any,
    low: float = STRETCH_PERCENTILES[0],
    high: float = STRETCH_PERCENTILES[1],
    *,
    zero_invalid: bool | None = None,
    window: tuple[float, float] | None = None,
) -> np.ndarray:
    """``array`` (any numeric dtype and shape) as uint8 of the same shape, contrast-stretched:
    a valid value ``v`` becomes ``clip(rint((v − lo) · 255 / (hi − lo)), 0, 255)`` (halves to
    even) with
    ``(lo, hi)`` = ``window`` or :func:`stretch_window` (the ``low``-th and ``high``-th
    percentiles of the valid values); when ``hi == lo`` values from ``lo`` up are 255.
    Invalid values (:func:`invalid_pixels`: NaN, ±inf, and zero when ``zero_invalid`` — by
    default when nothing is negative) become 0, as does everything when no value is valid.
    Integers of up to 16 bits go through a lookup table; others are mapped a million values at
    a time, so the extra memory stays small whatever the picture's size."""
    a = _numeric(array)
    zi = _zero_invalid(a, zero_invalid)
    if window is None:
        window = stretch_window(a, low, high, zero_invalid=zi)
    if window is None or a.size == 0:
        return np.zeros(a.shape, dtype=np.uint8)
    lo, hi = window
    if a.dtype.kind in "ui" and a.dtype.itemsize <= 2:
        info = np.iinfo(a.dtype)
        values = np.arange(int(info.min), int(info.max) + 1, dtype=np.int64)
        lut = _map_window(values.astype(np.float64), lo, hi)
        if zi:
            lut[values == 0] = 0
        index = a if info.min == 0 else a.astype(np.int64) - int(info.min)
        return lut[index]
    out = np.empty(a.shape, dtype=np.uint8)
    flat, dest = a.reshape(-1), out.reshape(-1)
    for start in range(0, flat.size, _STRETCH_CHUNK):
        v = flat[start : start + _STRETCH_CHUNK].astype(np.float64)
        part = _map_window(v, lo, hi)
        part[invalid_pixels(v, zi)] = 0
        dest[start : start + _STRETCH_CHUNK] = part
    return out


def colorize(gray: Any, cmap: str = "turbo", *, invalid: np.ndarray | None = None) -> np.ndarray:
    """An ``H×W×3`` uint8 RGB array: each value of the uint8 ``H×W`` (or ``H×W×1``) ``gray``
    looked up in :data:`COLORMAPS` ``[cmap]`` (``"turbo"``, ``"viridis"``, ``"gray"``);
    pixels where ``invalid`` is true are black. Raises :class:`ImageError` for another dtype
    or shape, or an unknown colour map."""
    g = np.asarray(gray)
    if g.ndim == 3 and g.shape[2] == 1:
        g = g[:, :, 0]
    if g.dtype != np.uint8 or g.ndim != 2:
        raise ImageError(
            f"colour map: expected a uint8 H×W array, got {g.dtype} of shape {list(g.shape)}"
        )
    table = COLORMAPS.get(cmap)
    if table is None:
        raise ImageError(f"colour map {cmap!r} is unknown (known: {', '.join(COLORMAPS)})")
    paletted = Image.fromarray(np.ascontiguousarray(g))
    paletted.putpalette(table.tobytes())  # Pillow's lookup: faster than indexing in numpy
    out = np.array(paletted.convert("RGB"))
    if invalid is not None:
        np.multiply(out, ~np.asarray(invalid, dtype=bool).reshape(g.shape)[:, :, None], out=out)
    return out


# Keys naming what a colour map shows (any part of the key), and photos' keys (its last part,
# or the whole key) whose high-bit-depth pictures stay grey.
_DEPTH_KEY = re.compile(r"depth|disparit|(^|[/_])(disp|range)($|[/_])", re.I)
_HEAT_KEY = re.compile(r"heat|saliency|attention|density", re.I)
_PHOTO_KEY = re.compile(
    r"(^|/)(image|img|image_raw|encoded|jpeg|png|raw|photo|picture|frame|rgb|pixels)$", re.I
)


def picture_colormap(feature: str) -> str | None:
    """The colour map a single-channel picture of more than 8 bits stored under ``feature``
    is drawn in: ``"turbo"`` for depth, disparity or range maps (by key) and for any such
    picture under a key that is not a photo's (including ``""``, a record that is one
    tensor); ``"viridis"`` for heat, saliency, attention or density maps; ``None`` (grey) under a
    photo's key: one whose last part is ``image``, ``encoded``, ``image_raw``, ``img``,
    ``jpeg``, ``png``… (``image/encoded``, TFDS ``steps/observation/image``). The key rules
    are those of :mod:`codec.roles` (depth → turbo, "other" heat maps → viridis, photo →
    grey, a 16-bit picture under any other key → depth). 8-bit pictures are never
    colour-mapped."""
    if _DEPTH_KEY.search(feature):
        return "turbo"
    if _HEAT_KEY.search(feature):
        return "viridis"
    if _PHOTO_KEY.search(feature):
        return None
    return "turbo"


def _array_image(a: np.ndarray, stretched: bool, cmap: str | None, src: np.ndarray) -> Image.Image:
    if stretched and cmap is not None:
        return Image.fromarray(colorize(a, cmap, invalid=invalid_pixels(src)))
    return Image.fromarray(np.ascontiguousarray(a))


def display_image(img: Image.Image, cmap: str | None = None) -> Image.Image:
    """``img`` ready to show: a single-channel picture of more than 8 bits per value (Pillow
    modes ``I;16*``, ``I``, ``F``) stretched to 8 bits (:func:`stretch`) and, with ``cmap``,
    colour-mapped (:func:`colorize`, no-value pixels black); any other picture as it is."""
    if img.mode not in HIGH_DEPTH_MODES:
        return img
    src = np.asarray(img)
    if src.ndim != 2:
        src = src.reshape(img.height, img.width)
    return _array_image(stretch(src), True, cmap, src)


MAX_DECODE_PIXELS = 40_000_000  # pictures are decoded at most this large (after JPEG scaling)


def _too_large(fmt: str, b: bytes, size: tuple[int, int] | None = None) -> ImageError:
    w, h = size if size is not None else (image_size(b) or ("", 0, 0))[1:]
    what = f"{w:,}×{h:,} pixels" if w and h else "too many pixels"
    return ImageError(f"{fmt} of {what}: too large to decode here")


def decode_image(b: bytes, *, cmap: str | None = None, as_stored: bool = False) -> Image.Image:
    """Decode encoded image bytes fully, ready to show: a single-channel picture of more than
    8 bits per value comes back stretched to 8 bits (:func:`display_image`; colour-mapped with
    ``cmap``) unless ``as_stored``, which gives Pillow's own picture (modes ``I;16``, ``I``,
    ``F`` included) for code that needs the stored values. 8-bit pictures are as stored.

    Raises :class:`ImageError` for truncated or corrupt data, for a picture larger than
    :data:`MAX_DECODE_PIXELS` (read from its header, before anything is allocated) and for
    decompression bombs (Pillow's guard stays on)."""
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
    return img if as_stored else _shown(img, fmt, b, cmap)


def _shown(img: Image.Image, fmt: str, b: bytes, cmap: str | None) -> Image.Image:
    try:
        return display_image(img, cmap)
    except (ValueError, TypeError, ImageError) as exc:
        raise ImageError(f"{fmt} ({len(b)} bytes) cannot be shown: {exc}") from exc


def raw_pixels_to_image(
    buf: bytes,
    height: int,
    width: int,
    depth: int = 1,
    dtype: Any = np.uint8,
    *,
    cmap: str | None = None,
    measured: bool = False,
) -> Image.Image:
    """An image from a raw row-major pixel buffer of ``height × width × depth`` values
    (little-endian when wider than a byte), shown as :func:`tensor_to_image` shows an array
    (``cmap`` and ``measured`` as there).
    Raises :class:`ImageError` when the sizes do not match or the shape is not a picture."""
    dt = np.dtype(dtype)
    if height <= 0 or width <= 0 or depth not in (1, 2, 3, 4):
        raise ImageError(
            f"raw pixels: height {height} × width {width} × depth {depth} is not an image shape"
            " (positive height and width, depth 1, 2, 3 or 4)"
        )
    if height * width > MAX_DECODE_PIXELS:
        raise ImageError(f"raw pixels of {width:,}×{height:,}: too large to decode here")
    values = height * width * depth
    need = values * dt.itemsize
    if len(buf) != need:
        per = f" × {dt.itemsize} bytes ({dt.name})" if dt.itemsize != 1 else ""
        raise ImageError(
            f"raw pixels: {len(buf)} bytes do not match height {height} × width {width}"
            f" × depth {depth}{per} = {need} bytes"
        )
    arr = np.frombuffer(buf, dtype=dt.newbyteorder("<") if dt.itemsize > 1 else dt)
    return tensor_to_image(arr.reshape(height, width, depth), cmap=cmap, measured=measured)


def _to_uint8(arr: np.ndarray) -> tuple[np.ndarray, bool]:
    """``arr`` as uint8 and whether it was stretched: uint8 as is, bool as 0/255, other
    integers as they are when they lie in [0, 255], floats in [0, 1] (× 255) or [0, 255]
    (NaN as 0); anything else stretched (:func:`stretch`)."""
    if arr.dtype == np.uint8:
        return arr, False
    if arr.dtype == np.bool_:
        return arr.astype(np.uint8) * 255, False
    if arr.dtype.kind in "iu":
        lo, hi = (int(arr.min()), int(arr.max())) if arr.size else (0, 0)
        if lo >= 0 and hi <= 255:
            return arr.astype(np.uint8), False
        return stretch(arr), True
    if arr.dtype.kind == "f":
        finite = np.isfinite(arr)
        if not finite.any():
            return np.zeros(arr.shape, dtype=np.uint8), False
        values = arr[finite]
        flo, fhi = float(values.min()), float(values.max())
        if flo < 0.0 or fhi > 255.0:
            return stretch(arr), True
        scale = 255.0 if fhi <= 1.0 else 1.0
        f = np.nan_to_num(arr.astype(np.float64), nan=0.0, posinf=255.0 / scale, neginf=0.0)
        return np.clip(np.rint(f * scale), 0, 255).astype(np.uint8), False
    raise ImageError(f"tensor image: dtype {arr.dtype} cannot be shown as an image")


_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def tensor_to_image(
    array: np.ndarray, *, cmap: str | None = None, measured: bool = False
) -> Image.Image:
    """An image from an ``H×W`` or ``H×W×{1,2,3,4}`` array: uint8 as is, bool as 0/255,
    other integers when they lie in [0, 255], floats in [0, 1] (scaled by 255) or [0, 255];
    anything else contrast-stretched (:func:`stretch`, colour channels with one window, alpha
    with its own). With ``measured`` (the values are measurements: depth, disparity, heat) a
    single-channel array that is not uint8 is always stretched. A stretched single-channel
    array is drawn in ``cmap`` when one is given (:func:`colorize`; no-value pixels black)."""
    arr = np.asarray(array)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3 or arr.shape[2] not in _MODES or arr.shape[0] <= 0 or arr.shape[1] <= 0:
        raise ImageError(f"tensor image: shape {list(np.shape(array))} is not H×W or H×W×1/2/3/4")
    if arr.dtype.kind not in "biuf":
        raise ImageError(f"tensor image: dtype {arr.dtype} cannot be shown as an image")
    channels = arr.shape[2]
    if channels == 1:
        plane = arr[:, :, 0]
        if measured and plane.dtype.kind in "iuf" and plane.dtype != np.uint8:
            return _array_image(stretch(plane), True, cmap, plane)
        gray, stretched = _to_uint8(plane)
        return _array_image(gray, stretched, cmap, arr[:, :, 0])
    colour = 1 if channels == 2 else 3
    parts = [_to_uint8(arr[:, :, :colour])[0]]
    if channels in (2, 4):
        parts.append(_to_uint8(arr[:, :, colour:])[0])
    data = np.ascontiguousarray(np.concatenate(parts, axis=2) if len(parts) > 1 else parts[0])
    return Image.fromarray(data)


def _png_bytes(img: Image.Image) -> bytes:
    out = io.BytesIO()
    img = display_image(img)
    if img.mode not in ("1", "L", "LA", "P", "RGB", "RGBA"):
        img = img.convert("RGBA" if "A" in img.getbands() else "RGB")
    img.save(out, format="PNG")
    return out.getvalue()


def _fitted(size: tuple[int, int], max_side: int) -> tuple[int, int]:
    """``size`` scaled to fit in a ``max_side`` square (never up), its sides at least 1."""
    w, h = size
    scale = min(1.0, max_side / max(w, h, 1))
    return max(1, round(w * scale)), max(1, round(h * scale))


def thumbnail_image(
    b: bytes, max_side: int = 128, *, cmap: str | None = None
) -> tuple[Image.Image, tuple[int, int]]:
    """A reduced picture whose longer side is at most ``max_side``, and the picture's full
    ``(width, height)``. JPEGs decode in Pillow's draft mode (DCT scaling, up to 1/8) asked
    for the reduced picture's own size, so that a 640×480 photograph's 160-pixel thumbnail is
    decoded at a quarter and not resized at all (asked for a ``max_side`` square, Pillow
    would decode it at half and resize: twice the time, for a picture the eye cannot tell
    apart); this is what makes thumbnails cheap and lets large JPEGs through; any picture
    that would still take
    more than :data:`MAX_DECODE_PIXELS` is refused with an :class:`ImageError` naming its size,
    before anything is allocated. A picture of more than 8 bits per value is stretched (and
    colour-mapped with ``cmap``) at full size first, then reduced (:func:`display_image`).
    Raises :class:`ImageError`."""
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
                    "RGB" if img.mode not in ("L", "CMYK") else img.mode, _fitted(full, max_side)
                )
            if img.width * img.height > MAX_DECODE_PIXELS:
                raise _too_large(fmt, b, full)
            if img.mode in HIGH_DEPTH_MODES:
                img.load()
                img = _shown(img, fmt, b, cmap)
            img.thumbnail((max_side, max_side))
    except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise _too_large(fmt, b) from exc
    except _PIL_ERRORS as exc:
        reason = _OBJECT_REPR.sub("", str(exc)).strip()
        raise ImageError(f"{fmt} ({len(b)} bytes) cannot be decoded: {reason}") from exc
    return img, full


def thumbnail_bytes(b: bytes, max_side: int = 128, *, cmap: str | None = None) -> bytes:
    """A small JPEG (for JPEG input) or PNG (anything else) whose longer side is at most
    ``max_side`` (see :func:`thumbnail_image`). Raises :class:`ImageError`."""
    img, _full = thumbnail_image(b, max_side, cmap=cmap)
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
    list); a record that is itself one serialized tensor gives ``feature=""``, ``index=0``
    (its ``data`` is the whole record). ``source`` is ``"encoded"``, ``"raw"`` or
    ``"tensor"``; ``format`` the encoded format (``"jpeg"``, ``"png"``…), ``"raw"`` or
    ``"tensor"``; ``width``/``height``/``depth`` are known for raw and tensor pictures (0 for
    encoded ones until decoded), ``dtype`` that of the values of tensors and raw buffers
    (``"uint8"``, ``"uint16"``, ``"int32"``, ``"float32"``…; ``""`` for encoded pictures)."""

    feature: str
    index: int
    source: str
    format: str
    data: bytes = field(repr=False, compare=False)
    height: int = 0
    width: int = 0
    depth: int = 0
    step: int | None = None
    dtype: str = ""

    @property
    def mime(self) -> str:
        """MIME type of :meth:`display_bytes`."""
        if self.source == "encoded" and self.format in BROWSER_FORMATS:
            return BROWSER_FORMATS[self.format]
        return "image/png"

    @property
    def high_depth(self) -> bool:
        """Whether the picture holds more than 8 bits per value and so is shown
        contrast-stretched when single-channel (a 16-bit grey PNG, a 16-bit or float TIFF, a
        uint16 or float tensor whose values are not already 0–1 or 0–255). Reads headers only;
        for a tensor, says whether its dtype is wider than uint8."""
        if self.source == "encoded":
            return is_high_depth(self.data)
        return self.dtype not in ("", "uint8", "bool")

    @property
    def colormap(self) -> str | None:
        """The colour map this picture's single-channel, more-than-8-bit values are drawn in
        (:func:`picture_colormap` of its key)."""
        return picture_colormap(self.feature)

    def _cmap(self, cmap: str | None) -> str | None:
        return self.colormap if cmap == "auto" else cmap

    def image(self, cmap: str | None = "auto") -> Image.Image:
        """The decoded picture, ready to show: 8-bit pictures as stored; more than 8 bits
        per value stretched to 8 (:func:`stretch`) and, when single-channel, drawn in ``cmap``
        (``"auto"``: :attr:`colormap`; ``None``: grey). Raises :class:`ImageError`, also —
        before anything is allocated — for a picture above :data:`MAX_DECODE_PIXELS`."""
        cm = self._cmap(cmap)
        if self.source == "encoded":
            return decode_image(self.data, cmap=cm)
        if self.height * self.width > MAX_DECODE_PIXELS:
            raise ImageError(
                f"{self.source} picture of {self.width:,}×{self.height:,} pixels:"
                " too large to decode here"
            )
        if self.source == "raw":
            return raw_pixels_to_image(
                self.data,
                self.height,
                self.width,
                self.depth,
                self.dtype or "uint8",
                cmap=cm,
                measured=_measured(self.feature),
            )
        try:
            arr = parse_tensor(self.data)
        except CodecError as exc:
            raise ImageError(f"tensor image: {exc}") from exc
        return tensor_to_image(arr, cmap=cm, measured=_measured(self.feature))

    def display_bytes(self) -> bytes:
        """Bytes to show as :attr:`mime`: the stored bytes themselves for 8-bit (and 16-bit
        colour) JPEG, PNG, GIF and WebP (no re-encoding), else the picture of :meth:`image`
        encoded once as PNG (16-bit grey PNGs among them)."""
        if (
            self.source == "encoded"
            and self.format in BROWSER_FORMATS
            and not (self.format == "png" and is_high_depth(self.data))
        ):
            return self.data
        return _png_bytes(self.image())

    def thumbnail(self, max_side: int = 128, cmap: str | None = "auto") -> bytes:
        """A small JPEG/PNG of the picture as :meth:`image` shows it (see
        :func:`thumbnail_bytes`)."""
        if self.source == "encoded":
            return thumbnail_bytes(self.data, max_side, cmap=self._cmap(cmap))
        img = self.image(cmap)
        img.thumbnail((max_side, max_side))
        return _png_bytes(img)


def _measured(feature: str) -> bool:
    return bool(_DEPTH_KEY.search(feature) or _HEAT_KEY.search(feature))


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


# dtypes of serialized tensors taken for pictures (see :func:`tensor_picture_shape`).
TENSOR_PICTURE_DTYPES = frozenset({"uint8", "uint16", "float16", "bfloat16", "float32", "float64"})
_MIN_SIDE = 8  # a tensor picture other than uint8 H×W×C has both sides at least this long


def tensor_picture_shape(b: bytes) -> tuple[str, int, int, int] | None:
    """``(dtype, height, width, channels)`` when ``b`` is a serialized tensor that is a
    picture, else ``None``: dtype in :data:`TENSOR_PICTURE_DTYPES`, shape ``H×W``,
    ``H×W×1``, ``H×W×3`` or ``H×W×4``; a uint8 ``H×W×C`` of any positive size, anything else
    (2-D tensors, uint16 and floats) at least 8 × 8, so that short tables such as N×4 boxes
    are not taken for pictures. The dtype and shape are read from the header
    (:func:`codec.tensor.describe_tensor`) before the rest is checked; a picture above
    :data:`MAX_DECODE_PIXELS` is still found, and refused when decoded."""
    if b[:1] != b"\x08":
        return None
    try:
        dtype, shape = describe_tensor(b)
    except CodecError:
        return None
    if dtype not in TENSOR_PICTURE_DTYPES or len(shape) not in (2, 3):
        return None
    h, w = shape[0], shape[1]
    c = shape[2] if len(shape) == 3 else 1
    if c not in (1, 3, 4) or h <= 0 or w <= 0:
        return None
    small = h < _MIN_SIDE or w < _MIN_SIDE
    if small and not (dtype == "uint8" and len(shape) == 3):
        return None
    if not is_serialized_tensor(b):
        return None
    return dtype, h, w, c


def _tensor_ref(name: str, i: int, v: bytes, step: int | None) -> ImageRef | None:
    found = tensor_picture_shape(v)
    if found is None:
        return None
    dtype, h, w, d = found
    return ImageRef(name, i, "tensor", "tensor", v, h, w, d, step=step, dtype=dtype)


_SMALLEST_ENCODED = 26  # bytes: the smallest GIF a decoder takes is 26; PNG, JPEG... are larger


def _refs_in(
    name: str,
    feat: Feature,
    context: dict[str, Feature],
    step: int | None,
) -> list[ImageRef]:
    if feat.type != "bytes":
        return []
    out = []
    measured, raw_name = _measured(name), _RAW_NAME.search(name) is not None
    for i, v in enumerate(feat.values):
        if len(v) < _SMALLEST_ENCODED and not (measured or raw_name):
            continue  # class texts, keypoint names...: no picture is this small
        row = image_magic(v)
        if row is not None:
            out.append(ImageRef(name, i, "encoded", row.format, v, step=step))
            continue
        tensor = _tensor_ref(name, i, v, step)
        if tensor is not None:
            out.append(tensor)
            continue
        if measured:
            measure = _raw_measure(context, name, v)
            if measure is not None:
                h, w, dtype = measure
                out.append(ImageRef(name, i, "raw", "raw", v, h, w, 1, step=step, dtype=dtype))
                continue
        if raw_name:
            raw = _raw_shape(context, name, len(v))
            if raw is not None:
                h, w, d = raw
                out.append(ImageRef(name, i, "raw", "raw", v, h, w, d, step=step, dtype="uint8"))
    return out


def _raw_measure(features: dict[str, Feature], name: str, v: bytes) -> tuple[int, int, str] | None:
    """``(height, width, dtype)`` of a raw single-channel map of measurements (depth,
    disparity, heat) in feature ``name``: ``height × width`` values of 1, 2, 4 or 8 bytes
    (uint8, uint16, int32 or float32, float64), little-endian, sizes from the record's height
    and width features. Four bytes are int32 (DeepLab2's raw depth) unless values read so are
    beyond ±2²⁴ — float32 bit patterns — among a regular sample of them."""
    prefix = name.rsplit("/", 1)[0] + "/" if "/" in name else ""
    h = _scalar_int(features, _HEIGHT_NAMES, prefix)
    w = _scalar_int(features, _WIDTH_NAMES, prefix)
    if h is None or w is None or h < 2 or w < 2:
        return None
    item, rem = divmod(len(v), h * w)
    if rem or item not in (1, 2, 4, 8):
        return None
    if item != 4:
        return h, w, {1: "uint8", 2: "uint16", 8: "float64"}[item]
    sample = np.frombuffer(v, dtype="<i4")[:: max(1, (h * w) // 4096)]
    return h, w, "float32" if bool(np.any(np.abs(sample.astype(np.int64)) > 1 << 24)) else "int32"


def find_images(record: Record) -> list[ImageRef]:
    """Every picture in ``record``, in the record's order: encoded images in any bytes
    feature (by magic number); serialized tensors that are pictures
    (:func:`tensor_picture_shape`: uint8, uint16 or float, ``H×W``, ``H×W×1/3/4``); raw pixel
    buffers in a bytes feature named like an image (``image_raw``, ``*raw*``, ``image``,
    ``pixels``…) whose length is height × width × depth from ``height``/``width``/``depth``
    features (also ``image/height``, ``image/width``, ``image/channels``; depth inferred when
    missing); and, under a depth, disparity or heat map's key (``image/depth/encoded``), a raw
    single-channel map of height × width values of 1, 2, 4 or 8 bytes (:func:`_raw_measure`:
    uint8, uint16, int32 — DeepLab2's raw depth — or float32, float64).

    A record that is itself one serialized tensor (``record.kind == "raw"``, each record
    written by ``tf.io.serialize_tensor``) and is a picture gives one :class:`ImageRef` with
    ``feature=""`` and ``index=0`` whose ``data`` is the whole record."""
    out: list[ImageRef] = []
    if record.kind == "raw" and record.raw is not None:
        whole = _tensor_ref("", 0, record.raw, None)
        if whole is not None:
            out.append(whole)
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

    def moved(self, scale: tuple[float, float], origin: tuple[float, float]) -> PixelBox:
        """The box in the pixels of a rendering of its picture at ``scale`` (output pixels
        per picture pixel, x and y) from ``origin`` (the picture point at its top left)."""
        (sx, sy), (ox, oy) = scale, origin
        return PixelBox(
            (self.xmin - ox) * sx,
            (self.ymin - oy) * sy,
            (self.xmax - ox) * sx,
            (self.ymax - oy) * sy,
            self.text,
            self.label,
            self.normalized,
            self.index,
            self.problems,
            self.drawable,
        )


def _record_boxes(
    record: Record,
    image_width: int,
    image_height: int,
    normalized: bool | None,
    label_map: Mapping[int, str] | None,
) -> tuple[RecordBoxes, bool] | None:
    found = [lay for lay in layouts(record.features) if lay.kind == "objects"]
    if not found:  # predictions alone are a layer of their own (codec.layers), not boxes
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
    """Boxes of the first ground-truth layout of ``record`` (``image/object/bbox/*`` in the
    Object Detection API's own layout; never a model's predictions, ``image/detection/*``),
    in pixels of an image of the given size.

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


@functools.lru_cache(maxsize=16)
def caption_font(size: int) -> Any:
    """The captions' font at ``size`` pixels (Pillow's own; loading it costs more than a
    tile's boxes, so each size is loaded once and shared by every thread)."""
    return ImageFont.load_default(size=size)


def fit_text(font: Any, text: str, room: float) -> str:
    """``text``, cut with "…" to fit ``room`` pixels."""
    if font.getlength(text) <= room:
        return text
    while text and font.getlength(text + "…") > room:
        text = text[:-1]
    return text + "…" if text else ""


@dataclass(frozen=True)
class CaptionArt:
    """A caption rendered once: its ``text`` (cut with "…" to fit), the ``size`` its band
    needs (the text's right and bottom edge drawn at the origin) and the glyphs' coverage
    (``mask``, mode ``L``) to paste ``offset`` from where the text is drawn."""

    text: str
    size: tuple[int, int]
    mask: Image.Image
    offset: tuple[int, int]


@functools.lru_cache(maxsize=4096)
def caption_art(font_size: int, caption: str, room: int) -> CaptionArt:
    """``caption`` in :func:`caption_font` of ``font_size``, fit to ``room`` pixels
    (:func:`fit_text`) and rendered: class names repeat over every box of a page, and
    measuring and rendering text was the larger part of drawing a tile's boxes. Pasting
    its ``mask`` in a colour (:func:`paste_caption`) gives the pixels ``ImageDraw.text``
    gives (both blend the colour through the glyphs' coverage)."""
    font = caption_font(font_size)
    text = fit_text(font, caption, room)
    left, top, right, bottom = (int(v) for v in font.getbbox(text))
    dx, dy = min(0, left), min(0, top)
    mask = Image.new("L", (max(1, right - dx), max(1, bottom - dy)), 0)
    ImageDraw.Draw(mask).text((-dx, -dy), text, fill=255, font=font)
    return CaptionArt(text, (right, bottom), mask, (dx, dy))


def paste_caption(out: Image.Image, art: CaptionArt, xy: tuple[int, int], color: str) -> None:
    """``art``'s text drawn on ``out`` in ``color`` with its origin at ``xy``."""
    out.paste(color, (xy[0] + art.offset[0], xy[1] + art.offset[1]), art.mask)


def ink(color: str) -> str:
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
    font = captions and size
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
        if not font or not caption.strip():
            continue
        art = caption_art(size, caption, out.width - 4)
        right, bottom = art.size
        place = caption_place((x0, y0, x1, y1), (right + 4, bottom + 2), out.size)
        draw.rectangle([place[0], place[1], place[2] - 1, place[3] - 1], fill=color)
        paste_caption(out, art, (place[0] + 2, place[1]), ink(color))
    return out
