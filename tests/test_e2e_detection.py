"""End to end, in headless Chromium: the generated Object Detection dataset with planted
problems (every kind of the schema's detection checks, a missing label, a label outside the
label map, a cut JPEG, damaged records). The Schema page lists each planted record with a
link that opens it; a record with a bad box shows the warning and its picture; the gallery
badges the tiles; the Filter page finds the planted records. Screenshots go to
``artifacts/``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import pytest
from browser_support import browser_fixture, no_errors, serve, settled, shot, wait_for_picture

from browser_app.sample_data import LABEL_MAP, PLANTS, write_detection_checks

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[int]]]:
    root = tmp_path_factory.mktemp("od")
    found = write_detection_checks(root / "od.tfrecord", 200)
    (root / "label_map.pbtxt").write_text(LABEL_MAP)
    return root, found


@pytest.fixture(scope="module")
def server(
    planted: tuple[Path, dict[str, list[int]]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    root, _ = planted
    yield from serve(tmp_path_factory, [str(root / "od.tfrecord"), "--root", str(root)])


browser = browser_fixture()


def test_schema_findings_link_to_each_planted_record(server, browser, planted) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    _, records = planted
    page = browser.new_page(viewport={"width": 1440, "height": 2200})
    page.goto(server + "/schema?file=od.tfrecord")
    expect(page.get_by_text("Pictures and boxes")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("is not in the label map")).to_be_visible()
    expect(page.get_by_test_id("stMetric").first).to_be_visible()
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    settled(page)
    no_errors(page)
    shot(page, "detection-schema.png", full_page=True)
    # Every planted record has a link on the page, and the links are to records only.
    hrefs = page.locator("a[href*='record=']").evaluate_all("els => els.map(e => e.href)")
    linked = {int(re.search(r"record=(\d+)", h).group(1)) for h in hrefs}  # type: ignore[union-attr]
    assert linked == set().union(*records.values())
    # A link opens the record (in a new tab: the findings stay open), with the warning
    # about its boxes and the picture.
    first = records["box_range"][0]
    link = page.locator(f"a[href$='record={first}']").first
    assert link.get_attribute("target") == "_blank"
    page.goto(urljoin(page.url, link.get_attribute("href")))
    expect(page.get_by_role("heading", name=f"Record {first}")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Boxes with problems")).to_be_visible(timeout=15_000)
    expect(page.get_by_text("a coordinate is outside [0, 1]").first).to_be_visible()
    wait_for_picture(page, ".st-key-tfb-pictures img")
    no_errors(page)
    shot(page, "detection-bad-box.png", full_page=True)
    page.close()


def test_a_nan_box_and_the_gallery(server, browser, planted) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    _, records = planted
    page = browser.new_page(viewport={"width": 1440, "height": 1800})
    nan = records["box_not_finite"][0]
    page.goto(f"{server}/?file=od.tfrecord&record={nan}")
    expect(page.get_by_role("heading", name=f"Record {nan}")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("a coordinate is not a finite number").first).to_be_visible()
    no_errors(page)
    page.goto(f"{server}/gallery?file=od.tfrecord&size=50")
    expect(page.get_by_text("bad box").first).to_be_visible(timeout=60_000)
    tiles = page.locator(".tfb-gallery .tfb-tile[data-record]")
    expect(tiles).to_have_count(50, timeout=30_000)
    shown = {int(r) for r in tiles.evaluate_all("ts => ts.map(t => t.dataset.record)")}
    bad = {r for k in ("box_range", "box_not_finite", "box_inverted") for r in records[k]}
    badged = {
        int(r)
        for r in page.locator(".tfb-gallery .tfb-tile").evaluate_all(
            """ts => ts.filter(t => [...t.querySelectorAll(".tfb-badge")]
                     .some(b => /\\d+ bad box/.test(b.textContent)))
                   .map(t => t.dataset.record)"""
        )
    }
    assert badged == bad & shown, (badged, bad & shown)
    no_errors(page)
    shot(page, "detection-gallery.png", full_page=True)
    page.close()


def test_filter_finds_the_planted_boxes(server, browser, planted) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    _, records = planted
    page = browser.new_page(viewport={"width": 1440, "height": 1400})
    page.goto(f"{server}/filter?file=od.tfrecord")
    box = page.get_by_role("textbox", name="Filter expression")
    expect(box).to_be_visible(timeout=60_000)
    box.fill(PLANTS["box_inverted"])
    box.press("Enter")
    n = len(records["box_inverted"])
    expect(page.get_by_text(f"{n} matching records")).to_be_visible(timeout=30_000)
    box.fill("image/object/class/lable > 5")
    box.press("Enter")
    expect(page.get_by_text("did you mean")).to_be_visible(timeout=30_000)
    no_errors(page)
    shot(page, "detection-filter.png", full_page=True)
    page.close()
