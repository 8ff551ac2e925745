"""End to end, the gallery as a review tool: the real server on a picture dataset in two
shards, in headless Chromium at 1440×900. A review of 20 tiles by keyboard only (marks saved
in the journal, the review report downloaded) and the dense tiles (at least 48 pictures fully
on screen). The grid element's own state is read on its host element (data-focus, and each
tile's data-mark and data-pending); tests/test_e2e_gallery_grid.py tests the element itself.

Uses Debian's chromium (``/usr/bin/chromium``). Without it the test is skipped locally and
FAILS in CI (``CI=true``). Screenshots go to ``artifacts/``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import browser_fixture, no_errors, serve, settled, shot

import codec
from browser_app.edits import Journal
from browser_app.sample_data import write_sample

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHARD = 30  # records per shard: the review crosses from the first shard into the second
VIEWPORT = {"width": 1440, "height": 900}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's 60 detection records, split into two shards of 30."""
    base = tmp_path_factory.mktemp("review")
    sample = base / "sample"
    write_sample(sample)
    with codec.TFRecordFile(str(sample / "detection.tfrecord")) as f:
        payloads = [f[i] for i in range(len(f))]
    r = base / "root"
    (r / "pics").mkdir(parents=True)
    for k in range(2):
        codec.write_records(
            r / "pics" / f"part-{k}.tfrecord", payloads[k * SHARD : (k + 1) * SHARD]
        )
    return r


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("server-cache")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, root: Path, cache: Path) -> Iterator[str]:
    yield from serve(tmp_path_factory, [str(root / "pics"), "--root", str(root)], cache=cache)


browser = browser_fixture()


HOST = ".tfb-gallery"


def _focused(page: Any, n: int) -> None:
    """Wait until record ``n`` is the grid's focus (on its host element, and its tile's ring)."""
    from playwright.sync_api import expect

    expect(page.locator(HOST)).to_have_attribute("data-focus", str(n), timeout=15_000)
    expect(page.locator(f"{HOST} .tfb-tile[data-record='{n}']")).to_have_class(
        re.compile(r"\btfb-focus\b")
    )


def _marked(page: Any, n: int, status: str) -> None:
    """Wait until record ``n``'s tile shows ``status``, confirmed (not pending)."""
    page.wait_for_function(
        """([n, status]) => { const t = document.querySelector(
             `.tfb-gallery .tfb-tile[data-record="${n}"]`);
           return !!t && t.dataset.mark === status && !t.hasAttribute('data-pending'); }""",
        arg=[n, status],
        timeout=15_000,
    )


def _visible_pictures(page: Any) -> int:
    return int(
        page.evaluate(
            """() => [...document.querySelectorAll(
                 '.tfb-gallery .tfb-tile img:not(.tfb-layers)')].filter(i => {
                 const r = i.getBoundingClientRect();
                 return i.complete && i.naturalWidth > 0 && r.width > 0 && r.top >= 0
                   && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
               }).length"""
        )
    )


def test_keyboard_review_of_20_tiles(
    server: str, browser: Any, root: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import expect

    first = 20
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(f"{server}/gallery?file=pics&record={first}&size=50")
    expect(page.locator(f"{HOST} .tfb-tile img:not(.tfb-layers)").first).to_be_visible(
        timeout=30_000
    )
    _focused(page, first)
    settled(page)
    # The focus ring is drawn on the focused tile only.
    assert page.locator(f"{HOST} .tfb-focus").count() == 1
    ring = page.locator(f"{HOST} .tfb-tile[data-record='{first}']")
    assert ring.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"
    assert ring.evaluate("e => getComputedStyle(e).outlineColor") != page.locator(
        f"{HOST} .tfb-tile[data-record='{first + 1}']"
    ).evaluate("e => getComputedStyle(e).outlineColor")
    shot(page, "e2e-gallery-review-start.png")

    # Every third record flagged, the others passed; the arrow keys move on.
    want: dict[int, str] = {}
    page.get_by_role("heading", name="Gallery").click()  # focus the page, not a text box
    for n in range(first, first + 20):
        status = "flagged" if n % 3 == 0 else "passed"
        page.keyboard.press("f" if status == "flagged" else "p")
        _marked(page, n, status)
        want[n] = status
        page.keyboard.press("ArrowRight" if n % 2 else "j")
        _focused(page, n + 1)
    # The focused tile is kept on screen as the focus moves down the page.
    expect(page.locator(f"{HOST} .tfb-tile[data-record='{first + 20}']")).to_be_in_viewport(
        timeout=15_000
    )
    # The URL carries the record focused when the last mark went to Python: the last one
    # marked, or the one after it when the move typed after the mark came first (a mark
    # saved through the marks route goes to Python once the route has answered).
    expect(page).to_have_url(
        re.compile(rf"record=({first + 19}|{first + 20})(&|$)"), timeout=15_000
    )
    settled(page)
    no_errors(page)
    shot(page, "e2e-gallery-review-marked.png")

    # Saved in the journal, on disk.
    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(cache))
    paths = sorted(str(p) for p in (root / "pics").iterdir())
    with codec.TFRecordDataset(paths) as ds:
        j = Journal(ds)
        try:
            saved = {r: m.status for r, m in j.marks().items()}
        finally:
            j.close()
    assert saved == want

    # The review report, downloaded from the Changes page: every mark, with its file, its
    # number in that file and its identifying feature.
    page.get_by_role("link", name="Changes", exact=True).click()
    page.get_by_role("tab", name=re.compile("^Review")).click()
    button = page.get_by_role("button", name="Review report (CSV)")
    expect(button).to_be_visible(timeout=30_000)
    with page.expect_download() as dl:
        button.click()
    rows = list(csv.DictReader(io.StringIO(Path(dl.value.path()).read_text("utf-8"))))
    assert {int(r["record"]): r["status"] for r in rows} == want
    for r in rows:
        n = int(r["record"])
        assert r["file"].endswith(f"part-{n // SHARD}.tfrecord")
        assert int(r["local_index"]) == n % SHARD  # the record's number within its file
        # ...and the feature that identifies it after an export renumbers the records.
        assert r["id_feature"] == "image/filename"
        assert r["id"].startswith(f"scene_{n:05d}.")
    no_errors(page)
    shot(page, "e2e-gallery-review-report.png")
    page.close()


def test_dense_tiles_fill_the_screen(server: str, browser: Any) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport=VIEWPORT)
    page.goto(f"{server}/gallery?file=pics&record=0&size=100")
    expect(page.locator(f"{HOST} .tfb-tile img:not(.tfb-layers)").first).to_be_visible(
        timeout=30_000
    )
    page.locator("[data-testid='stButtonGroup'] button").filter(
        has_text=re.compile("^Dense$")
    ).first.click()
    expect(page.locator(HOST)).to_have_class(re.compile(r"\btfb-dense\b"), timeout=30_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tfb-gallery .tfb-tile img:not(.tfb-layers)')]"
        ".every(i => i.complete && i.naturalWidth > 0)",
        timeout=30_000,
    )
    settled(page)
    assert _visible_pictures(page) >= 48
    # Dense tiles have no mark buttons of their own (the keys and the bar above mark).
    assert page.locator(f"{HOST} .tfb-marks:visible").count() == 0
    # Tiles of a row line up: their captions sit at the same height.
    tops = page.locator(f"{HOST} .tfb-cap").evaluate_all(
        "els => els.slice(0, 12).map(e => Math.round(e.getBoundingClientRect().top))"
    )
    assert len(tops) == 12 and len(set(tops)) == 1, tops
    no_errors(page)
    shot(page, "e2e-gallery-dense.png")
    page.close()
