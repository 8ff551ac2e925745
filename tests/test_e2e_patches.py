"""The patches view in Chromium: on records with planted mislabels, the first tiles, sorted by
the likely-mistake score, are the planted ones, each crop a loaded picture; a click on a tile's
flag marks its record in the review journal; keys move the focus ring from object to object with
nothing sent to the server (and on to the next or previous page past a page's edge), P marks the
focused object's record in the journal, N / B turn the page and Enter opens the record on the
Records page. Screenshots of the page are kept in ``artifacts/``.

The page is reached as a person reaches it: the app on the records, the Patches page's address."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    CACHE_ENV,
    app_server,
    browser_fixture,
    no_errors,
    settled,
    shot,
    until,
)

import codec
from browser_app.edits import Journal
from browser_app.generators import write
from browser_app.generators.evaluation import planted_mistakes

pytestmark = [pytest.mark.browser, pytest.mark.slow]

browser = browser_fixture()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Any, Path]]:
    base = tmp_path_factory.mktemp("patches-e2e")
    root = base / "root"
    root.mkdir()
    known = planted_mistakes(36, seed=4, max_side=320)
    write(root / "planted.tfrecord", known.records)
    with app_server(base, [str(root / "planted.tfrecord"), "--root", str(root)]) as url:
        yield url, root, known, base / "cache"


HOST = ".st-key-tfb-patches .tfb-patches"
PER_ROW = 6

_READY = """() => {
  const g = document.querySelector('.st-key-tfb-patches .tfb-patches');
  if (!g || !g.dataset.focus) return false;
  const imgs = [...g.querySelectorAll('.tfb-tile img:not(.tfb-layers)')];
  return imgs.length === 24 && imgs.every(i => i.complete && i.naturalWidth > 10)
    && !g.querySelector('.tfb-tile[data-pending]');
}"""


def _tiles(page: Any) -> list[dict[str, Any]]:
    """What the element shows, tile by tile: key, record, mark, pending, focused."""
    return list(
        page.evaluate(
            """() => [...document.querySelectorAll('.st-key-tfb-patches .tfb-tile')].map(t => ({
              key: t.dataset.key, record: Number(t.dataset.record), mark: t.dataset.mark,
              pending: t.hasAttribute('data-pending'),
              focus: t.classList.contains('tfb-focus')}))"""
        )
    )


def _focus(page: Any) -> str:
    return str(page.locator(HOST).get_attribute("data-focus", timeout=5_000))


def _journal(root: Path) -> dict[int, str]:
    with codec.TFRecordDataset([str(root / "planted.tfrecord")]) as ds:
        j = Journal(ds)
        try:
            return {int(r): m.status for r, m in j.marks().items()}
        finally:
            j.close()


def _keys(page: Any, keys: list[str]) -> Any:
    """Type ``keys`` in one task of the page (nothing can run between them); the element's
    focus and revision after them."""
    return page.evaluate(
        """(keys) => {
          for (const key of keys)
            document.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true}));
          const g = document.querySelector('.st-key-tfb-patches .tfb-patches');
          return [g.dataset.focus, g.dataset.rev, g.querySelectorAll('.tfb-focus').length];
        }""",
        keys,
    )


def test_the_planted_mislabels_come_first(browser, served, monkeypatch) -> None:
    url, root, known, cache = served
    monkeypatch.setenv(CACHE_ENV, str(cache))  # the server's journals
    page = browser.new_page(viewport={"width": 1440, "height": 1400})
    try:
        page.goto(f"{url}/patches?file=planted.tfrecord")
        page.wait_for_function(_READY, timeout=90_000)
        settled(page)
        no_errors(page)
        n = len(known.mislabelled)
        first = [(t["record"], int(t["key"].split(":")[2])) for t in _tiles(page)[:n]]
        assert sorted(first) == sorted(known.mislabelled)
        shot(page, "patches-mistakes.png")
        # a click on a tile's flag marks its record (every tile of that record shows it)
        record = _tiles(page)[0]["record"]
        page.locator(f"{HOST} .tfb-tile").first.locator(".tfb-set[data-set='flagged']").click()
        until(lambda: _assert_equal(_journal(root), {record: "flagged"}), what="the journal")
        page.wait_for_function(_READY, timeout=30_000)  # the mark confirmed
        tiles = _tiles(page)
        assert all(t["mark"] == ("flagged" if t["record"] == record else "") for t in tiles)
        no_errors(page)
    finally:
        page.close()


def test_keys_review_the_objects(browser, served, monkeypatch) -> None:
    """Keys move the focus ring from object to object with no message to the server; P marks
    the focused object's record in the journal (shown pending, then saved); N and B turn the
    page; Enter opens the focused object's record on the Records page."""
    from playwright.sync_api import expect

    url, root, _known, cache = served
    monkeypatch.setenv(CACHE_ENV, str(cache))
    page = browser.new_page(viewport={"width": 1440, "height": 1400})
    sent = [0]
    page.on("websocket", lambda ws: ws.on("framesent", lambda _: sent.__setitem__(0, sent[0] + 1)))
    try:
        page.goto(f"{url}/patches?file=planted.tfrecord")
        page.wait_for_function(_READY, timeout=90_000)
        settled(page)
        page.get_by_role("heading", name="Patches").click()  # the keys go to the page
        before = _journal(root)
        tiles = _tiles(page)
        keys = [t["key"] for t in tiles]
        assert _focus(page) == keys[0] and [t["focus"] for t in tiles].count(True) == 1
        rev, frames = page.locator(HOST).get_attribute("data-rev"), sent[0]
        moves = ["ArrowRight", "ArrowRight", "j", "ArrowDown", "k", "ArrowUp", "ArrowDown"]
        want = 0 + 2 + 1 + PER_ROW - 1 - PER_ROW + PER_ROW
        assert _keys(page, moves) == [keys[want], rev, 1]
        ring = page.locator(f"{HOST} .tfb-tile[data-key='{keys[want]}']")
        expect(ring).to_have_class(re.compile("tfb-focus"))
        assert sent[0] == frames  # moving sent nothing
        # P: the focused object's record is marked passed in the journal
        record = tiles[want]["record"]
        page.keyboard.press("p")
        until(
            lambda: _assert_equal(_journal(root), {**before, record: "passed"}),
            what="the journal's mark",
        )
        page.wait_for_function(_READY, timeout=30_000)
        assert _focus(page) == keys[want]  # the focus stayed where the mark was typed
        shown = {t["key"]: t["mark"] for t in _tiles(page) if t["record"] == record}
        assert set(shown.values()) == {"passed"} and keys[want] in shown
        shot(page, "patches-keys.png")
        # N and B turn the page, the focus on the first object of the page shown
        page.keyboard.press("n")
        page.wait_for_function(
            "() => document.querySelector('.st-key-tfb-patches .tfb-patches').dataset.page === '2'",
            timeout=30_000,
        )
        page.wait_for_function(_READY, timeout=30_000)
        second = [t["key"] for t in _tiles(page)]
        assert not set(second) & set(keys) and _focus(page) == second[0]
        settled(page)
        page.keyboard.press("b")
        page.wait_for_function(
            "() => document.querySelector('.st-key-tfb-patches .tfb-patches').dataset.page === '1'",
            timeout=30_000,
        )
        page.wait_for_function(_READY, timeout=30_000)
        settled(page)
        assert [t["key"] for t in _tiles(page)] == keys
        # → on the page's last tile goes on to the next page's first; ← on it comes back to
        # this page's last (the page turns as with N and B)
        _keys(page, ["ArrowDown"] * 3 + ["ArrowRight"] * (PER_ROW - 1))
        assert _focus(page) == keys[-1]
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "() => document.querySelector('.st-key-tfb-patches .tfb-patches').dataset.page === '2'",
            timeout=30_000,
        )
        page.wait_for_function(_READY, timeout=30_000)
        assert _focus(page) == second[0]
        settled(page)
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(
            "() => document.querySelector('.st-key-tfb-patches .tfb-patches').dataset.page === '1'",
            timeout=30_000,
        )
        page.wait_for_function(_READY, timeout=30_000)
        assert _focus(page) == keys[-1]
        settled(page)
        _keys(page, ["ArrowUp"] * 3 + ["ArrowLeft"] * (PER_ROW - 1))
        assert _focus(page) == keys[0]
        # Enter opens the focused object's record on the Records page
        _keys(page, ["ArrowRight"])
        opened = _tiles(page)[1]["record"]
        page.keyboard.press("Enter")
        # (the Records page is the app's first page: its address is the app's own)
        records_page = re.compile(rf"/(records)?\?(.*&)?record={opened}(&|$)")
        expect(page).to_have_url(records_page, timeout=30_000)
        expect(page.get_by_role("heading", name="Patches")).to_have_count(0)
        settled(page)
        no_errors(page)
    finally:
        page.close()


def _assert_equal(a: Any, b: Any) -> None:
    assert a == b, (a, b)
