"""Pictures of more than 8 bits per value (codec.images): the percentile stretch, the colour
maps, and what decode_image / thumbnail_image / ImageRef give for 16-bit PNGs, 16-bit, 32-bit
and float TIFFs and raw depth buffers — on a real disparity map (the Middlebury motorcycle
pair shipped with scikit-image), stored KITTI style (disparity × 256 as uint16, 0 unknown).
8-bit pictures stay byte for byte and pixel for pixel as they were."""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from PIL import Image

from codec import example as ex
from codec import images as im
from codec.errors import ImageError
from codec.values import is_high_depth, png_ihdr


@cache
def _disparity() -> np.ndarray:
    """The motorcycle's disparity, KITTI style: round(d × 256) as uint16, 0 where unknown."""
    data = pytest.importorskip("skimage.data")
    _left, _right, disp = data.stereo_motorcycle()
    d = np.asarray(disp, dtype=np.float64)
    coded = np.where(np.isfinite(d), np.rint(d * 256), 0)
    out = np.clip(coded, 0, 65535).astype(np.uint16)
    out.setflags(write=False)
    return out


@cache
def _photo() -> np.ndarray:
    data = pytest.importorskip("skimage.data")
    left, _right, _disp = data.stereo_motorcycle()
    return np.asarray(left, dtype=np.uint8)


def _encode(array: np.ndarray, fmt: str, **kw: object) -> bytes:
    out = io.BytesIO()
    Image.fromarray(array).save(out, format=fmt, **kw)
    return out.getvalue()


def _expected(a: np.ndarray, lo_p: float = 1.0, hi_p: float = 99.0) -> np.ndarray:
    """The stretch as documented, computed independently: valid = finite and (non-zero
    when nothing is negative); (lo, hi) their percentiles; round((v - lo) * 255 / (hi - lo))
    clipped; invalid 0."""
    f = a.astype(np.float64)
    valid = np.isfinite(f)
    if not (f[valid] < 0).any():
        valid &= f != 0
    lo, hi = np.percentile(f[valid], [lo_p, hi_p])
    with np.errstate(invalid="ignore"):
        out = np.clip(np.rint((f - lo) * 255.0 / (hi - lo)), 0, 255)
    out[~valid] = 0
    return out.astype(np.uint8)


# --------------------------------------------------------------------------------------------
# stretch, pixel for pixel


def test_stretch_is_the_documented_window_pixel_for_pixel() -> None:
    d = _disparity()
    assert (d == 0).any() and d.max() > 255  # a real map: unknown pixels and 16-bit values
    assert np.array_equal(im.stretch(d), _expected(d))
    assert np.array_equal(im.stretch(d, 5, 95), _expected(d, 5, 95))


def test_stretch_of_a_small_array_by_hand() -> None:
    a = np.array([[0, 100, 200], [300, 400, 500]], np.uint16)
    # Valid: 100..500 (0 is no value); percentiles 1 and 99 of them: 104 and 496.
    assert im.stretch_window(a) == pytest.approx((104.0, 496.0))
    assert im.stretch(a).tolist() == [[0, 0, 62], [128, 193, 255]]  # 127.5 rounds to even
    # min-max window: exactly 0..255 over the valid values.
    assert im.stretch(a, 0, 100).tolist() == [[0, 0, 64], [128, 191, 255]]
    # A window given: no percentiles taken.
    assert im.stretch(a, window=(100.0, 355.0)).tolist() == [[0, 0, 100], [200, 255, 255]]
    # Zero counts as a value when told so.
    assert im.stretch(a, 0, 100, zero_invalid=False).tolist() == [[0, 51, 102], [153, 204, 255]]


def test_stretch_no_values_and_special_values() -> None:
    f = np.array([[np.nan, np.inf, -np.inf, 2.0, 4.0]], np.float32)
    # NaN and infinities are no value: black; the rest spans the window.
    assert im.stretch(f, 0, 100).tolist() == [[0, 0, 0, 0, 255]]
    assert im.invalid_pixels(f).tolist() == [[True, True, True, False, False]]
    # With a negative value, zero is a value.
    g = np.array([[-1.0, 0.0, 1.0]])
    assert im.stretch(g, 0, 100).tolist() == [[0, 128, 255]]
    assert not im.invalid_pixels(g).any()
    # Nothing valid: all black; a constant picture: its values white.
    assert im.stretch(np.zeros((3, 3), np.uint16)).tolist() == [[0] * 3] * 3
    assert im.stretch_window(np.zeros((3, 3), np.uint16)) is None
    assert im.stretch(np.array([[0, 7, 7]], np.uint16)).tolist() == [[0, 255, 255]]
    assert im.stretch(np.zeros((0, 4), np.float32)).shape == (0, 4)
    with pytest.raises(ImageError, match="dtype"):
        im.stretch(np.array([["a"]]))


@pytest.mark.parametrize("dtype", [np.uint16, np.int16, np.int32, np.uint32, np.float32])
def test_stretch_is_the_same_whatever_the_dtype(dtype: type) -> None:
    # The lookup table (16-bit integers) and the chunked float path agree.
    d = _disparity()[::4, ::4]
    assert np.array_equal(im.stretch(d.astype(dtype)), _expected(d))


def test_stretch_of_a_large_picture_samples_deterministically(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    d = _disparity()
    exact = im.stretch_window(d)
    monkeypatch.setattr(im, "_STRETCH_SAMPLE", 10_000)
    monkeypatch.setattr(im, "_STRETCH_CHUNK", 4096)
    sampled = im.stretch_window(d)
    assert sampled == im.stretch_window(d)  # the same sample every time
    assert exact is not None and sampled is not None
    assert sampled == pytest.approx(exact, rel=0.02)
    f = d.astype(np.float32)
    assert np.array_equal(im.stretch(f), im.stretch(d))  # chunks change nothing


_VALUES = st.one_of(
    st.floats(-1000, 70000, allow_nan=False),
    st.sampled_from([0.0, float("nan"), float("inf"), 65535.0]),
)


@settings(max_examples=80, deadline=None)
@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=12), elements=_VALUES),
    st.sampled_from(["uint16", "int32", "float32", "float64"]),
)
def test_stretch_properties(values: np.ndarray, dtype: str) -> None:
    a = values
    if dtype in ("uint16", "int32"):
        lo = 0 if dtype == "uint16" else -1000
        a = np.clip(np.nan_to_num(values, nan=0, posinf=0), lo, 65535).astype(dtype)
    else:
        a = values.astype(dtype)
    out = im.stretch(a)
    assert out.dtype == np.uint8 and out.shape == a.shape
    assert not out[im.invalid_pixels(a)].any()
    valid = ~im.invalid_pixels(a)
    v, o = a[valid].astype(np.float64), out[valid]
    order = np.argsort(v, kind="stable")
    assert (np.diff(o[order].astype(int)) >= 0).all()  # larger value, never darker


# --------------------------------------------------------------------------------------------
# colour maps


def test_colour_tables_are_the_published_ones() -> None:
    turbo, viridis = im.COLORMAPS["turbo"], im.COLORMAPS["viridis"]
    assert turbo.shape == viridis.shape == (256, 3) and turbo.dtype == np.uint8
    # Endpoints and middle of Google's turbo and matplotlib's viridis, to 8 bits.
    assert turbo[0].tolist() == [48, 18, 59] and turbo[255].tolist() == [122, 4, 3]
    assert turbo[128].tolist() == [164, 252, 60]
    assert viridis[0].tolist() == [68, 1, 84] and viridis[255].tolist() == [253, 231, 37]
    assert viridis[128].tolist() == [33, 145, 140]
    assert im.COLORMAPS["gray"][77].tolist() == [77, 77, 77]
    # Perceptual order: viridis gets lighter all along (to within 8-bit rounding).
    luma = viridis @ np.array([0.299, 0.587, 0.114])
    assert (np.diff(luma) > -0.5).all() and (luma[16::16] - luma[:-16:16] > 5).all()
    with pytest.raises(ValueError, match="read-only"):
        turbo[0, 0] = 1


def test_colorize_looks_up_and_blacks_out_no_value() -> None:
    g = np.arange(256, dtype=np.uint8).reshape(16, 16)
    invalid = np.zeros(g.shape, bool)
    invalid[3, 4] = True
    for name, table in im.COLORMAPS.items():
        out = im.colorize(g, name, invalid=invalid)
        expected = table[g].copy()
        expected[3, 4] = 0
        assert out.shape == (16, 16, 3) and np.array_equal(out, expected)
    assert np.array_equal(im.colorize(g[:, :, None]), im.COLORMAPS["turbo"][g])
    with pytest.raises(ImageError, match="unknown"):
        im.colorize(g, "jet")
    with pytest.raises(ImageError, match="uint8"):
        im.colorize(g.astype(np.uint16))


def test_colormap_by_key() -> None:
    assert im.picture_colormap("image/depth/encoded") == "turbo"
    assert im.picture_colormap("disparity") == "turbo"
    assert im.picture_colormap("heatmap") == "viridis"
    assert im.picture_colormap("image/encoded") is None
    assert im.picture_colormap("steps/observation/image") is None
    assert im.picture_colormap("some/map") == "turbo"  # 16 bits under another key: depth
    assert im.picture_colormap("") == "turbo"


# --------------------------------------------------------------------------------------------
# 16-bit PNGs end to end


def _record(**pictures: bytes) -> ex.Record:
    return ex.decode(ex.encode_example({k: ("bytes", [v]) for k, v in pictures.items()}))


def test_sixteen_bit_png_thumbnail_is_not_a_white_tile() -> None:
    png = _encode(_disparity(), "PNG")
    assert png_ihdr(png) == (16, 0) and is_high_depth(png)
    # Before: Pillow's own reduction clipped the values to 255 — a white tile.
    for get in (
        lambda: im.thumbnail_image(png, 128)[0],
        lambda: Image.open(io.BytesIO(im.thumbnail_bytes(png, 128))),
    ):
        tile = np.asarray(get())
        assert tile.dtype == np.uint8 and max(tile.shape[:2]) == 128
        assert tile.std() > 40, "a tile of one colour"
        assert (tile == 255).mean() < 0.2 and (tile == 0).mean() < 0.5


def test_sixteen_bit_png_decodes_stretched_pixel_for_pixel() -> None:
    d = _disparity()
    png = _encode(d, "PNG")
    shown = im.decode_image(png)
    assert shown.mode == "L" and np.array_equal(np.asarray(shown), _expected(d))
    stored = im.decode_image(png, as_stored=True)
    assert stored.mode.startswith("I") and np.array_equal(np.asarray(stored), d)
    coloured = np.asarray(im.decode_image(png, cmap="turbo"))
    assert np.array_equal(coloured, im.colorize(_expected(d), invalid=d == 0))


def test_depth_ref_is_colour_mapped_photo_ref_is_grey() -> None:
    d = _disparity()
    png = _encode(d, "PNG")
    rec = _record(**{"image/encoded": png, "image/depth/encoded": png})
    photo, depth = im.find_images(rec)
    assert photo.high_depth and depth.high_depth
    assert photo.colormap is None and depth.colormap == "turbo"
    assert photo.image().mode == "L" and depth.image().mode == "RGB"
    assert np.array_equal(np.asarray(depth.image()), np.asarray(im.decode_image(png, cmap="turbo")))
    assert depth.image(cmap=None).mode == "L"
    for ref in (photo, depth):
        # Shown as an 8-bit PNG a browser draws as it is; the thumbnail has colour (or grey)
        # and detail.
        assert ref.mime == "image/png"
        shown = Image.open(io.BytesIO(ref.display_bytes()))
        assert shown.mode in ("L", "RGB") and shown.size == (d.shape[1], d.shape[0])
        thumb = np.asarray(Image.open(io.BytesIO(ref.thumbnail(96))))
        assert thumb.std() > 40
    colours = np.asarray(Image.open(io.BytesIO(depth.thumbnail(96)))).reshape(-1, 3)
    assert len(np.unique(colours, axis=0)) > 100


@pytest.mark.parametrize(
    ("make", "mode"),
    [
        (lambda d: d, "I;16"),
        (lambda d: d.astype(np.int32) * 3 - 1000, "I"),
        (lambda d: np.where(d > 0, d.astype(np.float32) / 256, np.nan), "F"),
    ],
)
def test_tiffs_of_more_than_8_bits(make: Callable[[np.ndarray], np.ndarray], mode: str) -> None:
    values = make(_disparity())
    tif = _encode(values, "TIFF")
    assert is_high_depth(tif)
    assert im.decode_image(tif, as_stored=True).mode == mode
    assert np.array_equal(np.asarray(im.decode_image(tif)), _expected(values))
    ref = im.find_images(_record(disparity=tif))[0]
    assert ref.format == "tiff" and ref.mime == "image/png"
    shown = Image.open(io.BytesIO(ref.display_bytes()))
    assert shown.mode == "RGB" and np.asarray(shown).std() > 40
    assert np.asarray(im.thumbnail_image(tif, 64)[0]).std() > 40


def test_raw_depth_buffers_as_deeplab2_writes_them() -> None:
    d = _disparity()[:200, :300]
    h, w = d.shape
    png = _encode(d, "PNG")
    base = {
        "image/height": ("int64", [h]),
        "image/width": ("int64", [w]),
        "image/depth/format": ("bytes", [b"raw"]),
    }
    from_png = im.find_images(_record(**{"image/depth/encoded": png}))[0].image()
    for values, dtype in [
        (d.astype("<i4"), "int32"),
        (d.astype("<u2"), "uint16"),
        (d.astype("<f4"), "float32"),
        (d.astype("<f8"), "float64"),
    ]:
        feats = dict(base, **{"image/depth/encoded": ("bytes", [values.tobytes()])})
        refs = im.find_images(ex.decode(ex.encode_example(feats)))
        assert [(r.feature, r.source, r.dtype, r.height, r.width) for r in refs] == [
            ("image/depth/encoded", "raw", dtype, h, w)
        ]
        assert np.array_equal(np.asarray(refs[0].image()), np.asarray(from_png))
    # A depth map of small values (all below 256) is stretched too: it holds measurements.
    small = (d // 256).astype("<i4")
    feats = dict(base, **{"image/depth/encoded": ("bytes", [small.tobytes()])})
    ref = im.find_images(ex.decode(ex.encode_example(feats)))[0]
    assert np.array_equal(np.asarray(ref.image(cmap=None)), _expected(small))


def test_generated_depth_records() -> None:
    gen = pytest.importorskip("browser_app.generators.depth_writer")
    for fmt in ("png", "raw"):
        rec = ex.decode(gen.depth(1, depth_format=fmt))
        refs = {r.feature: r for r in im.find_images(rec)}
        assert set(refs) == {"image/encoded", "image/depth/encoded"}
        coded = gen.depth_map(1)
        shown = np.asarray(refs["image/depth/encoded"].image(cmap=None))
        assert np.array_equal(shown, _expected(coded))
        assert (
            np.asarray(Image.open(io.BytesIO(refs["image/depth/encoded"].thumbnail()))).std() > 40
        )


# --------------------------------------------------------------------------------------------
# 8-bit pictures stay as they were


def test_eight_bit_pictures_are_untouched() -> None:
    photo = _photo()
    jpeg = _encode(photo, "JPEG", quality=90)
    png = _encode(photo, "PNG")
    grey = _encode(photo[:, :, 0], "PNG")
    d = _disparity()
    mask = _encode((d > np.median(d)).astype(np.uint8), "PNG")  # values 0/1
    rec = _record(**{"image/encoded": jpeg, "png": png, "grey": grey, "image/object/mask": mask})
    refs = {r.feature: r for r in im.find_images(rec)}
    for key, data in [("image/encoded", jpeg), ("png", png), ("grey", grey)]:
        ref = refs[key]
        assert not ref.high_depth and ref.display_bytes() == data  # passed through
        assert np.array_equal(
            np.asarray(ref.image()),
            np.asarray(Image.open(io.BytesIO(data)).convert(ref.image().mode)),
        )
    assert np.asarray(refs["png"].image()).tolist() == photo.tolist()
    # A 0/1 mask keeps its values (drawing code colours it); no stretch of 8-bit pictures.
    assert set(np.unique(np.asarray(im.decode_image(mask))).tolist()) == {0, 1}
    assert refs["image/object/mask"].display_bytes() == mask
    # JPEG thumbnails are a draft-mode reduction asked for at the thumbnail's own size (DCT
    # scaling does nearly all of it), nothing stretched.
    direct = Image.open(io.BytesIO(jpeg))
    w, h = direct.size
    direct.draft("RGB", (64, round(h * 64 / w)) if w >= h else (round(w * 64 / h), 64))
    direct.thumbnail((64, 64))
    assert np.array_equal(np.asarray(im.thumbnail_image(jpeg, 64)[0]), np.asarray(direct))


def test_a_jpeg_thumbnail_is_decoded_at_its_own_size() -> None:
    """A 640×480 photograph's 160-pixel thumbnail is the JPEG decoded at a quarter (DCT
    scaling), not decoded at half and resized."""
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:480, :640]
    photo = np.dstack([(xx * 255 // 639), (yy * 255 // 479), rng.integers(0, 256, (480, 640))])
    jpeg = _encode(photo.astype(np.uint8), "JPEG", quality=90)
    thumb, full = im.thumbnail_image(jpeg, 160)
    assert full == (640, 480) and thumb.size == (160, 120)
    quarter = Image.open(io.BytesIO(jpeg))
    quarter.draft("RGB", (160, 120))
    assert quarter.size == (160, 120)
    assert np.array_equal(np.asarray(thumb), np.asarray(quarter.convert("RGB")))
    tall, _ = im.thumbnail_image(_encode(photo.astype(np.uint8).transpose(1, 0, 2), "JPEG"), 160)
    assert tall.size == (120, 160)


def test_sixteen_bit_colour_png_passes_through() -> None:
    rgb16 = (_photo().astype(np.uint16) * 257)[:64, :64]
    # Pillow cannot write 16-bit colour; write the PNG by hand (filter 0 rows).
    import struct
    import zlib

    h, w = rgb16.shape[:2]
    rows = b"".join(b"\x00" + rgb16[y].astype(">u2").tobytes() for y in range(h))

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    assert png_ihdr(png) == (16, 2) and not is_high_depth(png)
    ref = im.find_images(_record(image=png))[0]
    assert ref.display_bytes() == png  # browsers draw 16-bit colour PNGs themselves
    assert np.array_equal(np.asarray(ref.image()), _photo()[:64, :64])


def test_headers_only() -> None:
    assert png_ihdr(b"not a png at all, not at all") is None
    assert png_ihdr(_encode(np.zeros((2, 2), np.uint8), "PNG")) == (8, 0)
    assert not is_high_depth(_encode(np.zeros((2, 2, 3), np.uint8), "JPEG"))
    assert not is_high_depth(b"II*\x00 broken tiff")
    assert is_high_depth(_encode(np.zeros((2, 2), np.float32), "TIFF"))
