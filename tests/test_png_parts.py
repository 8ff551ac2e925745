"""8-bit one-channel PNGs read straight into numpy (``codec.png``, issue 25: instance masks
on a gallery page): the values read are exactly Pillow's, for every PNG filter in any mix of
rows, with libdeflate and with zlib; every PNG it does not read exactly (another depth or
colour type, interlaced, damaged) is left to Pillow, whose words name the problem."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from PIL import Image

from browser_app import generators as G
from codec import example as ex
from codec import layers as L
from codec import png
from codec import roles as R


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _filtered(values: np.ndarray, filters: list[int]) -> bytes:
    """PNG's filtered rows of ``values`` (uint8), row ``y`` with filter ``filters[y]``."""
    h, w = values.shape
    prev = np.zeros(w, dtype=np.int32)
    out = bytearray()
    for y in range(h):
        row = values[y].astype(np.int32)
        left = np.concatenate([[0], row[:-1]])
        upleft = np.concatenate([[0], prev[:-1]])
        f = filters[y]
        if f == 0:
            pred = np.zeros_like(row)
        elif f == 1:
            pred = left
        elif f == 2:
            pred = prev
        elif f == 3:
            pred = (left + prev) // 2
        else:
            p = left + prev - upleft
            pa, pb, pc = abs(p - left), abs(p - prev), abs(p - upleft)
            pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, upleft))
        out.append(f)
        out += ((row - pred) % 256).astype(np.uint8).tobytes()
        prev = row
    return bytes(out)


def _png(
    values: np.ndarray,
    filters: list[int],
    *,
    color: int = 0,
    idat_parts: int = 1,
    level: int = 6,
    between: bytes = b"",
) -> bytes:
    """A PNG written by hand: any filter per row, the image data in ``idat_parts`` chunks."""
    h, w = values.shape
    stream = zlib.compress(_filtered(values, filters), level)
    head = _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0))
    if color == 3:
        head += _chunk(b"PLTE", bytes(range(256)) * 3)
    step = -(-len(stream) // idat_parts)
    parts = [_chunk(b"IDAT", stream[i : i + step]) for i in range(0, len(stream), step)]
    if between and len(parts) > 1:
        parts.insert(1, between)
    return b"\x89PNG\r\n\x1a\n" + head + b"".join(parts) + _chunk(b"IEND", b"")


def _pillow(data: bytes) -> np.ndarray:
    img = Image.open(io.BytesIO(data))
    img.load()
    return np.asarray(img)


def _same_as_pillow(data: bytes) -> None:
    part = png.nonzero_part(data)
    assert part is not None
    want = _pillow(data)
    got = part.whole()
    assert got.shape == want.shape and np.array_equal(got, want)
    if part.values is None:
        assert not want.any()
        return
    # The part is the smallest that holds every value other than 0.
    rows, cols = np.flatnonzero(want.any(axis=1)), np.flatnonzero(want.any(axis=0))
    assert part.origin == (cols[0], rows[0])
    assert part.values.shape == (rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1)


@hs.composite
def _pictures(draw: hs.DrawFn) -> tuple[np.ndarray, list[int]]:
    h = draw(hs.integers(1, 40))
    w = draw(hs.integers(1, 40))
    kind = draw(hs.sampled_from(["mask", "ellipse", "noise", "classes", "empty", "edge"]))
    rng = np.random.default_rng(draw(hs.integers(0, 2**32 - 1)))
    a = np.zeros((h, w), dtype=np.uint8)
    if kind == "mask":
        y0, x0 = int(rng.integers(0, h)), int(rng.integers(0, w))
        y1, x1 = int(rng.integers(y0, h + 1)), int(rng.integers(x0, w + 1))
        a[y0:y1, x0:x1] = 1
    elif kind == "ellipse":
        yy, xx = np.mgrid[:h, :w]
        cy, cx, ry, rx = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(1, h), rng.uniform(1, w)
        a[((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1] = int(rng.integers(1, 256))
    elif kind == "noise":
        a = rng.integers(0, 256, (h, w)).astype(np.uint8)
    elif kind == "classes":
        a = rng.choice(np.array([0, 0, 0, 3, 15, 255], dtype=np.uint8), (h, w))
    elif kind == "edge":  # values that touch the right and bottom edges (carried by filters)
        a[int(rng.integers(0, h)) :, int(rng.integers(0, w)) :] = int(rng.integers(1, 256))
    filters = [int(f) for f in rng.integers(0, 5, h)]
    if draw(hs.booleans()):
        filters = [draw(hs.sampled_from([0, 1, 2, 3, 4]))] * h
    return a, filters


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pictures(), hs.sampled_from([0, 3]), hs.integers(1, 3), hs.booleans())
def test_values_are_pillows_for_every_filter(
    picture: tuple[np.ndarray, list[int]], color: int, idat_parts: int, with_zlib: bool
) -> None:
    values, filters = picture
    data = _png(values, filters, color=color, idat_parts=idat_parts)
    lib = png._DEFLATE.lib
    try:
        if with_zlib:
            png._DEFLATE.lib = None
        _same_as_pillow(data)
    finally:
        png._DEFLATE.lib = lib


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pictures(), hs.sampled_from([0, 3]), hs.booleans())
def test_a_whole_picture_is_read_when_numpy_can_undo_its_filters(
    picture: tuple[np.ndarray, list[int]], color: int, with_zlib: bool
) -> None:
    """:func:`codec.png.values` (class maps): Pillow's values when every row is None, Sub or
    Up; None (Pillow's to read) when a row is Average or Paeth."""
    values, filters = picture
    data = _png(values, filters, color=color)
    lib = png._DEFLATE.lib
    try:
        if with_zlib:
            png._DEFLATE.lib = None
        got = png.values(data)
    finally:
        png._DEFLATE.lib = lib
    if max(filters) > 2:
        assert got is None
    else:
        assert got is not None and got.flags.c_contiguous
        assert np.array_equal(got, _pillow(data))


def test_a_palette_class_map_is_read_by_numpy_with_pillows_counts() -> None:
    """A VOC-style class map (a palette PNG: no row filtered) gives the values and counts
    Pillow gives, read without Pillow's decoder."""
    rng = np.random.default_rng(5)
    values = rng.choice(np.array([0, 0, 1, 15, 255], dtype=np.uint8), (90, 120))
    img = Image.fromarray(values).convert("P")
    img.putpalette(bytes(range(256)) * 3)
    out = io.BytesIO()
    img.save(out, format="PNG")
    data = out.getvalue()
    assert png.values(data) is not None
    record = ex.decode(
        ex.encode_example(
            {
                "image/encoded": ("bytes", [_jpeg(120, 90)]),
                "image/segmentation/class/encoded": ("bytes", [data]),
            }
        )
    )
    (ref,) = [r for r in R.picture_roles(record) if r[1] == R.CLASS_MAP]
    L.clear_decoded()
    got, counts = L._class_values(ref[0])
    assert np.array_equal(got, values)
    assert counts.tolist() == np.bincount(values.reshape(-1), minlength=256).tolist()


def _jpeg(w: int, h: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (w, h), (90, 120, 200)).save(out, format="JPEG")
    return out.getvalue()


@pytest.mark.parametrize("level", [0, 1, 9])
def test_masks_written_by_pillow_and_the_generators_are_read_as_pillow_reads_them(
    level: int,
) -> None:
    rng = np.random.default_rng(level)
    for _ in range(20):
        a = np.zeros((int(rng.integers(1, 300)), int(rng.integers(1, 300))), dtype=np.uint8)
        y, x = int(rng.integers(0, a.shape[0])), int(rng.integers(0, a.shape[1]))
        a[y : y + int(rng.integers(1, 90)), x : x + int(rng.integers(1, 90))] = 1
        out = io.BytesIO()
        Image.fromarray(a).save(out, format="PNG", compress_level=level)
        _same_as_pillow(out.getvalue())
    masks = ex.decode(G.coco(3, photo="astronaut")).features["image/object/mask"].values
    assert masks
    for m in masks:
        _same_as_pillow(bytes(m))


def test_what_it_does_not_read_exactly_is_left_to_pillow() -> None:
    a = np.zeros((20, 30), dtype=np.uint8)
    a[5:9, 7:20] = 1
    good = _png(a, [4] * 20)
    assert png.nonzero_part(good) is not None

    def saved(img: Image.Image, **how: object) -> bytes:
        out = io.BytesIO()
        img.save(out, format="PNG", **how)
        return out.getvalue()

    others = {
        "16-bit": saved(Image.fromarray(a.astype(np.uint16) * 300)),
        "RGB": saved(Image.fromarray(np.dstack([a, a, a]))),
        "1-bit": saved(Image.fromarray(a > 0)),
        "not a PNG": b"GIF89a" + good[6:],
        "CRC broken": good[:40] + bytes([good[40] ^ 1]) + good[41:],
        "cut short": good[: len(good) // 2],
        "a bad filter": _png(a, [4] * 19 + [7]),
        "image data split by another chunk": _png(
            a, [0] * 20, idat_parts=3, between=_chunk(b"tEXt", b"k\x00v")
        ),
    }
    for name, data in others.items():
        assert png.nonzero_part(data) is None, name
    # Interlaced: the IHDR's last byte.
    ihdr = struct.pack(">IIBBBBB", 30, 20, 8, 0, 0, 0, 1)
    interlaced = good[:8] + _chunk(b"IHDR", ihdr) + good[33:]
    assert png.nonzero_part(interlaced) is None


def test_a_mask_read_either_way_gives_the_same_cut_and_the_same_problems() -> None:
    """:func:`codec.layers._decoded_cut`: the fast read and Pillow's agree on a mask, and a
    damaged mask's problem is still in Pillow's words."""
    a = np.zeros((48, 64), dtype=np.uint8)
    a[10:30, 20:41] = 1
    a[12, 5] = 1
    for filters in ([0] * 48, [4] * 48, [int(x) for x in np.arange(48) % 5]):
        data = _png(a, filters)
        fast = L._decoded_cut(data)
        assert isinstance(fast, tuple)
        crop, origin, size = fast
        assert origin == (5, 10) and size == (64, 48)
        assert np.array_equal(crop, a[10:30, 5:41] > 0)
    assert L._decoded_cut(_png(np.zeros((8, 8), dtype=np.uint8), [2] * 8)) is None
    broken = _png(a, [0] * 48)
    broken = broken[: len(broken) - 30]
    why = L._decoded_cut(broken)
    assert isinstance(why, str) and why.startswith("cannot be decoded")


def _png_claiming(width: int, height: int, rows: bytes) -> bytes:
    """A PNG whose header says ``width`` × ``height`` (8-bit grey) over the image data
    ``rows`` (compressed as they are), every chunk's CRC right."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    head = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", head)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize("width,height", [(2**31 - 1, 2**31 - 1), (60_000, 60_000), (4_000, 3_000)])
def test_a_header_larger_than_its_data_allocates_nothing(width, height, monkeypatch) -> None:
    """The size a PNG's header says is checked against the data present (deflate inflates at
    most ~1032 times) and against Pillow's limit before anything of that size is allocated;
    such a PNG is left to Pillow, which says what is wrong with it."""
    import codec.png as png

    asked: list[int] = []
    real = png._DEFLATE.inflate

    def inflate(data: bytes, size: int):  # type: ignore[no-untyped-def]
        asked.append(size)
        return real(data, size)

    monkeypatch.setattr(png._DEFLATE, "inflate", inflate)
    lie = _png_claiming(width, height, b"\x00" * 64)
    assert png.values(lie) is None and png.nonzero_part(lie) is None
    assert asked == []
