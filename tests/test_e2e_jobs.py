"""A dataset-wide job in the real app, in headless Chromium: the schema of 3,200,000 records in
8 shards, run on 2 local processes (``view --executor processes:2``), shows its progress
and is cancelled with its Cancel button: the page says nothing was kept, the job does not
start again by itself, and no worker process is left. Screenshots go to ``artifacts/``."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import (
    ARTIFACTS,
    browser_fixture,
    no_errors,
    serve,
    servers_of,
    settled,
    shot,
    until,
)

from codec.example import encode_example
from codec.writer import write_records

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CANCELLED = "Inferring the schema was cancelled — nothing was kept."
SHARDS = 8
# The schema of 8 × 400,000 records takes seconds on 2 processes (~1 million records a
# second): long enough to see tasks finish before it ends, and to cancel it.
PER_SHARD = 400_000


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("jobs")
    distinct = [
        encode_example(
            {
                "label": ("int64", [i % 7]),
                "score": ("float", [i * 0.5, 1.0]),
                "name": ("bytes", [b"rec-%d" % i]),
            }
        )
        for i in range(1000)
    ]
    write_records(root / "shard-00.tfrecord", distinct * (PER_SHARD // len(distinct)))
    for k in range(1, SHARDS):
        shutil.copy(root / "shard-00.tfrecord", root / f"shard-{k:02d}.tfrecord")
    return root


@pytest.fixture(scope="module")
def server(shards: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    args = [str(shards / "shard-*.tfrecord"), "--root", str(shards), "--executor", "processes:2"]
    yield from serve(tmp_path_factory, args)


browser = browser_fixture()


def _settled(page) -> None:  # type: ignore[no-untyped-def]
    """The page has finished indexing and running."""
    from playwright.sync_api import expect

    expect(page.get_by_test_id("stProgress").filter(has_text="Indexing")).to_have_count(
        0, timeout=60_000
    )
    settled(page)


def _children(pid: int) -> dict[int, str]:
    """Every process below ``pid``: its command line."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                parents[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        p = todo.pop()
        for child, parent in parents.items():
            if parent == p and child not in found:
                try:
                    with open(f"/proc/{child}/cmdline", "rb") as f:
                        found[child] = f.read().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                todo.append(child)
    return found


def _server_pid(url: str) -> int:
    """The Streamlit server process serving ``url``."""
    (pid,) = servers_of(int(url.rsplit(":", 1)[1]))
    return pid


def _workers(pid: int) -> list[str]:
    """The job's worker processes below the server (the pool's spawned children; not the
    resource tracker multiprocessing keeps for the server's lifetime)."""
    return [cmd for cmd in _children(pid).values() if "spawn_main" in cmd]


def test_a_long_job_is_cancelled_and_leaves_no_worker(server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    pid = _server_pid(server)
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.goto(server + "/schema?file=shard-*.tfrecord")
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text("Jobs run on this machine (2 processes)")).to_be_visible(
        timeout=60_000
    )
    start = page.get_by_role("button", name="Read every record")
    expect(start).to_have_count(1, timeout=60_000)  # an old copy stays while the page reruns
    # The job's bar (the header shows the indexing's too while it runs).
    bar = page.get_by_test_id("stProgress").filter(has_text="Inferring the schema")
    _settled(page)  # the index complete: its last step reruns the page, losing a click then
    start.click()
    expect(bar).to_contain_text(re.compile(r"Inferring the schema on this machine"), timeout=60_000)
    # Running on the pool: its progress counts tasks, bytes and records per second.
    expect(bar).to_contain_text(re.compile(r"of 8 tasks · .* of .*MiB · [\d,]+ records/s"))
    # Tasks finish on the worker processes while the page runs (a few seconds in all).
    expect(bar).to_contain_text(re.compile(r"[1-7] of 8 tasks"), timeout=60_000)
    assert _workers(pid), "the job runs on no worker process"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "jobs-running.png"))  # while it runs: not settled
    page.get_by_role("button", name="Cancel").click()
    expect(page.get_by_text(CANCELLED)).to_be_visible(timeout=30_000)
    expect(bar).to_have_count(0)

    def no_worker_left() -> None:
        assert not _workers(pid), f"worker processes left: {_workers(pid)}"

    until(no_worker_left, timeout=30, what="the job's workers gone")
    shot(page, "jobs-cancelled.png")
    # It does not start again by itself: a rerun (another widget) still says cancelled.
    sample = page.get_by_text("Only a sample")
    sample.click()
    expect(page.get_by_role("button", name="Read a sample of 10,000 records")).to_be_visible()
    sample.click()
    expect(start).to_be_visible()
    expect(page.get_by_text(CANCELLED)).to_be_visible()
    assert bar.count() == 0
    assert not _workers(pid)
    no_errors(page)
    page.set_viewport_size({"width": 1440, "height": 1600})
    sidebar.get_by_text("Where jobs run").click()  # scrolled into view by the click
    expect(sidebar.get_by_text("Run dataset-wide jobs on")).to_be_visible()
    shot(page, "jobs-sidebar.png", target=sidebar)
    context.close()
