"""Boxes drawn over pictures: one colour per class, the same on every record and in every run;
captions sized to the picture and kept inside it; a legend whose counts are the boxes drawn;
a hidden class never drawn (record view, thumbnails, full view); the full view never larger
than its view, whatever the picture's size and the zoom."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from PIL import Image, ImageColor

from browser_app import view as V
from browser_app.view import pictures as P
from codec import detection
from codec import example as ex
from codec import images as im

REPO = Path(__file__).resolve().parents[1]

texts = hs.none() | hs.text(min_size=1, max_size=12)
labels = hs.none() | hs.integers(-5, 10_000)
class_keys = hs.tuples(texts, labels)


def _png(width: int, height: int, colour: tuple[int, int, int] = (128, 128, 128)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, format="PNG")
    return out.getvalue()


def _record(
    size: tuple[int, int],
    objects: list[tuple[tuple[str | None, int | None], tuple[float, float, float, float]]],
    colour: tuple[int, int, int] = (128, 128, 128),
) -> ex.Record:
    """A record with a plain picture and ``objects`` as ``((text, label), (x0, y0, x1, y1))``
    in normalised coordinates. Class texts and labels are stored only when every object has
    one (the Object Detection API's parallel lists)."""
    feats: dict[str, tuple[str, list]] = {
        "image/encoded": ("bytes", [_png(*size, colour)]),
        "image/width": ("int64", [size[0]]),
        "image/height": ("int64", [size[1]]),
    }
    for k, side in enumerate(detection.BBOX):
        feats[f"image/object/bbox/{side}"] = ("float", [box[k] for _, box in objects])
    if objects and all(t is not None for (t, _), _ in objects):
        feats["image/object/class/text"] = ("bytes", [t.encode() for (t, _), _ in objects])  # type: ignore[union-attr]
    if objects and all(lb is not None for (_, lb), _ in objects):
        feats["image/object/class/label"] = ("int64", [lb for (_, lb), _ in objects])
    return ex.decode(ex.encode_example(feats))


def _pixels(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    return img.convert("RGB")


# -- colours ---------------------------------------------------------------------------------


@given(hs.lists(class_keys, min_size=1, max_size=12, unique=True), hs.randoms())
def test_a_class_colour_depends_on_the_class_alone(keys, rnd) -> None:
    before = {k: detection.class_color(k) for k in keys}
    shuffled = list(keys)
    rnd.shuffle(shuffled)
    assert {k: detection.class_color(k) for k in shuffled} == before
    for colour in before.values():
        assert colour in detection.CLASS_COLORS
        assert colour != im.BAD_BOX_COLOR  # a problem stays told apart from every class


@given(hs.integers(-1000, 1000), hs.lists(hs.integers(0, len(detection.CLASS_COLORS) - 1)))
def test_classes_with_nearby_labels_never_share_a_colour(base, offsets) -> None:
    keys = {(None, base + k) for k in offsets}
    colours = {detection.class_color(k) for k in keys}
    assert len(colours) == len(keys)
    # The class text does not change the colour a label gives.
    assert all(
        detection.class_color(("x", lb)) == detection.class_color((None, lb)) for _, lb in keys
    )


def test_text_colours_are_the_same_in_every_run() -> None:
    words = ["cat", "dog", "person", "traffic light", "ünïcode", ""]
    code = (
        "from codec.detection import class_color;"
        f"print([class_color((w, None)) for w in {words!r}])"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env=dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(REPO)),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert runs == {repr([detection.class_color((w, None)) for w in words]) + "\n"}


# -- captions --------------------------------------------------------------------------------

sides = hs.integers(1, 4000)
coords = hs.floats(-50, 5000, allow_nan=False)


@given(sides, sides)
def test_caption_size_follows_the_picture(width, height) -> None:
    size = im.caption_size(width, height)
    if size is None:
        assert min(width, height) < 88  # only small pictures go without captions
    else:
        assert 9 <= size <= 16
        assert (size + 2) * 8 <= min(width, height)  # the band takes at most an eighth


@given(
    hs.tuples(coords, coords, coords, coords),
    hs.tuples(hs.integers(1, 5000), hs.integers(1, 60)),
    hs.tuples(sides, sides),
)
def test_a_caption_is_always_inside_the_picture(box, text, picture) -> None:
    x0, y0, x1, y1 = im.caption_place(box, text, picture)
    assert 0 <= x0 <= x1 <= picture[0] and 0 <= y0 <= y1 <= picture[1]
    assert x1 - x0 == min(text[0], picture[0]) and y1 - y0 == min(text[1], picture[1])
    if text[1] <= box[1] <= picture[1] and box[0] >= 0 and box[0] + text[0] <= picture[0]:
        assert (x0, y1) == (int(box[0]), int(box[1]))  # above the box, on its left edge


def test_tiny_pictures_get_no_caption_and_large_ones_get_one() -> None:
    objects = [(("a long class name", 3), (0.1, 0.4, 0.9, 0.9))]
    for size, captioned in (((64, 48), False), ((72, 72), False), ((400, 300), True)):
        rec = _record(size, objects)
        with_text = _pixels(V.record_pictures(rec)[0].data or b"")
        plain = im.draw_boxes(
            Image.new("RGB", size, (128, 128, 128)), im.find_boxes(rec, *size), False
        )
        assert (with_text.tobytes() != plain.tobytes()) is captioned, size


# -- legend and hidden classes ---------------------------------------------------------------

unit = hs.floats(0.0, 1.0, allow_nan=False)
boxes = hs.tuples(unit, unit, unit, unit).map(
    lambda b: (min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3]))
)


@hs.composite
def detections(draw):  # type: ignore[no-untyped-def]
    """A picture size and objects whose classes come from a small set (so classes repeat);
    text and label are either both stored or one of them throughout."""
    size = draw(hs.tuples(hs.integers(8, 240), hs.integers(8, 240)))
    which = draw(hs.sampled_from(["both", "text", "label"]))
    pool = draw(
        hs.lists(
            hs.tuples(hs.text("abcxyz", min_size=1, max_size=5), hs.integers(0, 40)),
            min_size=1,
            max_size=5,
            unique_by=lambda k: k[1],
        )
    )
    keys = [(t if which != "label" else None, lb if which != "text" else None) for t, lb in pool]
    objects = draw(hs.lists(hs.tuples(hs.sampled_from(keys), boxes), min_size=0, max_size=8))
    return size, objects


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(detections(), hs.data())
def test_legend_counts_are_the_boxes_drawn_and_a_hidden_class_is_never_drawn(found, data) -> None:
    size, objects = found
    rec = _record(size, objects)
    keys = sorted({k for k, _ in objects}, key=repr)
    hidden = set(data.draw(hs.lists(hs.sampled_from(keys)) if keys else hs.just([])))
    (pic,) = V.record_pictures(rec, normalized=True, hidden=hidden)
    shown = [k for k, _ in objects if k not in hidden]
    assert pic.boxes == len(shown)
    assert sum(e.count for e in pic.legend if not e.hidden) == pic.boxes
    assert {e.key: e.count for e in pic.legend} == {
        k: sum(1 for o, _ in objects if o == k) for k in keys
    }
    assert {e.key for e in pic.legend if e.hidden} == hidden
    for e in pic.legend:
        assert e.color == detection.class_color(e.key)
        assert e.caption == (detection.class_caption(*e.key) or "(no class)")
    # Hiding a class draws exactly what a record without its objects draws.
    if hidden and shown:
        kept = _record(size, [(k, b) for k, b in objects if k not in hidden])
        (without,) = V.record_pictures(kept, normalized=True)
        assert _pixels(pic.data or b"").tobytes() == _pixels(without.data or b"").tobytes()
    if hidden and not shown:  # nothing drawn: the stored picture as it is
        assert pic.data == rec.features["image/encoded"].values[0]
    # The same on a gallery thumbnail, and in the full view.
    if hidden:
        kept = _record(size, [(k, b) for k, b in objects if k not in hidden])
        thumb = V.thumbnail(rec, 96, captions=True, normalized=True, hidden=hidden)
        plain = V.thumbnail(kept, 96, captions=True, normalized=True)
        assert thumb is not None and plain is not None
        assert _pixels(thumb.data).tobytes() == _pixels(plain.data).tobytes()
        full = P.full_view(rec, "image/encoded", 0, 2.0, normalized=True, hidden=hidden)
        other = P.full_view(kept, "image/encoded", 0, 2.0, normalized=True)
        assert full.data is not None and other.data is not None
        assert _pixels(full.data).tobytes() == _pixels(other.data).tobytes()


def test_boxes_with_a_problem_keep_their_dashed_magenta() -> None:
    rec = _record(
        (200, 200), [(("cat", 1), (0.1, 0.1, 1.35, 0.6)), (("dog", 2), (0.2, 0.2, 0.5, 0.5))]
    )
    (pic,) = V.record_pictures(rec, normalized=True)
    cat, dog = pic.legend
    assert (cat.key, cat.count, cat.bad) == (("cat", 1), 1, 1) and dog.bad == 0
    img = _pixels(pic.data or b"")
    magenta = ImageColor.getrgb(im.BAD_BOX_COLOR)
    column = [img.getpixel((20, y)) for y in range(40, 120)]  # the bad box's left edge
    assert magenta in column and (128, 128, 128) in column  # dashed: gaps between dashes
    assert img.getpixel((40, 70)) == ImageColor.getrgb(detection.class_color(("dog", 2)))


def test_a_box_reads_on_light_and_dark_pictures() -> None:
    """Each line has a dark edge: a pale class colour stays visible on a white picture."""
    for colour in ((255, 255, 255), (0, 0, 0)):
        rec = _record((200, 200), [(("x", 16), (0.25, 0.25, 0.75, 0.75))], colour)
        assert detection.class_color(("x", 16)) == "#ffffff"  # the palest class colour
        img = _pixels(V.record_pictures(rec, normalized=True)[0].data or b"")
        edge = {img.getpixel((x, 100)) for x in range(44, 56)}
        assert (0, 0, 0) in edge and (255, 255, 255) in edge


# -- the full view ---------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    hs.tuples(hs.integers(1, 2600), hs.integers(1, 2600)),
    hs.sampled_from(list(P.ZOOMS.values())),
    hs.tuples(hs.floats(-0.5, 1.5), hs.floats(-0.5, 1.5)),
    hs.tuples(hs.integers(50, 1200), hs.integers(50, 900)),
)
def test_the_full_view_is_never_larger_than_its_view(size, zoom, center, viewport) -> None:
    rec = _record(size, [(("cat", 1), (0.2, 0.2, 0.6, 0.7))])
    shown = P.full_view(rec, "image/encoded", 0, zoom, center, view=viewport, normalized=True)
    assert shown.error is None and shown.data is not None
    img = _pixels(shown.data)
    assert img.width <= viewport[0] + 4 and img.height <= viewport[1] + 4
    x0, y0, x1, y1 = shown.region
    assert 0 <= x0 < x1 <= size[0] and 0 <= y0 < y1 <= size[1]
    assert (shown.width, shown.height) == size
    if zoom is None:
        assert shown.whole and shown.zoom == min(viewport[0] / size[0], viewport[1] / size[1])
    else:
        assert shown.zoom == zoom
        assert abs(img.width - (x1 - x0) * zoom) <= 1 and abs(img.height - (y1 - y0) * zoom) <= 1


def test_full_view_lines_stay_thin_at_every_zoom() -> None:
    rec = _record((100, 80), [((None, 3), (0.2, 0.25, 0.8, 0.75))])
    colour = ImageColor.getrgb(detection.class_color((None, 3)))
    for zoom in (1.0, 2.0, 4.0):
        shown = P.full_view(rec, "image/encoded", 0, zoom, normalized=True, view=(2000, 2000))
        img = _pixels(shown.data or b"")
        y = img.height // 2
        row = [img.getpixel((x, y)) for x in range(img.width)]
        assert row.count(colour) == 4, zoom  # two 2-pixel lines, whatever the zoom
    # Panned to a corner at 400 %: the picture's part there, the box where it falls.
    corner = P.full_view(rec, "image/encoded", 0, 4.0, (1.0, 1.0), normalized=True, view=(80, 80))
    assert corner.region == (80, 60, 100, 80) and corner.boxes == 1


def test_the_full_view_names_a_missing_or_broken_picture() -> None:
    rec = _record((20, 20), [])
    assert "no picture nope[0]" in (P.full_view(rec, "nope").error or "")
    broken = ex.decode(ex.encode_example({"image/encoded": ("bytes", [_png(30, 30)[:60]])}))
    error = P.full_view(broken, "image/encoded", 0, 1.0).error or ""
    assert error.startswith("Cannot show this picture")
