"""End to end, the records page as a reviewer uses it: quick cell edits are saved (Escape
drops one), the record and its picture beside the table at 1440×900 (stacked on a narrow
window), "Go to record" scrolls the table to the row, a review step by keyboard, and a review
of thirty records by keys alone, typed faster than the page is drawn: the journal holds one
line per key, in order, on the record meant, and the URL the record shown.

Uses Debian's chromium (``/usr/bin/chromium``): skipped locally without it, FAILS in CI.
Screenshots go to ``artifacts/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    RUNS_PROBE,
    app_server,
    browser_fixture,
    click_cell,
    go_to_record,
    no_errors,
    open_cell_editor,
    settled,
    shot,
    until,
)

from browser_app.edits import journal_path
from browser_app.sample_data import write_sample

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDE = {"width": 1440, "height": 900}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("review") / "root"
    write_sample(r)
    return r


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, root: Path) -> Iterator[tuple[str, Path]]:
    """The app on the sample, and its cache folder (where the journal is)."""
    base = tmp_path_factory.mktemp("server")
    with app_server(base, [str(root / "detection.tfrecord"), "--root", str(root)]) as url:
        yield url, base / "cache"


@pytest.fixture(scope="module")
def server(served: tuple[str, Path]) -> str:
    return served[0]


browser = browser_fixture()


def _open(
    browser: Any, server: str, record: int, viewport: dict[str, int] = WIDE, init: str = ""
) -> Any:
    from playwright.sync_api import expect

    page = browser.new_page(viewport=viewport)
    if init:
        page.add_init_script(init)
    page.goto(f"{server}/?file=detection.tfrecord&record={record}")
    expect(page.get_by_role("heading", name=f"Record {record}")).to_be_visible(timeout=30_000)
    return page


def _table(page: Any) -> Any:
    return page.locator(".st-key-tfb-records-table [data-testid='stDataFrame']").first


def _picture(page: Any) -> Any:
    return page.locator(".st-key-tfb-pictures img").first


def _editor_grid(page: Any) -> Any:
    return page.locator(".st-key-tfb-editor-features [data-testid='stDataFrame']").first


def test_quick_cell_edits_are_saved_and_escape_drops_one(server: str, browser: Any) -> None:
    """Double-click the label, select all, type, Enter — at once, as a quick hand does it (or
    a busy page, which queues the keys): the grid's cell editor dropped such an edit now and
    then (:mod:`browser_app.ui.widgets.editor.keys`)."""
    from playwright.sync_api import expect

    page = _open(browser, server, 0)
    page.get_by_test_id("stMain").locator("[data-testid='stButtonGroup'] button").filter(
        has_text=re.compile("Edit$")
    ).first.click()
    expect(page.get_by_text("Editing Record 0")).to_be_visible(timeout=15_000)
    grid = _editor_grid(page)
    expect(grid.get_by_test_id("glide-cell-0-10")).to_have_text("image/object/class/label")
    # Columns: feature, type, n, values (edit here), check.
    open_cell_editor(page, lambda: _editor_grid(page), 10, 3)
    page.keyboard.press("Control+A")
    page.keyboard.type("7")
    page.keyboard.press("Enter")
    expect(page.get_by_text("1 pending change").first).to_be_visible(timeout=15_000)
    expect(grid.get_by_test_id("glide-cell-3-10")).to_have_text("7", timeout=15_000)

    # More cells, typed as quickly: height with Enter is saved, the class text left with
    # Escape is not, as Escape asks.
    def quick(row: int, text: str, key: str) -> None:
        def attempt() -> None:
            settled(page)
            x, y = click_cell(page, _editor_grid(page), row, 3)
            # The second click of a double-click, at a hand's pace: the first one has
            # selected the cell (Playwright's own double-click has no gap).
            page.mouse.click(x, y, click_count=2)
            expect(page.locator(".gdg-input:focus")).to_have_count(1, timeout=3_000)

        until(attempt, what=f"the editor of row {row}")
        page.keyboard.press("Control+A")
        page.keyboard.type(text)
        page.keyboard.press(key)

    quick(3, "113", "Enter")
    expect(page.get_by_text("2 pending changes").first).to_be_visible(timeout=15_000)
    expect(grid.get_by_test_id("glide-cell-3-3")).to_have_text("113", timeout=15_000)
    quick(9, "square", "Escape")
    expect(page.locator(".gdg-input:focus")).to_have_count(0)
    # Had Escape saved the text, the page would run again: once it has been idle a while,
    # the cell and the count are as before.
    settled(page, quiet_ms=1_500)
    expect(grid.get_by_test_id("glide-cell-3-9")).to_have_text("circle")
    expect(page.get_by_text("2 pending changes").first).to_be_visible()
    no_errors(page)
    shot(page, "e2e-records-first-edit.png")
    page.close()


def test_record_and_picture_beside_the_table_without_scrolling(server: str, browser: Any) -> None:
    from playwright.sync_api import expect

    def boxes(page: Any) -> tuple[dict[str, float], dict[str, float]]:
        """The table's and the picture's places, read together once the page has settled."""
        settled(page)
        table = _table(page).bounding_box(timeout=5_000)
        pic = _picture(page).bounding_box(timeout=5_000)
        assert table is not None and pic is not None
        return table, pic

    def beside(page: Any) -> None:
        table, pic = boxes(page)
        assert pic["x"] >= table["x"] + table["width"]  # beside the table
        assert pic["y"] >= 0 and pic["y"] + pic["height"] <= WIDE["height"]  # unscrolled

    page = _open(browser, server, 3)
    expect(_picture(page)).to_be_visible(timeout=15_000)
    until(lambda: beside(page), what="the picture beside the table")
    no_errors(page)
    shot(page, "e2e-records-side-by-side.png")
    page.close()

    # A narrow window keeps the record under the table.
    def under(page: Any) -> None:
        table, pic = boxes(page)
        assert pic["y"] >= table["y"] + table["height"]

    page = _open(browser, server, 3, {"width": 1000, "height": 900})
    expect(_picture(page)).to_be_attached(timeout=15_000)
    until(lambda: under(page), what="the picture under the table")
    shot(page, "e2e-records-stacked.png")
    page.close()


def test_go_to_record_scrolls_the_table_to_its_row(server: str, browser: Any) -> None:
    from playwright.sync_api import expect

    page = _open(browser, server, 0)
    go_to_record(page, 47)
    expect(page.get_by_role("heading", name="Record 47")).to_be_visible(timeout=15_000)
    table = _table(page)
    # Row 22 of the page (records 25–49): drawn only once scrolled into view.
    expect(table.get_by_test_id("glide-cell-1-22")).to_have_text("47", timeout=15_000)
    scroller = table.locator(".dvn-scroller").first

    def scrolled() -> None:
        assert scroller.evaluate("s => s.scrollTop", timeout=5_000) > 0

    until(scrolled, what="the table scrolled to the row")
    no_errors(page)
    shot(page, "e2e-records-go-to.png")
    page.close()


def test_review_step_by_keyboard(server: str, browser: Any) -> None:
    from playwright.sync_api import expect

    page = _open(browser, server, 5)
    expect(_picture(page)).to_be_visible(timeout=15_000)
    # Keys typed into a text box are text; elsewhere P, F, J, K are the review bar's (a key
    # pressed while the page runs may be lost).
    settled(page)
    page.get_by_role("heading", name="Records", exact=True).click()
    page.keyboard.press("p")
    expect(page.get_by_text("Review · ✓ Passed").first).to_be_visible(timeout=15_000)
    settled(page)
    page.keyboard.press("j")
    expect(page.get_by_role("heading", name="Record 6")).to_be_visible(timeout=15_000)
    expect(page.get_by_text("Review · not reviewed yet").first).to_be_visible()
    # Record 5's row says so (column 3: "review", after the row marker, # and status).
    expect(_table(page).get_by_test_id("glide-cell-3-5")).to_have_text("✓ passed")
    settled(page)
    page.keyboard.press("f")
    expect(page.get_by_text("Review · ⚑ Flagged").first).to_be_visible(timeout=15_000)
    expect(_table(page).get_by_test_id("glide-cell-3-6")).to_have_text("⚑ flagged")
    no_errors(page)
    shot(page, "e2e-records-review.png")
    page.close()


# -- a review by keys alone -------------------------------------------------------------------

RECORDS = 60  # in the sample's detection.tfrecord


def _marks_written(root: Path, cache: Path) -> list[tuple[int, str | None]]:
    """The journal's mark lines, in order: (record, status)."""
    path = journal_path([str(root / "detection.tfrecord")], cache)
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [(obj["target"], obj["status"]) for obj in lines if obj.get("type") == "mark"]


def _review_plan(start: int, records: int) -> tuple[str, list[tuple[int, str]], int]:
    """Keys that review ``records`` records from ``start`` (with a look back and a mark
    changed on the way), the marks they make in order, and the record they end on."""
    keys = ""
    for i in range(records):
        keys += "f" if i % 4 == 3 else "p"
        keys += "j"
        if i == records // 2:
            keys += "kkfjj"  # back two, flag that one, on again
    marks, here = [], start
    for k in keys:
        if k in "pf":
            marks.append((here, {"p": "passed", "f": "flagged"}[k]))
        else:
            here = min(RECORDS - 1, max(0, here + (1 if k == "j" else -1)))
    return keys, marks, here


def test_thirty_records_reviewed_by_keys_alone(
    served: tuple[str, Path], root: Path, browser: Any
) -> None:
    from playwright.sync_api import expect

    url, cache = served
    start = 10
    page = _open(browser, url, start)
    keys = page.get_by_test_id("tfb-review-keys")
    expect(keys).to_have_attribute("data-record", str(start), timeout=15_000)
    settled(page)
    page.get_by_role("heading", name="Records", exact=True).click()  # the page has the keys
    before = _marks_written(root, cache)
    plan, marks, end = _review_plan(start, 30)
    assert end > 25  # the review crosses to the next page of the table
    page.keyboard.type(plan)  # every key at once: far faster than the page is drawn
    expect(keys).to_have_attribute("data-record", str(end), timeout=60_000)
    expect(keys).to_have_attribute("data-queue", "0", timeout=60_000)
    expect(page.get_by_role("heading", name=f"Record {end}")).to_be_visible()
    # One journal line per mark key, in the order typed, each on the record it was meant for.
    assert _marks_written(root, cache)[len(before) :] == marks

    def url_says_it() -> None:
        assert f"record={end}" in page.evaluate("location.href")

    until(url_says_it, timeout=10, what="the URL carries the record shown")
    # The table's page follows, its review column says what was typed, and the record shown
    # is the row selected.
    table = _table(page)
    row = end - 25
    expect(table.get_by_test_id(f"glide-cell-1-{row - 1}")).to_have_text(str(end - 1))
    expect(table.get_by_test_id(f"glide-cell-3-{row - 1}")).to_have_text(
        "⚑ flagged" if dict(marks)[end - 1] == "flagged" else "✓ passed"
    )
    expect(table.get_by_test_id(f"glide-cell-3-{row}")).to_have_text("· unreviewed")
    # (The grid's accessible rows count from 1, with the header row first.)
    selected = table.locator("tr[aria-selected='true']")
    expect(selected).to_have_count(1)
    expect(selected).to_have_attribute("aria-rowindex", str(row + 2))
    no_errors(page)
    shot(page, "e2e-records-keys-review.png")

    # Letters typed into the comment box are text, not keys.
    written = _marks_written(root, cache)
    box = page.get_by_label("Comment (Enter saves)")
    box.click()
    box.type("pjfk")
    expect(keys).to_have_attribute("data-queue", "0")
    expect(box).to_have_value("pjfk")
    settled(page)
    assert _marks_written(root, cache) == written
    expect(keys).to_have_attribute("data-record", str(end))
    page.close()


def test_a_key_acts_once_whether_the_keys_element_has_come_or_not(
    served: tuple[str, Path], root: Path, browser: Any
) -> None:
    """The review bar's buttons keep their shortcuts for the moment after the page is drawn
    and before the keys element's code has come; once it runs, it takes the keys first, and
    the shortcuts never act as well: each key, one journal line."""
    from playwright.sync_api import expect

    url, cache = served
    page = browser.new_page(viewport=WIDE)
    page.goto(f"{url}/?file=detection.tfrecord&record=50")
    passed = page.locator("[data-testid='stBaseButton-primary']", has_text="Passed")
    # As soon as the review bar is drawn (the element may not run yet).
    expect(page.get_by_role("button", name=re.compile("Passed"))).to_be_visible(timeout=30_000)
    before = _marks_written(root, cache)
    page.keyboard.press("p")
    expect(passed).to_be_visible(timeout=15_000)
    settled(page)
    assert _marks_written(root, cache)[len(before) :] == [(50, "passed")]
    # The element runs now: the same key, and F, each once.
    keys = page.get_by_test_id("tfb-review-keys")
    expect(keys).to_have_attribute("data-record", "50")
    for n, key in enumerate("pf", start=2):
        page.keyboard.press(key)

        def written(n: int = n) -> None:
            assert len(_marks_written(root, cache)) - len(before) >= n

        until(written, timeout=15, what=f"the journal line of {key}")
        settled(page)
    assert _marks_written(root, cache)[len(before) :] == [
        (50, "passed"),
        (50, "passed"),
        (50, "flagged"),
    ]
    page.keyboard.press("j")
    expect(page.get_by_role("heading", name="Record 51")).to_be_visible()
    settled(page)
    expect(page.get_by_role("heading", name="Record 51")).to_be_visible()  # not 52
    no_errors(page)
    page.close()


def test_a_click_while_the_table_follows_the_keys_keeps_the_record(
    server: str, browser: Any
) -> None:
    """Once the keys rest the table's row follows the current record, selected from the
    server; a button clicked while that is drawn sends the row the table showed before,
    which the server must not take for a click on it (the record would jump back)."""
    from playwright.sync_api import expect

    # Installed before J: once the element has asked for the catching-up run on record ``n``
    # (the keys rest: the run that moves the table's row), the button is clicked as the
    # server's first message after that arrives: the run has started, and the table still
    # shows the row before. (Watching the app's "running" state instead misses a short run
    # whose start and end the page draws in one frame; clicking as the run is asked for is
    # too early: the server has selected nothing yet.)
    click_in_next_run = """(n) => {
      window.__clicked = false;
      const app = document.querySelector('[data-testid="stApp"]');
      const asked = new Set([...document.querySelectorAll('[data-testid="tfb-review-keys"]')]
        .map((k) => k.dataset.rest));
      const click = () => {
        if (window.__clicked) return;
        window.__clicked = true;
        [...document.querySelectorAll('button')].find((b) => /Flagged/.test(b.innerText))
          .click();
      };
      const seen = new MutationObserver(() => {
        const keys = document.querySelector('[data-testid="tfb-review-keys"]');
        if (!keys || keys.dataset.record !== String(n)) return;
        if (!keys.dataset.rest || asked.has(keys.dataset.rest)) return;
        seen.disconnect();
        for (const s of window.__runs.sockets) s.addEventListener('message', click, { once: true });
      });
      seen.observe(app, { attributes: true, subtree: true, attributeFilter: ['data-rest'] });
    }"""
    page = _open(browser, server, 53, init=RUNS_PROBE)
    keys = page.get_by_test_id("tfb-review-keys")
    expect(keys).to_have_attribute("data-record", "53", timeout=15_000)
    settled(page)
    # Every record the record view shows, in order, at every frame.
    page.evaluate(
        """() => { const seen = (window.__shown = []);
          const look = () => {
            const h = [...document.querySelectorAll('h4')].map((e) => e.innerText)
              .find((t) => t.startsWith('Record '));
            if (h && seen[seen.length - 1] !== h) seen.push(h);
            requestAnimationFrame(look);
          };
          look(); }"""
    )
    for n in (54, 55, 56):
        page.get_by_role("heading", name="Records", exact=True).click()
        page.evaluate(click_in_next_run, n)
        page.keyboard.press("j")
        expect(keys).to_have_attribute("data-record", str(n))
        # The keys rest: the run that moves the table's row; a click on the page meanwhile.
        page.wait_for_function("() => window.__clicked", timeout=15_000)
        expect(page.get_by_text("Review · ⚑ Flagged").first).to_be_visible()
        settled(page, quiet_ms=1_000)
        expect(page.get_by_role("heading", name=f"Record {n}")).to_be_visible()
        expect(keys).to_have_attribute("data-record", str(n))
    # Never back to a record left: the old row was not taken for a click.
    assert page.evaluate("window.__shown") == [f"Record {n}" for n in (53, 54, 55, 56)]
    table = _table(page)
    expect(table.locator("tr[aria-selected='true']")).to_have_attribute("aria-rowindex", "8")

    def url_says_it() -> None:
        assert "record=56" in page.evaluate("location.href")

    until(url_says_it, timeout=10, what="the URL carries record 56")
    no_errors(page)
    page.close()
