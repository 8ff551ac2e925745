"""A closed tab's schema job stops, in the real app and headless Chromium: the Schema page's
"Read every record" over 8 shards of wide records, on 2 local processes (``view --executor
processes:2``), is running on its workers when the tab is closed; the workers are gone and
the server and everything below it stop using CPU soon after, and another tab finds the
server answering and no schema kept (a job that went on for nobody would have left its
schema for every tab). The filter's job is checked the same way in
``test_e2e_tab_closed.py``; this one goes through the Schema page's shared results and
measures the CPU used after the close."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import (
    ARTIFACTS,
    browser_fixture,
    serve,
    servers_of,
    settled,
    shot,
    until,
)
from test_e2e_jobs import _children, _workers

from codec.example import encode_example
from codec.writer import write_records

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHARDS = 8
PER_SHARD = 32_000  # 256,000 records: more than the page infers by itself on opening
FEATURES = 64  # one number each: the schema's work per record grows with them (8 shards of
# 28 MiB; the job's CPU is some 14 s: 25 s on 2 processes at a load of 8)


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wide")
    distinct = [
        encode_example({f"f{k}": ("int64", [i % (k + 2)]) for k in range(FEATURES)})
        for i in range(1000)
    ]
    write_records(root / "wide-00.tfrecord", distinct * (PER_SHARD // len(distinct)))
    for k in range(1, SHARDS):
        shutil.copy(root / "wide-00.tfrecord", root / f"wide-{k:02d}.tfrecord")
    return root


@pytest.fixture(scope="module")
def server(shards: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    args = [str(shards / "wide-*.tfrecord"), "--root", str(shards), "--executor", "processes:2"]
    yield from serve(tmp_path_factory, args)


browser = browser_fixture()


def _ticks(pid: int) -> int:
    """CPU time (clock ticks, user and system) of ``pid`` and every process below it, the
    children it has reaped included (``cutime``/``cstime``): what the server has spent."""
    total = 0
    for p in [pid, *_children(pid)]:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile: its time is in its parent's cutime once reaped
        total += sum(int(x) for x in fields[11:13])  # utime, stime
        if p == pid:
            total += sum(int(x) for x in fields[13:15])  # cutime, cstime
    return total


def test_a_closed_tabs_schema_job_stops_using_the_cpu(server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    hz = os.sysconf("SC_CLK_TCK")
    (pid,) = servers_of(int(server.rsplit(":", 1)[1]))
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.goto(server + "/schema?file=wide-*.tfrecord")
    start = page.get_by_role("button", name="Read every record")
    expect(start).to_have_count(1, timeout=60_000)
    bar = page.get_by_test_id("stProgress").filter(has_text="Inferring the schema")
    settled(page)  # the index complete: its last step reruns the page, losing a click then
    start.click()
    expect(bar).to_contain_text(re.compile(r"of 8 tasks"), timeout=60_000)

    def running() -> None:
        assert len(_workers(pid)) == 2, f"the job runs on {_workers(pid)}"

    until(running, timeout=60, what="the schema job's workers running")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "tab-closed-schema-running.png"))  # not settled: running
    done = re.search(r"(\d+) of 8 tasks", bar.text_content() or "")
    assert done is not None and int(done.group(1)) <= 4, "the job ends too soon to test"
    closed = time.monotonic()
    page.close()  # the tab goes

    def workers_gone() -> None:
        assert not _workers(pid), f"worker processes left: {_workers(pid)}"

    until(workers_gone, timeout=30, what="the closed tab's workers gone")
    gone_after = time.monotonic() - closed
    # Then the server's processes are idle: over a 2-second look, the server and whatever
    # runs below it use less than a tenth of a core (the job used two).
    looks: list[tuple[float, int]] = []

    def idle() -> None:
        looks.append((time.monotonic(), _ticks(pid)))
        earlier = [x for x in looks if looks[-1][0] - x[0] >= 2.0]
        assert earlier, "not looked for 2 s yet"
        t, ticks = earlier[-1]
        used = (looks[-1][1] - ticks) / hz / (looks[-1][0] - t)
        assert used < 0.1, f"the server still uses {used:.2f} cores"

    until(idle, timeout=30, what="the server's CPU at rest after the tab closed")
    idle_after = time.monotonic() - closed
    # The server still answers another tab, and nothing of the job was kept: had the job
    # gone on for nobody, its schema would be there for every tab (the results are shared).
    page = context.new_page()
    page.goto(server + "/schema?file=wide-*.tfrecord")
    button = page.get_by_role("button", name="Read every record")
    kept = page.get_by_text("Records read")  # the schema's first figure
    expect(button.or_(kept).first).to_be_attached(timeout=60_000)
    settled(page)
    assert kept.count() == 0, "the closed tab's job went on: its schema was kept"
    expect(button).to_have_count(1)
    shot(page, "tab-closed-schema-next-tab.png")
    assert not _workers(pid)
    context.close()
    print(f"workers gone {gone_after:.1f} s, CPU at rest {idle_after:.1f} s after the close")
