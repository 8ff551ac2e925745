"""Remote objects through a slow link: a range-serving HTTP server behind a proxy that adds
50 ms to every request and caps the link at 100 MB/s (both from ``tests/netservers.py``, run
on threads of this process), and every measurement in a fresh process of its own with an empty
cache folder (``TFRECORD_BROWSER_CACHE``), so nothing read before helps it.

- the proxy's and the server's own ceiling (no latency, no cap), and the client's (our reader
  through the uncapped proxy, block cache on disk): the link must be the only bottleneck;
- the first page of a 10 GB object of 100 kB records (open + 50 records + the records page's
  view) and the bytes it read from the object, counted at the proxy, at the server and by the
  reader (``RemoteSource.bytes_read``);
- a jump to 50 % of it without an index (``TFRecordDataset.land``) and reading the records
  there, cold;
- a full index of it (and a full verify) as a share of the link's bandwidth, with memory
  sampled and the block cache capped (``TFRECORD_BROWSER_REMOTE_CACHE_CAP``);
- a gallery page of a 20,000-picture dataset, local and remote once its blocks are cached;
- what people do today, downloading the object whole and opening it, against the first page;
- memory while paging the remote object from end to end;
- the command line against a stock server (Python's own ``http.server``: HTTP/1.0, no
  ranged answers) over the same link: ``dump --records 0`` and ``info`` of a 2 GiB object,
  their time, the bytes the proxy sent, and those against the bytes the reader took (a
  library's read-ahead on top of ours would show there), beside downloading it whole.

    python -m benchmarks --only remote            # 10 GB (about 10 minutes)
    python -m benchmarks --only remote --quick    # 1 GB (the stock server: 256 MiB)
    python -m benchmarks.bench_remote --sweep     # block sizes 1-16 MiB on 1 GB
    python -m benchmarks.bench_remote --stock [--quick]   # the stock server part alone

Nothing leaves 127.0.0.1. The synthetic object is computed on the fly (no disk); the
download, the block caches and the 20,000-picture file (shared with the ``ui`` group) take
disk space while they exist.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import Row, table

REPO = Path(__file__).resolve().parent.parent
GROUP = "remote"
LATENCY = 0.050  # seconds per request
BANDWIDTH = 100e6  # bytes/s, all connections together
RECORD_PAYLOAD = 100_000
PAGE = 50
GALLERY_PAGE = 100  # the gallery's page, as in the ui group
OBJECT = "big.tfrecord"
SMALL = "small.tfrecord"
INDEX_CAP = "2G"
CHILD_TIMEOUT = 3600.0
SWEEP_BLOCKS = ("1M", "2M", "4M", "8M", "16M")

FIRST_PAGE_TARGET_S = 2.0
FIRST_PAGE_BYTES_TARGET = 64 << 20
JUMP_TARGET_S = 1.0
LINK_SHARE_TARGET = 0.80
GALLERY_RATIO_TARGET = 2.0
DOWNLOAD_RATIO_TARGET = 20.0
PAGING_GROWTH_TARGET_MB = 100.0
STOCK_SIZE, STOCK_QUICK_SIZE = 2 << 30, 256 << 20  # the object behind the stock server
STOCK_DUMP_TARGET_S = 2.0
STOCK_DUMP_BYTES_TARGET = 64 << 20
STOCK_INFO_RATIO_TARGET = 1.05

MiB = 1 << 20


# -- in the measuring process -----------------------------------------------------------------


def _status() -> dict[str, float]:
    """This process's resident memory in MB: VmRSS, RssAnon (the heap), RssFile (mapped
    files, which the kernel may drop at any time) and VmHWM (the peak)."""
    out: dict[str, float] = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[key] = int(rest.split()[0]) / 1024
    return out


class _Memory:
    """Resident memory sampled every ``every`` seconds on a thread while it is entered."""

    def __init__(self, every: float = 0.1) -> None:
        self.every = every
        self.samples: list[dict[str, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.samples.append(_status())

    def __enter__(self) -> _Memory:
        self.samples.append(_status())
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(_status())

    def summary(self) -> dict[str, float]:
        s = self.samples
        tenth = max(1, len(s) // 10)
        return {
            "anon_first_tenth": statistics.median(x["RssAnon"] for x in s[:tenth]),
            "anon_last_tenth": statistics.median(x["RssAnon"] for x in s[-tenth:]),
            "rss_start": s[0]["VmRSS"],
            "rss_max": max(x["VmRSS"] for x in s),
            "rss_end": s[-1]["VmRSS"],
            "anon_start": s[0]["RssAnon"],
            "anon_max": max(x["RssAnon"] for x in s),
            "anon_end": s[-1]["RssAnon"],
            "file_max": max(x["RssFile"] for x in s),
        }


def _cpu_seconds() -> float:
    """CPU time of this process so far, user and system (the kernel's work of writing the
    block cache to disk is system time)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _settle(src: Any) -> None:
    """Wait until the blocks a source is still fetching (its read-ahead) have arrived."""
    while True:
        with src._lock:
            pending = list(src._inflight.values())
        if not pending:
            return
        for fut in pending:
            with contextlib.suppress(Exception):
                fut.result()


def _remote_libraries() -> float:
    """Import fsspec's HTTP file system and aiohttp (once per process; a running app has paid
    it at its first remote open); the seconds it took."""
    t0 = time.perf_counter()
    import aiohttp  # noqa: F401
    import fsspec.implementations.http  # noqa: F401

    return time.perf_counter() - t0


def child_first_page(url: str) -> dict[str, Any]:
    """Open a dataset on ``url`` and present its first page as the records page does."""
    import codec
    from browser_app import view

    imports = _remote_libraries()
    t0 = time.perf_counter()
    ds = codec.TFRecordDataset([url])
    t1 = time.perf_counter()
    shown = view.page_view(ds.page(0, PAGE))
    t2 = time.perf_counter()
    src = ds.files[0]._source
    bytes_at_page, requests_at_page = src.bytes_read, src.requests
    assert len(shown.rows) == PAGE, len(shown.rows)
    _settle(src)
    return {
        "imports": imports,
        "open": t1 - t0,
        "page": t2 - t1,
        "total": t2 - t0,
        "bytes_at_page": bytes_at_page,
        "requests_at_page": requests_at_page,
        "bytes_settled": src.bytes_read,
    }


def child_jump(url: str, fraction: float) -> dict[str, Any]:
    """Open a dataset on ``url`` and jump at once to ``fraction`` of its bytes without an
    index: land there and decode the page of records found."""
    import codec
    from codec import example as ex

    _remote_libraries()
    t0 = time.perf_counter()
    ds = codec.TFRecordDataset([url])
    t1 = time.perf_counter()
    landing = ds.land(fraction, PAGE)
    f = ds.files[landing.file]
    records = [ex.decode(f.read_at(off), "auto") for off, _ in landing.landing.spans]
    t2 = time.perf_counter()
    src = f._source
    bytes_at_page = src.bytes_read
    number = records[0].features["index"].values[0] if records else -1
    _settle(src)
    return {
        "open": t1 - t0,
        "jump": t2 - t1,
        "total": t2 - t0,
        "records": len(records),
        "estimate": landing.estimate,
        "actual": int(number),
        "bytes_at_page": bytes_at_page,
        "bytes_settled": src.bytes_read,
    }


def child_index(url: str, verify: bool = False) -> dict[str, Any]:
    """Index (or verify) the whole object, memory sampled."""
    import codec

    _remote_libraries()
    t0 = time.perf_counter()
    cpu0 = _cpu_seconds()
    f = codec.TFRecordFile(url)
    with _Memory() as memory:
        if verify:
            report = f.verify()
            records = report.records
        else:
            f.build_index()
            records = len(f)
    seconds = time.perf_counter() - t0
    return {
        "seconds": seconds,
        "cpu": _cpu_seconds() - cpu0,
        "records": records,
        "size": f.size,
        "bytes_read": f._source.bytes_read,
        "requests": f._source.requests,
        **memory.summary(),
    }


def child_gallery(spec: str, starts: list[int]) -> dict[str, Any]:
    """A gallery page at each of ``starts``: its first time (blocks fetched, index built as
    far as there) and the best of three once cached, through the gallery's view."""
    import codec
    from browser_app import view

    if "://" in spec:
        _remote_libraries()
    ds = codec.TFRecordDataset([spec])
    first: list[float] = []
    cached: list[float] = []
    cpu: list[float] = []
    for start in starts:

        def page(start: int = start) -> int:
            return len(view.gallery_items(ds.page(start, start + GALLERY_PAGE), size=160))

        t0 = time.perf_counter()
        tiles = page()
        first.append(time.perf_counter() - t0)
        assert tiles == GALLERY_PAGE, tiles
        best = best_cpu = float("inf")
        for _ in range(3):
            t0, c0 = time.perf_counter(), time.process_time()
            page()
            best = min(best, time.perf_counter() - t0)
            best_cpu = min(best_cpu, time.process_time() - c0)
        cached.append(best)
        cpu.append(best_cpu)
    return {"first": first, "cached": cached, "cpu": cpu}


def child_download(url: str, dest: str) -> dict[str, Any]:
    """What people do today: download the object whole, then open the file for its first
    page."""
    import fsspec

    import codec
    from browser_app import view

    _remote_libraries()
    t0 = time.perf_counter()
    fsspec.filesystem("http").get_file(url, dest)
    t1 = time.perf_counter()
    ds = codec.TFRecordDataset([dest])
    shown = view.page_view(ds.page(0, PAGE))
    t2 = time.perf_counter()
    assert len(shown.rows) == PAGE
    return {"download": t1 - t0, "first_page": t2 - t1, "total": t2 - t0}


def child_paging(url: str, stride: int) -> dict[str, Any]:
    """Page through the object from its start to its end in pages of 50 (every
    ``stride``-th page), presenting each as the records page does; memory sampled."""
    import codec
    from browser_app import view

    _remote_libraries()
    ds = codec.TFRecordDataset([url])
    view.page_view(ds.page(0, PAGE))
    src = ds.files[0]._source
    pages = records = 0
    t0 = time.perf_counter()
    with _Memory(every=0.25) as memory:
        start = PAGE * stride
        while True:
            shown = view.page_view(ds.page(start, start + PAGE))
            pages += 1
            records += len(shown.rows)
            if len(shown.rows) < PAGE:
                break
            start += PAGE * stride
    seconds = time.perf_counter() - t0
    return {
        "pages": pages,
        "records": records,
        "last": start + len(shown.rows),
        "seconds": seconds,
        "bytes_read": src.bytes_read,
        **memory.summary(),
    }


def child_ceiling(url: str, size: int, connections: int, block: int) -> dict[str, Any]:
    """Plain ranged GETs of ``block`` bytes on ``connections`` kept-alive connections
    (http.client, nothing else in the way) over the first ``size`` bytes: MB/s."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    lock = threading.Lock()
    state = {"next": 0, "got": 0}

    def worker() -> None:
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port)
        buf = bytearray(MiB)
        while True:
            with lock:
                a = state["next"]
                state["next"] += block
            if a >= size:
                conn.close()
                return
            b = min(size, a + block)
            conn.request("GET", parts.path, headers={"Range": f"bytes={a}-{b - 1}"})
            response = conn.getresponse()
            n = 0
            while response.length:
                n += response.readinto(memoryview(buf)[: min(len(buf), response.length)])
            response.read()
            with lock:
                state["got"] += n

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "bytes": state["got"]}


def child_cli(*argv: str) -> dict[str, Any]:
    """``tfrecord-browser ARGV`` run in this process (its output kept, not printed), and
    what every remote object it opened read (``RemoteObject.bytes_read`` and ``requests``
    summed: the bytes the reader took, before any library's read-ahead)."""
    import contextlib
    import io

    import codec.remote

    t0 = time.perf_counter()
    opened: list[Any] = []
    init = codec.remote.RemoteObject.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        opened.append(self)

    codec.remote.RemoteObject.__init__ = counted  # type: ignore[method-assign]
    from browser_app.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return {
        "code": code,
        "seconds": time.perf_counter() - t0,
        "stdout": out.getvalue(),
        "reader_bytes": sum(o.bytes_read for o in opened),
        "reader_requests": sum(o.requests for o in opened),
    }


CHILDREN: dict[str, Callable[..., dict[str, Any]]] = {
    "cli": child_cli,
    "first_page": child_first_page,
    "jump": child_jump,
    "index": child_index,
    "gallery": child_gallery,
    "download": child_download,
    "paging": child_paging,
    "ceiling": child_ceiling,
}


# -- in the benchmark's process ---------------------------------------------------------------


class Link:
    """The range server (the synthetic object, and the files under ``root``) behind the
    latency/bandwidth proxy, on threads of this process."""

    def __init__(self, size: int, root: Path | None) -> None:
        from tests.netservers import FaultProxy, RangeHTTPServer, SyntheticTFRecord

        self.object = SyntheticTFRecord(size, RECORD_PAYLOAD)
        # ceilings are measured on at most 1 GB of the same records
        self.small = SyntheticTFRecord(min(size, 1_000_000_000), RECORD_PAYLOAD)
        objects = {OBJECT: self.object, SMALL: self.small}
        self.server = RangeHTTPServer(objects, root=root).start()
        self.proxy = FaultProxy(self.server.base_url, latency=LATENCY, bandwidth=BANDWIDTH)
        self.proxy.start()

    def url(self, name: str = OBJECT) -> str:
        return self.proxy.url(name)

    @contextlib.contextmanager
    def unlimited(self) -> Iterator[None]:
        """No latency and no bandwidth cap while inside."""
        self.proxy.latency, self.proxy.bandwidth = 0.0, None
        try:
            yield
        finally:
            self.proxy.latency, self.proxy.bandwidth = LATENCY, BANDWIDTH

    def stop(self) -> None:
        self.proxy.stop()
        self.server.stop()


class StockLink:
    """Python's own ``http.server`` (a process of its own: HTTP/1.0, every GET answered with
    the whole file, ``Range`` or not) serving a generated object of ``size`` bytes from a
    temporary folder, behind the latency/bandwidth proxy."""

    def __init__(self, size: int) -> None:
        import socket
        import urllib.request

        from tests.netservers import FaultProxy, SyntheticTFRecord

        self.folder = tempfile.TemporaryDirectory(prefix="bench-remote-stock-")
        self.object = SyntheticTFRecord(size, RECORD_PAYLOAD)
        with open(Path(self.folder.name) / OBJECT, "wb") as f:
            for a in range(0, self.object.size, 16 * MiB):
                f.write(self.object.read(a, min(self.object.size, a + 16 * MiB)))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
            cwd=self.folder.name,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.server.poll() is not None:
                    self.stop()
                    raise RuntimeError("http.server did not start") from None
                time.sleep(0.1)
        self.proxy = FaultProxy(f"http://127.0.0.1:{port}", latency=LATENCY, bandwidth=BANDWIDTH)
        self.proxy.start()

    def url(self) -> str:
        return self.proxy.url(OBJECT)

    def stop(self) -> None:
        with contextlib.suppress(AttributeError):
            self.proxy.stop()
        self.server.terminate()
        self.server.wait(10)
        self.folder.cleanup()


def measure(
    link: Link | StockLink | None,
    name: str,
    *args: Any,
    env: dict[str, str] | None = None,
    cache_root: str | None = None,
) -> dict[str, Any]:
    """Run ``CHILDREN[name](*args)`` in a fresh process with an empty cache folder; its
    result with the bytes and requests the proxy and the server saw for it, and the block
    cache's size on disk when it ended (``cache_bytes``)."""
    from codec.remote import remote_usage

    with tempfile.TemporaryDirectory(prefix="bench-remote-", dir=cache_root) as cache:
        environ = dict(os.environ, **(env or {}))
        environ["TFRECORD_BROWSER_CACHE"] = cache
        environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO), environ.get("PYTHONPATH", "")) if p
        )
        before = (0, 0, 0) if link is None else _counters(link)
        cpu0 = _cpu_seconds()  # this process: the proxy's and the server's threads
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_remote", "--child", name, json.dumps(args)],
            cwd=REPO,
            env=environ,
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{name} failed:\n{proc.stderr[-3000:]}")
        line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")][-1]
        result: dict[str, Any] = json.loads(line[len("RESULT ") :])
        result["process_seconds"] = time.perf_counter() - t0  # as a person waits for it
        if link is not None:
            time.sleep(0.2)  # the last chunks' counters
            after = _counters(link)
            result["proxy_bytes"] = after[0] - before[0]
            result["proxy_requests"] = after[1] - before[1]
            result["server_bytes"] = after[2] - before[2]
            result["link_cpu"] = _cpu_seconds() - cpu0
        result["cache_bytes"] = remote_usage(Path(cache))[0]
    return result


def _counters(link: Link | StockLink) -> tuple[int, int, int]:
    """Bytes and requests at the proxy, and bytes the server sent (a stock server counts
    nothing: the proxy's bytes are all there is)."""
    sent = link.server.bytes_sent if isinstance(link, Link) else link.proxy.bytes_forwarded
    return link.proxy.bytes_forwarded, link.proxy.requests, sent


def _median_of(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in runs))


def _size_label(size: int) -> str:
    return f"{size / 1e9:.0f} GB"


def ceilings(link: Link, rows: list[Row]) -> None:
    """The proxy's, the server's and the client's ceilings, with no latency and no cap."""
    size = link.small.size
    with link.unlimited():
        for where, url in (("server alone", link.server.url(SMALL)), ("proxy", link.url(SMALL))):
            r = measure(link, "ceiling", url, size, 8, 4 * MiB)
            rows.append(
                Row(
                    GROUP,
                    f"ceiling: {where}, 8 connections, no cap",
                    r["bytes"] / r["seconds"] / 1e6,
                    "MB/s",
                )
            )
        r = measure(link, "index", link.url(SMALL))
        rows.append(
            Row(
                GROUP,
                f"ceiling: our full index through the proxy, no cap ({_size_label(r['size'])})",
                r["size"] / r["seconds"] / 1e6,
                "MB/s",
                f"CPU {r['cpu'] / (r['size'] / 1e9):.1f} s/GB",
            )
        )


def first_page(link: Link, rows: list[Row], runs: int = 3) -> float:
    results = [measure(link, "first_page", link.url()) for _ in range(runs)]
    label = _size_label(link.object.size)
    total = _median_of(results, "total")
    worst_bytes = max(r["proxy_bytes"] for r in results)
    rows += [
        Row(
            GROUP,
            f"first page of {label} (open + 50 records + view), median of {runs}",
            total,
            "s",
            f"<= {FIRST_PAGE_TARGET_S:.0f} s",
            total <= FIRST_PAGE_TARGET_S,
        ),
        Row(
            GROUP, "  of which open (size, version, first block)", _median_of(results, "open"), "s"
        ),
        Row(
            GROUP,
            "  read from the object, at the proxy (read-ahead included)",
            worst_bytes / MiB,
            "MiB",
            f"<= {FIRST_PAGE_BYTES_TARGET // MiB} MiB",
            worst_bytes <= FIRST_PAGE_BYTES_TARGET,
        ),
        Row(GROUP, "  sent by the server", max(r["server_bytes"] for r in results) / MiB, "MiB"),
        Row(
            GROUP,
            "  RemoteSource.bytes_read when the page is shown / settled",
            max(r["bytes_at_page"] for r in results) / MiB,
            "MiB",
            f"{max(r['bytes_settled'] for r in results) / MiB:.0f} MiB settled",
        ),
        Row(GROUP, "  requests (proxy)", max(r["proxy_requests"] for r in results), ""),
        Row(
            GROUP,
            "import of fsspec + aiohttp, once per process (not in the above)",
            _median_of(results, "imports"),
            "s",
        ),
    ]
    return total


def jump(link: Link, rows: list[Row], runs: int = 3) -> None:
    results = [measure(link, "jump", link.url(), 0.5) for _ in range(runs)]
    seconds = _median_of(results, "jump")
    off = max(abs(r["estimate"] - r["actual"]) for r in results)
    rows += [
        Row(
            GROUP,
            f"jump to 50 % without an index, cold (land + 50 records decoded), median of {runs}",
            seconds,
            "s",
            f"<= {JUMP_TARGET_S:.0f} s",
            seconds <= JUMP_TARGET_S and all(r["records"] == PAGE for r in results),
        ),
        Row(GROUP, "  open before it", _median_of(results, "open"), "s"),
        Row(
            GROUP,
            "  read from the object, at the proxy",
            max(r["proxy_bytes"] for r in results) / MiB,
            "MiB",
        ),
        Row(GROUP, "  estimated record number off by", off, "records"),
    ]


def full_index(link: Link, rows: list[Row], verify: bool) -> None:
    env = {"TFRECORD_BROWSER_REMOTE_CACHE_CAP": INDEX_CAP}
    r = measure(link, "index", link.url(), verify, env=env)
    from codec.settings import parse_size

    cap = parse_size(INDEX_CAP)
    what = "verify" if verify else "index"
    rate = r["size"] / r["seconds"]
    share = rate / BANDWIDTH
    label = _size_label(r["size"])
    rows += [
        Row(
            GROUP,
            f"full {what} of {label}: share of the link's 100 MB/s",
            100 * share,
            "%",
            f">= {LINK_SHARE_TARGET:.0%}" if not verify else "",
            share >= LINK_SHARE_TARGET if not verify else None,
        ),
        Row(GROUP, f"  {what}: time", r["seconds"], "s", f"{rate / 1e6:.0f} MB/s"),
        Row(GROUP, f"  {what}: bytes read / object size", r["proxy_bytes"] / r["size"], "x"),
        Row(
            GROUP,
            f"  {what}: CPU of the reading process (user + system) per GB",
            r["cpu"] / (r["size"] / 1e9),
            "s",
            f"{r['cpu'] / r['seconds']:.2f} cores",
        ),
        Row(
            GROUP,
            f"  {what}: CPU of the proxy and the server per GB",
            r["link_cpu"] / (r["size"] / 1e9),
            "s",
            f"{r['link_cpu'] / r['seconds']:.2f} cores",
        ),
        Row(
            GROUP,
            f"  {what}: resident memory start / max / end",
            r["rss_max"],
            "MB",
            f"{r['rss_start']:.0f} / {r['rss_max']:.0f} / {r['rss_end']:.0f}",
        ),
        Row(
            GROUP,
            f"  {what}: heap (RssAnon) start / max / end",
            r["anon_max"],
            "MB",
            f"{r['anon_start']:.0f} / {r['anon_max']:.0f} / {r['anon_end']:.0f}",
        ),
        Row(
            GROUP,
            f"  {what}: block cache on disk after (cap {INDEX_CAP}iB)",
            r["cache_bytes"] / MiB,
            "MiB",
            f"<= {cap // MiB} MiB",
            r["cache_bytes"] <= cap,
        ),
    ]


def gallery(link: Link, rows: list[Row], path: Path, count: int) -> None:
    starts = [0, (count // 2) // GALLERY_PAGE * GALLERY_PAGE, count - GALLERY_PAGE]
    local = measure(None, "gallery", str(path), starts)
    remote = measure(link, "gallery", link.url(path.name), starts)
    lo = statistics.median(local["cached"])
    hi = statistics.median(remote["cached"])
    rows += [
        Row(
            GROUP,
            f"gallery page of {GALLERY_PAGE}, {count:,} pictures, local (median of 3 places)",
            lo * 1000,
            "ms",
        ),
        Row(GROUP, "gallery page, remote once cached (same places)", hi * 1000, "ms"),
        Row(
            GROUP,
            "  remote / local",
            hi / lo,
            "x",
            f"<= {GALLERY_RATIO_TARGET:.0f}x",
            hi / lo <= GALLERY_RATIO_TARGET,
        ),
        Row(
            GROUP,
            "  remote / local, CPU time of the page (less moved by the machine's load)",
            statistics.median(remote["cpu"]) / statistics.median(local["cpu"]),
            "x",
            f"{statistics.median(local['cpu']) * 1000:.0f} / "
            f"{statistics.median(remote['cpu']) * 1000:.0f} ms",
        ),
        Row(
            GROUP,
            "  remote, first visit of each place (blocks fetched)",
            statistics.median(remote["first"]) * 1000,
            "ms",
            f"max {max(remote['first']) * 1000:.0f} ms",
        ),
    ]


def download(link: Link, rows: list[Row], first_page_s: float) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-remote-download-") as tmp:
        r = measure(link, "download", link.url(), str(Path(tmp) / OBJECT))
    ratio = r["total"] / first_page_s
    rows += [
        Row(
            GROUP,
            f"download whole ({_size_label(link.object.size)}) + local first page",
            r["total"],
            "s",
            f"{r['download']:.1f} s + {r['first_page']:.2f} s",
        ),
        Row(
            GROUP,
            "  that / the remote first page",
            ratio,
            "x",
            f">= {DOWNLOAD_RATIO_TARGET:.0f}x",
            ratio >= DOWNLOAD_RATIO_TARGET,
        ),
    ]


def paging(link: Link, rows: list[Row], stride: int) -> None:
    r = measure(link, "paging", link.url(), stride)
    growth = r["anon_max"] - r["anon_start"]
    what = "every page" if stride == 1 else f"every {stride}th page"
    rows += [
        Row(
            GROUP,
            f"paging end to end ({what} of 50, {r['pages']:,} pages): heap growth",
            growth,
            "MB",
            f"< {PAGING_GROWTH_TARGET_MB:.0f} MB",
            growth < PAGING_GROWTH_TARGET_MB,
        ),
        Row(
            GROUP,
            "  resident start / max / end",
            r["rss_max"],
            "MB",
            f"{r['rss_start']:.0f} / {r['rss_max']:.0f} / {r['rss_end']:.0f}",
        ),
        Row(
            GROUP,
            "  heap (RssAnon) start / max / end",
            r["anon_max"],
            "MB",
            f"{r['anon_start']:.0f} / {r['anon_max']:.0f} / {r['anon_end']:.0f}",
        ),
        Row(
            GROUP,
            "  heap, median of the first / last tenth of the run",
            r["anon_last_tenth"] - r["anon_first_tenth"],
            "MB more",
            f"{r['anon_first_tenth']:.0f} / {r['anon_last_tenth']:.0f}",
        ),
        Row(GROUP, "  mapped block file resident (RssFile) max", r["file_max"], "MB"),
        Row(GROUP, "  time, and records shown", r["seconds"], "s", f"{r['records']:,} records"),
        Row(
            GROUP, "  block cache on disk after (default cap)", r["cache_bytes"] / (1 << 30), "GiB"
        ),
    ]


def stock(rows: list[Row], size: int) -> None:
    """``dump --records 0`` and ``info`` against Python's ``http.server`` over the link, each
    in a fresh process with an empty cache, beside downloading the object whole."""
    link = StockLink(size)
    try:
        url, size = link.url(), link.object.size
        label = f"{size / (1 << 30):.2f} GiB" if size >= 1 << 30 else f"{size / MiB:.0f} MiB"
        dump = measure(link, "cli", "dump", url, "--records", "0", "--json")
        info = measure(link, "cli", "info", url, "--json")
        with tempfile.TemporaryDirectory(prefix="bench-remote-download-") as tmp:
            whole = measure(link, "download", url, str(Path(tmp) / OBJECT))
    finally:
        link.stop()
    assert dump["code"] == 0 and json.loads(dump["stdout"])["index"] == 0, dump
    assert info["code"] == 0, info
    records = json.loads(info["stdout"])["files"][0]["records"]
    assert records == link.object.records, (records, link.object.records)
    group = f"{GROUP} (stock)"
    dump_s, dump_bytes = dump["process_seconds"], dump["proxy_bytes"]
    info_ratio = info["proxy_bytes"] / size
    rows += [
        Row(
            group,
            f"dump --records 0 of {label} on http.server (no ranges), 50 ms, 100 MB/s:"
            " the command's process",
            dump_s,
            "s",
            f"<= {STOCK_DUMP_TARGET_S:.0f} s",
            dump_s <= STOCK_DUMP_TARGET_S,
        ),
        Row(group, "  of which the command itself (after Python started)", dump["seconds"], "s"),
        Row(
            group,
            "  sent by the proxy",
            dump_bytes / MiB,
            "MiB",
            f"<= {STOCK_DUMP_BYTES_TARGET // MiB} MiB",
            dump_bytes <= STOCK_DUMP_BYTES_TARGET,
        ),
        Row(
            group,
            "  taken by the reader (RemoteObject.bytes_read) / requests",
            dump["reader_bytes"] / MiB,
            "MiB",
            f"{dump['reader_requests']} reads; {dump['proxy_requests']} requests at the proxy",
        ),
        Row(
            group,
            f"info of {label} (a full index): the command's process",
            info["process_seconds"],
            "s",
        ),
        Row(
            group,
            "  sent by the proxy / object size",
            info_ratio,
            "x",
            f"<= {STOCK_INFO_RATIO_TARGET:.2f}x",
            info_ratio <= STOCK_INFO_RATIO_TARGET,
        ),
        Row(
            group,
            "  sent by the proxy / taken by the reader (> 1: read by nobody)",
            info["proxy_bytes"] / max(1, info["reader_bytes"]),
            "x",
            f"{info['proxy_bytes'] / MiB:,.0f} / {info['reader_bytes'] / MiB:,.0f} MiB,"
            f" {info['proxy_requests']} requests",
        ),
        Row(
            group,
            f"download whole ({label}) through the same link, the reference",
            whole["download"],
            "s",
            f"{whole['proxy_bytes'] / size:.3f}x the object",
        ),
        Row(group, "  info / download", info["process_seconds"] / whole["download"], "x"),
    ]


def _load_row(when: str) -> Row:
    """The machine's load (others' work shares its cores with the reader, the proxy and the
    server, and every figure above moves with it)."""
    cores = os.cpu_count() or 1
    return Row(GROUP, f"load average {when} (1 min), {cores} cores", os.getloadavg()[0], "")


def _gallery_data(quick: bool) -> tuple[Path, int]:
    from benchmarks.bench_ui import make_data

    data = make_data(quick)
    return data.root / data.photos, data.photo_count


def run(quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    size = 1_000_000_000 if quick else 10_000_000_000
    pictures, count = _gallery_data(quick)
    link = Link(size, pictures.parent)
    try:
        rows.append(_load_row("before"))
        ceilings(link, rows)
        first = first_page(link, rows)
        jump(link, rows)
        full_index(link, rows, verify=False)
        full_index(link, rows, verify=True)
        gallery(link, rows, pictures, count)
        download(link, rows, first)
        paging(link, rows, stride=1)
    finally:
        link.stop()
    stock(rows, STOCK_QUICK_SIZE if quick else STOCK_SIZE)
    rows.append(_load_row("after"))
    return rows


def sweep(size: int = 1_000_000_000) -> list[Row]:
    """First page, jump and full verify at each block size of :data:`SWEEP_BLOCKS`."""
    rows: list[Row] = [_load_row("before")]
    link = Link(size, None)
    try:
        for block in SWEEP_BLOCKS:
            env = {"TFRECORD_BROWSER_REMOTE_BLOCK": block}
            pages = [measure(link, "first_page", link.url(), env=env) for _ in range(3)]
            jumps = [measure(link, "jump", link.url(), 0.5, env=env) for _ in range(3)]
            full = measure(link, "index", link.url(), True, env=env)
            group = f"block {block}"
            total = _median_of(pages, "total")
            read = max(r["proxy_bytes"] for r in pages)
            share = full["size"] / full["seconds"] / BANDWIDTH
            rows += [
                Row(group, "first page, median of 3", total, "s", "<= 2 s", total <= 2),
                Row(
                    group,
                    "first page, read at the proxy",
                    read / MiB,
                    "MiB",
                    "<= 64 MiB",
                    read <= 64 * MiB,
                ),
                Row(
                    group,
                    "jump to 50 %, median of 3",
                    _median_of(jumps, "jump"),
                    "s",
                    "<= 1 s",
                    _median_of(jumps, "jump") <= 1,
                ),
                Row(
                    group,
                    "full verify, share of the link",
                    100 * share,
                    "%",
                    ">= 80%",
                    share >= 0.8,
                ),
                Row(group, "full verify, CPU per GB", full["cpu"] / (full["size"] / 1e9), "s"),
            ]
        rows.append(_load_row("after"))
    finally:
        link.stop()
    return rows


def _child_main(name: str, args: str) -> None:
    result = CHILDREN[name](*json.loads(args))
    print("RESULT " + json.dumps(result), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_remote")
    parser.add_argument("--quick", action="store_true", help="a 1 GB object")
    parser.add_argument("--sweep", action="store_true", help="block sizes 1-16 MiB on 1 GB")
    parser.add_argument(
        "--stock", action="store_true", help="only the stock http.server part (2 GiB; 256 MiB)"
    )
    parser.add_argument("--child", nargs=2, metavar=("NAME", "ARGS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child_main(*args.child)
        return 0
    if args.stock:
        rows = [_load_row("before")]
        stock(rows, STOCK_QUICK_SIZE if args.quick else STOCK_SIZE)
        rows.append(_load_row("after"))
    else:
        rows = sweep() if args.sweep else run(args.quick)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
