"""End to end, in headless Chromium: a TFDS dataset (the VOC-like one the generators write,
over the packaged photographs) opened as ``tfrecord-browser view DATASET_FOLDER``. The Overview
describes it (name, config, version, description, its splits with declared and counted
records) and opens another split when one is chosen, the link following; the gallery shows
that split's records; the Statistics page compares two splits side by side. Screenshots go
to ``artifacts/tfds-*.png``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from browser_support import browser_fixture, no_errors, serve, settled, shot, until

from browser_app.generators import tfds as G
from codec.tfds import open_split_folder

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FOLDER = "data/voc"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("tfds_e2e")
    G.write_detection(r / "data")
    return r


@pytest.fixture(scope="module")
def declared(root: Path) -> dict[str, int]:
    found = open_split_folder(str(root / FOLDER))
    assert found is not None
    return {s.name: int(s.declared_total or 0) for s in found.splits}


@pytest.fixture(scope="module")
def server(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve(tmp_path_factory, [str(root / FOLDER), "--root", str(root)])


browser = browser_fixture()


def _file_param(url: str) -> str:
    return parse_qs(urlparse(url).query).get("file", [""])[0]


def test_the_overview_describes_the_dataset_and_switches_splits(  # type: ignore[no-untyped-def]
    server, browser, declared
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 2000})
    page.goto(server + "/overview")
    expect(page.get_by_text("PASCAL VOC-like object detection")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("config 2007")).to_be_visible()
    radio = page.get_by_test_id("stRadio")
    train = declared["train"]
    expect(radio.get_by_text(f"train · {train:,} records")).to_be_visible(timeout=30_000)
    expect(radio.get_by_text(f"test · {declared['test']:,} records")).to_be_visible()
    expect(page.get_by_text("The metadata and the files agree")).to_be_visible()
    settled(page)
    no_errors(page)
    assert _file_param(page.url) == FOLDER
    shot(page, "tfds-overview.png")

    target = f"{FOLDER}:validation"

    def choose() -> None:
        # A click that lands while the page reruns (its split counts coming in) can be lost:
        # click again until the link follows, never more once it has.
        if _file_param(page.url) != target:
            radio.get_by_text(re.compile(r"^validation · ")).click(timeout=5_000)
        until(
            lambda: _check(_file_param(page.url) == target, page.url),
            timeout=10,
            what="the link carries the split",
        )

    until(choose, timeout=60, what="choose the validation split")
    n = declared["validation"]
    expect(page.get_by_text(f"{n:,} record", exact=False).first).to_be_visible(timeout=30_000)
    settled(page)
    no_errors(page)
    shot(page, "tfds-overview-validation.png")
    page.close()


def _check(ok: bool, detail: str) -> None:
    assert ok, detail


def test_the_gallery_of_a_split(server, browser, declared) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1600})
    page.goto(f"{server}/gallery?file={FOLDER}:test")
    tiles = page.get_by_role("button", name=re.compile(r"^#\d+"))
    expect(tiles).to_have_count(declared["test"], timeout=60_000)
    settled(page)
    no_errors(page)
    shot(page, "tfds-gallery-test.png")
    page.close()


def test_gallery_captions_name_the_classes(server, browser) -> None:  # type: ignore[no-untyped-def]
    """A tile's caption names its record's classes from the dataset's labels files, and its
    boxes are drawn from the BBoxFeature (looked at in the screenshot)."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1600})
    page.goto(f"{server}/gallery?file={FOLDER}:train")
    names = "|".join(G.VOC_LABELS)
    named = page.get_by_role("button", name=re.compile(rf"^#\d+ · ({names})\b"))
    expect(named.first).to_be_visible(timeout=60_000)
    settled(page)
    no_errors(page)
    shot(page, "tfds-gallery-train.png")
    page.close()


def test_statistics_compare_two_splits(server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 2000})
    page.goto(f"{server}/statistics?file={FOLDER}:train")
    toggle = page.get_by_text("Compare train with another split")
    expect(toggle).to_be_visible(timeout=60_000)
    settled(page)
    until(lambda: toggle.click(timeout=5_000), what="turn the comparison on")
    expect(page.get_by_text("L-infinity distance: the largest difference")).to_be_visible(
        timeout=60_000
    )
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible(timeout=30_000)
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    settled(page)
    no_errors(page)
    shot(page, "tfds-statistics-compare.png")
    page.close()
