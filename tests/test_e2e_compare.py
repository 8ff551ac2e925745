"""End to end, in headless Chromium: two generated versions under the root, the first opened
and the Compare page chosen. The records added, removed and changed, the feature table and
the new class are shown; the "Added" link opens B with the added records as the selection,
and a changed record's link opens it. Screenshots go to ``artifacts/compare-*.png``."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from browser_support import browser_fixture, no_errors, serve, settled, shot

from browser_app.generators.versions import Versions, write_versions

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> Versions:
    return write_versions(tmp_path_factory.mktemp("compare_e2e"), 150, added=8, max_side=64)


@pytest.fixture(scope="module")
def server(versions: Versions, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = versions.a.parent
    yield from serve(tmp_path_factory, [str(versions.a), "--root", str(root)])


browser = browser_fixture()


def test_compare_shows_the_changes_and_links_to_them(server, browser, versions) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1800})
    page.goto(server + "/compare?file=v1.tfrecord")
    added = page.get_by_role("link", name=f"{len(versions.added)} records", exact=True)
    expect(added).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Joined by image/source_id.")).to_be_visible()
    expect(page.get_by_role("cell", name="gone from B")).to_be_visible()
    expect(page.get_by_role("cell", name="new in B")).to_be_visible()
    settled(page)
    no_errors(page)
    shot(page, "compare-page.png", full_page=True)
    features = page.locator(".st-key-tfb-compare-features")
    features.scroll_into_view_if_needed()
    shot(page, "compare-features.png", target=features)

    href = added.get_attribute("href")
    assert href is not None
    q = parse_qs(urlparse(href).query)
    assert q["file"] == ["v2.tfrecord"]
    assert q["sel"][0] == "filter:index in [" + ", ".join(map(str, versions.added)) + "]"
    # the link, opened: B with the added records as the selection
    page.goto(server + "/" + href.removeprefix("./"))
    side = page.get_by_test_id("stSidebar")
    selected = f"{len(versions.added)} of {len(versions.records_b)} records selected"
    expect(side.get_by_text(selected)).to_be_visible(timeout=60_000)
    settled(page)
    no_errors(page)
    shot(page, "compare-added-link.png")

    # a changed record's link opens that record of B
    page.goto(server + "/compare?file=v1.tfrecord")
    _, b = versions.pairs[0]
    table = page.locator(".st-key-tfb-compare-changed")
    link = table.get_by_role("link", name=str(b), exact=True).nth(1)
    expect(link).to_be_visible(timeout=60_000)
    href = link.get_attribute("href")
    assert href is not None
    assert parse_qs(urlparse(href).query) == {"file": ["v2.tfrecord"], "record": [str(b)]}
