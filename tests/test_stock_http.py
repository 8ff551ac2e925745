"""Against a server that is not ours: Python's own ``http.server``, which answers no
ranged request (every GET sends the whole file). The object is read forward, once: ``dump``
of the first record reads its first blocks, ``info`` reads the object about once; bytes are
counted by a proxy in front of the server."""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import run_cli
from netservers import FaultProxy

import codec

REPO = Path(__file__).resolve().parent.parent
RECORDS = 32_000  # of 4,000 bytes: some 122 MiB


@pytest.fixture(scope="module")
def stock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FaultProxy, str, int]]:
    folder = tmp_path_factory.mktemp("www")
    path = folder / "big.tfrecord"
    rng = random.Random(5)
    codec.write_records(path, (rng.randbytes(4000) for _ in range(RECORDS)))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "http.server did not start"
                time.sleep(0.1)
        with FaultProxy(f"http://127.0.0.1:{port}") as proxy:
            yield proxy, f"{proxy.endpoint}/big.tfrecord", path.stat().st_size
    finally:
        server.terminate()
        server.wait(10)


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cache=tmp_path / "cache")


def test_dump_of_the_first_record_reads_its_first_blocks(stock, tmp_path: Path) -> None:
    proxy, url, _size = stock
    proxy.reset_stats()
    done = _cli(tmp_path, "dump", url, "--records", "0:2", "--json")
    assert done.returncode == 0, done.stderr
    assert [json.loads(x)["index"] for x in done.stdout.splitlines()] == [0, 1]
    assert proxy.bytes_forwarded <= 64 << 20, proxy.bytes_forwarded


def test_info_reads_the_object_about_once(stock, tmp_path: Path) -> None:
    proxy, url, size = stock
    proxy.reset_stats()
    done = _cli(tmp_path, "info", url, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"][0]["records"] == RECORDS
    # Once, and a few blocks: the start read again when the server turns out to send no
    # ranges, and what a refused ranged answer had sent before it was closed.
    assert proxy.bytes_forwarded <= size + (24 << 20), (proxy.bytes_forwarded, size)


def test_s3_sends_the_bytes_the_reader_takes(
    s3, s3_proxy: FaultProxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Against moto's S3 (ranged reads): the bytes the server sends are the bytes our reader
    asked for, block by block, with no library's read-ahead on top (each 4 MiB block once,
    not as 8 MiB): after the first record, and after a full index (the object, once)."""
    rng = random.Random(7)
    path = tmp_path / "obj.tfrecord"
    codec.write_records(path, (rng.randbytes(4000) for _ in range(8_000)))  # some 31 MiB
    size = path.stat().st_size
    s3.put("stock", "obj.tfrecord", path.read_bytes())
    url = "s3://stock/obj.tfrecord"
    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(tmp_path / "cache"))
    s3_proxy.reset_stats()
    with codec.TFRecordFile(url) as f:
        assert len(f.read(0)) == 4000
        source = f._source
        _settle(source)
        first = source.bytes_read
        sent = _sent(s3_proxy, first)
        assert first <= sent <= first + (64 << 10), (sent, first)
        f.build_index()
        assert len(f) == 8_000
        _settle(source)
        read = source.bytes_read
        assert size <= read <= size + (64 << 10), (read, size)
        sent = _sent(s3_proxy, read)
        assert read <= sent <= read + (64 << 10), (sent, read)


def _settle(source: Any) -> None:
    """Wait (with a deadline) until the blocks a remote source is still fetching ahead have
    arrived, so its count and the proxy's are final."""
    deadline = time.monotonic() + 60
    while source._inflight:
        assert time.monotonic() < deadline, "read-ahead never ended"
        time.sleep(0.02)


def _sent(proxy: FaultProxy, least: int) -> int:
    """The proxy's count of bytes sent once it reaches ``least``, or after 10 s: its threads
    add to it just after writing, which can be after the client has read the bytes."""
    deadline = time.monotonic() + 10
    while proxy.bytes_forwarded < least and time.monotonic() < deadline:
        time.sleep(0.02)
    return proxy.bytes_forwarded
