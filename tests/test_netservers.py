"""The loopback servers the remote-dataset tests and benchmarks stand on (tests/netservers.py):
the range server, the synthetic TFRecord, the fault proxy, and s3fs against moto — and what
s3fs and fsspec's HTTP filesystem raise when the servers misbehave."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import requests
import s3fs
from fsspec.implementations.http import HTTPFileSystem
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from netservers import FaultProxy, MotoS3, RangeHTTPServer, SyntheticTFRecord, parse_range

from codec import framing
from codec.example import decode
from codec.reader import TFRecordFile


def _settled(read, expected, wait: float = 10.0):
    """What ``read()`` gives once it equals ``expected``, or after ``wait`` seconds: the
    servers' counters are added to by their threads just after the last byte is written,
    which can be after the client has read it."""
    deadline = time.monotonic() + wait
    got = read()
    while got != expected and time.monotonic() < deadline:
        time.sleep(0.02)
        got = read()
    return got


BLOB = bytes(range(256)) * 40 + b"tail"  # 10,244 bytes, no two neighbours alike


def http_fs(**kwargs: Any) -> HTTPFileSystem:
    return HTTPFileSystem(skip_instance_cache=True, **kwargs)


# -- the range server ------------------------------------------------------------------------------


def expected_range(spec: str, size: int) -> tuple[int, int] | None:
    """An oracle for one ``a-b`` / ``a-`` / ``-n`` spec: ``[start, end)``, or None when it
    cannot be satisfied (RFC 9110 §14.1.2)."""
    first, _, last = spec.partition("-")
    if not first:
        n = int(last)
        return None if n == 0 or size == 0 else (max(0, size - n), size)
    start = int(first)
    if start >= size:
        return None
    return start, size if not last else min(int(last) + 1, size)


@st.composite
def range_specs(draw: st.DrawFn) -> tuple[int, str]:
    size = draw(st.integers(0, len(BLOB)))
    form = draw(st.sampled_from(["closed", "open", "suffix"]))
    a = draw(st.integers(0, size + 10))
    if form == "closed":
        return size, f"{a}-{draw(st.integers(a, size + 10))}"
    return size, f"{a}-" if form == "open" else f"-{a}"


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=range_specs())
def test_single_ranges_are_served_as_rfc_9110_says(http_server: RangeHTTPServer, case) -> None:
    size, spec = case
    data = BLOB[:size]
    http_server.put("obj", data)
    r = requests.get(http_server.url("obj"), headers={"Range": f"bytes={spec}"}, timeout=10)
    span = expected_range(spec, size)
    if span is None:
        assert r.status_code == 416
        assert r.headers["Content-Range"] == f"bytes */{size}"
        assert r.content == b""
    else:
        start, end = span
        assert r.status_code == 206
        assert r.headers["Content-Range"] == f"bytes {start}-{end - 1}/{size}"
        assert r.headers["Content-Length"] == str(end - start)
        assert r.content == data[start:end]


@pytest.mark.parametrize("header", [None, "bytes=5-2", "bytes=0-1,4-5", "lines=0-3", "bytes=x-"])
def test_no_range_or_one_it_may_ignore_gets_the_whole_object(header: str | None) -> None:
    assert parse_range(header, 100) is None
    with RangeHTTPServer({"obj": BLOB}) as server:
        r = requests.get(server.url("obj"), headers={"Range": header} if header else {}, timeout=10)
    assert r.status_code == 200
    assert r.content == BLOB
    assert r.headers["Accept-Ranges"] == "bytes"


def test_head_answers_the_headers_of_get_without_a_body(http_server: RangeHTTPServer) -> None:
    http_server.put("dir/obj.bin", BLOB)
    with requests.Session() as session:
        head = session.head(http_server.url("dir/obj.bin"), timeout=10)
        get = session.get(http_server.url("dir/obj.bin"), timeout=10)
        ranged = session.head(
            http_server.url("dir/obj.bin"), headers={"Range": "bytes=-10"}, timeout=10
        )
        missing = session.head(http_server.url("nothing"), timeout=10)
    assert head.status_code == 200 and head.content == b""
    for name in ("Content-Length", "ETag", "Last-Modified", "Accept-Ranges"):
        assert head.headers[name] == get.headers[name]
    assert head.headers["Content-Length"] == str(len(BLOB))
    assert ranged.status_code == 206 and ranged.headers["Content-Length"] == "10"
    assert missing.status_code == 404
    # one connection for all four: keep-alive works, HEAD and errors included
    assert http_server.connections == 1
    assert http_server.requests == 4
    assert _settled(lambda: http_server.bytes_sent, len(BLOB)) == len(BLOB)
    assert http_server.log[2] == ("HEAD", "/dir/obj.bin", "bytes=-10")
    http_server.reset_stats()
    assert (http_server.requests, http_server.bytes_sent, http_server.log) == (0, 0, [])


def test_etag_changes_with_the_object_and_conditions_follow_it(
    http_server: RangeHTTPServer,
) -> None:
    url = http_server.url("obj")
    old = http_server.put("obj", BLOB)
    assert http_server.put("obj", BLOB) == old  # the same bytes, the same strong ETag
    new = http_server.put("obj", BLOB[::-1])
    assert (
        new != old and new.startswith('"') and requests.head(url, timeout=10).headers["ETag"] == new
    )

    def get(**headers: str) -> requests.Response:
        return requests.get(url, headers=headers, timeout=10)

    assert get(**{"If-Match": old}).status_code == 412
    assert get(**{"If-Match": old, "Range": "bytes=0-9"}).status_code == 412
    assert get(**{"If-Match": f"{old}, {new}"}).content == BLOB[::-1]
    assert get(**{"If-Match": "*"}).status_code == 200
    assert get(**{"If-None-Match": new}).status_code == 304
    assert get(**{"If-None-Match": old}).status_code == 200
    # If-Range: the range only while the object is the one the client saw
    assert get(Range="bytes=0-9", **{"If-Range": new}).status_code == 206
    stale = get(Range="bytes=0-9", **{"If-Range": old})
    assert stale.status_code == 200 and stale.content == BLOB[::-1]


def test_a_folder_is_served_and_listed_and_nothing_outside_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "shards").mkdir(parents=True)
    for i in range(3):
        (root / "shards" / f"train-{i:05d}-of-00003").write_bytes(BLOB[i:])
    (tmp_path / "secret").write_bytes(b"outside")
    with RangeHTTPServer({"extra.bin": b"x"}, root=root) as server:
        fs = http_fs()
        assert fs.cat_file(server.url("shards/train-00001-of-00003"), start=0, end=4) == BLOB[1:5]
        listed = fs.glob(server.url("shards/train-*-of-00003"))
        assert sorted(listed) == [server.url(f"shards/train-{i:05d}-of-00003") for i in range(3)]
        assert server.names() == [
            "extra.bin",
            *(f"shards/train-{i:05d}-of-00003" for i in range(3)),
        ]
        with requests.Session() as session:
            for path in ("/../secret", "/%2e%2e/secret", "/shards/../../secret"):
                r = session.get(server.base_url + path, timeout=10)
                assert r.status_code == 404 and b"outside" not in r.content
        etag = server.etag("shards/train-00000-of-00003")
        (root / "shards" / "train-00000-of-00003").write_bytes(b"replaced")
        assert server.etag("shards/train-00000-of-00003") != etag


# -- the synthetic TFRecord ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["example", "raw"])
def test_a_synthetic_tfrecord_reads_back_record_by_record(tmp_path: Path, kind: str) -> None:
    synthetic = SyntheticTFRecord(40 * 316, 300, kind=kind)
    assert (synthetic.records, synthetic.size) == (40, 40 * 316)
    whole = synthetic.read(0, synthetic.size)
    path = tmp_path / "synthetic.tfrecord"
    path.write_bytes(whole)
    with TFRecordFile(path, use_cache=False) as f:
        assert f.verify().ok
        assert len(f) == synthetic.records
        for i in range(synthetic.records):
            assert f[i] == synthetic.payload(i)
            assert f.span(i)[0] == synthetic.offset(i)
            assert synthetic.record(i) == framing.encode_record(synthetic.payload(i))
    assert len({synthetic.payload(i) for i in range(synthetic.records)}) == synthetic.records
    if kind == "example":
        record = decode(synthetic.payload(7))
        assert record.features["index"].values == [7]
        assert len(record.features["data"].values[0]) == synthetic.filler_bytes


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 13 * 216 + 20), st.integers(0, 13 * 216 + 20))
def test_any_byte_range_of_a_synthetic_tfrecord_is_that_range_of_its_bytes(a: int, b: int) -> None:
    synthetic = SyntheticTFRecord(13 * 216, 200)
    whole = b"".join(synthetic.record(i) for i in range(synthetic.records))
    assert synthetic.read(a, b) == whole[a:b]


def test_synthetic_payloads_have_exactly_the_asked_size_across_varint_steps() -> None:
    sizes = [*range(41, 170), *range(16_380, 16_420), 100_000]
    for size in sizes:
        try:
            synthetic = SyntheticTFRecord(0, size)
        except ValueError as exc:  # a length prefix grows there: the neighbours are possible
            assert f"ask for {size - 1} or {size + 1}" in str(exc)
            assert len(SyntheticTFRecord(0, size - 1).payload(0)) == size - 1
            assert len(SyntheticTFRecord(0, size + 1).payload(0)) == size + 1
            continue
        payload = synthetic.payload(0)
        assert len(payload) == size
        assert decode(payload).features["index"].values == [0]
    with pytest.raises(ValueError):
        SyntheticTFRecord(0, 20)


def test_a_10_gb_synthetic_object_costs_nothing_and_frames_at_its_end() -> None:
    synthetic = SyntheticTFRecord(10 * 10**9, 100_000)
    last = synthetic.records - 1
    assert synthetic.size > 9.99 * 10**9
    tail = synthetic.read(synthetic.offset(last), synthetic.size)
    assert framing.read_at(tail, 0, len(tail)) == (synthetic.payload(last), len(tail))
    assert decode(synthetic.payload(last)).features["index"].values == [last]


def test_fsspec_http_reads_ranges_of_a_served_synthetic_tfrecord(
    http_server: RangeHTTPServer,
) -> None:
    synthetic = SyntheticTFRecord(10 * 10**9, 100_000)
    url = http_server.url("big/train.tfrecord")
    assert http_server.put("big/train.tfrecord", synthetic) == synthetic.etag
    fs = http_fs()
    info = fs.info(url)
    assert info["size"] == synthetic.size and info["ETag"] == synthetic.etag
    i = synthetic.records // 2
    assert fs.cat_file(url, start=synthetic.offset(i), end=synthetic.offset(i + 1)) == (
        synthetic.record(i)
    )
    with fs.open(url, "rb", cache_type="none") as f:
        f.seek(synthetic.offset(i + 1) + framing.HEADER_SIZE)
        assert f.read(synthetic.payload_bytes) == synthetic.payload(i + 1)
    assert http_server.log[-1][2] == (
        f"bytes={synthetic.offset(i + 1) + 12}-{synthetic.offset(i + 2) - 5}"
    )
    assert http_server.bytes_sent < 1_000_000


# -- fsspec's HTTP filesystem and a replaced object ------------------------------------------------


@pytest.mark.parametrize("where", ["open", "filesystem"])
def test_fsspec_http_with_if_match_fails_412_on_a_replaced_object(
    http_server: RangeHTTPServer, where: str
) -> None:
    etag = http_server.put("obj", BLOB)
    url = http_server.url("obj")
    headers = {"If-Match": etag}
    fs = http_fs(headers=headers) if where == "filesystem" else http_fs()
    opened = fs.open(
        url, "rb", cache_type="none", **({} if where == "filesystem" else {"headers": headers})
    )
    with opened as f:
        f.seek(100)
        assert f.read(10) == BLOB[100:110]
        http_server.put("obj", BLOB[::-1])
        f.seek(200)
        with pytest.raises(aiohttp.ClientResponseError) as caught:
            f.read(10)
    assert caught.value.status == 412
    assert [entry[0] for entry in http_server.log].count("GET") == 2
    with pytest.raises(FileNotFoundError):
        fs.cat_file(http_server.url("missing"))


# -- the fault proxy -------------------------------------------------------------------------------


def test_the_proxy_forwards_and_keeps_connections_alive(
    http_server: RangeHTTPServer, http_proxy
) -> None:
    http_server.put("a/obj", BLOB)
    proxy = http_proxy(http_server)
    with requests.Session() as session:
        head = session.head(proxy.url("a/obj"), timeout=10)
        ranged = session.get(proxy.url("a/obj?x=1"), headers={"Range": "bytes=10-19"}, timeout=10)
        whole = session.get(proxy.url("a/obj"), timeout=10)
        missing = session.get(proxy.url("nope"), timeout=10)
    assert head.status_code == 200 and head.headers["Content-Length"] == str(len(BLOB))
    assert head.headers["ETag"] == http_server.etag("a/obj")
    assert ranged.status_code == 206 and ranged.content == BLOB[10:20]
    assert ranged.headers["Content-Range"] == f"bytes 10-19/{len(BLOB)}"
    assert whole.content == BLOB and missing.status_code == 404
    assert (proxy.connections, http_server.connections) == (1, 1)
    assert proxy.requests == http_server.requests == 4
    expected = 10 + len(BLOB) + len(b"nope not found\n")
    counts = _settled(lambda: (proxy.bytes_forwarded, http_server.bytes_sent), (expected,) * 2)
    assert counts == (expected, expected)
    assert http_server.log[1] == ("GET", "/a/obj?x=1", "bytes=10-19")


def test_the_proxy_reconnects_when_the_upstream_closed_a_kept_connection(
    http_server: RangeHTTPServer, http_proxy
) -> None:
    http_server.put("obj", BLOB)
    proxy = http_proxy(http_server)
    with requests.Session() as session:
        assert session.get(proxy.url("obj"), timeout=10).content == BLOB
        http_server.drop_connections()
        assert session.get(proxy.url("obj"), timeout=10).content == BLOB
    assert (proxy.connections, http_server.connections) == (1, 2)


def test_the_proxy_passes_chunked_bodies_both_ways(http_proxy) -> None:
    class Chunked(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in (body, body[::-1], b""):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))

        def log_message(self, *args: Any) -> None:
            pass

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Chunked)
    serving = threading.Thread(target=upstream.serve_forever, daemon=True)
    serving.start()
    try:
        proxy = http_proxy(f"http://127.0.0.1:{upstream.server_address[1]}")
        with requests.Session() as session:
            for _ in range(2):  # the same connection twice: each body read to its end
                sent = session.post(proxy.url("x"), data=iter([b"abc", b"", b"defg"]), timeout=10)
                assert sent.content == b"abcdefg" + b"gfedcba"
                assert "chunked" in sent.headers["Transfer-Encoding"]
        assert proxy.connections == 1
        counts = _settled(lambda: (proxy.bytes_uploaded, proxy.bytes_forwarded), (14, 28))
        assert counts == (14, 28)
    finally:
        upstream.shutdown()
        upstream.server_close()


@pytest.mark.parametrize("status", [500, 503, 429])
def test_injected_statuses_are_seen_for_the_requests_they_match(
    http_server: RangeHTTPServer, http_proxy, status: int
) -> None:
    http_server.put("obj", BLOB)
    proxy = http_proxy(http_server)
    fault = proxy.fail(status, times=2, method="GET", ranged=True)
    url = proxy.url("obj")
    with requests.Session() as session:
        assert session.head(url, headers={"Range": "bytes=0-1"}, timeout=10).status_code == 206
        assert session.get(url, timeout=10).status_code == 200
        seen = [session.get(url, headers={"Range": "bytes=0-1"}, timeout=10) for _ in range(3)]
    assert [r.status_code for r in seen] == [status, status, 206]
    assert fault.hits == 2
    if status == 503:
        assert b"<Code>SlowDown</Code>" in seen[0].content
    if status == 500:
        assert b"<Code>InternalError</Code>" in seen[0].content
    assert http_server.requests == 3  # the failed ones never reached it
    assert proxy.connections == 1  # an error answer keeps the connection
    proxy.fail(status, times=1)
    with pytest.raises(aiohttp.ClientResponseError) as caught:  # fsspec http: no retry
        http_fs().cat_file(url, start=0, end=10)
    assert caught.value.status == status
    assert proxy.requests == 6


def test_a_dropped_connection_is_seen_mid_body(http_server: RangeHTTPServer, http_proxy) -> None:
    synthetic = SyntheticTFRecord(4_000_000, 10_000, kind="raw")
    http_server.put("obj", synthetic)
    proxy = http_proxy(http_server)
    url = proxy.url("obj")
    proxy.drop(after_bytes=1000, times=1)
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        _ = requests.get(url, timeout=10).content
    proxy.drop(after_bytes=5000, times=1, ranged=True)
    with pytest.raises(aiohttp.ClientPayloadError):
        http_fs().cat_file(url, start=0, end=100_000)
    assert http_fs().cat_file(url, start=0, end=100_000) == synthetic.read(0, 100_000)
    expected = 1000 + 5000 + 100_000
    assert _settled(lambda: proxy.bytes_forwarded, expected) == expected


def test_a_stall_outlasts_the_client_timeout(http_server: RangeHTTPServer, http_proxy) -> None:
    http_server.put("obj", BLOB)
    proxy = http_proxy(http_server)
    url = proxy.url("obj")
    proxy.stall(5, times=1)
    with pytest.raises(requests.exceptions.ReadTimeout):
        requests.get(url, timeout=0.3)
    proxy.stall(5, times=1, after_bytes=100)
    with pytest.raises(requests.exceptions.ConnectionError):  # urllib3's read timeout mid-body
        _ = requests.get(url, timeout=0.3).content
    fs = http_fs(client_kwargs={"timeout": aiohttp.ClientTimeout(total=0.3)})
    proxy.stall(5, times=1)
    with pytest.raises(TimeoutError):  # fsspec.exceptions.FSTimeoutError
        fs.cat_file(url)
    assert requests.get(url, timeout=10).content == BLOB  # the stalls were for one request each


def test_latency_and_the_bandwidth_cap_slow_requests_down(
    http_server: RangeHTTPServer, http_proxy
) -> None:
    http_server.put("big", SyntheticTFRecord(2_100_000, 10_000, kind="raw"))
    proxy = http_proxy(http_server, latency=0.1, bandwidth=4_000_000)
    with requests.Session() as session:
        started = time.monotonic()
        body = session.get(proxy.url("big"), headers={"Range": "bytes=0-1999999"}, timeout=30)
        took = time.monotonic() - started
        assert len(body.content) == 2_000_000
        assert took >= 0.1 + 0.4  # 2 MB at 4 MB/s after 0.1 s (a lower bound only)
        proxy.bandwidth = None
        started = time.monotonic()
        for _ in range(3):
            session.head(proxy.url("big"), timeout=10)
        assert time.monotonic() - started >= 0.3


def test_the_bandwidth_cap_is_shared_by_concurrent_connections(
    http_server: RangeHTTPServer, http_proxy
) -> None:
    synthetic = SyntheticTFRecord(2_100_000, 10_000, kind="raw")
    http_server.put("big", synthetic)
    proxy = http_proxy(http_server, bandwidth=4_000_000)
    results: dict[int, bytes] = {}

    def fetch(k: int) -> None:
        a, b = k * 250_000, (k + 1) * 250_000
        r = requests.get(proxy.url("big"), headers={"Range": f"bytes={a}-{b - 1}"}, timeout=30)
        results[k] = r.content

    started = time.monotonic()
    threads = [threading.Thread(target=fetch, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.monotonic() - started >= 0.4  # 2 MB in all, at 4 MB/s in all
    assert all(results[k] == synthetic.read(k * 250_000, (k + 1) * 250_000) for k in range(8))
    assert proxy.connections == 8


def test_a_huge_response_is_streamed_not_buffered(http_server: RangeHTTPServer, http_proxy) -> None:
    http_server.put("huge", SyntheticTFRecord(10 * 10**9, 100_000))
    proxy = http_proxy(http_server)
    with requests.get(proxy.url("huge"), stream=True, timeout=10) as r:
        assert r.headers["Content-Length"] == str(10 * 10**9 - 10 * 10**9 % 100_016)
        first = r.raw.read(1_000_000)
    assert len(first) == 1_000_000
    deadline = time.monotonic() + 10
    while http_server.bytes_sent and time.monotonic() < deadline:  # until it notices the close
        sent = http_server.bytes_sent
        time.sleep(0.2)
        if http_server.bytes_sent == sent:
            break
    assert http_server.bytes_sent < 256 * 2**20


def test_a_stopped_proxy_ends_its_stalls_and_connections(http_server: RangeHTTPServer) -> None:
    http_server.put("obj", BLOB)
    proxy = FaultProxy(http_server.base_url).start()
    proxy.stall(60, times=None)
    errors: list[BaseException] = []

    def stalled() -> None:
        try:
            requests.get(proxy.url("obj"), timeout=30)
        except requests.RequestException as exc:
            errors.append(exc)

    client = threading.Thread(target=stalled)
    client.start()
    deadline = time.monotonic() + 10
    while proxy.requests == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    started = time.monotonic()
    proxy.stop()
    client.join(15)
    assert not client.is_alive()
    assert time.monotonic() - started < 10
    with pytest.raises(RuntimeError):
        _ = proxy.port


# -- S3: s3fs against moto -------------------------------------------------------------------------


def quick_s3fs(endpoint: str | None = None, read_timeout: float = 5) -> s3fs.S3FileSystem:
    """An s3fs filesystem that gives up at once (no botocore or s3fs retries)."""
    config = {"retries": {"total_max_attempts": 1}, "read_timeout": read_timeout}
    fs = s3fs.S3FileSystem(skip_instance_cache=True, endpoint_url=endpoint, config_kwargs=config)
    fs.retries = 1
    return fs


def test_s3fs_lists_reads_ranges_and_sees_etags_on_moto(s3: MotoS3) -> None:
    synthetic = SyntheticTFRecord(50 * 2_016, 2_000)
    data = synthetic.read(0, synthetic.size)
    etag = s3.put("bucket", "shards/train-00000-of-00002", data)
    s3.put("bucket", "shards/train-00001-of-00002", BLOB)
    fs = s3fs.S3FileSystem()  # AWS_ENDPOINT_URL
    assert fs.ls("bucket/shards") == [f"bucket/shards/train-0000{i}-of-00002" for i in range(2)]
    assert fs.glob("s3://bucket/shards/train-*") == fs.ls("bucket/shards")
    info = fs.info("bucket/shards/train-00000-of-00002")
    assert (info["size"], info["ETag"]) == (len(data), etag)
    i = 17
    span = synthetic.offset(i), synthetic.offset(i + 1)
    assert fs.cat_file(
        "bucket/shards/train-00000-of-00002", start=span[0], end=span[1]
    ) == synthetic.record(i)
    with fs.open("bucket/shards/train-00000-of-00002", "rb", cache_type="none") as f:
        f.seek(synthetic.offset(30) + framing.HEADER_SIZE)
        assert f.read(2_000) == synthetic.payload(30)
    assert s3.keys("bucket") == [f"shards/train-0000{i}-of-00002" for i in range(2)]


def test_s3fs_through_the_proxy_reads_writes_and_is_counted(
    s3: MotoS3, s3_proxy: FaultProxy
) -> None:
    etag = s3.put("bucket", "obj", BLOB)
    fs = s3fs.S3FileSystem()  # AWS_ENDPOINT_URL is the proxy's
    assert fs.info("bucket/obj")["ETag"] == etag
    assert fs.cat_file("bucket/obj", start=100, end=200) == BLOB[100:200]
    fs.pipe_file("bucket/up/new.bin", BLOB[::-1])
    assert s3.get("bucket", "up/new.bin") == BLOB[::-1]
    assert ("GET", "/bucket/obj", "bytes=100-199") in s3_proxy.log
    assert any(method == "PUT" for method, _, _ in s3_proxy.log)
    assert s3_proxy.bytes_uploaded >= len(BLOB)
    assert s3_proxy.bytes_forwarded >= 100
    assert s3_proxy.connections <= s3_proxy.requests
