"""End to end, in headless Chromium: the layers over a record's picture, on a folder of
generated files (COCO with masks and keypoints, ``infer_detections`` output with masks,
keypoints and ground truth, a DeepLab class map). The record view names its layers, and the
"Score threshold" slider, moved with the keyboard, redraws the predictions and says how many
it hides; the gallery's "Layer settings" popover redraws the tiles. Screenshots go to ``artifacts/``
(``layers-*.png``): the record view, the main picture in the full view (masks tinted in their
class colours with outlines, keypoints with the skeleton, predictions dashed with scores),
the class map blended over the photo with its void border hatched, and the gallery before
and after the threshold."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    browser_fixture,
    no_errors,
    serve,
    settled,
    shot,
    until,
    wait_for_picture,
)

from browser_app import generators as G
from codec import example as ex

pytestmark = [pytest.mark.browser, pytest.mark.slow]

N_PREDICTED = 12
PICTURES = ".st-key-tfb-pictures img"
TILES = ".st-key-tfb-gallery img"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("layers")
    # Record 0 is the astronaut: a person (17 keypoints) and the shuttle, with masks.
    G.write(
        r / "pred.tfrecord",
        [
            G.predictions(0, photo="astronaut", masks=True, keypoints=True),
            *G.records(
                G.predictions, N_PREDICTED - 1, seed=1, masks=True, keypoints=True, max_side=480
            ),
        ],
    )
    G.write(r / "coco.tfrecord", G.records(G.coco, 2, photo="astronaut"))
    G.write(r / "seg.tfrecord", [G.segmentation(0, photo="astronaut")])
    return r


@pytest.fixture(scope="module")
def server(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve(tmp_path_factory, [str(root / "pred.tfrecord"), "--root", str(root)])


browser = browser_fixture()


def _scores(root: Path) -> list[list[float]]:
    from codec import TFRecordDataset

    with TFRecordDataset(str(root / "pred.tfrecord")) as ds:
        recs = [ex.decode(s.payload or b"", "auto") for s in ds.page(0, N_PREDICTED)]
    return [[float(v) for v in r.features["image/detection/score"].values] for r in recs]


def _hidden(scores: list[float], threshold: float) -> str:
    below = sum(s < threshold for s in scores)
    return f"{below} predictions of 20 scored below {threshold:g} and are hidden."


def _src(page: Any, selector: str) -> list[str]:
    return list(page.locator(selector).evaluate_all("els => els.map(e => e.getAttribute('src'))"))


_LOOKS = """() => [...document.querySelectorAll('.st-key-tfb-gallery .tfb-tile')].map(t => {
  const img = t.querySelector('img:not(.tfb-layers)'), cv = t.querySelector('.tfb-layers');
  if (t.dataset.layers === 'drawing') return null;
  return (img ? img.getAttribute('src') : '') + '|' + (cv && !cv.hidden ? cv.dataset.key : '');
})"""


def _looks(page: Any) -> list[str | None]:
    """What each gallery tile shows: its picture and the layers the browser drew over it
    (None while they are being drawn)."""
    return list(page.evaluate(_LOOKS))


def _move(page: Any, slider: Any, key: str, value: str) -> None:
    """Press ``key`` on ``slider`` (a Locator) once the app is idle, and wait until the
    slider shows ``value`` and the run it started is over."""
    from playwright.sync_api import expect

    settled(page)
    slider.press(key)
    expect(slider).to_have_attribute("aria-valuetext", value)
    settled(page)


# The labels of the record view's layer switches that a reader sees whole: not squeezed to
# nothing, not cut, not beyond the layers' column.
_READABLE_SWITCHES = """els => els.filter(e => {
  const t = e.querySelector('[data-testid="stMarkdownContainer"]');
  const box = e.closest(".st-key-tfb-layers").getBoundingClientRect();
  const r = t.getBoundingClientRect();
  return r.width > 0 && t.scrollWidth <= t.clientWidth + 1 && r.right <= box.right + 1;
}).map(e => e.innerText.trim())"""


def _readable_switches(page: Any) -> list[str]:
    switches = page.locator(".st-key-tfb-layers").get_by_test_id("stCheckbox")
    return list(switches.evaluate_all(_READABLE_SWITCHES))


def _switch(page: Any, label: str) -> Any:
    """The switch of the record view's layer ``label``, found by the text a reader sees
    beside it."""
    return (
        page.locator(".st-key-tfb-layers")
        .get_by_test_id("stCheckbox")
        .filter(has_text=re.compile(f"^{label}$"))
    )


def _full_view(page: Any, name: str) -> None:
    """Open the main picture's full view, screenshot it into ``artifacts/name``, close it."""
    from playwright.sync_api import expect

    page.locator(".st-key-tfb-pictures").get_by_role("button", name="Full view").first.click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_text("the whole picture")).to_be_visible(timeout=30_000)
    wait_for_picture(page, ".st-key-tfb-fullview img", least=400, timeout=30_000)
    shot(page, name, target=page.locator(".st-key-tfb-fullview img"))
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)


def test_record_view_threshold_by_keyboard_redraws_the_predictions(
    server: str, browser: Any, root: Path
) -> None:
    from playwright.sync_api import expect

    scores = _scores(root)[0]
    page = browser.new_page(viewport={"width": 1440, "height": 1800})
    page.goto(f"{server}/?file=pred.tfrecord&record=0")
    expect(page.get_by_role("heading", name="Record 0")).to_be_visible(timeout=60_000)
    wait_for_picture(page, PICTURES, least=100, timeout=30_000)
    layers = page.locator(".st-key-tfb-layers")
    kept = 20 - sum(s < 0.5 for s in scores)
    expect(layers.get_by_text(f"{kept} of 20 predictions (score ≥ 0.5)")).to_be_visible()
    expect(layers.get_by_text(re.compile(r"\d+ masks? ·"))).to_be_visible()
    expect(layers.get_by_text(re.compile(r"\d+ keypoints"))).to_be_visible()
    for label in ("Boxes", "Predictions", "Masks", "Keypoints"):  # each switch says its name
        expect(_switch(page, label)).to_be_visible()

    def readable() -> None:
        assert _readable_switches(page) == ["Boxes", "Predictions", "Masks", "Keypoints"]

    until(readable, what="every layer switch's label shown whole")
    expect(layers.get_by_text(_hidden(scores, 0.5))).to_be_visible()
    no_errors(page)
    settled(page)
    before = _src(page, PICTURES)[0]
    # Three steps down with the arrow key (0.05 each): more predictions drawn, fewer hidden.
    slider = page.get_by_role("slider", name="Score threshold")
    for value in ("0.45", "0.40", "0.35"):
        _move(page, slider, "ArrowLeft", value)
    assert sum(s < 0.35 for s in scores) < sum(s < 0.5 for s in scores)
    expect(layers.get_by_text(_hidden(scores, 0.35))).to_be_visible()
    kept = 20 - sum(s < 0.35 for s in scores)
    expect(layers.get_by_text(f"{kept} of 20 predictions (score ≥ 0.35)")).to_be_visible()
    until(lambda: _src(page, PICTURES)[0] != before, what="the picture redrawn")
    no_errors(page)
    shot(page, "layers-record.png", full_page=True)
    _full_view(page, "layers-record-full-view.png")
    # End: every prediction hidden, the picture drawn again.
    at_35 = _src(page, PICTURES)[0]
    _move(page, slider, "End", "1.00")
    expect(layers.get_by_text(_hidden(scores, 1.0))).to_be_visible()
    expect(layers.get_by_text("0 of 20 predictions (score ≥ 1)")).to_be_visible()
    until(lambda: _src(page, PICTURES)[0] not in (before, at_35), what="the picture redrawn")
    # The threshold is the dataset's: the next record keeps it, and so does its link.
    page.get_by_role("button", name="Next record").click()
    expect(page.get_by_role("heading", name="Record 1")).to_be_visible()
    expect(page.get_by_role("slider", name="Score threshold")).to_have_attribute(
        "aria-valuetext", "1.00"
    )
    expect(page).to_have_url(re.compile(r"[?&]score=1(&|$)"))
    no_errors(page)
    page.close()


def test_the_address_bar_carries_the_threshold_as_soon_as_it_moves(
    server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1200})
    try:
        page.goto(f"{server}/?file=pred.tfrecord&record=2")
        expect(page.get_by_role("heading", name="Record 2")).to_be_visible(timeout=60_000)
        _move(page, page.get_by_role("slider", name="Score threshold"), "ArrowRight", "0.55")
        expect(page).to_have_url(re.compile(r"[?&]score=0\.55(&|$)"), timeout=5_000)
    finally:
        page.close()


def test_coco_masks_and_keypoints_and_a_class_map_over_the_photo(server: str, browser: Any) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1800})
    page.goto(f"{server}/?file=coco.tfrecord&record=0")
    expect(page.get_by_role("heading", name="Record 0")).to_be_visible(timeout=60_000)
    layers = page.locator(".st-key-tfb-layers")
    expect(
        layers.get_by_text(re.compile(r"Layers · 2 masks · 2 boxes · \d+ keypoints"))
    ).to_be_visible()
    expect(_switch(page, "Keypoints")).to_be_visible()
    assert layers.get_by_role("slider", name="Score threshold").count() == 0  # no predictions
    wait_for_picture(page, PICTURES, least=100, timeout=30_000)
    no_errors(page)
    _full_view(page, "layers-coco-full-view.png")
    # The class map: the photo is the main picture, the map blended over it, void hatched.
    page.goto(f"{server}/?file=seg.tfrecord&record=0")
    expect(page.get_by_role("heading", name="Record 0")).to_be_visible(timeout=60_000)
    layers = page.locator(".st-key-tfb-layers")
    expect(layers.get_by_text(re.compile(r"class map: \d+ class"))).to_be_visible()
    expect(layers.get_by_text("void (255)")).to_be_visible()
    expect(
        page.locator(".st-key-tfb-pictures").get_by_text(re.compile(r"^image/encoded · JPEG"))
    ).to_be_visible()
    wait_for_picture(page, PICTURES, least=100, timeout=30_000)
    no_errors(page)
    shot(page, "layers-class-map-record.png", full_page=True)
    _full_view(page, "layers-class-map-full-view.png")
    page.close()


def _drawn(page: Any) -> list[str]:
    looks = _looks(page)
    assert looks and None not in looks, looks
    return [x for x in looks if x is not None]


def test_gallery_layers_popover_threshold_redraws_the_tiles(
    server: str, browser: Any, root: Path
) -> None:
    from playwright.sync_api import expect

    scores = _scores(root)
    losing = [n for n, s in enumerate(scores) if max(s) >= 0.5]  # tiles with predictions drawn
    assert losing
    page = browser.new_page(viewport={"width": 1440, "height": 1100})
    page.goto(f"{server}/gallery?file=pred.tfrecord")
    tiles = page.locator(TILES)
    expect(tiles).to_have_count(N_PREDICTED, timeout=60_000)
    page.wait_for_function(
        f"() => [...document.querySelectorAll('{TILES}')]"
        ".every(i => i.complete && i.naturalWidth > 0)",
        timeout=30_000,
    )
    no_errors(page)
    grid = page.locator(".st-key-tfb-gallery")
    shot(page, "layers-gallery.png", target=grid)
    before = until(lambda: _drawn(page), what="every tile's layers drawn")
    page.get_by_role("button", name="Layer settings", exact=True).click()
    slider = page.get_by_role("slider", name="Score threshold")
    expect(slider).to_be_visible()
    _move(page, slider, "End", "1.00")

    def redrawn() -> None:
        after = _drawn(page)
        assert len(after) == N_PREDICTED
        assert [n for n in range(N_PREDICTED) if after[n] != before[n]] == losing

    until(redrawn, what="the tiles with predictions redrawn")
    expect(tiles).to_have_count(N_PREDICTED)
    no_errors(page)
    shot(page, "layers-gallery-popover.png")
    page.keyboard.press("Escape")  # the popover closes: the tiles in full view
    expect(slider).to_have_count(0)
    assert until(lambda: _drawn(page), what="the layers drawn") != before
    shot(page, "layers-gallery-threshold-1.png", target=grid)
    page.close()
