"""The app benchmark's reading of what the records table shows after "Next" (issue 27's
"records page, next 25"): the texts the data grid paints on its canvas since the input, its
first row's ``#`` (:data:`benchmarks.bench_ui.PROBE`, ``gridFirst``). The grid's cells in
the DOM (its accessibility table) follow only some 0.2 s after the grid changed, so they
are not the measure; here they are the check: what the probe read painted is what they come
to say, the previous page's first record is never read as painted, and an input that turns
no page leaves nothing read.

Uses Debian's chromium (``/usr/bin/chromium``): skipped locally without it, FAILS in CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_support import app_server, browser_fixture, settled, until

from benchmarks.bench_ui import PROBE, _first_row_is, first_row
from browser_app.sample_data import write_sample

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SIZE = 10
WIDE = {"width": 1440, "height": 900}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("paint") / "root"
    write_sample(root)
    base = tmp_path_factory.mktemp("server")
    with app_server(base, [str(root / "detection.tfrecord"), "--root", str(root)]) as url:
        yield url


browser = browser_fixture()


@pytest.fixture
def page(browser: Any, server: str) -> Iterator[Any]:
    ctx = browser.new_context(viewport=WIDE)
    ctx.add_init_script(PROBE)
    p = ctx.new_page()
    p.goto(f"{server}/?file=detection.tfrecord&record=0&size={SIZE}")
    until(lambda: _first_is(p, 0), what="the records table's first row")
    settled(p)
    yield p
    ctx.close()


def _first_is(page: Any, n: int) -> None:
    got = first_row(page)
    assert got == n, f"the table's first row says {got}, not {n}"


def _painted(page: Any) -> str | None:
    return page.evaluate(
        """() => window.__tfb.gridFirst(document.querySelector('[data-testid="stDataFrame"]'))"""
    )


def _watch(page: Any) -> None:
    """From the next input on, the probe keeps what the grids paint."""
    page.evaluate("() => window.__tfb.watchStart([])")


def test_next_page_read_as_painted_then_the_cells_agree(page: Any) -> None:
    for first in (0, SIZE):
        _watch(page)
        assert _painted(page) is None  # nothing painted since an input yet
        page.get_by_role("button", name="Next", exact=True).first.click()
        page.wait_for_function(_first_row_is(first + SIZE), polling="raf", timeout=30_000)
        # The previous page's first record is not what the probe reads, and the grid's own
        # cells come to say what it read painted.
        assert page.evaluate(_first_row_is(first)) is False
        until(lambda n=first + SIZE: _first_is(page, n), what="the grid's cells")
        assert _painted(page) == str(first + SIZE)
        settled(page)


def test_an_input_that_turns_no_page_reads_nothing_new(page: Any) -> None:
    _watch(page)
    page.get_by_role("heading", name="Record 0").first.click()  # an input; no page turned
    settled(page)
    assert _painted(page) in (None, "0")  # at most the same page painted again
    assert page.evaluate(_first_row_is(SIZE)) is False


def test_a_text_read_as_painted_is_one_the_grid_drew_since_the_input(page: Any) -> None:
    """``painted(grid, text)`` (the editor step's reading): true for a value the grid drew
    after the input, false for one it did not, and false again from the next input on."""
    grid = "document.querySelector('[data-testid=\"stDataFrame\"]')"

    def painted(text: str) -> bool:
        return bool(page.evaluate(f"(t) => window.__tfb.painted({grid}, t)", text))

    _watch(page)
    page.get_by_role("button", name="Next", exact=True).first.click()
    page.wait_for_function(_first_row_is(SIZE), polling="raf", timeout=30_000)
    assert painted(str(SIZE))
    assert not painted("no such value 31337")
    settled(page)
    _watch(page)
    assert not painted(str(SIZE))  # the next input not made yet: nothing read since
