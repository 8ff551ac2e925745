"""End to end, in headless Chromium: planted duplicates in a TFDS folder opened as
``tfrecord-browser view FOLDER``; on the Duplicates page the train split searched against
test shows the leaked pictures side by side (both pictures loaded, each record's split and
link, the pair's distance); keeping one copy drops the other (said, and badged), and undoing
brings it back. Screenshots go to ``artifacts/duplicates-*.png``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_support import browser_fixture, no_errors, serve, settled, shot, until

from browser_app.generators.duplicates import Planted, write_planted

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    return write_planted(tmp_path_factory.mktemp("dups_e2e"), originals=30, copied=12, decoys=3)


@pytest.fixture(scope="module")
def server(planted: Planted, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = planted.root.parent.parent
    args = [str(planted.root), "--root", str(root), "--executor", "inline"]
    yield from serve(tmp_path_factory, args)


browser = browser_fixture()


def test_leaks_side_by_side_keep_and_undo(server, browser, planted: Planted) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1400})
    page.goto(server + "/duplicates")
    # A small split on this machine is searched on opening the page.
    expect(page.get_by_text("records searched", exact=False).first).to_be_visible(timeout=60_000)
    settled(page)

    def pick_test() -> None:
        page.locator(".st-key-tfb-w-dups-other").get_by_test_id("stSelectbox").click(timeout=5_000)
        page.get_by_role("option", name="test", exact=True).click(timeout=5_000)
        expect(page.get_by_text("Only pictures in both")).to_be_visible(timeout=5_000)

    until(pick_test, what="choose the test split")  # searched at once, as small
    leaks = [g for g in planted.groups if g[0][0] != g[1][0]]
    found = f"{len(leaks)} groups found in both sides"
    expect(page.get_by_text(found, exact=False)).to_be_visible(timeout=60_000)
    settled(page)
    group = page.locator(".st-key-tfb-dups-group-1")
    expect(group.get_by_text("in more than one split")).to_be_visible()
    pictures = group.locator("img")
    expect(pictures).to_have_count(2)
    until(
        lambda: _check(
            all(pictures.nth(i).evaluate("i => i.complete && i.naturalWidth > 0") for i in (0, 1))
        ),
        what="both pictures of the first group loaded",
    )
    text = group.inner_text()
    assert "train" in text and "test" in text
    assert "first of the group" in text
    assert "near: pHash" in text or "identical bytes" in text or "same pixels" in text
    links = group.locator("a[href*='record=']")
    expect(links).to_have_count(2)
    hrefs = [links.nth(i).get_attribute("href") or "" for i in (0, 1)]
    assert any("%3Atrain&record=" in h for h in hrefs) and any(
        "%3Atest&record=" in h for h in hrefs
    )
    no_errors(page)
    shot(page, "duplicates-groups.png")

    group.get_by_role("button", name="Keep this one").first.click()
    expect(page.get_by_text("dropped 1 other copy", exact=False)).to_be_visible(timeout=30_000)
    group = page.locator(".st-key-tfb-dups-group-1")
    expect(group.get_by_text("dropped")).to_be_visible()
    expect(group.get_by_text("kept")).to_be_visible()
    settled(page)
    shot(page, "duplicates-kept.png", target=page.locator(".st-key-tfb-dups-group-1"))
    group.get_by_role("button", name="Undo drops").click()
    expect(page.get_by_text("1 drop undone", exact=False)).to_be_visible(timeout=30_000)
    expect(page.locator(".st-key-tfb-dups-group-1").get_by_text("dropped")).to_have_count(0)
    no_errors(page)


def _check(ok: bool) -> None:
    assert ok
