"""codec.images: sniffing, decoding, raw pixels, tensors, thumbnails, detection boxes."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from codec import example as ex
from codec import images as im
from codec.errors import ImageError
from codec.reader import TFRecordFile
from codec.tensor import serialize_tensor
from codec.values import IMAGE_MAGIC

DATA = Path(__file__).parent / "data"


def records(name: str) -> list[ex.Record]:
    with TFRecordFile(DATA / name, use_cache=False) as f:
        return [ex.decode(p) for p in f]


def encoded(fmt: str, size: tuple[int, int] = (20, 10), mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, (200, 30, 40) if mode == "RGB" else 128).save(out, format=fmt)
    return out.getvalue()


def int_of(record: ex.Record, name: str) -> int:
    return int(record.features[name].values[0])


# --------------------------------------------------------------------------------------------
# Sniffing and decoding


@pytest.mark.parametrize(
    ("pil_format", "name"),
    [
        ("JPEG", "jpeg"),
        ("PNG", "png"),
        ("GIF", "gif"),
        ("BMP", "bmp"),
        ("WEBP", "webp"),
        ("TIFF", "tiff"),
    ],
)
def test_sniff_and_decode_every_format(pil_format: str, name: str) -> None:
    b = encoded(pil_format)
    assert im.sniff_image(b) == name
    assert ex.classify_bytes(b) == f"image/{name}"
    assert im.decode_image(b).size == (20, 10)


def test_magic_table_is_ordered_data() -> None:
    assert [row.format for row in IMAGE_MAGIC] == ["jpeg", "png", "gif", "bmp", "webp", "tiff"]
    assert im.sniff_image(b"BM not really") is None
    assert im.sniff_image(b"RIFF\x00\x00\x00\x00WAVE") is None
    assert im.sniff_image(b"") is None


def test_truncated_and_corrupt_images_raise_image_error() -> None:
    jpeg = encoded("JPEG", (64, 64))
    for bad in (jpeg[: len(jpeg) // 2], jpeg[:20], b"\xff\xd8\xff" + b"\x00" * 50):
        with pytest.raises(ImageError, match="jpeg"):
            im.decode_image(bad)
        with pytest.raises(ImageError):
            im.thumbnail_bytes(bad)
    with pytest.raises(ImageError):
        im.decode_image(b"definitely not an image")


def test_decompression_bomb_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    b = encoded("PNG", (200, 200))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    with pytest.raises(ImageError, match="200×200 pixels: too large to decode"):
        im.decode_image(b)


def _png_header(width: int, height: int) -> bytes:
    """The first bytes of a PNG declaring ``width`` × ``height``: a signature and an IHDR."""
    import struct
    import zlib as z

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", z.crc32(chunk))
    )


def _jpeg_header(width: int, height: int) -> bytes:
    """A 114-byte-ish JPEG start declaring ``width`` × ``height`` in its SOF0."""
    import struct

    sof = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + bytes(9)
    return b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + bytes(9) + sof


@pytest.mark.parametrize(
    "data",
    [_png_header(20000, 20000), _jpeg_header(65000, 65000), _png_header(65535, 1)],
)
def test_declared_giant_pictures_are_refused_before_decoding(data: bytes) -> None:
    import tracemalloc

    tracemalloc.start()
    for call in (im.decode_image, im.thumbnail_bytes, lambda b: im.thumbnail_image(b, 64)):
        try:
            call(data)
        except ImageError as exc:
            assert "cannot be decoded" in str(exc) or "too large to decode" in str(exc)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 16 << 20


def test_a_large_jpeg_thumbnail_decodes_at_reduced_size() -> None:
    big = encoded("JPEG", (4000, 3000))
    img, full = im.thumbnail_image(big, 96)
    assert full == (4000, 3000) and max(img.size) <= 96


# --------------------------------------------------------------------------------------------
# Golden files


def test_golden_jpegs() -> None:
    for record in records("images_jpeg.tfrecord"):
        (ref,) = im.find_images(record)
        assert (ref.feature, ref.index, ref.source, ref.format) == (
            "image_raw",
            0,
            "encoded",
            "jpeg",
        )
        img = ref.image()
        assert img.size == (int_of(record, "width"), int_of(record, "height"))
        assert len(img.getbands()) == int_of(record, "depth")
        assert ref.mime == "image/jpeg"
        assert ref.display_bytes() is record.features["image_raw"].values[0]  # not re-encoded


def test_golden_pngs() -> None:
    modes = []
    for record in records("images_png.tfrecord"):
        (ref,) = im.find_images(record)
        data = record.features["picture"].values[0]
        width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
        img = ref.image()
        assert img.size == (width, height)
        modes.append(img.mode)
        assert record.features["mode"].values == [img.mode.encode()]
        assert ref.display_bytes() is data and ref.mime == "image/png"
    assert modes == ["RGB", "RGBA", "L", "P"]


def test_golden_raw_pixels() -> None:
    seen = set()
    for record in records("raw_pixels.tfrecord"):
        (ref,) = im.find_images(record)
        h, w, d = (int_of(record, n) for n in ("height", "width", "depth"))
        assert (ref.source, ref.format, ref.height, ref.width, ref.depth) == ("raw", "raw", h, w, d)
        img = ref.image()
        assert img.size == (w, h) and img.mode == {1: "L", 3: "RGB"}[d]
        assert ref.mime == "image/png"
        assert Image.open(io.BytesIO(ref.display_bytes())).size == (w, h)
        pixels = np.asarray(img).reshape(-1)
        assert pixels.tobytes() == record.features["image_raw"].values[0]
        seen.add((h, w, d))
    assert seen == {(28, 28, 1), (24, 32, 3)}


def test_golden_tensor_image() -> None:
    found = [(r, im.find_images(r)) for r in records("tensors.tfrecord")]
    refs = [ref for _, rs in found for ref in rs]
    assert len(refs) == 1
    ref = refs[0]
    assert (ref.feature, ref.source, ref.height, ref.width, ref.depth) == (
        "tensor",
        "tensor",
        6,
        5,
        3,
    )
    assert ref.image().size == (5, 6)


def test_golden_detection_boxes() -> None:
    for record in records("detection.tfrecord"):
        (ref,) = im.find_images(record)
        img = ref.image()
        w, h = int_of(record, "image/width"), int_of(record, "image/height")
        assert img.size == (w, h)
        boxes = im.find_boxes(record, w, h)
        texts = [v.decode() for v in record.features["image/object/class/text"].values]
        labels = record.features["image/object/class/label"].values
        assert [b.text for b in boxes] == texts
        assert [b.label for b in boxes] == labels
        xmin = record.features["image/object/bbox/xmin"].values
        assert all(b.normalized for b in boxes)
        assert [b.xmin for b in boxes] == pytest.approx([x * w for x in xmin])
        for b in boxes:
            assert 0 <= b.xmin <= b.xmax <= w and 0 <= b.ymin <= b.ymax <= h
        drawn = im.draw_boxes(img, boxes)
        assert drawn.size == img.size and drawn.mode == "RGB"
        assert drawn.tobytes() != img.convert("RGB").tobytes()


def test_boxes_in_pixels() -> None:
    record = ex.decode(
        ex.encode_example(
            {
                "image/object/bbox/xmin": ("float", [10.0]),
                "image/object/bbox/ymin": ("float", [5.0]),
                "image/object/bbox/xmax": ("float", [30.0]),
                "image/object/bbox/ymax": ("float", [25.0]),
            }
        )
    )
    (box,) = im.find_boxes(record, 100, 100)
    assert (box.xmin, box.ymin, box.xmax, box.ymax, box.normalized) == (10, 5, 30, 25, False)
    assert box.text is None and box.label is None
    assert im.find_boxes(ex.decode(b""), 10, 10) == []


# --------------------------------------------------------------------------------------------
# Raw pixels and tensors


def test_raw_size_mismatch_names_the_numbers() -> None:
    with pytest.raises(ImageError) as info:
        im.raw_pixels_to_image(b"\0" * 784, 28, 28, 3)
    assert str(info.value) == (
        "raw pixels: 784 bytes do not match height 28 × width 28 × depth 3 = 2352 bytes"
    )
    with pytest.raises(ImageError, match="not an image shape"):
        im.raw_pixels_to_image(b"", 0, 5, 1)
    img = im.raw_pixels_to_image(np.arange(12, dtype="<u2").tobytes(), 2, 2, 3, np.uint16)
    assert img.size == (2, 2)
    with pytest.raises(ImageError, match=r"× 2 bytes \(uint16\)"):
        im.raw_pixels_to_image(b"\0" * 5, 2, 2, 1, np.uint16)


def test_raw_found_by_image_names_and_inferred_depth() -> None:
    pixels = bytes(range(4 * 5 * 3))
    record = ex.decode(
        ex.encode_example(
            {
                "image/height": ("int64", [4]),
                "image/width": ("int64", [5]),
                "image/raw": ("bytes", [pixels]),
                "notes": ("bytes", [pixels]),  # right size, but not named like an image
            }
        )
    )
    (ref,) = im.find_images(record)
    assert (ref.feature, ref.depth) == ("image/raw", 3)
    wrong = ex.decode(
        ex.encode_example(
            {"height": ("int64", [4]), "width": ("int64", [5]), "image_raw": ("bytes", [b"x" * 7])}
        )
    )
    assert im.find_images(wrong) == []


def test_encoded_images_in_feature_lists() -> None:
    png = encoded("PNG")
    record = ex.decode(
        ex.encode_sequence_example({}, {"frames": [("bytes", [png]), ("bytes", [b"x", png])]})
    )
    refs = im.find_images(record)
    assert [(r.feature, r.step, r.index) for r in refs] == [("frames", 0, 0), ("frames", 1, 1)]


@pytest.mark.parametrize(
    ("array", "mode"),
    [
        (np.zeros((4, 5), np.uint8), "L"),
        (np.zeros((4, 5, 1), np.uint8), "L"),
        (np.zeros((4, 5, 3), np.uint8), "RGB"),
        (np.zeros((4, 5, 4), np.uint8), "RGBA"),
        (np.full((4, 5, 3), 0.5, np.float32), "RGB"),
        (np.full((4, 5), 200.0), "L"),
        (np.ones((4, 5), bool), "L"),
    ],
)
def test_tensor_to_image(array: np.ndarray, mode: str) -> None:
    img = im.tensor_to_image(array)
    assert img.mode == mode and img.size == (5, 4)


def test_tensor_to_image_scaling_and_errors() -> None:
    assert np.asarray(im.tensor_to_image(np.full((1, 1), 0.5)))[0, 0] == 128
    assert np.asarray(im.tensor_to_image(np.full((1, 1), 100.0)))[0, 0] == 100
    # Values outside [0, 1] / [0, 255] are contrast-stretched (codec.images.stretch), not refused.
    assert np.asarray(im.tensor_to_image(np.array([[-1.0, 1.0]]))).tolist() == [[0, 255]]
    assert np.asarray(im.tensor_to_image(np.array([[0, 300]], np.int32))).tolist() == [[0, 255]]
    with pytest.raises(ImageError, match="shape"):
        im.tensor_to_image(np.zeros((2, 2, 5), np.uint8))
    with pytest.raises(ImageError, match="shape"):
        im.tensor_to_image(np.zeros(5, np.uint8))


def test_tensor_images_need_uint8_hwc() -> None:
    ok = serialize_tensor(np.zeros((3, 4, 1), np.uint8))
    not_image = serialize_tensor(np.zeros((3, 4), np.float32))
    record = ex.decode(ex.encode_example({"t": ("bytes", [ok, not_image])}))
    refs = im.find_images(record)
    assert [(r.index, r.source, r.height, r.width, r.depth) for r in refs] == [
        (0, "tensor", 3, 4, 1)
    ]
    assert refs[0].image().size == (4, 3)
    assert refs[0].mime == "image/png"


# --------------------------------------------------------------------------------------------
# Thumbnails and display bytes


def test_thumbnails() -> None:
    rng = np.random.default_rng(0)
    jpeg = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (256, 256, 3), dtype=np.uint8)).save(jpeg, format="JPEG")
    thumb = im.thumbnail_bytes(jpeg.getvalue(), 64)
    img = Image.open(io.BytesIO(thumb))
    assert img.format == "JPEG" and max(img.size) <= 64
    png = im.thumbnail_bytes(encoded("PNG", (300, 100), "L"), 128)
    img = Image.open(io.BytesIO(png))
    assert img.format == "PNG" and img.size == (128, 43)
    bmp_ref = im.ImageRef("f", 0, "encoded", "bmp", encoded("BMP"))
    assert bmp_ref.mime == "image/png"
    assert Image.open(io.BytesIO(bmp_ref.display_bytes())).format == "PNG"
    assert Image.open(io.BytesIO(bmp_ref.thumbnail(8))).size == (8, 4)


def test_decode_error_names_no_python_object():
    from codec.errors import ImageError
    from codec.images import decode_image

    with pytest.raises(ImageError) as e:
        decode_image(b"not an image at all")
    assert "object at 0x" not in str(e.value)
    assert str(e.value) == "image (19 bytes) cannot be decoded: cannot identify image file"


def test_odd_box_values_never_crash_and_are_marked() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    coord = st.floats(allow_nan=True, allow_infinity=True, width=32) | st.sampled_from(
        [0.0, 0.5, 1.0, 1.35, -0.2, 1e38, -1e38]
    )

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.tuples(coord, coord, coord, coord), min_size=1, max_size=4), st.booleans())
    def check(boxes: list[tuple[float, float, float, float]], normalized: bool) -> None:
        feats = {
            f"image/object/bbox/{side}": ("float", [b[k] for b in boxes])
            for k, side in enumerate(("xmin", "ymin", "xmax", "ymax"))
        }
        record = ex.decode(ex.encode_example(feats))
        found = im.find_boxes(record, 40, 30, normalized=normalized)
        assert len(found) == len(boxes)
        for b in found:
            if b.drawable:
                assert 0 <= b.xmin <= b.xmax <= 40 and 0 <= b.ymin <= b.ymax <= 30
            else:
                assert b.problems
        drawn = im.draw_boxes(Image.new("RGB", (40, 30)), found)
        assert drawn.size == (40, 30)

    check()


def test_one_bad_coordinate_keeps_the_other_boxes_normalised() -> None:
    record = ex.decode(
        ex.encode_example(
            {
                "image/object/bbox/xmin": ("float", [0.1, 0.2]),
                "image/object/bbox/ymin": ("float", [0.1, 0.2]),
                "image/object/bbox/xmax": ("float", [1.35, 0.6]),
                "image/object/bbox/ymax": ("float", [0.5, 0.7]),
            }
        )
    )
    boxes = im.find_boxes(record, 100, 100)
    assert all(b.normalized for b in boxes)
    assert boxes[0].problems == ("a coordinate is outside [0, 1]",)
    assert boxes[0].xmax == 100  # clipped to the picture
    assert boxes[1].problems == () and boxes[1].xmax == pytest.approx(60)
