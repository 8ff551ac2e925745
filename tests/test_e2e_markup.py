"""End to end, in headless Chromium: text from files, names and the URL is never markup, and
the app loads nothing from outside its own server.

A dataset whose every text is a Markdown/HTML payload pointing at a second local server
(``hostile_data``) is opened on every page, and through links whose ``file`` parameter is a
payload. The second server counts the requests it receives (none expected); the page records
every request it makes (none outside the app's origin, the page icon included). Screenshots
go to ``artifacts/``.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from browser_support import (
    app_server,
    browser_fixture,
    free_port,
    settled,
    shot,
    until,
)
from hostile_data import write_hostile_root

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = ("", "gallery", "overview", "schema", "statistics", "filter", "changes", "export")


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []  # noqa: RUF012 - shared by the server's handler instances

    def do_GET(self) -> None:
        _Counter.hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def bait() -> Iterator[int]:
    """A server on loopback that the payloads point at; it counts what reaches it."""
    port = free_port()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Counter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def app(
    bait: int, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("hostile")
    cache = tmp_path_factory.mktemp("hostile-cache")
    files = write_hostile_root(root, bait, cache)
    with app_server(tmp_path_factory.mktemp("srv"), ["--root", str(root)], cache=cache) as url:
        yield url, files


browser = browser_fixture()

# Every picture on the page loaded (or failed) and the fonts in.
_LOADED = """() => document.fonts.status === "loaded"
  && [...document.images].every(i => i.complete)"""


def _visit(browser, url: str, requests: list[str], name: str | None = None) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    pending: set[object] = set()
    last = [time.monotonic()]  # when a request last started or ended

    def started(r) -> None:  # type: ignore[no-untyped-def]
        requests.append(r.url)
        pending.add(r)
        last[0] = time.monotonic()

    def ended(r) -> None:  # type: ignore[no-untyped-def]
        pending.discard(r)
        last[0] = time.monotonic()

    page.on("request", started)
    page.on("requestfinished", ended)
    page.on("requestfailed", ended)
    page.goto(url)
    expect(page.get_by_test_id("stSidebar")).to_be_visible(timeout=60_000)
    # Late images, fonts and the page icon: the app settled, its pictures and fonts loaded,
    # and no request under way or started for half a second.
    settled(page)
    page.wait_for_function(_LOADED, timeout=30_000)

    def network_idle() -> None:
        page.evaluate("0")  # requests seen meanwhile are handed over
        assert not pending and time.monotonic() - last[0] >= 0.5, [r.url for r in pending]  # type: ignore[attr-defined]

    until(network_idle, what="no request under way")
    assert page.get_by_test_id("stException").count() == 0
    # No element the payloads would make: no <img> pointing anywhere but here, no <style>
    # from data, no KaTeX.
    bad = page.locator("img[src*='md.png'], img[src*='html.png']")
    assert bad.count() == 0, bad.evaluate_all(  # where: the nearest element of Streamlit's
        'els => els.map(e => (e.closest(\'[data-testid^="st"]:not('
        "[data-testid=stMarkdownContainer])') || e).outerHTML.slice(0, 600))"
    )
    links = page.locator("a[href*='md.png'], a[href*='/link'], a[href*='/u.png']")
    assert links.count() == 0, links.evaluate_all("els => els.map(e => e.href)")
    # The payload's :material/bolt: stays text (the app itself has no bolt icon).
    assert page.get_by_test_id("stIconMaterial").filter(has_text="bolt").count() == 0
    katex = page.locator(".katex")
    assert katex.count() == 0, katex.evaluate_all(
        "els => els.map(e => (e.closest('[data-testid]') || e).innerText.slice(0, 400))"
    )
    # The payloads hold no backslash, so one on screen is an escape shown as text (escaped twice).
    shown = page.locator("body").inner_text()
    assert "\\" not in shown, shown[max(0, shown.find("\\") - 200) :][:400]
    if name:
        shot(page, name, full_page=True)
    page.close()


def test_no_page_loads_anything_from_outside(app, bait, browser) -> None:  # type: ignore[no-untyped-def]
    url, files = app
    requests: list[str] = []
    main = quote(files["main"])
    for page in PAGES:
        for record in ("0", "2"):
            name = f"markup-{page or 'records'}.png" if record == "2" else None
            _visit(browser, f"{url}/{page}?file={main}&record={record}", requests, name)
    _visit(browser, f"{url}/?file={quote(files['named'])}", requests, "markup-named.png")
    # A blob: URL of the app's own origin is memory of this page (an element's code handed
    # to the browser as a module), not a request to anywhere.
    own = (url, "data:", f"blob:{url}/")
    outside = [r for r in requests if not r.startswith(own)]
    assert not outside, outside
    assert not _Counter.hits, _Counter.hits
    assert any(r.startswith(url) for r in requests)  # the pages did load


@pytest.mark.parametrize(
    "spec",
    [
        "missing ![x]({bait}/u.png)",
        '<img src="{bait}/i.png"> :red[x] $x^2$',
        "\u202egpj.tfrecord",
    ],
)
def test_a_link_to_the_app_cannot_make_it_fetch(app, bait, browser, spec) -> None:  # type: ignore[no-untyped-def]
    url, _ = app
    requests: list[str] = []
    before = len(_Counter.hits)
    target = spec.format(bait=f"http://127.0.0.1:{bait}")
    _visit(browser, f"{url}/?file={quote(target)}", requests, "markup-url.png")
    assert len(_Counter.hits) == before, _Counter.hits
    assert not [r for r in requests if not r.startswith(url) and not r.startswith("data:")]
