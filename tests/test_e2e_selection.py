"""Selections end to end, in headless Chromium at 1440×900: a facet click in the sidebar
narrows the gallery; the URL, copied into a fresh browser context, shows the same tiles;
sorting by bytes (largest first) orders the records table across pages. Screenshots go to
``artifacts/``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import browser_fixture, no_errors, serve, settled, shot, until

import codec
from browser_app.sample_data import write_detection_checks
from browser_app.selection import record_facts

pytestmark = [pytest.mark.browser, pytest.mark.slow]

N = 160
CLASS = "dog (2)"
TILE = re.compile(r"#(\d+) ·")


@pytest.fixture(scope="module")
def od(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("odsel")
    write_detection_checks(root / "od.tfrecord", N)
    return root


@pytest.fixture(scope="module")
def server(od: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve(tmp_path_factory, [str(od / "od.tfrecord"), "--root", str(od)])


browser = browser_fixture()


def _settled(page) -> None:  # type: ignore[no-untyped-def]
    settled(page)
    no_errors(page)


def _tiles(page, want: list[int]) -> list[int]:  # type: ignore[no-untyped-def]
    """The record numbers of the gallery's tiles, read until they are ``want`` or 60 s pass.

    The page streams in, and a rerun keeps the last run's tiles on screen until it draws its
    own: a look right after a click can see the old gallery, so one look is not an answer.
    What is returned is the last look, for the caller to compare."""
    got: list[int] = []

    def look() -> None:
        texts = page.locator(".st-key-tfb-gallery button").all_inner_texts()
        # A tile's caption may be read twice (the button and its tooltip): keep the first.
        got[:] = dict.fromkeys(int(m.group(1)) for t in texts if (m := TILE.search(t)))
        assert got == want

    try:
        until(look, timeout=60, what="the gallery's tiles")
    except AssertionError:
        pass  # the caller compares, and shows both
    return got


def test_a_facet_click_narrows_the_gallery_and_a_link_carries_it(server, browser, od) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    with codec.TFRecordDataset(str(od / "od.tfrecord")) as ds:
        want = record_facts(ds).classes[CLASS].tolist()
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(server + "/gallery?file=od.tfrecord&size=100")
    expect(page.get_by_text("Selection", exact=True)).to_be_visible(timeout=60_000)
    _settled(page)
    assert _tiles(page, list(range(100))) == list(range(100))
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.locator("[data-testid=stButtonGroup] button", has_text=f"{CLASS} · ").click()
    # The click's rerun has drawn the sidebar once it counts the narrowed selection (a full
    # rerun of the gallery: 1-3 s here, longer on a busy CI host).
    expect(sidebar.get_by_text(f"{len(want):,} of {N:,} records selected")).to_be_visible(
        timeout=60_000
    )
    _settled(page)
    assert _tiles(page, want[:100]) == want[:100]
    url = page.url
    assert "facet=class%3Adog+%282%29" in url or "facet=class:dog" in url, url
    shot(page, "selection-facet-gallery.png")
    context.close()
    # A fresh context (no session, no history) opened on the copied URL shows the same.
    fresh = browser.new_context(viewport={"width": 1440, "height": 900})
    other = fresh.new_page()
    other.goto(url)
    expect(other.get_by_text("Selection", exact=True)).to_be_visible(timeout=60_000)
    _settled(other)
    assert _tiles(other, want[:100]) == want[:100]
    fresh.close()


def test_sorting_by_bytes_orders_the_table_across_pages(server, browser, od) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    with codec.TFRecordDataset(str(od / "od.tfrecord")) as ds:
        sizes = record_facts(ds).nbytes.tolist()
    expected = sorted(range(N), key=lambda i: (-sizes[i], i))
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(server + "/?file=od.tfrecord&size=25")
    expect(page.get_by_text("Selection", exact=True)).to_be_visible(timeout=60_000)
    _settled(page)
    sidebar = page.get_by_test_id("stSidebar")
    # The selectbox is a searchable list: type the choice and take it with Enter (the list
    # may open late on a busy machine; typing waits for nothing but the box).
    sort_box = sidebar.get_by_role("combobox", name="Sort by")
    sort_box.click()
    sort_box.fill("Bytes")
    expect(page.get_by_role("option", name="Bytes", exact=True)).to_be_visible(timeout=30_000)
    page.keyboard.press("Enter")
    _settled(page)
    sidebar.get_by_text("Largest first").click()
    _settled(page)
    # The URL changes when the click's rerun has drawn: waited for, not read once.
    expect(page).to_have_url(re.compile(r"[?&]sort=-bytes(&|$)"))
    # The page holding the current record (0) is the first: record 0 is among the 25 largest
    # or the label would say otherwise. Each Next goes to the next 25 largest, its first
    # record becoming the current one (shown under the table, and in the URL).
    first_page = expected.index(0) // 25
    expect(page.get_by_text(f"Selected {25 * first_page + 1}–")).to_be_visible()
    for k in range(first_page + 1, first_page + 3):
        page.get_by_role("button", name="Next").first.click()
        _settled(page)
        expect(page.get_by_text(f"Selected {25 * k + 1}–{25 * k + 25} of {N}")).to_be_visible()
        expect(page.get_by_role("heading", name=f"Record {expected[25 * k]}")).to_be_visible()
        expect(page).to_have_url(re.compile(rf"[?&]record={expected[25 * k]}(&|$)"))
    shot(page, "selection-sorted.png")
    context.close()
