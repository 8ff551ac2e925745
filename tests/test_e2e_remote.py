"""End to end, a remote dataset: the real server started with ``--root s3://bkt/data`` against
moto's S3 server on loopback (behind a proxy that caps the bandwidth, as a network does), in
headless Chromium. A jump to 50 % numbered by estimate until the background index reaches it,
the first page (and a URL outside the root refused), the gallery, and a deep link to a record
opened in a fresh page.

Uses Debian's chromium (``/usr/bin/chromium``). Without it the test is skipped locally and
FAILS in CI (``CI=true``). Screenshots go to ``artifacts/``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from browser_support import app_server, chromium, no_errors, settled, shot, until
from netservers import FaultProxy, MotoS3

import codec
from browser_app.sample_data import write_sample
from codec.framing import OVERHEAD, encode_record

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VIEWPORT = {"width": 1440, "height": 1000}
COPIES = 160  # the sample's 60 pictures, 160 times: 9,600 records, about 23 MB
BANDWIDTH = 3e6  # bytes per second through the proxy at first: 50 % is seconds away
BLOCKS = {"TFRECORD_BROWSER_REMOTE_BLOCK": "128K"}
EXACT = "their numbers are exact"


def _payloads(tmp_path: Path) -> list[bytes]:
    write_sample(tmp_path / "sample")
    with codec.TFRecordFile(tmp_path / "sample" / "detection.tfrecord", use_cache=False) as f:
        return list(f) * COPIES


def _cell(page: Any, col: int, row: int) -> Any:
    """A cell of the page's first table (the records table's column 0 selects rows: its
    ``#`` is column 1; a landed table's is column 0)."""
    grid = page.get_by_test_id("stDataFrame").first
    return grid.get_by_test_id(f"glide-cell-{col}-{row}").first


def test_a_remote_root_in_the_browser(tmp_path: Path, s3: MotoS3, s3_proxy: FaultProxy) -> None:
    from playwright.sync_api import expect

    payloads = _payloads(tmp_path)
    s3.put("bkt", "data/det.tfrecord", b"".join(encode_record(p) for p in payloads))
    s3.put("bkt", "outside/secret.tfrecord", encode_record(payloads[0]))
    s3_proxy.bandwidth = BANDWIDTH
    offsets, off = [], 0
    for p in payloads:
        offsets.append(off)
        off += len(p) + OVERHEAD
    half = next(i for i, o in enumerate(offsets) if o >= off // 2)

    with (
        app_server(tmp_path, ["--root", "s3://bkt/data"], cache=tmp_path / "c", env=BLOCKS) as url,
        chromium() as browser,
    ):
        # A jump to 50 % on opening: found before the background index gets there.
        jump = browser.new_page(viewport=VIEWPORT)
        jump.goto(f"{url}/?file=det.tfrecord&at=50")
        expect(jump.get_by_text("Jumped to 50 % of the bytes")).to_be_visible(timeout=30_000)
        expect(jump.get_by_text("estimates from the average record size")).to_be_visible()
        expect(_cell(jump, 0, 0)).to_have_text(re.compile(r"^≈ [\d,]+$"), timeout=30_000)

        def estimated() -> int:
            text = _cell(jump, 0, 0).text_content(timeout=5_000) or ""
            found = re.fullmatch(r"≈ ([\d,]+)", text)
            assert found, f"the first row is numbered by estimate: {text!r}"
            return int(found.group(1).replace(",", ""))

        estimate = until(estimated, what="the estimated number")
        assert abs(estimate - half) <= len(payloads) // 20
        shot(jump, "remote-jump-50.png")
        no_errors(jump)
        # The background index reaches them (the network now fast): the same rows, numbered
        # exactly.
        s3_proxy.bandwidth = None
        expect(_cell(jump, 0, 0)).to_have_text(f"{half:,}", timeout=60_000)
        settled(jump)
        shot(jump, "remote-jump-50-indexed.png")
        # Counted (and so waited for) rather than asked once: the page is redrawn when the
        # index completes, and while it runs, the caption drawn before stays beside the new one.
        expect(jump.get_by_text(EXACT)).to_have_count(1, timeout=30_000)
        expect(jump.get_by_text(EXACT)).to_be_visible()
        no_errors(jump)

        page = browser.new_page(viewport=VIEWPORT)
        # The picker lists the bucket under the root; the first page of the object.
        page.goto(url)
        box = page.get_by_role("textbox", name="TFRecord path")
        box.fill("s3://bkt/outside/secret.tfrecord")
        box.press("Enter")
        expect(page.get_by_text("outside the root").first).to_be_visible(timeout=30_000)
        box.fill("det.tfrecord")
        box.press("Enter")
        expect(page).to_have_url(re.compile(r"file=det\.tfrecord"), timeout=30_000)
        expect(_cell(page, 1, 0)).to_have_text("0", timeout=30_000)
        expect(page.get_by_text("Remote (s3://)").first).to_be_visible()
        expect(page.get_by_text("Record 0", exact=True)).to_be_visible()
        settled(page)
        no_errors(page)
        shot(page, "remote-first-page.png")

        # The gallery of the same object.
        page.goto(f"{url}/gallery?file=det.tfrecord")
        pictures = page.locator(".st-key-tfb-gallery img")
        expect(pictures).to_have_count(25, timeout=30_000)
        settled(page)
        no_errors(page)
        shot(page, "remote-gallery.png")

        # A deep link to a record, opened in a fresh page.
        record = half + 7
        fresh = browser.new_page(viewport=VIEWPORT)
        fresh.goto(f"{url}/?file=det.tfrecord&record={record}")
        expect(fresh.get_by_text(f"Record {record:,}", exact=True)).to_be_visible(timeout=30_000)
        expect(_cell(fresh, 1, record % 25)).to_have_text(f"{record}", timeout=30_000)
        settled(fresh)
        no_errors(fresh)
        shot(fresh, "remote-deep-link.png")


def test_exact_landed_numbers_are_not_redrawn_while_the_index_grows(
    tmp_path: Path, s3: MotoS3, s3_proxy: FaultProxy
) -> None:
    """The landing looks at its numbers again every few seconds only while some are
    estimates: once the index has reached them (and goes on past them, slowly), the page's
    records are no longer sent again. Counted in the messages the browser receives."""
    from playwright.sync_api import expect

    payloads = _payloads(tmp_path)
    s3.put("bkt", "data/det.tfrecord", b"".join(encode_record(p) for p in payloads))
    s3_proxy.bandwidth = 0.5e6  # the whole object takes about 45 s to index
    with (
        app_server(tmp_path, ["--root", "s3://bkt/data"], cache=tmp_path / "c", env=BLOCKS) as url,
        chromium() as browser,
    ):
        page = browser.new_page(viewport=VIEWPORT)
        frames: list[bytes | str] = []
        exact_at = [0.0, 0]  # when a frame last said so, and how many frames came since

        def received(frame: bytes | str) -> None:
            frames.append(frame)
            exact_at[1] += 1
            if isinstance(frame, bytes) and EXACT.encode() in frame:
                exact_at[:] = [time.monotonic(), 0]

        page.on("websocket", lambda ws: ws.on("framereceived", received))
        page.goto(f"{url}/?file=det.tfrecord&at=8")
        expect(page.get_by_text(EXACT).first).to_be_visible(timeout=60_000)

        # A timer tick already on its way when the numbers turned exact may still redraw
        # once, as late as the server gets to it: wait until no frame has said so for more
        # than a refresh period and for a few of the header's runs (each sends some frames;
        # the server answers in order, so a tick sent before is answered by then).
        def quiet() -> None:
            page.evaluate("0")  # frames received meanwhile are handed over
            assert time.monotonic() - exact_at[0] >= 2.5, "the numbers were sent again"
            assert exact_at[1] >= 20, "the server has not answered a few runs since"

        until(quiet, what="the landing no longer redrawn")
        seen = len(frames)
        # What is asserted is what does not come: three of the landing's refresh periods.
        page.wait_for_timeout(6_000)
        assert page.get_by_text("Indexing…").count() == 1  # the index is still growing
        later = [f for f in frames[seen:] if isinstance(f, bytes)]
        assert later, "the header's indexing sends its progress meanwhile"
        assert not [f for f in later if EXACT.encode() in f]
        no_errors(page)
