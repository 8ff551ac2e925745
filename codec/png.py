"""8-bit one-channel PNGs (instance masks, class maps) read straight into numpy, fast.

An instance mask in the Object Detection API is a whole-picture PNG per object (values 0/1,
``create_coco_tf_record.py --include_masks``): a 640×480 one inflates to 300 KB of which a
few thousand bytes are the object. Decoding it through Pillow costs about half a millisecond,
nearly all of it zlib copying those zeros one byte at a time; a gallery page of 100 records
with 10 masks each spent most of its time there. :func:`nonzero_part` inflates the image
data with libdeflate when the system has it (Debian's ``libdeflate0``, loaded with ctypes;
else zlib), finds the band of rows and columns whose filtered bytes are not all zero, and
undoes the PNG filters on that band only: None, Sub and Up with numpy, Average and Paeth
(sequential along a row) by Pillow's own decoder handed the band uncompressed.
:func:`values` reads a whole class map the same way when its rows need no Average or Paeth
(a palette PNG has none).

:func:`browser_values` says, from the chunks alone (nothing inflated), whether a browser that
decodes the PNG without colour management (``createImageBitmap(..., {colorSpaceConversion:
'none', premultiplyAlpha: 'none'})``) gets back the values Pillow reads, and how they are read
from its red, green and blue: so a front end may draw a mask or a class map itself.

Both answer only for what they read exactly as Pillow does: a well-formed (every chunk's CRC
and the zlib stream's checksum checked), non-interlaced PNG of 8-bit grey or palette indexes
(Pillow's modes ``L`` and ``P``: the values are the stored bytes). For anything else —
another depth or colour type, interlacing, a damaged file — they answer None and the caller
decodes with Pillow, which says what is wrong in its own words: so a picture read here has
exactly the values Pillow gives, and every problem is still Pillow's.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from PIL import Image

__all__ = ["GREY", "PALETTE", "RGB", "Part", "browser_values", "nonzero_part", "values"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_NONE, _SUB, _UP, _PAETH = 0, 1, 2, 4


@dataclass(frozen=True)
class Part:
    """The part of a ``size`` (width, height) picture that holds every value other than 0:
    ``values`` (uint8, rows × columns) from ``origin`` (x, y); None for a picture of zeros."""

    values: np.ndarray | None
    origin: tuple[int, int]
    size: tuple[int, int]

    def whole(self) -> np.ndarray:
        """The picture's values at full size (zeros outside the part)."""
        w, h = self.size
        out = np.zeros((h, w), dtype=np.uint8)
        if self.values is not None:
            x, y = self.origin
            out[y : y + self.values.shape[0], x : x + self.values.shape[1]] = self.values
        return out


class _Deflate:
    """libdeflate's zlib decompressor through ctypes (zlib when the library is not on the
    system). A decompressor serves one thread at a time: those made are kept in ``spare``
    and taken in turn, so there are never more than threads that inflated at once."""

    def __init__(self) -> None:
        self.lib = self._load()
        self.spare: list[int] = []
        self.lock = threading.Lock()

    @staticmethod
    def _load() -> ctypes.CDLL | None:
        for name in ("libdeflate.so.0", ctypes.util.find_library("deflate")):
            if not name:
                continue
            try:
                lib = ctypes.CDLL(name)
            except OSError:
                continue
            lib.libdeflate_alloc_decompressor.restype = ctypes.c_void_p
            lib.libdeflate_alloc_decompressor.argtypes = []
            lib.libdeflate_zlib_decompress.restype = ctypes.c_int
            lib.libdeflate_zlib_decompress.argtypes = [
                ctypes.c_void_p,
                ctypes.c_char_p,
                ctypes.c_size_t,
                ctypes.c_void_p,
                ctypes.c_size_t,
                ctypes.POINTER(ctypes.c_size_t),
            ]
            return lib
        return None

    def inflate(self, data: bytes, size: int) -> np.ndarray | None:
        """``data`` (a zlib stream) inflated into ``size`` bytes (rounded up to 8 with zeros),
        or None unless it inflates to exactly ``size`` bytes and its checksum holds."""
        out = np.zeros(-(-size // 8) * 8, dtype=np.uint8)
        if self.lib is None:
            try:
                inflater = zlib.decompressobj()
                got = inflater.decompress(data, size + 1)
            except zlib.error:
                return None
            if len(got) != size or not inflater.eof:
                return None
            out[:size] = np.frombuffer(got, dtype=np.uint8)
            return out
        with self.lock:
            handle = self.spare.pop() if self.spare else None
        if handle is None:
            handle = self.lib.libdeflate_alloc_decompressor()
            if not handle:
                return None
        try:
            written = ctypes.c_size_t(0)
            status = self.lib.libdeflate_zlib_decompress(
                handle, data, len(data), out.ctypes.data, size, ctypes.byref(written)
            )
        finally:
            with self.lock:
                self.spare.append(handle)
        return out if status == 0 and written.value == size else None


_DEFLATE = _Deflate()


def _chunks(data: bytes) -> Iterator[tuple[bytes, int, int] | None]:
    """A PNG's chunks in order, as ``(name, where its body starts, its length)``, each whole
    and its CRC checked; ``None`` (and nothing after it) for one cut short or damaged, or
    for data that is not a PNG. Read lazily: a caller may stop early."""
    if not data.startswith(_SIGNATURE):
        yield None
        return
    pos, end = 8, len(data)
    while pos + 12 <= end:
        length, name = struct.unpack_from(">I4s", data, pos)
        body = pos + 8
        if body + length + 4 > end:
            yield None
            return
        (crc,) = struct.unpack_from(">I", data, body + length)
        if zlib.crc32(data[pos + 4 : body + length]) != crc:
            yield None
            return
        yield name, body, length
        pos = body + length + 4


def _header(
    data: bytes, chunk: tuple[bytes, int, int] | None
) -> tuple[int, int, int, int, int, int, int] | None:
    """The IHDR fields (width, height, depth, colour type, compression, filter and interlace
    methods) when ``chunk`` is the IHDR chunk a PNG must start with; None otherwise."""
    if chunk is None or chunk[0] != b"IHDR" or chunk[2] != 13:
        return None
    return struct.unpack_from(">IIBBBBB", data, chunk[1])  # type: ignore[return-value]


def _image_data(data: bytes) -> tuple[int, int, bytes] | None:
    """(width, height, the zlib stream) of an 8-bit grey or palette PNG that is not
    interlaced, every chunk up to the end of its image data whole (CRC checked), its image
    data chunks one after another; None otherwise."""
    chunks = _chunks(data)
    header = _header(data, next(chunks, None))
    if header is None:
        return None
    width, height, depth, color, method, filtering, interlace = header
    if depth != 8 or color not in (0, 3) or method or filtering or interlace:
        return None
    if width == 0 or height == 0:
        return None
    parts: list[bytes] = []
    last = b"IHDR"
    for chunk in chunks:
        if chunk is None:
            return None
        kind, body, length = chunk
        if kind == b"IDAT":
            if parts and last != b"IDAT":
                return None  # image data split by another chunk: Pillow's to judge
            parts.append(data[body : body + length])
        elif parts:
            break
        last = kind
    if not parts or width == 0:
        return None
    return width, height, b"".join(parts)


def _unfilter(raw: np.ndarray, filters: np.ndarray) -> np.ndarray:
    """Rows of filtered bytes (``raw``, uint8) with their ``filters`` (None, Sub or Up; the
    row above the first is zeros, as is every column left of the first) as values."""
    x = raw.copy()
    sub = filters == _SUB
    if sub.any():
        x[sub] = np.cumsum(x[sub], axis=1, dtype=np.uint8)
    # A None or Sub row starts afresh; an Up row adds to the row above: each row is the sum
    # of the rows since the last fresh one (uint8 sums wrap, as PNG's do).
    fresh = filters != _UP
    fresh[0] = True
    sums = np.cumsum(x, axis=0, dtype=np.uint8)
    start = np.maximum.accumulate(np.where(fresh, np.arange(len(filters)), 0))
    before = np.zeros_like(sums)
    before[1:] = sums[:-1]
    return sums - before[start]  # type: ignore[no-any-return]


def _stored(raw: bytes) -> bytes:
    """``raw`` as a zlib stream of stored (not compressed) blocks."""
    out = [b"\x78\x01"]
    for at in range(0, max(len(raw), 1), 0xFFFF):
        block = raw[at : at + 0xFFFF]
        last = at + 0xFFFF >= len(raw)
        out.append(struct.pack("<BHH", last, len(block), len(block) ^ 0xFFFF))
        out.append(block)
    out.append(struct.pack(">I", zlib.adler32(raw)))
    return b"".join(out)


def _pillow_unfilter(raw: np.ndarray, filters: np.ndarray) -> np.ndarray:
    """As :func:`_unfilter`, for rows with any of PNG's five filters: Pillow's own PNG
    decoder undoes them, handed the rows uncompressed."""
    rows = np.empty((raw.shape[0], raw.shape[1] + 1), dtype=np.uint8)
    rows[:, 0] = filters
    rows[:, 1:] = raw
    return np.asarray(_filtered_image(rows.tobytes(), raw.shape[1], raw.shape[0]))


def _filtered_image(rows: bytes, width: int, height: int) -> Image.Image:
    """A mode ``L`` picture of PNG-filtered ``rows`` (each a filter byte, then ``width``
    bytes), unfiltered by Pillow's PNG decoder."""
    return Image.frombytes("L", (width, height), _stored(rows), "zip", "L")


MAX_DEFLATE_RATIO = 1032  # a deflate stream never inflates to more than ~1032 times its size


def _plausible(width: int, height: int, compressed: int) -> bool:
    """Whether a ``width`` × ``height`` picture can come out of ``compressed`` bytes of image
    data, and is one Pillow would decode: checked before anything of the size the header says
    is allocated (a header is a few bytes anyone can write)."""
    size = (width + 1) * height
    if size > compressed * MAX_DEFLATE_RATIO + 1024:
        return False
    limit = Image.MAX_IMAGE_PIXELS
    return limit is None or width * height <= limit


def values(data: bytes) -> np.ndarray | None:
    """An 8-bit grey or palette PNG's values (uint8, height × width: a palette's indexes,
    as a class map stores its classes), or None when this PNG is one to decode with Pillow
    — also when a row is filtered with Average or Paeth, which numpy cannot undo at speed
    (a palette PNG, as VOC's class maps are, is written with none: PNG's advice, followed
    by libpng and Pillow)."""
    found = _image_data(data)
    if found is None:
        return None
    width, height, stream = found
    stride = width + 1
    if not _plausible(width, height, len(stream)):
        return None  # Pillow says what is wrong with it (too large, or not all there)
    flat = _DEFLATE.inflate(stream, stride * height)
    if flat is None:
        return None
    rows = flat[: stride * height].reshape(height, stride)
    filters = rows[:, 0]
    if int(filters.max()) > _UP:
        return None
    if not (filters == _UP).any():
        out = np.ascontiguousarray(rows[:, 1:])
        sub = filters == _SUB
        if sub.any():
            out[sub] = np.cumsum(out[sub], axis=1, dtype=np.uint8)
        return out
    return np.ascontiguousarray(_unfilter(rows[:, 1:], filters))


def nonzero_part(data: bytes) -> Part | None:
    """The part of an 8-bit grey or palette PNG that holds its values other than 0 (see the
    module's docstring), or None when this PNG is one to decode with Pillow."""
    found = _image_data(data)
    if found is None:
        return None
    width, height, stream = found
    stride = width + 1
    if not _plausible(width, height, len(stream)):
        return None  # Pillow says what is wrong with it (too large, or not all there)
    flat = _DEFLATE.inflate(stream, stride * height)
    if flat is None:
        return None
    rows = flat[: stride * height].reshape(height, stride)
    filters = rows[:, 0].copy()
    if (filters > _PAETH).any():
        return None  # not a PNG filter: Pillow's to say
    rows[:, 0] = 0
    words = flat.view(np.uint64) != 0
    first = int(words.argmax())
    if not words[first]:
        return Part(None, (0, 0), (width, height))
    last = len(words) - 1 - int(words[::-1].argmax())
    # The band of rows from the first byte that is not zero to the last. Above it every row
    # is zeros (zeros filtered against zeros, whatever the filter). Below it the bytes are
    # zeros, yet an Up, Average or Paeth row takes from the row above: the band goes on to
    # the first None or Sub row (zeros), after which every row is zeros again.
    r0 = first * 8 // stride
    r1 = min(height, (last * 8 + 7) // stride + 1)
    fresh = np.flatnonzero(filters[r1:] <= _SUB)
    r1 = r1 + int(fresh[0]) if fresh.size else height
    band = rows[r0:r1, 1:]
    cols = np.flatnonzero(band.any(axis=0))
    # Left of the first column with a byte that is not zero, every value is zero; right of
    # the last one too, unless a Sub, Average or Paeth row (which take from the left) has a
    # value there to carry on: then the band goes to the picture's right edge.
    c0, c1 = int(cols[0]), int(cols[-1]) + 1
    used = filters[r0:r1]
    unfilter = _unfilter if int(used.max()) <= _UP else _pillow_unfilter
    values = unfilter(band[:, c0:c1], used)
    if c1 < width and (values[:, -1].astype(bool) & (used != _NONE) & (used != _UP)).any():
        values = unfilter(band[:, c0:], used)
    return _trimmed(values, (c0, r0), (width, height))


def _trimmed(values: np.ndarray, origin: tuple[int, int], size: tuple[int, int]) -> Part:
    """The part of ``values`` (at ``origin``) that holds every value other than 0."""
    rows = np.flatnonzero(values.any(axis=1))
    if rows.size == 0:
        return Part(None, (0, 0), size)
    cols = np.flatnonzero(values.any(axis=0))
    y0, y1, x0, x1 = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
    part = np.ascontiguousarray(values[y0:y1, x0:x1])
    return Part(part, (origin[0] + x0, origin[1] + y0), size)


GREY = "grey"  # a value is the decoded pixel's red (grey of 8 bits, or fewer for masks)
RGB = "rgb"  # a mask's pixel is inside when any of red, green and blue is not 0
PALETTE = "palette"  # a value is the index of the pixel's colour in PLTE (every entry distinct)

# Chunks that make a browser's decoded colours differ from the stored values (gamma, colour
# profiles) or its canvas lose them (transparency is premultiplied in a canvas).
_CHANGES_COLOURS = frozenset({b"gAMA", b"iCCP", b"cHRM", b"tRNS", b"sBIT"})


def browser_values(data: bytes, *, exact: bool = True) -> str | None:
    """How a browser's decoding of this PNG gives back its values as Pillow reads them:
    :data:`GREY` (the red of each pixel), :data:`PALETTE` (the index of its colour in the
    PLTE, whose entries are all distinct) or :data:`RGB` (a pixel is not 0 when any of its
    red, green and blue is not; only when not ``exact``); None when it does not (another
    depth or colour type, transparency, gamma or a colour profile, a damaged chunk). With
    ``exact`` (a class map's values) grey must be of 8 bits; without (a mask, where only
    "not 0" matters) grey of 1, 2 or 4 bits, which a browser scales to 8, will do. Reads the
    chunks' headers and checks every CRC; inflates nothing."""
    chunks = _chunks(data)
    header = _header(data, next(chunks, None))
    if header is None:
        return None
    width, height, depth, colour, method, filtering, interlace = header
    if width == 0 or height == 0 or method or filtering or interlace > 1:
        return None
    kind: str | None = None
    if colour == 0 and (depth == 8 or (not exact and depth in (1, 2, 4))):
        kind = GREY
    elif colour == 3 and depth in (1, 2, 4, 8):
        kind = PALETTE
    elif colour == 2 and depth == 8 and not exact:
        kind = RGB
    else:
        return None
    palette: bytes | None = None
    ended = False
    for chunk in chunks:
        if chunk is None:
            return None
        name, body, length = chunk
        if name in _CHANGES_COLOURS:
            return None
        if name == b"PLTE":
            palette = data[body : body + length]
        elif name == b"IEND":
            ended = True
            break
    if not ended:
        return None  # not all there: Pillow's to judge
    if kind == PALETTE:
        if palette is None or len(palette) % 3:
            return None
        entries = {palette[i : i + 3] for i in range(0, len(palette), 3)}
        if len(entries) * 3 != len(palette):
            return None  # two indexes of one colour: the browser's pixels cannot tell them apart
    return kind
