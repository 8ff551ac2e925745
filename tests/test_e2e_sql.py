"""The SQL page end to end, in headless Chromium at 1440×900: the index is built on opening
the page, a query typed in the box (Ctrl+Enter) shows its rows with each record's link, and
"Select these" makes them the selection (the URL carries it). Screenshots go to
``artifacts/``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import browser_fixture, no_errors, serve, settled, shot, until
from playwright.sync_api import expect

import codec
from browser_app.generators import coco, records, write
from codec.columns_index import columns_index
from codec.sql import query

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SQL = "SELECT record, boxes, classes FROM records WHERE boxes >= 3 ORDER BY boxes DESC, record"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sqle2e")
    write(root / "boxes.tfrecord", records(coco, 12, seed=3, masks=False, keypoints=False))
    return root


@pytest.fixture(scope="module")
def server(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve(tmp_path_factory, [str(data / "boxes.tfrecord"), "--root", str(data)])


browser = browser_fixture()


def test_query_rows_links_and_selection(server: str, browser, data: Path) -> None:  # type: ignore[no-untyped-def]
    with codec.TFRecordFile(str(data / "boxes.tfrecord")) as f:
        want = query(columns_index([f], executor="inline"), SQL).records()
    assert want and len(want) < 12
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(server + "/sql?file=boxes.tfrecord")
    box = page.get_by_role("textbox", name="SQL over the table records")
    expect(box).to_be_visible(timeout=60_000)  # the index was built on opening
    settled(page)

    def ask() -> None:
        box = page.get_by_role("textbox", name="SQL over the table records")
        box.fill(SQL)
        box.press("Control+Enter")
        expect(page.get_by_text(f"{len(want)} rows", exact=False).first).to_be_visible(
            timeout=5_000
        )

    until(ask, what="the query's rows")
    settled(page)
    no_errors(page)
    grid = page.get_by_test_id("stDataFrame").last

    def cells() -> None:
        for row, record in enumerate(want):
            # column 0: the link to the record (drawn as its number); column 1: record itself
            link = f"./?file=boxes.tfrecord&record={record}"
            expect(grid.get_by_test_id(f"glide-cell-0-{row}")).to_have_text(link)
            expect(grid.get_by_test_id(f"glide-cell-1-{row}")).to_have_text(str(record))

    until(cells, what="the result's cells")
    shot(page, "sql_result.png")

    def select() -> None:
        page.get_by_role("button", name=f"Select these {len(want)} records").click()
        expect(page.get_by_text("The selection is now the")).to_be_visible(timeout=5_000)

    until(select, what="the selection")
    settled(page)
    no_errors(page)
    # The selection is the query itself, its order kept (sel=sql:<query>).
    assert "sel=sql%3ASELECT" in page.url and "ORDER+BY" in page.url.replace("%20", "+")
    shot(page, "sql_selected.png")
    page.close()
