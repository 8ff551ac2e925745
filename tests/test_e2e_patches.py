"""The patches view in Chromium: on records with planted mislabels, the first tiles, sorted by
the likely-mistake score, are the planted ones, each crop a loaded picture; a click on a
tile's flag marks its record in the review journal. A screenshot of the page is kept in
``artifacts/``.

The page is reached as a person reaches it: the app on the records, the Patches page's
address."""

from __future__ import annotations

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


def _records(page: Any, n: int) -> list[int]:
    """The records of the first ``n`` tiles, from their captions."""
    captions = page.locator(".st-key-tfb-patches [data-testid='stCaptionContainer']")
    texts = [t for t in captions.all_inner_texts() if t.startswith("#")]
    assert len(texts) >= n, texts
    return [int(t[1:].split(" ")[0]) for t in texts[:n]]


def test_the_planted_mislabels_come_first(browser, served, monkeypatch) -> None:
    url, root, known, cache = served
    monkeypatch.setenv(CACHE_ENV, str(cache))  # the server's journals
    page = browser.new_page(viewport={"width": 1440, "height": 1400})
    try:
        page.goto(f"{url}/patches?file=planted.tfrecord")
        page.get_by_text("mistake 0.9").first.wait_for(timeout=90_000)
        settled(page)
        no_errors(page)
        n = len(known.mislabelled)
        want = sorted(r for r, _ in known.mislabelled)
        until(lambda: _assert_equal(sorted(_records(page, n)), want), what="the first tiles")
        # every crop on the page is a picture that loaded
        until(
            lambda: _assert_equal(
                page.evaluate(
                    "() => [...document.querySelectorAll('.st-key-tfb-patches img')]"
                    ".filter(i => i.complete && i.naturalWidth > 10).length"
                ),
                24,
            ),
            what="the crops",
        )
        shot(page, "patches-mistakes.png")
        # a tile's flag marks its record
        first = _records(page, 1)[0]
        flags = page.locator(".st-key-tfb-patches [data-testid='stButtonGroup'] button").filter(
            has_text="⚑"
        )
        until(lambda: flags.first.click(timeout=3_000), what="the first tile's flag")
        settled(page)

        def marked() -> None:
            with codec.TFRecordDataset([str(root / "planted.tfrecord")]) as ds:
                j = Journal(ds)
                try:
                    got = {r: m.status for r, m in j.marks().items()}
                finally:
                    j.close()
            assert got == {first: "flagged"}, got

        until(marked, what="the journal's mark")
        no_errors(page)
    finally:
        page.close()


def _assert_equal(a: Any, b: Any) -> None:
    assert a == b, (a, b)
