"""Pictures with boxes in the app (AppTest): the legend under the record's picture and its
class switches (record view and gallery), the full view dialog with zoom and pan, and what
becomes of the boxes when the editor replaces a picture. One browser test takes the
screenshots in ``artifacts/``: the record view with its legend, the full view at 200 % and
the gallery with a class hidden."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from app_support import gallery_tiles, start_app, tile_layers
from PIL import Image
from streamlit.testing.v1 import AppTest
from test_app_edit import button, harness, journal_for, media, no_crash, png, root, texts

from browser_app import view as V
from browser_app.sample_data import draw_scene, encode_picture
from browser_app.view import pictures as P
from codec import detection
from codec import example as ex
from codec.writer import write_records

__all__ = ["media", "root"]  # fixtures used here

SIZE = (320, 240)
CLASSES = [("cat", 1), ("dog", 2), ("cat", 1), ("bird", 3)]


def _payload(objects: list[tuple[tuple[str, int], tuple[float, float, float, float]]]) -> bytes:
    img = Image.new("RGB", SIZE, (200, 210, 190))
    return ex.encode_example(
        {
            "image/encoded": ("bytes", [encode_picture(img, "png")]),
            "image/format": ("bytes", [b"png"]),
            "image/width": ("int64", [SIZE[0]]),
            "image/height": ("int64", [SIZE[1]]),
            **{
                f"image/object/bbox/{side}": ("float", [b[k] for _, b in objects])
                for k, side in enumerate(detection.BBOX)
            },
            "image/object/class/text": ("bytes", [t.encode() for (t, _), _ in objects]),
            "image/object/class/label": ("int64", [lb for (_, lb), _ in objects]),
        }
    )


def _objects(shift: float) -> list[tuple[tuple[str, int], tuple[float, float, float, float]]]:
    return [
        (key, (0.05 + 0.2 * k + shift, 0.2, 0.2 + 0.2 * k + shift, 0.6 + 0.05 * k))
        for k, key in enumerate(CLASSES)
    ]


@pytest.fixture
def boxes_root(tmp_path: Path) -> Path:
    r = tmp_path / "pics"
    r.mkdir()
    write_records(str(r / "boxes.tfrecord"), [_payload(_objects(0.02 * i)) for i in range(4)])
    return r


def _record(root: Path, n: int) -> ex.Record:
    from codec import TFRecordDataset

    with TFRecordDataset(str(root / "boxes.tfrecord")) as ds:
        return ex.decode(ds.page(n, n + 1)[0].payload or b"", "auto")


def _switches(at: AppTest) -> dict[str, object]:
    """The class switches by label as a reader sees it (Markdown escapes undone)."""
    return {
        re.sub(r"\\(.)", r"\1", c.label): c
        for c in at.main.checkbox
        if (c.key or "").startswith("tfb:w:class:")
    }


def _shown(data: bytes) -> bytes:
    return Image.open(io.BytesIO(data)).convert("RGB").tobytes()


def test_legend_lists_each_class_and_its_switch_hides_it_here_and_in_the_gallery(
    monkeypatch, boxes_root, media
) -> None:
    at = start_app(monkeypatch, boxes_root, params={"file": "boxes.tfrecord", "record": "1"})
    no_crash(at)
    switches = _switches(at)
    assert list(switches) == ["cat (1) · 2 boxes", "dog (2) · 1 box", "bird (3) · 1 box"]
    assert all(c.value for c in switches.values())
    assert "4 boxes" in at.main.image[0].captions[0]
    rec = _record(boxes_root, 1)
    drawn = media[at.main.image[0].value[0]][0]
    assert _shown(drawn) == _shown(V.record_pictures(rec, normalized=True)[0].data or b"")
    # Hide "cat": the record's picture is drawn without the cats.
    switches["cat (1) · 2 boxes"].uncheck().run()  # type: ignore[attr-defined]
    no_crash(at)
    assert not _switches(at)["cat (1) · 2 boxes"].value  # type: ignore[attr-defined]
    hidden = {("cat", 1)}
    drawn = media[at.main.image[0].value[0]][0]
    expected = V.record_pictures(rec, normalized=True, hidden=hidden)[0]
    assert "2 boxes (2 more boxes hidden)" in at.main.image[0].captions[0]
    assert _shown(drawn) == _shown(expected.data or b"")
    # The gallery's tiles leave the cats out too.
    at.switch_page("ui/pages/gallery.py").run()
    no_crash(at)
    tiles = gallery_tiles(at)
    assert [t["record"] for t in tiles] == [0, 1, 2, 3]
    for n, tile in enumerate(tiles):
        want = V.thumbnail(
            _record(boxes_root, n),
            160,
            captions=True,
            normalized=True,
            hidden=hidden,
            in_browser=True,
        )
        assert want is not None and _shown(media[tile["src"]][0]) == _shown(want.data)
        assert tile_layers(tile) == tile_layers({"layers": want.overlay})
    assert any(tile_layers(t) for t in tiles)  # the boxes left are drawn over the pictures
    # Back on the record, "Show all" brings the cats back.
    at.switch_page("ui/pages/records.py").run()
    button(at, "Show all").click().run()
    no_crash(at)
    assert all(c.value for c in _switches(at).values())  # type: ignore[attr-defined]


def test_full_view_opens_large_with_zoom_and_pan(monkeypatch, boxes_root, media) -> None:
    at = start_app(monkeypatch, boxes_root, params={"file": "boxes.tfrecord", "record": "0"})
    no_crash(at)
    assert not [s for s in at.segmented_control if s.label == "Zoom"]
    button(at, "Full view").click().run()
    no_crash(at)
    (zoom,) = [s for s in at.segmented_control if s.label == "Zoom"]
    assert zoom.value == "Fit" and not at.slider
    fitted = Image.open(io.BytesIO(media[at.image[-1].value[0]][0]))
    scale = min(P.FULL_VIEW[0] / SIZE[0], P.FULL_VIEW[1] / SIZE[1])
    assert fitted.size == (round(SIZE[0] * scale), round(SIZE[1] * scale))  # enlarged to fit
    assert "the whole picture" in texts(at.caption)
    zoom.set_value("400 %").run()
    no_crash(at)
    across, down = at.slider
    assert (across.label, down.label) == ("Across", "Down")
    across.set_value(0).run()
    down.set_value(100).run()
    no_crash(at)
    shown = Image.open(io.BytesIO(media[at.image[-1].value[0]][0]))
    assert shown.size == P.FULL_VIEW  # at 400 % the picture is larger than the view: it fills it
    rec = _record(boxes_root, 0)
    want = P.full_view(rec, "image/encoded", 0, 4.0, (0.0, 1.0), normalized=True)
    assert want.region[0] == 0 and want.region[3] == SIZE[1]
    assert _shown(media[at.image[-1].value[0]][0]) == _shown(want.data or b"")
    assert "400%" in texts(at.caption) and "pixels 0–" in texts(at.caption)
    # Moving to another record closes it.
    button(at, "Next record").click().run()
    no_crash(at)
    assert "Record 1" in texts(at.main.markdown)
    assert not [s for s in at.segmented_control if s.label == "Zoom"]


# -- replacing a picture that has boxes ------------------------------------------------------


def _choice_texts(at: AppTest) -> str:
    return texts(at.warning)


def test_replacing_a_picture_with_boxes_asks_and_clearing_is_one_undoable_group(
    monkeypatch, root
) -> None:
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    with journal_for(root, "detection.tfrecord") as j:
        before = j.effective_record(0)
    assert before is not None
    old = Image.open(io.BytesIO(before.features["image/encoded"].values[0]))
    new = png(old.width + 10, old.height)
    at.file_uploader[0].set_value(("bigger.png", new, "image/png")).run()
    no_crash(at)
    said = _choice_texts(at)
    assert "has 1 box" in said or "boxes." in said
    assert f"The new picture is {old.width + 10}×{old.height}" in said
    assert f"the old one was {old.width}×{old.height}" in said
    assert "normalised" in said and "keep their meaning" in said
    with journal_for(root, "detection.tfrecord") as j:
        assert not j.changes()  # nothing saved before the choice
    button(at, "Clear the boxes").click().run()
    no_crash(at)
    assert "Cleared its" in texts(at.success) + texts(at.warning)
    with journal_for(root, "detection.tfrecord") as j:
        changes = j.changes()
        rec = j.effective_record(0)
        assert rec is not None and rec.features["image/encoded"].values == [new]
        layout = detection.layouts(before.features)[0]
        for name in layout.parallel:
            assert rec.features[name].values == [], name
        assert len(changes) == 1 + len(layout.parallel)
    # One Undo undoes the whole group: the old picture and its boxes are back.
    (undo,) = [b for b in at.button if b.label == "Undo"]
    undo.click().run()
    no_crash(at)
    assert f"Undone ({len(changes)} changes)" in texts(at.info)
    with journal_for(root, "detection.tfrecord") as j:
        assert j.pending == 0 and j.effective_record(0) == before


def test_keeping_the_boxes_is_one_change_and_edit_opens_the_box_table(monkeypatch, root) -> None:
    at = harness(monkeypatch, root, "detection.tfrecord", 1)
    with journal_for(root, "detection.tfrecord") as j:
        before = j.effective_record(1)
    assert before is not None
    old = Image.open(io.BytesIO(before.features["image/encoded"].values[0]))
    same = png(old.width, old.height)
    at.file_uploader[0].set_value(("same.png", same, "image/png")).run()
    assert "same size as the old one" in _choice_texts(at)
    button(at, "Keep the boxes").click().run()
    no_crash(at)
    with journal_for(root, "detection.tfrecord") as j:
        assert len(j.changes()) == 1
        rec = j.effective_record(1)
        assert rec is not None and rec.features["image/encoded"].values == [same]
        assert rec.features["image/object/bbox/xmin"] == before.features["image/object/bbox/xmin"]
    # Edit: the picture is replaced and the boxes open as a table, one row per box.
    other = png(old.width, old.height + 4)
    at.file_uploader[0].set_value(("taller.png", other, "image/png")).run()
    button(at, "Edit the boxes").click().run()
    no_crash(at)
    table = at.data_editor[-1]
    frame = table.value
    n = len(before.features["image/object/bbox/xmin"].values)
    assert list(frame.columns)[:6] == [
        "bbox/xmin",
        "bbox/ymin",
        "bbox/xmax",
        "bbox/ymax",
        "class/text",
        "class/label",
    ]
    assert len(frame) == n
    # An edited cell is saved as the new list of that feature.
    at.session_state[table.key] = {
        "edited_rows": {0: {"bbox/xmin": 0.125, "class/text": "fox"}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    no_crash(at)
    assert "Saved the boxes (2 object lists changed)" in texts(at.success) + texts(at.warning)
    with journal_for(root, "detection.tfrecord") as j:
        rec = j.effective_record(1)
        assert rec is not None
        assert rec.features["image/object/bbox/xmin"].values[0] == 0.125
        assert rec.features["image/object/class/text"].values[0] == b"fox"
        assert rec.features["image/encoded"].values == [other]


def test_pixel_boxes_are_said_to_be_misplaced(monkeypatch, tmp_path) -> None:
    root = tmp_path / "px"
    root.mkdir()
    import random

    img, shapes = draw_scene(random.Random(1), 200, 150)
    payload = ex.encode_example(
        {
            "image/encoded": ("bytes", [encode_picture(img, "png")]),
            **{
                f"image/object/bbox/{side}": ("float", [float(s.box[k]) for s in shapes])
                for k, side in enumerate(detection.BBOX)
            },
        }
    )
    write_records(str(root / "px.tfrecord"), [payload] * 3)
    at = harness(monkeypatch, root, "px.tfrecord", 0)
    at.file_uploader[0].set_value(("small.png", png(100, 75), "image/png")).run()
    no_crash(at)
    said = _choice_texts(at)
    assert "The new picture is 100×75; the old one was 200×150." in said
    assert "in pixels" in said and "misplaced" in said
    button(at, "Cancel").click().run()
    no_crash(at)
    assert "misplaced" not in _choice_texts(at)
    with journal_for(root, "px.tfrecord") as j:
        assert not j.changes()


# -- in Chromium: the screenshots ------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.slow
def test_screenshots_of_legend_full_view_and_gallery(tmp_path: Path) -> None:
    import random

    from browser_support import (
        ARTIFACTS,
        chromium,
        need_chromium,
        running_server,
        wait_for_picture,
    )
    from playwright.sync_api import expect

    from browser_app.sample_data import detection_payload

    need_chromium()
    rng = random.Random(3)
    write_records(
        str(tmp_path / "scenes.tfrecord"),
        [detection_payload(rng, i, "jpeg", (640, 480)) for i in range(12)],
    )
    ARTIFACTS.mkdir(exist_ok=True)
    args = [str(tmp_path / "scenes.tfrecord"), "--root", str(tmp_path)]
    with running_server(args, tmp_path) as url, chromium() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 1500})
        page.goto(url + "/?file=scenes.tfrecord&record=1")
        expect(page.get_by_role("heading", name="Record 1")).to_be_visible(timeout=60_000)
        wait_for_picture(page, ".st-key-tfb-pictures img", timeout=30_000)
        legend = page.locator(".st-key-tfb-legend")
        expect(legend.get_by_text("square (2) · 1 box")).to_be_visible()
        page.locator(".st-key-tfb-pictures").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "pictures-record-legend.png"))
        # The full view at 200 %: the picture's middle, boxes in thin lines.
        page.get_by_role("button", name="Full view").click()
        dialog = page.get_by_role("dialog")
        expect(dialog.get_by_text("the whole picture")).to_be_visible(timeout=15_000)
        dialog.get_by_text("200 %", exact=True).click()
        expect(dialog.get_by_text("200% · pixels")).to_be_visible(timeout=15_000)
        wait_for_picture(page, ".st-key-tfb-fullview img", timeout=30_000)
        size = page.locator(".st-key-tfb-fullview img").evaluate(
            "i => [i.naturalWidth, i.naturalHeight]"
        )
        assert size == list(P.FULL_VIEW)
        page.screenshot(path=str(ARTIFACTS / "pictures-full-view-200.png"))
        page.keyboard.press("Escape")
        expect(dialog).to_have_count(0, timeout=15_000)
        # Hide "square": the gallery's tiles lose their squares' boxes.
        legend.get_by_text("square (2) · 1 box").click()
        expect(
            page.locator(".st-key-tfb-legend").get_by_role("button", name="Show all")
        ).to_be_visible(timeout=15_000)
        page.get_by_role("link", name="Gallery").click()
        expect(page.locator(".st-key-tfb-gallery img")).to_have_count(12, timeout=60_000)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.st-key-tfb-gallery img')]"
            ".every(i => i.complete && i.naturalWidth > 0)",
            timeout=30_000,
        )
        assert page.get_by_test_id("stException").count() == 0
        page.screenshot(path=str(ARTIFACTS / "pictures-gallery-square-hidden.png"))
