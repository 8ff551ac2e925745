"""A closed tab's work stops, in the real app and headless Chromium: a filter over 3,200,000
records in 8 shards, on 2 local processes (``view --executor processes:2``), is running on
its workers when its tab is closed; the workers are gone soon after, long before the filter
could have finished, and the server goes on serving another tab. (AppTest covers the same
rule with the connection state simulated; this is the runtime's own answer.)"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import browser_fixture, serve, servers_of, settled, until
from test_e2e_jobs import _workers, shards  # noqa: F401  (the same 8 shards of 400,000 records)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Forty comparisons no record passes: every one is evaluated on every record, which takes
# minutes on 2 processes (measured: over a minute with nothing else running).
EXPRESSION = " or ".join(f"any(score > {i}000.5)" for i in range(1, 41))


@pytest.fixture(scope="module")
def server(shards: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # noqa: F811
    args = [str(shards / "shard-*.tfrecord"), "--root", str(shards), "--executor", "processes:2"]
    yield from serve(tmp_path_factory, args)


browser = browser_fixture()


def test_a_closed_tabs_filter_stops_its_workers(server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    (pid,) = servers_of(int(server.rsplit(":", 1)[1]))
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.goto(server + "/filter?file=shard-*.tfrecord")
    box = page.get_by_role("textbox", name="Filter expression")
    expect(box).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stProgress").filter(has_text="Indexing")).to_have_count(
        0, timeout=60_000
    )
    settled(page)
    box.fill(EXPRESSION)
    box.press("Enter")
    bar = page.get_by_test_id("stProgress").filter(has_text="The filter")
    expect(bar).to_contain_text(re.compile(r"of 8 tasks"), timeout=60_000)

    def running() -> None:
        assert _workers(pid), "the filter runs on no worker process"

    until(running, timeout=60, what="the filter's workers running")
    done = re.search(r"(\d+) of 8 tasks", bar.text_content() or "")
    assert done is not None and int(done.group(1)) <= 4, "the filter ends too soon to test"
    closed = time.monotonic()
    context.close()  # the tab goes

    def workers_gone() -> None:
        assert not _workers(pid), f"worker processes left: {_workers(pid)}"

    until(workers_gone, timeout=45, what="the closed tab's workers gone")
    stopped_after = time.monotonic() - closed
    # The server still answers another tab at once.
    other = browser.new_context(viewport={"width": 1200, "height": 800})
    page = other.new_page()
    page.goto(server + "/filter?file=shard-*.tfrecord")
    expect(page.get_by_role("textbox", name="Filter expression")).to_be_visible(timeout=60_000)
    assert not _workers(pid)
    other.close()
    print(f"workers gone {stopped_after:.1f} s after the tab closed")
