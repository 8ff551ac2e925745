"""Value-level helpers shared by the message modules: float32 text, byte sniffing (the image
magic-number table, image sizes read from headers) and byte counts in words.

Pure functions over Python values; no protobuf here, and Pillow only when a header cannot be
read without it.
"""

from __future__ import annotations

import io
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "HIGH_DEPTH_MODES",
    "IMAGE_MAGIC",
    "ImageMagic",
    "format_bytes",
    "format_float",
    "image_complete",
    "image_decodes",
    "image_magic",
    "image_size",
    "is_high_depth",
    "is_text",
    "plural",
    "png_ihdr",
    "sniff_image",
]


def format_float(x: float) -> str:
    """The shortest text that reads back as the same float32: ``0.9876`` rather than
    ``0.9876000285148621``. ``"nan"``, ``"inf"``, ``"-inf"`` and ``"-0.0"`` for the special
    values; a value outside float32's range is shown as the infinity it becomes."""
    if x != x:
        return "nan"
    with np.errstate(over="ignore"):
        return str(np.float32(x))


@dataclass(frozen=True)
class ImageMagic:
    """One row of the image-format table. ``signatures`` are alternatives; each alternative
    is a tuple of ``(offset, bytes)`` pairs that must all match. ``check`` is an optional
    extra test for formats whose magic number is short (BMP's ``BM``)."""

    format: str
    mime: str
    signatures: tuple[tuple[tuple[int, bytes], ...], ...]
    check: Callable[[bytes | memoryview], bool] | None = None

    def matches(self, b: bytes | memoryview) -> bool:
        for alternative in self.signatures:
            if all(b[off : off + len(sig)] == sig for off, sig in alternative):
                return self.check is None or self.check(b)
        return False


_BMP_DIB_SIZES = frozenset({12, 16, 40, 52, 56, 64, 108, 124})


def _bmp_header_ok(b: bytes | memoryview) -> bool:
    # "BM" alone is too weak (text can start with it): also require a known DIB header size.
    return len(b) >= 26 and struct.unpack_from("<I", b, 14)[0] in _BMP_DIB_SIZES


# Ordered: the first row that matches wins.
IMAGE_MAGIC: tuple[ImageMagic, ...] = (
    ImageMagic("jpeg", "image/jpeg", (((0, b"\xff\xd8\xff"),),)),
    ImageMagic("png", "image/png", (((0, b"\x89PNG\r\n\x1a\n"),),)),
    ImageMagic("gif", "image/gif", (((0, b"GIF87a"),), ((0, b"GIF89a"),))),
    ImageMagic("bmp", "image/bmp", (((0, b"BM"),),), _bmp_header_ok),
    ImageMagic("webp", "image/webp", (((0, b"RIFF"), (8, b"WEBP")),)),
    ImageMagic("tiff", "image/tiff", (((0, b"II*\x00"),), ((0, b"MM\x00*"),))),
)


# The rows a value's first byte can match (every signature of the table starts at offset 0):
# most values are rejected by one dictionary lookup.
_BY_FIRST_BYTE: dict[int, tuple[ImageMagic, ...]] = {}
for _row in IMAGE_MAGIC:
    for _alternative in _row.signatures:
        _first = _alternative[0][1][0]
        if _row not in _BY_FIRST_BYTE.get(_first, ()):
            _BY_FIRST_BYTE[_first] = (*_BY_FIRST_BYTE.get(_first, ()), _row)


def image_magic(b: bytes | memoryview) -> ImageMagic | None:
    """The :data:`IMAGE_MAGIC` row whose magic number ``b`` starts with, or ``None``."""
    if len(b) < 3:
        return None
    for row in _BY_FIRST_BYTE.get(b[0], ()):
        if row.matches(b):
            return row
    return None


def sniff_image(b: bytes) -> str | None:
    """The image format of ``b`` by magic number (``"jpeg"``, ``"png"``, ``"gif"``, ``"bmp"``,
    ``"webp"``, ``"tiff"``), or ``None``."""
    row = image_magic(b)
    return row.format if row is not None else None


# C0 controls other than tab, newline, vertical tab, form feed and carriage return, and DEL.
_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f]")


def is_text(b: bytes) -> bool:
    """Whether ``b`` is valid UTF-8 without control characters (whitespace allowed). The
    control characters are ASCII, so they are looked for in the bytes first: binary values
    are rejected without decoding them."""
    if _CONTROL_BYTES.search(b) is not None:
        return False
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def plural(n: int, word: str, words: str | None = None) -> str:
    """``"1 record"``, ``"1,234 records"``; ``words`` for an irregular plural, or for a
    phrase whose verb follows the count (``plural(n, "record fails", "records fail")``)."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def format_bytes(n: int | None) -> str:
    """``"1,234 bytes"``, ``"5.2 KiB"``, ``"1.9 GiB"``; ``"?"`` when unknown."""
    if n is None:
        return "?"
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{n:,} bytes" if unit == "bytes" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} TiB"


# --------------------------------------------------------------------------------------------
# Image headers


def _jpeg_size(b: bytes | memoryview) -> tuple[int, int] | None:
    i, n = 2, len(b)
    while i + 4 <= n:
        if b[i] != 0xFF:
            return None
        m = b[i + 1]
        if m == 0xFF:  # fill byte
            i += 1
            continue
        if m in (0x01, 0xD8) or 0xD0 <= m <= 0xD7:
            i += 2
            continue
        (seg,) = struct.unpack_from(">H", b, i + 2)
        if m in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            if i + 9 > n:
                return None
            h, w = struct.unpack_from(">HH", b, i + 5)
            return w, h
        if m == 0xD9 or seg < 2:
            return None
        i += 2 + seg
    return None


def image_size(b: bytes | memoryview) -> tuple[str, int, int] | None:
    """``(format, width, height)`` of an encoded image read from its header without decoding
    the pixels, or ``None`` when ``b`` is not an image or its header is unreadable."""
    magic = image_magic(b)
    if magic is None:
        return None
    fmt = magic.format
    size: tuple[int, int] | None = None
    try:
        if fmt == "png":
            if b[12:16] == b"IHDR":
                w, h = struct.unpack_from(">II", b, 16)
                size = (w, h)
        elif fmt == "jpeg":
            size = _jpeg_size(b)
        elif fmt == "gif":
            size = struct.unpack_from("<HH", b, 6)
        elif fmt == "bmp":
            (dib,) = struct.unpack_from("<I", b, 14)
            if dib == 12:
                size = struct.unpack_from("<HH", b, 18)
            else:
                w, h = struct.unpack_from("<ii", b, 18)
                size = (w, abs(h))
        else:
            from PIL import Image

            with Image.open(io.BytesIO(b)) as im:  # lazy: reads the header only
                size = im.size
    except Exception:  # any header that cannot be read is "undecodable", not an error
        size = None
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return fmt, int(size[0]), int(size[1])


def png_ihdr(b: bytes | memoryview) -> tuple[int, int] | None:
    """``(bit depth, colour type)`` from a PNG's IHDR chunk (colour type 0 grey, 2 RGB,
    3 palette, 4 grey + alpha, 6 RGBA), or ``None`` when ``b`` is not a PNG with a readable
    IHDR. Reads 26 bytes; nothing is decoded."""
    if len(b) < 26 or bytes(b[:8]) != b"\x89PNG\r\n\x1a\n" or bytes(b[12:16]) != b"IHDR":
        return None
    return int(b[24]), int(b[25])


# Pillow's modes of single-channel pictures with more than 8 bits per value.
HIGH_DEPTH_MODES = frozenset({"I", "F", "I;16", "I;16L", "I;16B", "I;16N", "I;16S", "I;32"})


def is_high_depth(b: bytes | memoryview) -> bool:
    """Whether encoded image bytes hold a single-channel picture of more than 8 bits per
    value (a 16-bit grey PNG, a 16-bit, 32-bit or float TIFF): the pictures shown
    contrast-stretched rather than as stored (see :func:`codec.images.stretch`). Reads the
    header only (PNG's IHDR; TIFF's through Pillow, which reads no pixels)."""
    magic = image_magic(b)
    if magic is None:
        return False
    if magic.format == "png":
        ihdr = png_ihdr(b)
        return ihdr is not None and ihdr[0] == 16 and ihdr[1] == 0
    if magic.format != "tiff":
        return False
    import warnings

    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a damaged header's complaints: the answer is no
            with Image.open(io.BytesIO(b)) as im:  # lazy: reads the header only
                return im.mode in HIGH_DEPTH_MODES
    except Exception:  # an unreadable header is not a picture of any depth
        return False


def image_complete(fmt: str, b: bytes) -> bool:
    """Whether encoded image bytes end as their format requires (JPEG's EOI marker, PNG's
    IEND chunk; other formats are not checked): the cheap test for a cut-off picture."""
    if fmt == "jpeg":
        return b.rstrip(b"\x00").endswith(b"\xff\xd9")
    if fmt == "png":
        return b"IEND" in b[-32:]
    return True


def image_decodes(b: bytes) -> bool:
    """Whether Pillow decodes the picture completely (imported only when called)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(b)) as im:
            im.load()
        return True
    except Exception:
        return False
