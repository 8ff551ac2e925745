"""Object Detection boxes with any float value: NaN, ±Inf, huge, negative, subnormal, out of
range. Nothing crashes (the record view, the table's thumbnails, the gallery), a bad box is
drawn marked and said in words, and one bad value never changes how the others are read."""

from __future__ import annotations

import io
import math
import random
import struct
from pathlib import Path

import pytest
from app_support import gallery_tiles, no_crash, start_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from PIL import Image

import codec
from browser_app import view as V
from browser_app.sample_data import write_sample
from codec import example as ex
from codec import images as im
from codec.values import plural

# Values that have broken box drawing somewhere: every special float32 and its neighbours.
ODD = [
    math.nan,
    -math.nan,
    math.inf,
    -math.inf,
    3.4028234663852886e38,  # float32's largest
    -3.4028234663852886e38,
    1e30,
    -1e30,
    1.4e-45,  # smallest subnormal
    -0.0,
    0.0,
    1.0,
    1.0000001,
    -0.5,
    1.35,
    255.0,
    4096.0,
]


def _f32(v: float) -> float:
    """``v`` as a float32 stores it (what the record holds)."""
    return float(struct.unpack("<f", struct.pack("<f", v))[0]) if math.isfinite(v) else v


def _jpeg(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (90, 140, 200)).save(out, format="JPEG")
    return out.getvalue()


def _record(
    xs: list[float], ys: list[float], x1: list[float], y1: list[float], size: tuple[int, int]
) -> bytes:
    n = max(len(xs), len(ys), len(x1), len(y1))
    return ex.encode_example(
        {
            "image/encoded": ("bytes", [_jpeg(*size)]),
            "image/format": ("bytes", [b"jpeg"]),
            "image/width": ("int64", [size[0]]),
            "image/height": ("int64", [size[1]]),
            "image/object/bbox/xmin": ("float", xs),
            "image/object/bbox/ymin": ("float", ys),
            "image/object/bbox/xmax": ("float", x1),
            "image/object/bbox/ymax": ("float", y1),
            "image/object/class/text": ("bytes", [b"cat"] * n),
            "image/object/class/label": ("int64", [1] * n),
        }
    )


coordinate = hs.one_of(hs.sampled_from(ODD), hs.floats(width=32), hs.floats(0, 1, width=32))
coordinates = hs.lists(coordinate, min_size=0, max_size=5)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    xs=coordinates,
    ys=coordinates,
    x1=coordinates,
    y1=coordinates,
    size=hs.tuples(hs.integers(1, 80), hs.integers(1, 80)),
    normalized=hs.sampled_from([True, False, None]),
)
def test_any_float_in_a_box_is_drawn_or_named_never_a_crash(
    xs: list[float],
    ys: list[float],
    x1: list[float],
    y1: list[float],
    size: tuple[int, int],
    normalized: bool | None,
) -> None:
    rec = ex.decode(_record(xs, ys, x1, y1, size))
    pics = V.record_pictures(rec, normalized=normalized)
    assert len(pics) == 1 and pics[0].error is None and pics[0].data is not None
    Image.open(io.BytesIO(pics[0].data)).load()  # a real picture
    thumb = V.thumbnail(rec, 48, normalized=normalized)
    assert thumb is not None
    Image.open(io.BytesIO(thumb.data)).load()
    boxes = im.find_boxes(rec, *size, normalized=normalized)
    n = min(len(xs), len(ys), len(x1), len(y1))
    assert len(boxes) == n
    # Every box with a problem is named under the picture and counted on the tile.
    bad = [b for b in boxes if b.problems]
    assert thumb.bad_boxes == len(bad)
    named = [t for t in pics[0].box_problems if t.startswith("box ")]
    assert len(named) == len(bad)
    if len({len(xs), len(ys), len(x1), len(y1)}) > 1:
        # Each bbox list whose length differs from the others' is named with what it needs.
        assert any("; expected N = " in t for t in pics[0].box_problems)
    # A box that is not a finite number is never drawn; every drawn box lies on the picture.
    for b in boxes:
        stored = [_f32(v) for v in (xs[b.index], ys[b.index], x1[b.index], y1[b.index])]
        if not all(math.isfinite(v) for v in stored):
            assert not b.drawable and "a coordinate is not a finite number" in b.problems
        else:
            assert b.drawable
            assert 0 <= b.xmin <= b.xmax <= size[0] and 0 <= b.ymin <= b.ymax <= size[1]


def test_one_bad_value_does_not_turn_the_other_boxes_into_pixels() -> None:
    rec = ex.decode(_record([0.1, 0.2], [0.1, 0.2], [0.5, 1.35], [0.5, 0.9], (200, 100)))
    good, bad = im.find_boxes(rec, 200, 100, normalized=True)
    assert (good.xmin, good.xmax) == pytest.approx((20.0, 100.0), abs=1e-3)
    assert not good.problems
    assert bad.problems == ("a coordinate is outside [0, 1]",)
    assert bad.xmax == 200.0  # clipped to the picture
    # Without the dataset's decision the record's own majority decides: still normalised.
    assert im.find_boxes(rec, 200, 100)[0].xmax == pytest.approx(100.0, abs=1e-3)
    pics = V.record_pictures(rec, normalized=True)
    assert pics[0].box_problems == ("box 1 (cat (1)): a coordinate is outside [0, 1]",)


def test_the_dataset_decides_normalised_or_pixels_from_its_records() -> None:
    normal = [_record([0.1], [0.1], [0.5], [0.5], (10, 10)) for _ in range(19)]
    odd = _record([0.1], [0.1], [1.35], [0.5], (10, 10))
    scale = V.boxes_normalized([*normal, odd, None], total=21)
    assert scale.normalized is True and not scale.sampled
    assert "every record" in scale.words
    pixels = [_record([10], [10], [50], [60], (100, 100)) for _ in range(5)]
    scale = V.boxes_normalized(pixels, total=100)
    assert scale.normalized is False and scale.sampled and "a sample" in scale.words
    plain = ex.encode_example({"label": ("int64", [1])})
    assert V.boxes_normalized([plain], total=1).normalized is None


# -- in the app ----------------------------------------------------------------------------


def _odd_dataset(path: Path, n: int, seed: int) -> list[int]:
    """``n`` records of four boxes each, most of them good; every third record has one or
    two odd values. Returns the records with a box problem."""
    rnd = random.Random(seed)
    payloads, bad = [], []
    for i in range(n):
        cols: list[list[float]] = []
        for _ in range(4):
            cols.append([rnd.uniform(0.0, 0.45) for _ in range(4)])
        cols[2] = [v + 0.5 for v in cols[0]]
        cols[3] = [v + 0.5 for v in cols[1]]
        if i % 3 == 1:
            for _ in range(rnd.randint(1, 2)):
                cols[rnd.randrange(4)][rnd.randrange(4)] = rnd.choice([*ODD[:8], 1.35, -0.5])
        payloads.append(_record(*cols, size=(64, 48)))
        rec = ex.decode(payloads[-1])
        if any(b.problems for b in im.find_boxes(rec, 64, 48, normalized=True)):
            bad.append(i)
    codec.write_records(str(path), payloads)
    return bad


@pytest.fixture(scope="module")
def odd_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    root = tmp_path_factory.mktemp("boxes")
    write_sample(root / "sample")
    bad = _odd_dataset(root / "odd.tfrecord", 30, seed=7)
    return root, bad


def test_records_with_odd_boxes_open_and_say_what_is_wrong(
    monkeypatch: pytest.MonkeyPatch, odd_root: tuple[Path, list[int]]
) -> None:
    root, bad = odd_root
    assert len(bad) >= 5  # the generator plants enough
    good = next(i for i in range(30) if i not in bad)
    at = start_app(monkeypatch, root, params={"file": "odd.tfrecord", "record": str(good)})
    no_crash(at)
    assert not [w for w in at.main.warning if "Boxes with problems" in w.value]
    for i in bad[:6]:
        at = start_app(monkeypatch, root, params={"file": "odd.tfrecord", "record": str(i)})
        no_crash(at)
        warned = [w.value for w in at.main.warning if "Boxes with problems" in w.value]
        assert warned, f"record {i}: no warning about its boxes"
        assert at.main.image  # the picture is shown, bad boxes and all


def test_gallery_of_odd_boxes_shows_every_tile_and_badges_the_bad_ones(
    monkeypatch: pytest.MonkeyPatch, odd_root: tuple[Path, list[int]]
) -> None:
    root, bad = odd_root
    at = start_app(monkeypatch, root, params={"file": "odd.tfrecord", "size": "50"})
    at.switch_page("ui/pages/gallery.py").run()
    no_crash(at)
    tiles = gallery_tiles(at)
    assert [t["record"] for t in tiles] == list(range(30))
    assert all(t["src"] and "why" not in t for t in tiles)  # every tile has its picture
    badged = {t["record"]: t["badges"] for t in tiles if t.get("badges")}
    assert sorted(badged) == bad
    with codec.TFRecordDataset(str(root / "odd.tfrecord")) as ds:
        for i, badges in badged.items():
            boxes = im.find_boxes(ex.decode(ds.read(i)), 64, 48, normalized=True)
            n = sum(1 for b in boxes if b.problems)
            assert badges == [f"⚠ {plural(n, 'bad box', 'bad boxes')}"], (i, badges)
