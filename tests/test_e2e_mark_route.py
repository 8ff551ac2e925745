"""End to end, a review mark saved through the marks route (``POST /tfb/mark``,
:mod:`browser_app.ui.routes`) in the real server: P in the record view shows "saved" as soon
as the journal holds the line — before any run of the script that key starts has finished —
and the page then follows (the review bar, the table's review column) without the mark
being written twice.

Uses Debian's chromium (``/usr/bin/chromium``): skipped locally without it, FAILS in CI.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    RUNS_PROBE,
    app_server,
    browser_fixture,
    no_errors,
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
    r = tmp_path_factory.mktemp("route") / "root"
    write_sample(r)
    return r


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, root: Path) -> Iterator[tuple[str, Path]]:
    base = tmp_path_factory.mktemp("server")
    with app_server(base, [str(root / "detection.tfrecord"), "--root", str(root)]) as url:
        yield url, base / "cache"


browser = browser_fixture()


# Installed before a key: the first time the keys element's data-saved changes, what it says
# then and how many runs had finished.
_AT_SAVED = """() => {
  const h = document.querySelector('[data-testid="tfb-review-keys"]');
  window.__saved = undefined;
  const seen = new MutationObserver(() => {
    if (!h.dataset.saved || window.__saved !== undefined) return;
    window.__saved = {
      saved: h.dataset.saved,
      text: h.querySelector(".tfb-keys-state").textContent,
      runs: window.__runs.done,
      msgs: window.__runs.msgs,
    };
    seen.disconnect();
  });
  seen.observe(h, { attributes: true, attributeFilter: ["data-saved"] });
}"""


def _marks_written(root: Path, cache: Path) -> list[tuple[int, str | None]]:
    path = journal_path([str(root / "detection.tfrecord")], cache)
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [(obj["target"], obj["status"]) for obj in lines if obj.get("type") == "mark"]


def _open(browser: Any, url: str, record: int) -> Any:
    from playwright.sync_api import expect

    page = browser.new_page(viewport=WIDE)
    page.add_init_script(RUNS_PROBE)
    page.goto(f"{url}/?file=detection.tfrecord&record={record}")
    keys = page.get_by_test_id("tfb-review-keys")
    expect(keys).to_have_attribute("data-record", str(record), timeout=30_000)
    settled(page)
    page.get_by_role("heading", name="Records", exact=True).click()  # keys go to the page
    return page


def test_p_shows_saved_once_the_journal_has_the_line_before_a_run_ends(
    served: tuple[str, Path], root: Path, browser: Any
) -> None:
    from playwright.sync_api import expect

    url, cache = served
    page = _open(browser, url, 12)
    keys = page.get_by_test_id("tfb-review-keys")
    before = _marks_written(root, cache)
    runs, msgs = page.evaluate("() => [window.__runs.done, window.__runs.msgs]")
    # The moment the element says saved (its data-saved set): how many runs had finished
    # and messages had come then (none: no run), and what it said (until Python
    # acknowledges the action, a run later).
    page.evaluate(_AT_SAVED)
    page.keyboard.press("p")
    page.wait_for_function("() => window.__saved !== undefined", timeout=15_000)
    assert _marks_written(root, cache)[len(before) :] == [(12, "passed")]
    at_saved = page.evaluate("() => window.__saved")
    assert at_saved["saved"] == "12:passed"
    assert at_saved["runs"] == runs, "the element said saved only after a run of the script ended"
    assert at_saved["msgs"] == msgs, "the server sent the page something before it said saved"
    assert at_saved["text"] == "Record 12 ✓ passed · saved"
    # The page follows on the run the action starts: the review bar, the table's column.
    expect(page.get_by_text("Review · ✓ Passed").first).to_be_visible(timeout=15_000)
    expect(keys).to_have_attribute("data-queue", "0", timeout=15_000)
    settled(page)
    table = page.locator(".st-key-tfb-records-table [data-testid='stDataFrame']").first
    expect(table.get_by_test_id("glide-cell-3-12")).to_have_text("✓ passed", timeout=15_000)
    # One line: Python did not write the mark again.
    assert _marks_written(root, cache)[len(before) :] == [(12, "passed")]
    no_errors(page)
    shot(page, "e2e-mark-route.png")
    page.close()


def test_marks_and_moves_typed_fast_each_write_one_line(
    served: tuple[str, Path], root: Path, browser: Any
) -> None:
    """Keys typed faster than the page is drawn: the marks whose record the element knows go
    by the route, the ones after a move not yet drawn go to Python; one line each, in the
    order typed, on the record meant."""
    from playwright.sync_api import expect

    url, cache = served
    page = _open(browser, url, 30)
    keys = page.get_by_test_id("tfb-review-keys")
    before = _marks_written(root, cache)
    page.keyboard.type("pfjpjfkp")
    expect(keys).to_have_attribute("data-record", "31", timeout=60_000)
    expect(keys).to_have_attribute("data-queue", "0", timeout=60_000)
    settled(page)

    def lines() -> None:
        assert _marks_written(root, cache)[len(before) :] == [
            (30, "passed"),
            (30, "flagged"),
            (31, "passed"),
            (32, "flagged"),
            (31, "passed"),
        ]

    until(lines, timeout=15, what="one journal line per mark key")
    expect(page.get_by_role("heading", name="Record 31")).to_be_visible()
    no_errors(page)
    page.close()


def test_a_mark_typed_while_the_one_before_is_posted_waits_for_it(
    served: tuple[str, Path], root: Path, browser: Any
) -> None:
    """P then F on one record, the route slow to answer P: F is not posted until P is answered
    (two posts under way at once reach the server in either order, and the journal's last
    mark of a record is its mark). P refused by the route: P and F both go to Python, in that
    order, and F is never posted ahead of it."""
    from playwright.sync_api import expect

    url, cache = served
    page = _open(browser, url, 40)
    keys = page.get_by_test_id("tfb-review-keys")
    before = _marks_written(root, cache)
    posts: list[Any] = []
    how = "pass"  # what the handler does with a post: "pass", "hold" (the next one), "refuse"

    def route(r: Any) -> None:
        nonlocal how
        posts.append(r)
        if how == "refuse":
            r.fulfill(status=503, content_type="application/json", body='{"error": "busy"}')
        elif how == "hold":
            how = "pass"  # held until the test lets it go
        else:
            r.continue_()

    page.route("**/tfb/mark", route)
    # The interception in effect before a key: a post without a token, seen by the handler
    # (let through: the server refuses it and writes nothing).
    status = page.evaluate(
        "(u) => fetch(u, {method: 'POST', headers: {'Content-Type': 'application/json'},"
        " body: '{}'}).then((r) => r.status)",
        f"{url}/tfb/mark",
    )
    assert len(posts) == 1 and 400 <= status < 500, status
    posts.clear()
    how = "hold"
    page.keyboard.type("pf")
    expect(keys).to_have_attribute("data-queue", "2", timeout=15_000)
    _posted(page, posts, 1)
    assert json.loads(posts[0].request.post_data or "{}")["status"] == "passed"
    # The window in which a second post would be made, the first still unanswered.
    page.wait_for_timeout(1_000)
    assert len(posts) == 1, "F was posted while P's post was under way"
    posts[0].continue_()
    expect(keys).to_have_attribute("data-queue", "0", timeout=30_000)
    expect(keys).to_have_attribute("data-saved", "40:flagged", timeout=15_000)
    settled(page)
    assert len(posts) == 2
    until(
        lambda: _assert_equal(
            _marks_written(root, cache)[len(before) :], [(40, "passed"), (40, "flagged")]
        ),
        timeout=15,
        what="P's line, then F's",
    )

    # The route refuses P: both marks go to Python, in order; F is not posted.
    how, posts[:] = "refuse", []
    before = _marks_written(root, cache)
    page.keyboard.type("pf")
    expect(keys).to_have_attribute("data-queue", "0", timeout=30_000)
    settled(page)
    until(
        lambda: _assert_equal(
            _marks_written(root, cache)[len(before) :], [(40, "passed"), (40, "flagged")]
        ),
        timeout=15,
        what="P's line, then F's, both written by Python",
    )
    assert len(posts) == 1, "F was posted after the route refused P"
    expect(page.get_by_text("Review · ⚑ Flagged").first).to_be_visible(timeout=15_000)
    no_errors(page)
    page.close()


def _assert_equal(got: Any, want: Any) -> None:
    assert got == want


def _posted(page: Any, posts: list[Any], n: int, timeout: float = 15) -> None:
    """Wait until the route's handler has seen ``n`` posts (the page's events are handled
    while Playwright waits)."""
    deadline = time.monotonic() + timeout
    while len(posts) < n:
        assert time.monotonic() < deadline, f"{len(posts)} posts seen, not {n}"
        page.wait_for_timeout(50)


def test_the_route_refuses_a_request_without_the_sessions_token(served: tuple[str, Path]) -> None:
    import urllib.error
    import urllib.request

    url, _cache = served
    body = json.dumps(
        {"token": "guess", "client": "c", "seq": 1, "record": 1, "status": "passed"}
    ).encode()
    req = urllib.request.Request(
        url + "/tfb/mark", data=body, headers={"Content-Type": "application/json"}
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 403
    assert "token" in json.loads(err.value.read())["error"]
