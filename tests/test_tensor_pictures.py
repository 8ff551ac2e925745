"""Tensor pictures (codec.images): a serialized uint8, uint16 or float tensor of shape H×W,
H×W×1, H×W×3 or H×W×4 is a picture, in a bytes feature and when the whole record is one
tensor (``tf.io.serialize_tensor`` per record) — found with ``feature=""``, index 0 — shown
in the gallery and exported as PNG. Sizes come from the header before anything is
allocated."""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import codec
from codec import example as ex
from codec import images as im
from codec.errors import ImageError
from codec.tensor import serialize_tensor


@cache
def _photo() -> np.ndarray:
    data = pytest.importorskip("skimage.data")
    out = np.asarray(data.astronaut(), dtype=np.uint8)[::4, ::4]  # 128×128×3, a real photo
    out.setflags(write=False)
    return out


@cache
def _disparity() -> np.ndarray:
    data = pytest.importorskip("skimage.data")
    _l, _r, disp = data.stereo_motorcycle()
    d = np.asarray(disp, dtype=np.float64)[::4, ::4]
    out = np.clip(np.where(np.isfinite(d), np.rint(d * 256), 0), 0, 65535).astype(np.uint16)
    out.setflags(write=False)
    return out


def _whole(array: np.ndarray) -> ex.Record:
    """A record that is one serialized tensor, decoded as the browser decodes it."""
    return ex.decode(serialize_tensor(array))


def _feature(*values: bytes) -> ex.Record:
    return ex.decode(ex.encode_example({"t": ("bytes", list(values))}))


def test_a_record_that_is_one_uint8_tensor_is_its_picture() -> None:
    photo = _photo()
    rec = _whole(photo)
    assert rec.kind == "raw"
    (ref,) = im.find_images(rec)
    assert (ref.feature, ref.index, ref.source, ref.step) == ("", 0, "tensor", None)
    assert (ref.height, ref.width, ref.depth, ref.dtype) == (128, 128, 3, "uint8")
    assert ref.data == rec.raw and not ref.high_depth
    assert np.array_equal(np.asarray(ref.image()), photo)  # pixel for pixel
    shown = Image.open(io.BytesIO(ref.display_bytes()))
    assert ref.mime == "image/png" and np.array_equal(np.asarray(shown), photo)
    thumb = Image.open(io.BytesIO(ref.thumbnail(32)))
    assert thumb.size == (32, 32) and np.asarray(thumb).std() > 20


@pytest.mark.parametrize(
    ("make", "dtype", "depth", "expected"),
    [
        # H×W and H×W×1 grey, uint8 as stored.
        (lambda p: p[:, :, 0], "uint8", 1, lambda p: p[:, :, 0]),
        (lambda p: p[:, :, :1], "uint8", 1, lambda p: p[:, :, 0]),
        # RGBA.
        (
            lambda p: np.dstack([p, np.full(p.shape[:2], 200, np.uint8)]),
            "uint8",
            4,
            lambda p: np.dstack([p, np.full(p.shape[:2], 200, np.uint8)]),
        ),
        # Floats in [0, 1] (× 255) and in [0, 255] (as they are), every float width.
        (lambda p: p.astype(np.float32) / 255, "float32", 3, lambda p: p),
        (lambda p: p.astype(np.float64) / 255, "float64", 3, lambda p: p),
        (lambda p: p.astype(np.float16), "float16", 3, lambda p: p),
        (lambda p: p[:, :, 1].astype(np.float32), "float32", 1, lambda p: p[:, :, 1]),
    ],
)
def test_tensor_pictures_of_every_kind(
    make: Callable[[np.ndarray], np.ndarray],
    dtype: str,
    depth: int,
    expected: Callable[[np.ndarray], np.ndarray],
) -> None:
    photo = _photo()
    array = make(photo)
    for rec in (_whole(array), _feature(serialize_tensor(array))):
        (ref,) = im.find_images(rec)
        assert (ref.source, ref.dtype, ref.height, ref.width, ref.depth) == (
            "tensor",
            dtype,
            128,
            128,
            depth,
        )
        assert np.array_equal(np.asarray(ref.image()), expected(photo))


def test_uint16_and_wide_float_tensors_are_stretched() -> None:
    d = _disparity()
    valid = d > 0
    lo, hi = np.percentile(d[valid].astype(np.float64), [1, 99])
    expected = np.clip(np.rint((d.astype(np.float64) - lo) * 255.0 / (hi - lo)), 0, 255)
    expected = np.where(valid, expected, 0).astype(np.uint8)
    for rec in (_whole(d), _feature(serialize_tensor(d))):
        (ref,) = im.find_images(rec)
        assert ref.dtype == "uint16" and ref.high_depth
        assert np.array_equal(np.asarray(ref.image(cmap=None)), expected)
        # Under no photo's key, a 16-bit map is drawn in the depth colour map.
        coloured = ref.image()
        assert coloured.mode == "RGB"
        assert np.array_equal(np.asarray(coloured), im.colorize(expected, invalid=~valid))
    # A float depth in metres (values in 0–255, but a measurement: its key says so) is
    # stretched too; under a photo's key the same values are shown as they are.
    metres = np.where(valid, np.minimum(40.0 * 256 / np.maximum(d, 1), 200.0), 0).astype(np.float32)
    assert 1.0 < metres.max() <= 255.0
    feats = {
        "image/depth": ("bytes", [serialize_tensor(metres)]),
        "image": ("bytes", [serialize_tensor(metres)]),
    }
    refs = {r.feature: r for r in im.find_images(ex.decode(ex.encode_example(feats)))}
    depth = np.asarray(refs["image/depth"].image(cmap=None))
    assert np.array_equal(depth, im.stretch(metres)) and depth.max() == 255
    plain = np.asarray(refs["image"].image())
    assert np.array_equal(plain, np.rint(metres).astype(np.uint8))  # a photo's: as stored


def test_tensors_that_are_not_pictures() -> None:
    rng = np.random.default_rng(5)
    not_pictures: list[np.ndarray] = [
        rng.random((20, 4), dtype=np.float32),  # N×4 boxes
        rng.random((3, 4), dtype=np.float32),  # too small for a float picture
        rng.integers(0, 255, (32, 32), dtype=np.int32),  # int32: not a picture dtype
        np.zeros((16, 16, 5), np.uint8),  # five channels
        np.zeros((16, 16, 2), np.uint8),  # grey + alpha is not among the shapes
        np.zeros((4, 16, 16, 3), np.uint8),  # a batch
        np.zeros((0, 16, 3), np.uint8),  # empty
        np.array([b"text", b"more"], dtype=object),
    ]
    for array in not_pictures:
        b = serialize_tensor(array)
        assert im.tensor_picture_shape(b) is None, array.shape
        assert im.find_images(_feature(b)) == []
        assert im.find_images(ex.decode(b)) == [] or ex.decode(b).kind != "raw"
    # uint8 H×W×C of any size (as before); 2-D uint8 from 8×8.
    assert im.tensor_picture_shape(serialize_tensor(np.zeros((3, 4, 1), np.uint8))) == (
        "uint8",
        3,
        4,
        1,
    )
    assert im.tensor_picture_shape(serialize_tensor(np.zeros((28, 28), np.uint8))) == (
        "uint8",
        28,
        28,
        1,
    )
    assert im.tensor_picture_shape(serialize_tensor(np.zeros((4, 28), np.uint8))) is None
    assert im.tensor_picture_shape(b"\x08\x04 not a tensor") is None
    # A tensor whose content does not match its shape is no picture.
    good = serialize_tensor(np.zeros((16, 16), np.uint16))
    assert im.tensor_picture_shape(good[:-2]) is None


def test_sizes_are_checked_before_anything_is_allocated(monkeypatch: pytest.MonkeyPatch) -> None:
    b = serialize_tensor(np.zeros((64, 64, 3), np.uint8))
    (ref,) = im.find_images(_feature(b))  # found: the shape is a picture's
    monkeypatch.setattr(im, "MAX_DECODE_PIXELS", 64 * 63)

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("the tensor was parsed")

    monkeypatch.setattr(im, "parse_tensor", refuse)
    with pytest.raises(ImageError, match=r"64×64 pixels: too large"):
        ref.image()
    with pytest.raises(ImageError, match="too large"):
        ref.thumbnail()
    with pytest.raises(ImageError, match="too large"):
        im.raw_pixels_to_image(bytes(64 * 64), 64, 64)


def test_the_gallery_tile_and_record_view_show_a_tensor_record() -> None:
    from browser_app.view import pictures

    rec = _whole(_photo())
    thumb = pictures.thumbnail(rec, 48)
    assert thumb is not None
    shown = pictures.record_pictures(rec)
    assert shown and shown[0].error is None


def test_image_export_writes_tensor_records(tmp_path: Path) -> None:
    from browser_app import export as E

    photo = _photo()
    src = tmp_path / "tensors.tfrecord"
    codec.write_records(src, [serialize_tensor(photo), serialize_tensor(_disparity())])
    folder = tmp_path / "pictures"
    report = E.export_images(str(src), folder)
    assert report.ok and report.images == 2 and not report.unconverted
    names = sorted(p.name for p in folder.iterdir() if p.suffix == ".png")
    assert names == ["00000000_feature_0.png", "00000001_feature_0.png"]
    first = np.asarray(Image.open(folder / names[0]))
    assert np.array_equal(first, photo)
    second = np.asarray(Image.open(folder / names[1]))
    assert second.dtype == np.uint8 and second.std() > 40  # the depth map, not a white tile


def test_generated_tensor_records() -> None:
    gen = pytest.importorskip("browser_app.generators.tensor_writer")
    rgb, gray, disparity, floats = (ex.decode(p) for p in gen.tensor_records(2))
    refs = [im.find_images(r) for r in (rgb, gray, disparity, floats)]
    assert [[(r.feature, r.index, r.dtype, r.depth) for r in found] for found in refs] == [
        [("", 0, "uint8", 3)],
        [("", 0, "uint8", 1)],
        [("", 0, "uint16", 1)],
        [("", 0, "float32", 3)],
    ]
    photo = np.asarray(refs[0][0].image())
    # float32 in [0, 1] comes back to the same 8-bit pixels.
    assert np.array_equal(np.asarray(refs[3][0].image()), photo)
    for found in refs:
        tile = np.asarray(Image.open(io.BytesIO(found[0].thumbnail(64))))
        assert tile.std() > 20  # every record a picture with detail, none a plain tile
