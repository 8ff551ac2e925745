"""Value-level helpers shared by the message modules: float32 text and byte sniffing.

Pure functions over Python values; no protobuf here.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "IMAGE_MAGIC",
    "ImageMagic",
    "format_bytes",
    "format_float",
    "is_text",
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
    check: Callable[[bytes], bool] | None = None

    def matches(self, b: bytes) -> bool:
        for alternative in self.signatures:
            if all(b[off : off + len(sig)] == sig for off, sig in alternative):
                return self.check is None or self.check(b)
        return False


_BMP_DIB_SIZES = frozenset({12, 16, 40, 52, 56, 64, 108, 124})


def _bmp_header_ok(b: bytes) -> bool:
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


def sniff_image(b: bytes) -> ImageMagic | None:
    """The :data:`IMAGE_MAGIC` row whose magic number ``b`` starts with, or ``None``."""
    if len(b) < 3:
        return None
    for row in IMAGE_MAGIC:
        if row.matches(b):
            return row
    return None


# C0 controls other than tab, newline, vertical tab, form feed and carriage return, and DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def is_text(b: bytes) -> bool:
    """Whether ``b`` is valid UTF-8 without control characters (whitespace allowed)."""
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return _CONTROL.search(s) is None


def format_bytes(n: int) -> str:
    """``"1,234 bytes"``, ``"5.2 KiB"``, ``"1.9 GiB"``."""
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{n:,} bytes" if unit == "bytes" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} TiB"
