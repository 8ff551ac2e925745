"""A remote object's block cache on a disk that fills up: answers stay exact. A block is
there only once written whole and synced (its CRC noted beside it, checked on first use), a
write that finds the disk full makes room or is a clear error, nothing is ever read through
a memory map that a full disk could not back (no SIGBUS), and a block damaged on disk is
fetched again rather than read as the object's. The cache folder is a small tmpfs the test
mounts (skipped where it cannot)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import run_cli
from netservers import RangeHTTPServer, SyntheticTFRecord

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def small(tmp_path: Path) -> Iterator[Path]:
    """A 48 MiB tmpfs for the cache."""
    mnt = tmp_path / "cache"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mnt)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small folder here: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, SyntheticTFRecord]]:
    obj = SyntheticTFRecord(96 << 20, 4096)  # larger than the cache: it must make room
    with RangeHTTPServer({"d/big.tfrecord": obj}) as server:
        yield server.url("d/big.tfrecord"), obj


def _verify(url: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("verify", url, "--json", "--executor", "inline", cache=cache)


def _intact(done: subprocess.CompletedProcess[str], records: int) -> None:
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)["files"]
    assert (report["records"], report["problems"], report["recovered"]) == (records, [], 0)


def _exact_or_said(done: subprocess.CompletedProcess[str], records: int) -> None:
    """A run on a full disk: the exact answer, or the disk's fullness said; never a crash,
    never damage that the object does not have."""
    assert done.returncode not in (-signal.SIGBUS, -signal.SIGSEGV), done.stderr
    assert "Traceback" not in done.stderr
    if "no room" in done.stdout + done.stderr:
        return
    _intact(done, records)


def test_a_disk_that_fills_mid_read_is_said_and_later_answers_are_exact(small, served) -> None:
    url, obj = served
    _exact_or_said(_verify(url, small), obj.records)  # 96 MiB read through 48 MiB
    filler = small / "filler"
    with open(filler, "wb") as f:  # and now with another file taking most of it
        try:
            while os.statvfs(small).f_bavail * os.statvfs(small).f_frsize > (9 << 20):
                f.write(b"\0" * (1 << 20))
                f.flush()
        except OSError:
            pass
    _exact_or_said(_verify(url, small), obj.records)
    filler.unlink()
    grown = subprocess.run(["mount", "-o", "remount,size=256m", str(small)], capture_output=True)
    assert grown.returncode == 0, grown.stderr
    _intact(_verify(url, small), obj.records)  # room made: exact, over what was kept
    _intact(_verify(url, small), obj.records)


def test_no_room_at_all_is_an_error_not_a_crash(small, served) -> None:
    url, _ = served
    with open(small / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * (1 << 20))
        except OSError:
            pass
    done = _verify(url, small)
    assert done.returncode not in (-signal.SIGBUS, -signal.SIGSEGV), done.stderr
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "no room" in done.stdout + done.stderr


def test_a_block_damaged_on_disk_is_fetched_again(tmp_path: Path, served) -> None:
    url, obj = served
    cache = tmp_path / "cache"
    _intact(_verify(url, cache), obj.records)
    (blocks,) = (cache / "remote").glob("*.blocks")
    with open(blocks, "r+b") as f:  # a block cut short or rotten since it was kept
        f.seek(5 << 20)
        f.write(b"\xff" * 4096)
    _intact(_verify(url, cache), obj.records)
