"""The layers over a record's picture in the app, as a user meets them (AppTest, generated
files): the record view names its layers under the picture; the "Score threshold" slider
redraws the predictions, says how many it hides and goes into the page's link (a link's
``score=`` opens with that threshold, a bad one is ignored with a message); a layer's switch
redraws the picture; a record with 26 pictures shows 16 and the rest a choice away; the photo
stays the main picture whatever order the writer put the features in; the gallery's
"Layer settings" popover redraws the tiles; tensor records and 16-bit depth pictures are pictures.

AppTest reruns the whole script at every step, so the URL it shows is the one a full run
writes; that the address bar follows a fragment's run (the records body, the gallery grid)
at once is for the browser test (``test_e2e_layers.py``)."""

from __future__ import annotations

import io
import random
import re
from pathlib import Path

import numpy as np
import pytest
from app_support import gallery_tiles, no_crash, start_app, table_pictures, tile_layers
from PIL import Image
from streamlit.testing.v1 import AppTest
from test_app_edit import media

from browser_app import generators as G
from browser_app import view as V
from codec import TFRecordDataset
from codec import example as ex
from codec.layers import LayerOptions

__all__ = ["media"]  # a fixture used here

GALLERY = "ui/pages/gallery.py"
SCORE = "tfb:w:layer:detail:score"
GALLERY_SCORE = "tfb:w:layer:gallery:score"
N_PREDICTED = 4  # records of the predictions file
SEG_KEY = "image/segmentation/class/encoded"


def _png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def _many_pictures() -> bytes:
    """One Example with 26 small PNGs (each its own colour) in one bytes feature."""
    pngs = [_png(np.full((12, 20, 3), (10 * i, 120, 250 - 9 * i), np.uint8)) for i in range(26)]
    return ex.encode_example({"image/encoded": ("bytes", pngs)})


def _class_map_first(payload: bytes) -> bytes:
    """``payload`` (a segmentation Example) written again with the class map as its first
    feature, the photo after it."""
    rec = ex.decode(payload, "auto")
    order = [SEG_KEY, *(k for k in rec.features if k != SEG_KEY)]
    return ex.encode_example({k: (rec.features[k].type, rec.features[k].values) for k in order})


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("layers")
    # infer_detections output over COCO ground truth with masks and keypoints (the astronaut
    # is a person: 17 keypoints), 20 detections each.
    G.write(
        r / "pred.tfrecord",
        G.records(
            G.predictions,
            N_PREDICTED,
            photo="astronaut",
            max_side=320,
            masks=True,
            keypoints=True,
        ),
    )
    G.write(r / "many.tfrecord", [_many_pictures()])
    seg = G.segmentation(2, max_side=200)
    G.write(
        r / "seg.tfrecord",
        [
            seg,
            _class_map_first(seg),
            G.shuffled_features(seg, random.Random(1)),
            G.shuffled_features(seg, random.Random(2)),
        ],
    )
    G.write(r / "tensors.tfrecord", G.tensor_records(0, max_side=96))
    depth_only = ex.encode_example(
        {"image/depth/encoded": ("bytes", [_png(G.depth_map(1, max_side=160))])}
    )
    G.write(r / "depth.tfrecord", [*G.records(G.depth, 2, max_side=160), depth_only])
    return r


def _record(root: Path, name: str, n: int) -> ex.Record:
    with TFRecordDataset(str(root / name)) as ds:
        return ex.decode(ds.page(n, n + 1)[0].payload or b"", "auto")


def _plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _captions(at: AppTest) -> list[str]:
    return [_plain(c.value) for c in at.main.caption]


def _layers_words(at: AppTest) -> str:
    (words,) = [c for c in _captions(at) if c.startswith("**Layers** · ")]
    return words


def _hidden_words(at: AppTest) -> list[str]:
    return [c for c in _captions(at) if "are hidden." in c or "is hidden." in c]


def _legend_names(at: AppTest) -> list[str]:
    """The layer each legend under the main picture names first."""
    found = []
    for h in at.main.get("html"):
        m = re.match(r'<div style="font-size:0.8rem[^"]*"><span [^>]*>([^<]+)</span>', h.proto.body)
        if m:
            found.append(m.group(1))
    return found


def _pixels(data: bytes) -> bytes:
    return Image.open(io.BytesIO(data)).convert("RGB").tobytes()


def _main_picture(at: AppTest, media: dict) -> bytes:
    """The pixels of the record view's first (main) picture."""
    return _pixels(media[at.main.image[0].value[0]][0])


def _scores(rec: ex.Record) -> list[float]:
    return [float(s) for s in rec.features["image/detection/score"].values]


def _query(at: AppTest, name: str) -> str | None:
    value = at.query_params.get(name)
    if value is None or isinstance(value, str):
        return value
    return value[0] if value else None


def _expected(rec: ex.Record, **options: object) -> bytes:
    """The main picture as :func:`browser_app.view.record_pictures` draws it with ``options``."""
    pics = V.record_pictures(rec, normalized=True, options=LayerOptions(**options))  # type: ignore[arg-type]
    return _pixels(pics[0].data or b"")


# -- the record view -------------------------------------------------------------------------


def test_the_threshold_redraws_the_predictions_says_what_it_hides_and_goes_in_the_link(
    monkeypatch, root, media
) -> None:
    at = start_app(monkeypatch, root, params={"file": "pred.tfrecord", "record": "0"})
    no_crash(at)
    rec = _record(root, "pred.tfrecord", 0)
    scores = _scores(rec)
    assert len(scores) == 20
    labelled = sum(v > 0 for v in rec.features["image/object/keypoint/visibility"].values)
    objects = len(rec.features["image/object/bbox/xmin"].values)
    words = _layers_words(at).split(" · ")
    assert words == [
        "**Layers**",
        V.plural(objects, "mask"),
        f"{20 - sum(s < 0.5 for s in scores)} of 20 predictions (score ≥ 0.5)",
        V.plural(objects, "box", "boxes"),
        V.plural(labelled, "keypoint"),
    ]
    switches = {t.label for t in at.main.toggle if (t.key or "").startswith("tfb:w:layer:detail:")}
    assert switches == {"Boxes", "Predictions", "Masks", "Keypoints"}
    # Each legend says whose it is (they stand one under the other).
    assert _legend_names(at) == ["Masks", "Predictions", "Keypoints"]
    assert at.slider(key=SCORE).value == 0.5
    assert _query(at, "score") is None  # the default is not in the link

    def hidden(t: float) -> int:
        return sum(s < t for s in scores)

    assert _hidden_words(at) == [
        f"{hidden(0.5)} predictions of 20 scored below 0.5 and are hidden."
    ]
    assert f"{20 - hidden(0.5)} of 20 predictions" in at.main.image[0].captions[0]
    at_half = _main_picture(at, media)
    assert at_half == _expected(rec, score_threshold=0.5)

    # Lower: more predictions drawn, fewer hidden, and the link carries the threshold.
    at.slider(key=SCORE).set_value(0.1).run()
    no_crash(at)
    assert 0 < hidden(0.1) < hidden(0.5)
    assert _hidden_words(at) == [
        f"{hidden(0.1)} predictions of 20 scored below 0.1 and are hidden."
    ]
    assert f"{20 - hidden(0.1)} of 20 predictions (score ≥ 0.1)" in _layers_words(at)
    assert _query(at, "score") == "0.1"
    low = _main_picture(at, media)
    assert low != at_half and low == _expected(rec, score_threshold=0.1)

    # At 1.0 none is drawn: the same picture as with the predictions switched off.
    at.slider(key=SCORE).set_value(1.0).run()
    no_crash(at)
    assert _hidden_words(at) == ["20 predictions of 20 scored below 1 and are hidden."]
    assert "0 of 20 predictions (score ≥ 1)" in _layers_words(at)
    assert _query(at, "score") == "1"
    none_drawn = _main_picture(at, media)
    assert none_drawn not in (low, at_half)
    assert none_drawn == _expected(rec, predictions=False)

    # The threshold is the dataset's: the next record opens with it.
    (following,) = [b for b in at.main.button if b.label == "Next record"]
    following.click().run()
    no_crash(at)
    assert _query(at, "record") == "1"
    assert at.slider(key=SCORE).value == 1.0
    assert _query(at, "score") == "1"

    # Back to the default: the link loses its score.
    at.slider(key=SCORE).set_value(0.5).run()
    no_crash(at)
    assert _query(at, "score") is None


def test_a_link_with_a_score_opens_with_that_threshold_and_a_bad_one_is_ignored(
    monkeypatch, root, media
) -> None:
    rec = _record(root, "pred.tfrecord", 1)
    hidden = sum(s < 0.8 for s in _scores(rec))
    params = {"file": "pred.tfrecord", "record": "1", "score": "0.8"}
    at = start_app(monkeypatch, root, params=params)
    no_crash(at)
    assert at.slider(key=SCORE).value == 0.8
    assert _hidden_words(at) == [f"{hidden} predictions of 20 scored below 0.8 and are hidden."]
    assert f"{20 - hidden} of 20 predictions (score ≥ 0.8)" in _layers_words(at)
    assert _query(at, "score") == "0.8"
    assert _main_picture(at, media) == _expected(rec, score_threshold=0.8)
    assert not at.warning
    # A score that is not one from 0 to 1: said, and the default drawn.
    for bad in ("7", "-0.1", "nan", "high"):
        at = start_app(monkeypatch, root, params={**params, "score": bad})
        no_crash(at)
        said = [_plain(w.value) for w in at.warning]
        assert f"The link's score='{bad}' is not a score from 0 to 1; it was ignored." in said
        assert at.slider(key=SCORE).value == 0.5
        assert "(score ≥ 0.5)" in _layers_words(at)
        assert _query(at, "score") is None


def test_switching_a_layer_off_redraws_the_picture_and_on_again_restores_it(
    monkeypatch, root, media
) -> None:
    at = start_app(monkeypatch, root, params={"file": "pred.tfrecord", "record": "2"})
    no_crash(at)
    rec = _record(root, "pred.tfrecord", 2)
    everything = _main_picture(at, media)
    assert everything == _expected(rec)
    assert any(s.label == "Opacity of masks and class maps" for s in at.main.slider)
    masks = at.toggle(key="tfb:w:layer:detail:masks")
    assert masks.value
    masks.set_value(False).run()
    no_crash(at)
    assert not at.toggle(key="tfb:w:layer:detail:masks").value
    without = _main_picture(at, media)
    assert without != everything and without == _expected(rec, masks=False)
    assert "mask" not in at.main.image[0].captions[0]
    # No mask and no class map drawn: nothing for the opacity to act on.
    assert not any(s.label == "Opacity of masks and class maps" for s in at.main.slider)
    # Keypoints off too, then both back on: the first picture again.
    at.toggle(key="tfb:w:layer:detail:keypoints").set_value(False).run()
    no_crash(at)
    bare = _main_picture(at, media)
    assert bare != without and bare == _expected(rec, masks=False, keypoints=False)
    at.toggle(key="tfb:w:layer:detail:masks").set_value(True).run()
    at.toggle(key="tfb:w:layer:detail:keypoints").set_value(True).run()
    no_crash(at)
    assert _main_picture(at, media) == everything
    # The opacity redraws the masks.
    at.slider(key="tfb:w:layer:detail:opacity").set_value(1.0).run()
    no_crash(at)
    opaque = _main_picture(at, media)
    assert opaque != everything and opaque == _expected(rec, opacity=1.0)
    # The master switch "Layers" off: the photo as stored, no layer controls.
    at.toggle(key="tfb:w:boxes:detail").set_value(False).run()
    no_crash(at)
    assert not [c for c in _captions(at) if c.startswith("**Layers** · ")]
    assert not any((s.key or "") == SCORE for s in at.main.slider)
    photo = rec.features["image/encoded"].values[0]
    assert _main_picture(at, media) == _pixels(photo)


def test_a_record_with_26_pictures_shows_16_and_the_rest_a_choice_away(
    monkeypatch, root, media
) -> None:
    at = start_app(monkeypatch, root, params={"file": "many.tfrecord", "record": "0"})
    no_crash(at)
    assert "**Pictures** · 16 of 26 shown" in [m.value for m in at.main.markdown]
    (part,) = [s for s in at.main.segmented_control if s.label.startswith("Pictures · 26")]
    assert part.options == ["1–16", "17–26"] and part.value == "1–16"
    rec = _record(root, "many.tfrecord", 0)
    stored = [_pixels(v) for v in rec.features["image/encoded"].values]
    first = [_pixels(media[img.value[0]][0]) for img in at.main.image]
    assert first == stored[:16]
    part.set_value("17–26").run()
    no_crash(at)
    assert "**Pictures** · 17–26 of 26 shown" in [m.value for m in at.main.markdown]
    rest = [_pixels(media[img.value[0]][0]) for img in at.main.image]
    assert rest == stored[16:]
    assert [_plain(img.captions[0]).split(" · ")[0] for img in at.main.image] == [
        f"image/encoded[{i}]" for i in range(16, 26)
    ]


def test_the_photo_is_the_main_picture_whatever_the_order_of_the_features(
    monkeypatch, root, media
) -> None:
    orders = [list(_record(root, "seg.tfrecord", n).features) for n in range(4)]
    assert orders[1][0] == SEG_KEY  # the class map comes first there
    assert len({tuple(o) for o in orders}) == 4  # four different orders of the same features
    drawn = []
    for n in range(4):
        at = start_app(monkeypatch, root, params={"file": "seg.tfrecord", "record": str(n)})
        no_crash(at)
        main, *others = at.main.image
        assert _plain(main.captions[0]).startswith("image/encoded · JPEG"), main.captions
        assert "class map" in _layers_words(at)
        assert at.toggle(key="tfb:w:layer:detail:class_map").value
        assert [_plain(o.captions[0]).split(" · ")[:2] for o in others] == [[SEG_KEY, "class map"]]
        drawn.append(_main_picture(at, media))
    assert len(set(drawn)) == 1
    rec = _record(root, "seg.tfrecord", 1)
    assert drawn[0] == _expected(rec)
    assert drawn[0] != _pixels(rec.features["image/encoded"].values[0])  # the map is laid over
    # The gallery: four identical tiles, the photo under its class map.
    at.switch_page(GALLERY).run()
    no_crash(at)
    tiles = _tiles(at, media)
    assert len(tiles) == 4 and len(set(tiles)) == 1


# -- the gallery -----------------------------------------------------------------------------


def _tile_pictures(at: AppTest, media: dict) -> list[bytes]:
    """The pictures the gallery's tiles show, in order, as sent: every tile has one."""
    tiles = gallery_tiles(at)
    assert all(t["src"] for t in tiles), [t.get("why") for t in tiles if not t["src"]]
    return [media[t["src"]][0] for t in tiles]


def _tiles(at: AppTest, media: dict) -> list[tuple[bytes, str]]:
    """What the gallery's tiles show, in order: the pixels of each picture and the layers
    the browser draws over it."""
    pictures = [_pixels(data) for data in _tile_pictures(at, media)]
    return list(zip(pictures, [tile_layers(t) for t in gallery_tiles(at)]))


def test_the_gallery_popover_threshold_redraws_the_tiles(monkeypatch, root, media) -> None:
    at = start_app(monkeypatch, root, params={"file": "pred.tfrecord"})
    at.switch_page(GALLERY).run()
    no_crash(at)
    assert not at.main.warning
    assert at.toggle(key="tfb:w:boxes:gallery").label == "Layers"
    usual = _tiles(at, media)
    assert len(usual) == N_PREDICTED
    recs = [_record(root, "pred.tfrecord", n) for n in range(N_PREDICTED)]
    drawn_at_half = [n for n, r in enumerate(recs) if max(_scores(r)) >= 0.5]
    assert drawn_at_half  # some tile has predictions to lose
    at.slider(key=GALLERY_SCORE).set_value(1.0).run()
    no_crash(at)
    assert _query(at, "score") == "1"
    strict = _tiles(at, media)
    assert len(strict) == N_PREDICTED
    for n in range(N_PREDICTED):
        assert (strict[n] != usual[n]) == (n in drawn_at_half), n
    # At 1.0 no prediction is drawn: the tiles are those with the predictions switched off.
    at.slider(key=GALLERY_SCORE).set_value(0.5).run()
    at.toggle(key="tfb:w:layer:gallery:predictions").set_value(False).run()
    no_crash(at)
    assert _tiles(at, media) == strict
    # The record view follows the gallery's settings (one setting per dataset).
    at.toggle(key="tfb:w:layer:gallery:predictions").set_value(True).run()
    at.slider(key=GALLERY_SCORE).set_value(0.0).run()
    no_crash(at)
    lenient = _tiles(at, media)
    assert all(a != b for a, b in zip(lenient, usual))  # every tile has a score below 0.5
    at.switch_page("ui/pages/records.py").run()
    no_crash(at)
    assert at.slider(key=SCORE).value == 0.0


def test_tensor_records_are_pictures_in_the_gallery_and_the_table(monkeypatch, root, media) -> None:
    at = start_app(monkeypatch, root, params={"file": "tensors.tfrecord"})
    no_crash(at)
    cells = at.dataframe[0].value["picture"].tolist()
    assert len(cells) == 4 and V.BROKEN_PICTURE not in cells
    assert all(Image.open(io.BytesIO(p or b"")).size for p in table_pictures(at, media))
    at.switch_page(GALLERY).run()
    no_crash(at)
    tiles = [Image.open(io.BytesIO(data)) for data in _tile_pictures(at, media)]
    assert len(tiles) == 4
    for tile in tiles:  # a picture, not a flat square
        assert np.asarray(tile.convert("L")).std() > 10


def test_16_bit_depth_pictures_have_no_broken_mark_in_the_table_and_a_stretched_tile(
    monkeypatch, root, media
) -> None:
    at = start_app(monkeypatch, root, params={"file": "depth.tfrecord"})
    no_crash(at)
    cells = at.dataframe[0].value["picture"].tolist()
    assert len(cells) == 3
    assert V.BROKEN_PICTURE not in cells
    assert all(Image.open(io.BytesIO(p or b"")).size for p in table_pictures(at, media))
    # The record whose only picture is the 16-bit depth map: its tile is stretched to 8 bits
    # (neither white nor black).
    at.switch_page(GALLERY).run()
    no_crash(at)
    assert not at.main.warning
    assert [t["record"] for t in gallery_tiles(at)] == [0, 1, 2]
    tile = Image.open(io.BytesIO(_tile_pictures(at, media)[2]))
    assert tile.mode in ("L", "RGB")
    grey = np.asarray(tile.convert("L"))
    assert 30 < grey.mean() < 225 and grey.std() > 20


def _shown_8_bit_in_colour(data: bytes) -> None:
    """``data`` is an 8-bit picture a browser shows with contrast, in a colour map."""
    img = Image.open(io.BytesIO(data))
    assert img.mode == "RGB", img.mode  # not I;16: a browser keeps the high byte, nearly black
    rgb = np.asarray(img).astype(int)
    assert rgb.std() > 20
    assert np.abs(rgb[..., 0] - rgb[..., 2]).mean() > 20  # a colour map, not grey


def test_a_16_bit_depth_map_alone_is_shown_stretched_in_colour_in_the_record_view(
    monkeypatch, root, media
) -> None:
    at = start_app(monkeypatch, root, params={"file": "depth.tfrecord", "record": "2"})
    no_crash(at)
    (shown,) = at.main.image
    assert "depth map" in _plain(shown.captions[0])
    _shown_8_bit_in_colour(media[shown.value[0]][0])


def test_a_16_bit_depth_map_alone_has_a_tile_in_colour(monkeypatch, root, media) -> None:
    at = start_app(monkeypatch, root, params={"file": "depth.tfrecord"})
    at.switch_page(GALLERY).run()
    no_crash(at)
    assert [t["record"] for t in gallery_tiles(at)] == [0, 1, 2]
    _shown_8_bit_in_colour(_tile_pictures(at, media)[2])
