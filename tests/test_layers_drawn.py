"""Layers drawn over the main picture (issue 25): class maps, instance masks (PNG per object
and N·H·W floats), ground-truth boxes, predictions with a score threshold, keypoints with
COCO's skeleton; each read once and drawn on the whole picture, a region at any zoom and a
thumbnail; the record view's pictures listed without a silent cap; and golden pictures of a
few generated records compared pixel for pixel (``tests/data/golden_views/``; a missing one
is written, then looked at; ``TFB_UPDATE_GOLDENS=1`` writes them all again)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from PIL import Image, ImageColor

from browser_app import generators as G
from browser_app.view import pictures as P
from codec import example as ex
from codec import layers as L
from codec import roles as R
from codec.detection import class_color

GOLDEN = Path(__file__).resolve().parent / "data" / "golden_views"
ALL = L.LayerOptions()


def _png(arr: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(arr).save(out, format="PNG")
    return out.getvalue()


def _pixels(data: bytes) -> np.ndarray:
    img = Image.open(io.BytesIO(data))
    img.load()
    return np.asarray(img.convert("RGB"))


def _layers(payload_or_record: Any, options: L.LayerOptions = ALL) -> tuple[Image.Image, list]:
    rec = (
        payload_or_record
        if isinstance(payload_or_record, ex.Record)
        else ex.decode(payload_or_record)
    )
    roles = R.picture_roles(rec)
    main = roles[0][0]
    img = main.image()
    return img, L.record_layers(rec, main, img.width, img.height, options, roles)


def _only(kind: str, **more: Any) -> L.LayerOptions:
    return L.LayerOptions(**{k: k == kind for k in L.LAYER_KINDS}, **more)


def _kinds(layers: list) -> dict[str, L.Layer]:
    return {x.kind: x for x in layers}


# -- options ---------------------------------------------------------------------------------


def test_options_are_hashable_and_opacity_is_kept_in_range() -> None:
    a = L.LayerOptions(label_map={1: "cat"}, hidden={("cat", 1)})
    b = L.LayerOptions(label_map={1: "cat"}, hidden=frozenset({("cat", 1)}))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert L.LayerOptions(opacity=3).opacity == 1.0
    assert L.LayerOptions(opacity=-1).opacity == 0.0
    assert L.LayerOptions(opacity=float("nan")).opacity == 0.5
    assert ALL.any and not L.LayerOptions(**{k: False for k in L.LAYER_KINDS}).any


# -- ground truth: boxes, masks, keypoints -----------------------------------------------------


def test_coco_layers_are_counted_as_drawn() -> None:
    payload = G.coco(5, n_objects=6, photo="astronaut", max_side=200)
    rec = ex.decode(payload)
    _img, layers = _layers(rec)
    assert [x.kind for x in layers] == ["masks", "boxes", "keypoints"]
    got = _kinds(layers)
    assert got["boxes"].count == 6 and got["boxes"].source == "image/object/"
    assert got["masks"].count == 6 and got["masks"].source == "image/object/mask"
    vis = rec.features["image/object/keypoint/visibility"].values
    assert got["keypoints"].count == sum(v > 0 for v in vis) > 0
    assert [e.count for e in got["boxes"].legend] and sum(e.count for e in got["boxes"].legend) == 6


def test_png_masks_and_float_masks_draw_the_same() -> None:
    png = G.coco(11, n_objects=4, max_side=96)
    floats = G.coco_float_masks(11, n_objects=4, max_side=96)
    assert ex.decode(floats).features["image/object/mask"].type == "float"
    options = _only("masks")
    img, a = _layers(png, options)
    img2, b = _layers(floats, options)
    assert _kinds(a)["masks"].count == _kinds(b)["masks"].count == 4
    drawn_a = np.asarray(L.draw_layers(img, a, options))
    drawn_b = np.asarray(L.draw_layers(img2, b, options))
    assert np.array_equal(drawn_a, drawn_b)
    assert not np.array_equal(drawn_a, np.asarray(img.convert("RGB")))


def test_masks_are_tinted_in_their_class_colour_with_an_outline() -> None:
    photo = np.full((40, 60, 3), 100, np.uint8)
    mask = np.zeros((40, 60), np.uint8)
    mask[10:30, 20:40] = 1
    rec = ex.decode(
        ex.encode_example(
            {
                "image/encoded": ("bytes", [_png(photo)]),
                "image/object/bbox/xmin": ("float", [20 / 60]),
                "image/object/bbox/ymin": ("float", [10 / 40]),
                "image/object/bbox/xmax": ("float", [40 / 60]),
                "image/object/bbox/ymax": ("float", [30 / 40]),
                "image/object/class/text": ("bytes", [b"cat"]),
                "image/object/mask": ("bytes", [_png(mask)]),
            }
        )
    )
    colour = np.array(ImageColor.getrgb(class_color(("cat", None))))
    for opacity in (0.0, 0.5, 1.0):
        options = _only("masks", opacity=opacity)
        img, layers = _layers(rec, options)
        out = np.asarray(L.draw_layers(img, layers, options)).astype(int)
        assert (out[0:10] == 100).all() and (out[:, :20] == 100).all()  # outside: untouched
        assert (out[10, 25] == colour).all() and (out[20, 20] == colour).all()  # the outline
        want = np.round(100 + (colour - 100) * opacity)
        assert np.abs(out[20, 30] - want).max() <= 1  # inside: blended at the opacity


def test_hidden_classes_leave_out_boxes_masks_and_keypoints() -> None:
    payload = G.coco(2, n_objects=5, max_side=160)
    rec = ex.decode(payload)
    texts = {bytes(t).decode() for t in rec.features["image/object/class/text"].values}
    hidden = frozenset((t, None) for t in texts)
    img, layers = _layers(rec, L.LayerOptions(hidden=hidden))
    got = _kinds(layers)
    assert got["boxes"].count == got["masks"].count == got["keypoints"].count == 0
    assert all(e.hidden for e in got["boxes"].legend)
    drawn = L.draw_layers(img, layers, L.LayerOptions(hidden=hidden))
    assert np.array_equal(np.asarray(drawn), np.asarray(img.convert("RGB")))


def _keypoint_record(vis: list[int], k: int = 17, size: tuple[int, int] = (64, 64)) -> ex.Record:
    xs = [0.2 + 0.6 * j / max(1, k - 1) for j in range(k)]
    return ex.decode(
        ex.encode_example(
            {
                "image/encoded": ("bytes", [_png(np.zeros((size[1], size[0], 3), np.uint8))]),
                "image/object/bbox/xmin": ("float", [0.1]),
                "image/object/bbox/ymin": ("float", [0.1]),
                "image/object/bbox/xmax": ("float", [0.9]),
                "image/object/bbox/ymax": ("float", [0.9]),
                "image/object/class/text": ("bytes", [b"person"]),
                "image/object/keypoint/x": ("float", xs),
                "image/object/keypoint/y": ("float", [0.5] * k),
                "image/object/keypoint/visibility": ("int64", vis),
            }
        )
    )


def test_keypoints_not_labelled_are_not_drawn_and_hidden_ones_are_hollow() -> None:
    options = _only("keypoints")
    colour = ImageColor.getrgb(class_color(("person", None)))
    rec = _keypoint_record([0] * 17)
    img, layers = _layers(rec, options)
    assert _kinds(layers)["keypoints"].count == 0
    assert np.array_equal(np.asarray(L.draw_layers(img, layers, options)), np.asarray(img))
    vis = [0] * 17
    vis[0], vis[16] = 2, 1
    img, layers = _layers(_keypoint_record(vis), options)
    out = L.draw_layers(img, layers, options)
    x0, x16 = round(0.2 * 64), round(0.8 * 64)
    assert out.getpixel((x0, 32)) == colour  # visible: a filled dot
    assert out.getpixel((x16, 32)) == (0, 0, 0)  # labelled, not visible: hollow
    assert colour in {out.getpixel((x16 + dx, 32)) for dx in (-3, -2, 2, 3)}


def test_the_coco_skeleton_joins_labelled_points_when_k_is_17() -> None:
    options = _only("keypoints")
    colour = ImageColor.getrgb(class_color(("person", None)))
    vis = [0] * 17
    vis[5] = vis[6] = 2  # the shoulders, joined in COCO's skeleton
    img, layers = _layers(_keypoint_record(vis, size=(200, 100)), options)
    out = L.draw_layers(img, layers, options)
    x5, x6 = (0.2 + 0.6 * 5 / 16) * 200, (0.2 + 0.6 * 6 / 16) * 200
    assert out.getpixel((round((x5 + x6) / 2), 50)) == colour
    # Five points per object: no skeleton, dots only.
    img, layers = _layers(_keypoint_record([2] * 5, k=5, size=(200, 100)), options)
    out = L.draw_layers(img, layers, options)
    between = (0.2 + 0.6 * 0.5 / 4) * 200
    assert out.getpixel((round(between), 50)) == (0, 0, 0)


# -- predictions -----------------------------------------------------------------------------


def test_predictions_are_their_own_layer_with_a_threshold() -> None:
    payload = G.predictions(3, 20, n_objects=0, max_side=200)
    rec = ex.decode(payload)
    scores = rec.features["image/detection/score"].values
    img, layers = _layers(rec)
    got = _kinds(layers)
    # issue 25, point 3: an image without objects shows no ground truth and 20 predictions
    assert got["boxes"].count == 0
    pred = got["predictions"]
    assert (pred.total, pred.threshold) == (20, 0.5)
    assert pred.count == sum(s >= 0.5 for s in scores) and pred.below == 20 - pred.count
    assert pred.as_dict() == {
        "kind": "predictions",
        "source": "image/detection/",
        "count": pred.count,
        "total": 20,
        "threshold": 0.5,
    }
    for threshold, count in ((0.0, 20), (1.01, 0)):
        options = L.LayerOptions(score_threshold=threshold)
        _img, layers = _layers(rec, options)
        assert _kinds(layers)["predictions"].count == count
    none = L.LayerOptions(score_threshold=1.01)
    off = L.LayerOptions(predictions=False)
    _img, a = _layers(rec, none)
    _img, b = _layers(rec, off)
    assert _kinds(b)["predictions"].shapes is None
    assert np.array_equal(
        np.asarray(L.draw_layers(img, a, none)), np.asarray(L.draw_layers(img, b, off))
    )


def test_ground_truth_stays_beside_predictions_and_the_label_map_names_them() -> None:
    payload = G.predictions(8, 20, n_objects=3, max_side=320)
    rec = ex.decode(payload)
    names = {i: f"class{i}" for i in range(1, 100)}
    _img, layers = _layers(rec, L.LayerOptions(label_map=names, score_threshold=0.0))
    got = _kinds(layers)
    assert got["boxes"].count == 3 and got["predictions"].count == 20
    labels = rec.features["image/detection/label"].values
    assert {e.caption for e in got["predictions"].legend} == {f"class{lb} ({lb})" for lb in labels}
    captions = [p.caption for p in got["predictions"].shapes]
    assert captions[0].startswith(f"class{labels[0]} 0.") and len(captions) == 20


def test_predictions_are_dashed_and_ground_truth_is_solid() -> None:
    black = np.zeros((100, 100, 3), np.uint8)
    box = {
        "bbox/xmin": ("float", [0.2]),
        "bbox/ymin": ("float", [0.2]),
        "bbox/xmax": ("float", [0.8]),
        "bbox/ymax": ("float", [0.8]),
    }
    rec = ex.decode(
        ex.encode_example(
            {
                "image/encoded": ("bytes", [_png(black)]),
                **{f"image/object/{k}": v for k, v in box.items()},
                "image/object/class/label": ("int64", [3]),
                **{f"image/detection/{k}": v for k, v in box.items()},
                "image/detection/label": ("int64", [3]),
                "image/detection/score": ("float", [0.9]),
            }
        )
    )
    colour = ImageColor.getrgb(class_color((None, 3)))
    edges = {}
    for kind in ("boxes", "predictions"):
        options = _only(kind)
        img, layers = _layers(rec, options)
        out = np.asarray(L.draw_layers(img, layers, options, captions=False))
        edges[kind] = [tuple(p) == colour for p in out[20, 25:75]]
    assert all(edges["boxes"])
    assert 0.3 < sum(edges["predictions"]) / 50 < 0.7


# -- class maps ------------------------------------------------------------------------------


def _class_map_record(opacity_photo: int = 128) -> ex.Record:
    photo = np.full((48, 64, 3), opacity_photo, np.uint8)
    cmap = np.zeros((48, 64), np.uint8)
    cmap[:24, 32:] = 15
    cmap[24:, 32:] = 255
    return ex.decode(
        ex.encode_example(
            {
                "image/encoded": ("bytes", [_png(photo)]),
                "image/segmentation/class/encoded": ("bytes", [_png(cmap)]),
                "image/segmentation/class/format": ("bytes", [b"png"]),
            }
        )
    )


def test_class_map_blends_classes_leaves_background_clear_and_hatches_void() -> None:
    rec = _class_map_record()
    for opacity in (0.0, 0.5, 1.0):
        options = L.LayerOptions(opacity=opacity)
        img, layers = _layers(rec, options)
        (layer,) = layers
        assert layer.kind == "class_map" and layer.source == "image/segmentation/class/encoded"
        out = np.asarray(L.draw_layers(img, layers, options)).astype(int)
        assert (out[:, :32] == 128).all()  # background (0): clear
        want = np.round(128 + (L.PALETTE[15].astype(int) - 128) * opacity)
        assert np.abs(out[:24, 32:] - want).max() <= 1
        void = {tuple(p) for p in out[24:, 32:].reshape(-1, 3)}
        assert len(void) == 2  # hatched: two colours, whatever the opacity (at least 0.6)
        if opacity == 1.0:
            assert void == {(255, 255, 255), ImageColor.getrgb(L.VOID_COLOR)}
    assert [(e.caption, e.count) for e in layer.legend] == [
        ("15", 24 * 32),
        ("void (255)", 24 * 32),
    ]
    _img, layers = _layers(rec, L.LayerOptions(label_map={15: "person"}))
    assert layers[0].legend[0].caption == "person (15)" and layers[0].count == 2


def test_a_class_map_of_another_shape_is_listed_not_laid_over() -> None:
    photo = _png(np.full((48, 64, 3), 9, np.uint8))
    rec = ex.decode(
        ex.encode_example(
            {
                "image/encoded": ("bytes", [photo]),
                "image/segmentation/class/encoded": ("bytes", [_png(np.ones((64, 64), np.uint8))]),
            }
        )
    )
    img, layers = _layers(rec)
    (layer,) = layers
    assert layer.count == 0 and "64×64, not the picture's 64×48" in layer.problems[0]
    assert np.array_equal(np.asarray(L.draw_layers(img, layers)), np.asarray(img))


def test_a_class_map_at_half_size_is_scaled_to_the_photo() -> None:
    photo = _png(np.full((48, 64, 3), 128, np.uint8))
    half = np.zeros((24, 32), np.uint8)
    half[:, 16:] = 15
    rec = ex.decode(
        ex.encode_example(
            {"image/encoded": ("bytes", [photo]), "image/seg": ("bytes", [_png(half)])}
        )
    )
    options = L.LayerOptions(opacity=1.0)
    img, layers = _layers(rec, options)
    out = np.asarray(L.draw_layers(img, layers, options))
    assert (out[:, :32] == 128).all() and (out[:, 32:] == L.PALETTE[15]).all()


# -- what cannot be drawn is named, never a crash ----------------------------------------------


def test_masks_that_do_not_fit_are_named() -> None:
    photo = _png(np.zeros((40, 60, 3), np.uint8))
    box = {f"image/object/bbox/{s}": ("float", [0.1, 0.2]) for s in ("xmin", "ymin")}
    box.update({f"image/object/bbox/{s}": ("float", [0.5, 0.6]) for s in ("xmax", "ymax")})
    cases = {
        "bytes": [_png(np.ones((10, 10), np.uint8)), b"\x89PNG\r\n\x1a\nbroken"],
        "float": [1.0] * 7,
    }
    for kind, values in cases.items():
        rec = ex.decode(
            ex.encode_example(
                {"image/encoded": ("bytes", [photo]), **box, "image/object/mask": (kind, values)}
            )
        )
        img, layers = _layers(rec)
        masks = _kinds(layers)["masks"]
        assert masks.count == 0 and masks.problems
        L.draw_layers(img, layers)
    assert (
        "is 10×10, not the picture's 60×40"
        in _kinds(
            _layers(
                ex.decode(
                    ex.encode_example(
                        {
                            "image/encoded": ("bytes", [photo]),
                            **box,
                            "image/object/mask": ("bytes", cases["bytes"]),
                        }
                    )
                )
            )[1]
        )["masks"].problems[0]
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(objects=hs.integers(0, 100), seed=hs.integers(0, 1000), detections=hs.integers(0, 30))
def test_any_number_of_objects_is_drawn_and_counted(objects, seed, detections) -> None:
    payload = G.predictions(
        seed, detections, n_objects=objects, masks=True, keypoints=True, max_side=96
    )
    img, layers = _layers(payload, L.LayerOptions(score_threshold=0.0))
    got = _kinds(layers)
    assert got["boxes"].count == objects
    assert got["predictions"].count == got["predictions"].total == detections
    masks = got.get("masks")
    assert (masks is None) == (objects == 0)
    assert masks is None or (masks.count <= objects and not masks.problems)
    out = L.draw_layers(img, layers)
    assert out.size == img.size and out.mode == "RGB"
    small = img.copy()
    small.thumbnail((40, 40))
    assert L.draw_layers(small, layers, scale=(small.width / img.width,) * 2).size == small.size


# -- any rendering: a region at a zoom, a thumbnail --------------------------------------------


def test_a_region_is_drawn_as_the_same_part_of_the_whole() -> None:
    payload = G.coco(4, n_objects=8, max_side=240)
    options = L.LayerOptions(boxes=False, predictions=False, keypoints=False)
    img, layers = _layers(payload, options)
    whole = np.asarray(L.draw_layers(img, layers, options))
    x0, y0, x1, y1 = 30, 20, 150, 110
    part = L.draw_layers(img.crop((x0, y0, x1, y1)), layers, options, origin=(x0, y0))
    # One pixel in from the edges: an outline depends on neighbours outside the region.
    assert np.array_equal(np.asarray(part)[1:-1, 1:-1], whole[y0 + 1 : y1 - 1, x0 + 1 : x1 - 1])
    zoomed = img.crop((x0, y0, x1, y1)).resize(((x1 - x0) * 2, (y1 - y0) * 2))
    drawn = np.asarray(L.draw_layers(zoomed, layers, options, scale=(2.0, 2.0), origin=(x0, y0)))
    changed = (drawn != np.asarray(zoomed)).any(axis=2)
    was = (whole[y0:y1, x0:x1] != np.asarray(img)[y0:y1, x0:x1]).any(axis=2)
    assert abs(changed.mean() - was.mean()) < 0.05


# -- the record view --------------------------------------------------------------------------


def test_every_picture_is_listed_and_the_rest_can_be_shown() -> None:
    payload = G.coco(6, n_objects=25, max_side=120)  # a photo and 25 masks
    rec = ex.decode(payload)
    pics = P.record_pictures(rec)
    assert (len(pics), pics.shown, pics.total, pics.rest) == (16, 16, 26, 10)
    assert pics.words == "16 of 26 shown"
    assert pics[0].main and pics[0].role == "photo" and pics[0].layers
    assert [p.role for p in pics.listed] == ["photo"] + ["mask"] * 25
    rest = P.record_pictures(rec, start=16)
    assert len(rest) == 10 and rest.words == "17–26 of 26 shown"
    assert not any(p.main for p in rest)
    assert P.record_pictures(rec, limit=100).words == "26 pictures"
    # A 0/1 mask is shown black and white, not as a black square.
    mask = _pixels(rest[0].data or b"")
    assert set(np.unique(mask)) <= {0, 255} and mask.max() == 255
    assert "mask · PNG" in rest[0].caption


def test_the_main_picture_says_what_its_layers_hold() -> None:
    payload = G.predictions(1, 20, masks=True, keypoints=True, n_objects=3, max_side=200)
    rec = ex.decode(payload)
    (main,) = P.record_pictures(rec, limit=1)
    assert [x.kind for x in main.layers] == ["masks", "predictions", "boxes", "keypoints"]
    assert main.boxes == 3 and main.format == "PNG"
    assert "3 boxes" in main.caption and " of 20 predictions (score ≥ 0.5)" in main.caption
    assert main.layer("predictions") is main.layers[1] and main.layer("class_map") is None
    (plain,) = P.record_pictures(rec, boxes=False, limit=1)
    assert plain.data == rec.features["image/encoded"].values[0] and not plain.layers


def test_class_maps_in_the_list_are_in_colour() -> None:
    rec = ex.decode(G.segmentation(2, max_side=160))
    pics = P.record_pictures(rec)
    assert [p.role for p in pics] == ["photo", "class_map"]
    colours = _pixels(pics[1].data or b"")
    assert len({tuple(c) for c in colours.reshape(-1, 3)}) >= 2 and colours.max() > 100
    assert [x.kind for x in pics[0].layers] == ["class_map"]
    view = P.full_view(rec, "image/segmentation/class/encoded", 0, 2.0)
    assert view.error is None and not view.layers and _pixels(view.data or b"").max() > 100


def test_thumbnails_hide_predictions_below_the_threshold() -> None:
    rec = ex.decode(G.predictions(9, 20, n_objects=2, max_side=300))
    low = P.thumbnail(rec, 120, captions=True, options=L.LayerOptions(score_threshold=0.0))
    high = P.thumbnail(rec, 120, captions=True, options=L.LayerOptions(score_threshold=0.99))
    assert low is not None and high is not None and low.data != high.data
    (pred,) = [x for x in high.layers if x.kind == "predictions"]
    assert pred.count == 0 and pred.below == 20
    default = P.thumbnail(rec, 120)
    assert default is not None
    (pred,) = [x for x in default.layers if x.kind == "predictions"]
    scores = rec.features["image/detection/score"].values
    assert pred.count == sum(s >= 0.5 for s in scores)


def test_the_full_view_draws_the_layers_at_its_zoom() -> None:
    rec = ex.decode(G.coco(3, n_objects=3, max_side=320))
    view = P.full_view(rec, "image/encoded", 0, 2.0, (0.5, 0.5), view=(200, 150))
    assert view.error is None and view.layers and view.region[2] - view.region[0] == 100
    plain = P.full_view(rec, "image/encoded", 0, 2.0, (0.5, 0.5), view=(200, 150), boxes=False)
    assert view.data != plain.data and not plain.layers


def test_view_summary_and_main_view_png() -> None:
    rec = ex.decode(G.predictions(5, 20, masks=True, n_objects=2, max_side=200))
    summary = P.view_summary(rec, L.LayerOptions(score_threshold=0.3))
    assert summary["picture"] == {
        "feature": "image/encoded",
        "index": 0,
        "format": "jpeg",
        "width": 200,
        "height": summary["picture"]["height"],  # type: ignore[index]
    }
    kinds = [x["kind"] for x in summary["layers"]]  # type: ignore[union-attr]
    assert kinds == ["masks", "predictions", "boxes"]
    assert summary["layers"][1]["threshold"] == 0.3  # type: ignore[index]
    assert summary["pictures"][0] == {"feature": "image/encoded", "index": 0, "role": "photo"}  # type: ignore[index]
    assert {p["role"] for p in summary["pictures"][1:]} == {"mask"}  # type: ignore[index]
    png = P.main_view_png(rec, L.LayerOptions())
    assert png is not None and png.startswith(b"\x89PNG")
    none = ex.decode(ex.encode_example({"x": ("int64", [1])}))
    assert P.view_summary(none) == {"picture": None, "layers": [], "pictures": []}
    assert P.main_view_png(none) is None


# -- golden pictures --------------------------------------------------------------------------


def _golden_views() -> dict[str, bytes]:
    coco = ex.decode(G.coco(0, photo="astronaut", max_side=256))
    seg = ex.decode(G.segmentation(0, photo="coffee", max_side=256))
    preds = ex.decode(G.predictions(0, 20, photo="rocket", n_objects=2, max_side=400))
    names = {1: "person", 2: "bicycle", 3: "car", 4: "motorcycle", 5: "airplane"}
    options = L.LayerOptions(label_map=names)
    thumb = P.thumbnail(preds, 160, captions=True, options=options)
    assert thumb is not None
    return {
        "coco_astronaut": P.main_view_png(coco, options) or b"",
        "deeplab_coffee": P.main_view_png(seg, options) or b"",
        "predictions_rocket": P.main_view_png(preds, options) or b"",
        "predictions_rocket_tile": thumb.data,
        "coco_astronaut_zoom": P.full_view(
            coco, "image/encoded", 0, 2.0, (0.45, 0.3), view=(300, 240)
        ).data
        or b"",
    }


def test_golden_views_pixel_for_pixel() -> None:
    update = os.environ.get("TFB_UPDATE_GOLDENS") == "1"
    written = []
    for name, data in _golden_views().items():
        path = GOLDEN / f"{name}.png"
        got = _pixels(data)
        if update or not path.exists():
            GOLDEN.mkdir(parents=True, exist_ok=True)
            Image.fromarray(got).save(path, format="PNG")
            written.append(path.name)
            continue
        want = _pixels(path.read_bytes())
        assert got.shape == want.shape, name
        assert np.array_equal(got, want), f"{name}: {(got != want).any(axis=2).sum()} pixels differ"
    if written:
        pytest.skip(f"golden views written (look at them): {', '.join(written)}")
