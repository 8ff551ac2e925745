"""End to end: the real server (started the way a person starts it) in headless Chromium.

Uses Debian's chromium (``/usr/bin/chromium``; ``scripts/check.sh`` installs it). Without it
the test is skipped locally and FAILS in CI (``CI=true``). Screenshots go to ``artifacts/``;
the README's ``assets/screenshot-records.png`` is written when missing or when
``UPDATE_SCREENSHOTS=1``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from browser_support import (
    REPO,
    browser_fixture,
    go_to_record,
    no_errors,
    serve,
    settled,
    shot,
    wait_for_picture,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

README_SHOT = REPO / "assets" / "screenshot-records.png"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m browser_app view`` with no paths: the bundled sample, as a person runs it."""
    yield from serve(tmp_path_factory, [])


browser = browser_fixture()


def _cell(grid, col: int, row: int):  # type: ignore[no-untyped-def]
    # Column 0 is the row selector; 1 is "#", 2 is "status".
    return grid.get_by_test_id(f"glide-cell-{col}-{row}").first


def test_browse_the_sample(server: str, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1500})
    page.goto(server)
    grid = page.get_by_test_id("stDataFrame").first
    expect(_cell(grid, 1, 0)).to_have_text("0", timeout=30_000)
    expect(page.get_by_text("detection.tfrecord").first).to_be_visible()
    expect(_cell(grid, 2, 0)).to_have_text("✓ intact")

    # Page forward: the first row becomes record 25 and the URL follows.
    page.get_by_role("button", name="Next", exact=True).click()
    expect(_cell(grid, 1, 0)).to_have_text("25", timeout=15_000)
    page.wait_for_url("**record=25**", timeout=10_000)

    # Jump to a record: its detail appears, with its picture rendered by the browser.
    go_to_record(page, 42)
    expect(page.get_by_role("heading", name="Record 42")).to_be_visible(timeout=15_000)
    picture = page.locator(".st-key-tfb-pictures img").first
    expect(picture).to_be_visible(timeout=15_000)
    wait_for_picture(page, ".st-key-tfb-pictures img", least=96)
    no_errors(page)
    shot(page, "e2e-records.png")

    # The README's picture: the records page at a record with several boxes.
    if not README_SHOT.exists() or os.environ.get("UPDATE_SCREENSHOTS") == "1":
        readme = browser.new_page(viewport={"width": 1440, "height": 1300})
        readme.goto(server + "/?file=detection.tfrecord&record=6&size=10")
        expect(readme.get_by_role("heading", name="Record 6")).to_be_visible(timeout=30_000)
        wait_for_picture(readme, ".st-key-tfb-pictures img")
        settled(readme)
        readme.screenshot(path=str(README_SHOT))
        readme.close()
    page.close()


def test_damaged_record_is_flagged(server: str, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1500})
    page.goto(server)
    path = page.get_by_label("TFRecord path", exact=True)
    expect(path).to_be_visible(timeout=30_000)
    path.fill("damaged.tfrecord")
    path.press("Enter")
    grid = page.get_by_test_id("stDataFrame").first
    expect(_cell(grid, 2, 5)).to_have_text("✗ damaged: data CRC fails", timeout=15_000)
    expect(_cell(grid, 2, 9)).to_contain_text("skipped")
    # Found by searching past the junk: recovered, not intact.
    expect(_cell(grid, 2, 10)).to_contain_text("recovered")
    expect(_cell(grid, 2, 4)).to_have_text("✓ intact")

    # The deep link reopens the damaged record's view in a fresh session.
    page.goto(server + "/?file=damaged.tfrecord&record=5")
    expect(page.get_by_text("Record 5 is damaged")).to_be_visible(timeout=30_000)
    grid = page.get_by_test_id("stDataFrame").first
    expect(_cell(grid, 2, 5)).to_have_text("✗ damaged: data CRC fails", timeout=15_000)
    settled(page)
    no_errors(page)
    shot(page, "e2e-damaged.png")

    # The gallery shows the pictures around it.
    page.get_by_role("link", name="Gallery").click()
    expect(page.get_by_role("heading", name="Gallery")).to_be_visible(timeout=15_000)
    expect(page.locator(".st-key-tfb-gallery img").first).to_be_visible(timeout=15_000)
    expect(page.locator(".st-key-tfb-gallery img")).to_have_count(10, timeout=15_000)
    no_errors(page)
    shot(page, "e2e-gallery.png")
    page.close()
