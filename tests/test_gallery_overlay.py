"""The layers a gallery tile leaves to the browser (:func:`codec.layers.browser_overlay`
through :func:`browser_app.view.pictures.thumbnail` with ``in_browser``): the tile's picture
is the photograph's own thumbnail (the very bytes of a tile without layers), no mask or class
map is decoded, and the description follows every switch, the score threshold and hidden
classes as the server's drawing does; the same whatever the order of the record's features.
What a browser cannot be given as PNGs read as stored (float masks, 16-bit or colour-managed
PNGs) keeps the server's drawing. Drawing it in Chromium: tests/test_e2e_gallery_layers.py."""

from __future__ import annotations

import io
import random
import struct
import zlib
from typing import Any

import numpy as np
import pytest
from PIL import Image

from benchmarks.bench_layers import plain
from benchmarks.bench_layers import record as every_layer
from browser_app import generators as G
from browser_app.view import pictures as P
from codec import example as ex
from codec import layers as L
from codec import png

TILE = 160


@pytest.fixture(scope="module")
def payload() -> bytes:
    return every_layer(3)


@pytest.fixture(scope="module")
def person() -> bytes:
    """A record with a person's 17 keypoints (the astronaut), masks and predictions."""
    return G.predictions(0, photo="astronaut", masks=True, keypoints=True)


def _thumb(payload: bytes, options: L.LayerOptions | None = None, **kw: Any) -> P.Thumb:
    got = P.thumbnail(
        ex.decode(payload, "auto"),
        TILE,
        True,
        captions=True,
        options=options,
        in_browser=True,
        **kw,
    )
    assert got is not None
    return got


def _features(payload: bytes) -> Any:
    return ex.decode(payload, "auto").features


def test_the_picture_is_the_photographs_own_and_every_layer_is_described(payload: bytes) -> None:
    L.clear_decoded()
    t = _thumb(payload)
    alone = P.thumbnail(ex.decode(plain(payload), "auto"), TILE, False)
    assert alone is not None and t.data == alone.data  # the same bytes, the same URL
    o = t.overlay
    assert o is not None
    assert (o["w"], o["h"], o["line"], o["font"], o["opacity"]) == (160, 120, 1, 9, 0.5)
    assert (o["fw"], o["fh"]) == (640, 480)  # the photograph's: masks sampled as the server does
    feats = _features(payload)
    masks = list(feats["image/object/mask"].values)
    (group,) = o["masks"]
    assert [t.blobs[src] for src, _kind, _color in group] == masks  # the stored PNGs, in order
    assert {kind for _src, kind, _color in group} == {png.GREY}
    (cmap,) = o["class_maps"]
    assert t.blobs[cmap["src"]] == feats["image/segmentation/class/encoded"].values[0]
    assert cmap["hidden"] == []
    assert len(o["boxes"]) == len(feats["image/object/bbox/xmin"].values)
    scores = list(feats["image/detection/score"].values)
    assert len(o["predictions"]) == sum(s >= 0.5 for s in scores) < len(scores)
    # In the tile's pixels: the boxes scaled by a quarter from the 640×480 photograph.
    x0 = feats["image/object/bbox/xmin"].values[0] * 640 / 4
    assert o["boxes"][0][0] == pytest.approx(x0, abs=0.01)
    # Nothing was decoded to describe them.
    assert L._DECODED.size == 0


@pytest.mark.parametrize(
    ("switch", "key"),
    [
        ("boxes", "boxes"),
        ("predictions", "predictions"),
        ("masks", "masks"),
        ("class_map", "class_maps"),
        ("keypoints", "keypoints"),
    ],
)
def test_each_switch_leaves_its_layer_out(
    payload: bytes, person: bytes, switch: str, key: str
) -> None:
    record = person if key == "keypoints" else payload
    on = _thumb(record).overlay
    off = _thumb(record, L.LayerOptions(**{switch: False})).overlay
    assert on is not None and off is not None and key in on and key not in off
    for other in ("boxes", "predictions", "keypoints"):
        if other != key:
            assert on.get(other) == off.get(other)


def test_keypoints_with_the_coco_skeleton(person: bytes) -> None:
    o = _thumb(person).overlay
    assert o is not None
    (kp,) = o["keypoints"]
    assert kp["skeleton"] == [list(p) for p in L.COCO_SKELETON]
    assert kp["r"] == max(2.0, o["line"] + 1.0)
    feats = _features(person)
    vis = list(feats["image/object/keypoint/visibility"].values)
    flat = [v for obj in kp["objects"] for v in obj[1]]
    assert len(flat) % (17 * 3) == 0
    drawn = [x is not None for x in flat[::3]]
    shown = [v > 0 for v in vis][: len(drawn)]
    assert sum(drawn) == sum(shown) > 0  # a point not labelled is not drawn
    hollow = [not v for x, v in zip(flat[::3], flat[2::3]) if x is not None]
    assert sum(hollow) == sum(1 for v in vis if v == 1)  # labelled, not visible: hollow


def test_no_layers_no_overlay(payload: bytes) -> None:
    nothing = L.LayerOptions(
        boxes=False, predictions=False, masks=False, class_map=False, keypoints=False
    )
    t = _thumb(payload, nothing)
    assert t.overlay is None and t.blobs == ()
    assert P.thumbnail(ex.decode(payload, "auto"), TILE, False) == P.thumbnail(
        ex.decode(payload, "auto"), TILE, False
    )


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 0.8, 1.01])
def test_the_score_threshold(payload: bytes, threshold: float) -> None:
    scores = list(_features(payload)["image/detection/score"].values)
    o = _thumb(payload, L.LayerOptions(score_threshold=threshold)).overlay
    assert o is not None
    assert len(o.get("predictions", [])) == sum(s >= threshold for s in scores)


def test_hidden_classes_are_left_out(payload: bytes) -> None:
    feats = _features(payload)
    texts = [bytes(t).decode() for t in feats["image/object/class/text"].values]
    key = (texts[0], None)
    kept = sum(1 for t in texts if t != texts[0])
    assert 0 < kept < len(texts)
    o = _thumb(payload, L.LayerOptions(hidden={key})).overlay
    assert o is not None
    assert len(o["boxes"]) == kept
    assert len(o["masks"][0]) == kept
    assert key[0] not in {b[6] for b in o["boxes"]}
    values = np.unique(
        np.asarray(Image.open(io.BytesIO(feats["image/segmentation/class/encoded"].values[0])))
    )
    v = int(next(x for x in values if 0 < x < 255))
    o = _thumb(payload, L.LayerOptions(hidden={(None, v), ("void", 255)})).overlay
    assert o is not None and o["class_maps"][0]["hidden"] == [v, 255]


def test_the_order_of_features_changes_nothing(payload: bytes) -> None:
    want = _thumb(payload)
    rng = random.Random(5)
    for _ in range(4):
        got = _thumb(G.shuffled_features(payload, rng))
        assert got.overlay == want.overlay and got.blobs == want.blobs and got.data == want.data


def test_float_masks_are_drawn_by_the_server() -> None:
    payload = G.coco_float_masks(3, photo="astronaut", keypoints=False)
    t = _thumb(payload)
    server = P.thumbnail(ex.decode(payload, "auto"), TILE, True, captions=True)
    assert t.overlay is None and t.blobs == ()
    assert server is not None and t.data == server.data


def test_a_mask_a_browser_cannot_read_as_stored_is_drawn_by_the_server(payload: bytes) -> None:
    feats = _features(payload)
    spec = {name: (f.type, list(f.values)) for name, f in feats.items()}
    masks = list(spec["image/object/mask"][1])
    masks[2] = _with_chunk(masks[2], b"gAMA", struct.pack(">I", 45455))
    spec["image/object/mask"] = ("bytes", masks)
    odd = ex.encode_example(spec)
    t = _thumb(odd)
    assert t.overlay is None
    assert t.data == P.thumbnail(ex.decode(odd, "auto"), TILE, True, captions=True).data  # type: ignore[union-attr]


def _png(img: Image.Image) -> bytes:
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


def _with_chunk(data: bytes, name: bytes, body: bytes) -> bytes:
    """``data`` (a PNG) with a chunk put right after its header."""
    chunk = struct.pack(">I", len(body)) + name + body
    chunk += struct.pack(">I", zlib.crc32(name + body))
    return data[:33] + chunk + data[33:]


def test_which_pngs_a_browser_reads_as_stored() -> None:
    grey = _png(Image.fromarray(np.array([[0, 1], [2, 255]], dtype=np.uint8)))
    assert png.browser_values(grey) == png.GREY
    assert png.browser_values(_png(Image.fromarray(np.zeros((2, 2), dtype=np.uint16)))) is None
    one_bit = _png(Image.new("1", (4, 4)))
    assert png.browser_values(one_bit) is None  # a class map's values must be 8 bits
    assert png.browser_values(one_bit, exact=False) == png.GREY  # a mask's "not 0" will do
    rgb = _png(Image.new("RGB", (2, 2)))
    assert png.browser_values(rgb) is None and png.browser_values(rgb, exact=False) == png.RGB
    assert png.browser_values(_png(Image.new("RGBA", (2, 2))), exact=False) is None
    pal = Image.new("P", (2, 2))
    pal.putpalette(L.PALETTE.tobytes())
    assert png.browser_values(_png(pal)) == png.PALETTE
    twice = Image.new("P", (2, 2))
    twice.putpalette(bytes(768))  # every index black: the browser cannot tell them apart
    assert png.browser_values(_png(twice)) is None
    assert png.browser_values(_with_chunk(grey, b"gAMA", struct.pack(">I", 45455))) is None
    assert png.browser_values(_with_chunk(grey, b"iCCP", b"x\x00\x00")) is None
    assert png.browser_values(grey[:-12]) is None  # no IEND: not all there
    broken = bytearray(grey)
    broken[40] ^= 0xFF
    assert png.browser_values(bytes(broken)) is None  # a CRC that does not hold
    assert png.browser_values(b"not a png") is None
