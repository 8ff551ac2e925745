"""Real servers on loopback for the remote-dataset tests and benchmarks (no mocks).

Everything binds ``127.0.0.1`` on a port the system picks, runs in threads of the calling
process and stops cleanly (``stop()``, or use it as a context manager). The tests import this
module as ``netservers`` and the benchmarks as ``tests.netservers``, so it imports nothing from
``tests/`` and not pytest; the cloud libraries (moto, boto3, s3fs) are imported only when an S3
server is started.

``RangeHTTPServer``
    A threaded HTTP/1.1 server (keep-alive) for a dict-like store ``{name: bytes |
    VirtualObject}`` and/or a folder: GET and HEAD; ``Content-Length``, ``Accept-Ranges:
    bytes``, one ``Range`` (``bytes=a-b``, ``a-``, ``-n``: 206 with ``Content-Range``, 416 when
    unsatisfiable; several ranges or a malformed one are ignored, as RFC 9110 allows: 200);
    a strong ``ETag`` (the MD5 of the bytes, like S3's; a virtual object's ``etag`` attribute),
    ``Last-Modified``; ``If-Match`` (412), ``If-None-Match`` (304), ``If-Range``. A folder
    (the root, or a name that other names start with, up to a ``/``) lists the names under it
    as HTML links, which is how fsspec's HTTPFileSystem lists and globs. Counts requests,
    connections and body bytes; logs
    ``(method, path, range)``.

``VirtualObject``
    Anything with ``size`` and ``read(start, end) -> bytes``: served without being held in
    memory. ``SyntheticTFRecord(size_bytes, record_payload_bytes)`` is one: a TFRecord stream of
    equal-size records, each a ``tf.train.Example`` with a ``data`` bytes feature (a fixed
    filler) and an ``index`` int64 feature (the record's number), every length and data CRC
    valid, any byte range computed on the fly (a 10 GB object costs nothing).

``FaultProxy``
    A reverse proxy in front of an ``http://`` base URL (a ``RangeHTTPServer``, the moto S3
    server) that forwards requests and streams responses in chunks, with an always-on
    ``latency`` (seconds per request) and ``bandwidth`` cap (bytes/s shared by all connections,
    both directions), and scripted faults for the next N matching requests: ``fail(status)``
    (500 ``InternalError``, 503 ``SlowDown`` — S3's XML bodies — 429, ...), ``drop(after_bytes)``
    (the connection closed mid-body), ``stall(seconds)`` (silence longer than a client's
    timeout). Counts requests, connections and bytes each way.

``MotoS3``
    moto's standalone S3 server (``moto.server.ThreadedMotoServer``) with fake credentials in
    the environment while it runs (and ``AWS_EC2_METADATA_DISABLED``, so nothing looks past
    loopback for credentials).

``Azurite``
    Microsoft's Azure Storage emulator (its blob service, ``azurite-blob``, a Node program that
    ``scripts/check.sh`` installs under ``.cache/node``), in memory, with
    ``AZURE_STORAGE_CONNECTION_STRING`` naming it and its well-known development account
    while it runs.

``GcsEmulator``
    A Google Cloud Storage JSON API server (``gcp-storage-emulator``, in memory) with
    ``STORAGE_EMULATOR_HOST`` pointing gcsfs at it while it runs, and every way Google's auth
    library looks for credentials past loopback closed (no metadata server, no gcloud config).

Pointing s3fs at an endpoint (s3fs 2026.9, aiobotocore 3.10, botocore 1.43; each way is tried
against moto behind a FaultProxy in tests/test_netservers.py, whose log proves where requests
went):

- ``AWS_ENDPOINT_URL=http://127.0.0.1:PORT`` in the environment works: botocore's standard
  setting, honoured by aiobotocore, read whenever a filesystem makes its client.
  ``AWS_ENDPOINT_URL_S3`` (the per-service form) works too and wins over it. This is what the
  product uses, and what the fixtures set.
- ``S3FileSystem(endpoint_url=...)`` and ``S3FileSystem(client_kwargs={"endpoint_url": ...})``
  both work, and win over the environment.
- ``FSSPEC_S3_ENDPOINT_URL`` works (for ``s3fs.S3FileSystem()`` and ``fsspec.filesystem``
  alike) only when set before fsspec is imported: fsspec copies ``FSSPEC_*`` variables into
  ``fsspec.config.conf`` once, at import. Not usable to change the endpoint at run time.
- s3fs caches filesystem instances by their arguments, not by the environment: after changing
  ``AWS_ENDPOINT_URL`` call ``s3fs.S3FileSystem.clear_instance_cache()`` (the fixtures do) or
  pass ``skip_instance_cache=True``, or a cached instance keeps talking to the old endpoint.

What the clients raise (each one checked in tests/test_netservers.py):

- s3fs, an object replaced after open: ``S3File`` (``fs.open(path, "rb")`` without ``size=``)
  sends ``IfMatch`` with the ETag it saw at open, moto answers 412 ``PreconditionFailed`` and
  s3fs raises ``s3fs.utils.FileExpired`` (an ``OSError``, errno EBUSY). ``fs.cat_file`` and
  ``fs.open(..., size=n)`` do not pin the ETag: they return the new bytes. boto3
  ``get_object(IfMatch=stale)`` raises ``botocore.exceptions.ClientError``, code
  ``PreconditionFailed``, HTTP 412.
- s3fs, 500 / 503 ``SlowDown`` / 429: retried by botocore (5 attempts) inside s3fs's own retry
  loop (``fs.retries``, 5; SlowDown is retried by both, so a persistent one costs ~25
  requests and ~50 s). When they persist: ``OSError`` with errno EREMOTEIO (500
  ``InternalError``), EBUSY (503 ``SlowDown``), EIO (429), its ``__cause__`` the botocore
  ``ClientError``. One fault is retried transparently.
- s3fs, a connection dropped mid-body: retried by s3fs; when it persists,
  ``aiohttp.ClientPayloadError`` (not an ``OSError``: s3fs re-raises it as is).
- s3fs, a stall past ``config_kwargs={"read_timeout": t}``: retried; when it persists,
  ``botocore.exceptions.ReadTimeoutError`` (not an ``OSError``).
- To make s3fs give up at once (tests): ``config_kwargs={"retries": {"total_max_attempts": 1}}``
  and ``fs.retries = 1``. (``"max_attempts": 1`` still means one retry in botocore's legacy
  mode.)
- fsspec HTTP (aiohttp): 404 is ``FileNotFoundError``; 412, 5xx and 429 are
  ``aiohttp.ClientResponseError`` (``.status`` holds the code; no retries); a drop mid-body is
  ``aiohttp.ClientPayloadError``; a stall past the client timeout
  (``client_kwargs={"timeout": aiohttp.ClientTimeout(...)}``) is
  ``fsspec.exceptions.FSTimeoutError`` (a ``TimeoutError``). ``fs.info(url)`` has ``size`` and
  ``ETag``. ``headers={"If-Match": etag}`` given to ``fs.open(url, "rb", headers=...)`` or to
  ``HTTPFileSystem(headers=...)`` is sent with every ranged read, so a replaced object fails with
  412 instead of mixing versions.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import html
import os
import socket
import struct
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.client import HTTPConnection, HTTPException, HTTPResponse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import crc32c as _crc32c

from codec.framing import OVERHEAD, encode_header, mask_crc

LOOPBACK = "127.0.0.1"
CHUNK = 128 * 1024  # bytes written to a socket at a time
STOP_GRACE = 5.0  # seconds a server waits for its connection threads when stopping

__all__ = [
    "LOOPBACK",
    "Fault",
    "FaultProxy",
    "MotoS3",
    "RangeHTTPServer",
    "SyntheticTFRecord",
    "VirtualObject",
    "parse_range",
]


# -- objects --------------------------------------------------------------------------------------


@runtime_checkable
class VirtualObject(Protocol):
    """An object served without being held in memory: its ``size`` and any byte range."""

    @property
    def size(self) -> int: ...

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``[start, end)``, ``0 <= start <= end <= size``."""
        ...


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _varint10(n: int) -> bytes:
    """``n`` as a 10-byte varint (non-minimal but valid protobuf, the size negative int64s
    always take): the same length for every record number."""
    return bytes(((n >> (7 * k)) & 0x7F) | (0x80 if k < 9 else 0) for k in range(10))


def _len_field(field_number: int, payload: bytes) -> bytes:
    return _varint(field_number << 3 | 2) + _varint(len(payload)) + payload


def _filler(n: int) -> bytes:
    pattern = bytes(range(256))
    return (pattern * (n // 256 + 1))[:n]


def _example_parts(payload_bytes: int) -> tuple[bytes, int]:
    """The part of a synthetic Example before its record number, and the ``data`` filler size,
    for an Example of exactly ``payload_bytes``: ``Example{features{feature{"data": bytes
    [filler]}, feature{"index": int64 [n]}}}``, the number's 10 varint bytes last. Where the
    length prefixes' sizes jump, the key ``data`` grows a few ``_`` to land on the size; a
    few sizes (130, 158, 16387, 16416, ...) cannot be reached and raise ``ValueError``."""
    index_entry = _len_field(
        1, _len_field(1, b"index") + _len_field(2, _len_field(3, _len_field(1, bytes(10))))
    )

    def encoded(blob: int, key: bytes) -> bytes:
        data_entry = _len_field(
            1, _len_field(1, key) + _len_field(2, _len_field(1, _len_field(1, bytes(blob))))
        )
        return _len_field(1, data_entry + index_entry)

    fixed = len(encoded(0, b"data"))
    if payload_bytes < fixed:
        raise ValueError(f"a synthetic Example needs at least {fixed} bytes")
    largest = payload_bytes - fixed
    while len(encoded(largest, b"data")) > payload_bytes:  # a few length-prefix bytes more
        largest -= 1
    for blob in range(largest, max(-1, largest - 8), -1):
        for pad in range(6):
            key = b"data" + b"_" * pad
            whole = encoded(blob, key)
            if len(whole) == payload_bytes:
                data_entry_end = len(whole) - len(index_entry)
                head = whole[: data_entry_end - blob] + _filler(blob) + whole[data_entry_end:-10]
                return head, blob
    raise ValueError(
        f"no synthetic Example has exactly {payload_bytes} bytes (a protobuf length prefix "
        f"grows a byte there): ask for {payload_bytes - 1} or {payload_bytes + 1}"
    )


class SyntheticTFRecord:
    """A TFRecord stream of ``records`` equal records of ``record_payload_bytes`` computed on the
    fly: ``size`` is ``size_bytes`` rounded down to whole records (at least one).

    ``kind="example"`` (the default): each payload is a ``tf.train.Example`` with a ``data``
    bytes feature (the same filler in every record) and an ``index`` int64 feature holding the
    record's number. ``kind="raw"``: the filler followed by the number as 8 little-endian bytes.
    Every length and data CRC is valid; :meth:`payload` gives record ``i``'s expected payload.
    """

    def __init__(self, size_bytes: int, record_payload_bytes: int, *, kind: str = "example"):
        if kind == "example":
            self._head, self.filler_bytes = _example_parts(record_payload_bytes)
        elif kind == "raw":
            if record_payload_bytes < 8:
                raise ValueError("a raw synthetic record needs at least 8 bytes")
            self.filler_bytes = record_payload_bytes - 8
            self._head = _filler(self.filler_bytes)
        else:
            raise ValueError(f"kind must be 'example' or 'raw', not {kind!r}")
        self.kind = kind
        self.payload_bytes = record_payload_bytes
        self.record_bytes = record_payload_bytes + OVERHEAD
        self.records = max(1, size_bytes // self.record_bytes)
        self._size = self.records * self.record_bytes
        self._header = encode_header(record_payload_bytes)
        self._head_view = memoryview(self._head)
        self._head_crc = int(_crc32c.crc32c(self._head))
        self.etag = f'"synthetic-{kind}-{record_payload_bytes}x{self.records}"'

    @property
    def size(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"SyntheticTFRecord({self.records} records of {self.payload_bytes} bytes)"

    def _tail(self, i: int) -> bytes:
        return _varint10(i) if self.kind == "example" else struct.pack("<Q", i)

    def _check(self, i: int) -> None:
        if not 0 <= i < self.records:
            raise IndexError(f"record {i} of {self.records}")

    def payload(self, i: int) -> bytes:
        """Record ``i``'s payload, as a reader should return it."""
        self._check(i)
        return self._head + self._tail(i)

    def offset(self, i: int) -> int:
        """Where record ``i`` starts in the stream."""
        self._check(i)
        return i * self.record_bytes

    def record(self, i: int) -> bytes:
        """Record ``i`` framed: header, payload, data CRC."""
        return self.read(self.offset(i), self.offset(i) + self.record_bytes)

    def _pieces(self, i: int) -> list[Any]:
        tail = self._tail(i)
        footer = struct.pack("<I", mask_crc(int(_crc32c.crc32c(tail, self._head_crc))))
        return [self._header, self._head_view, tail, footer]

    def read(self, start: int, end: int) -> bytes:
        start, end = max(0, start), min(end, self._size)
        out: list[Any] = []
        pos = start
        while pos < end:
            i, at = divmod(pos, self.record_bytes)
            stop = min(end - pos + at, self.record_bytes)  # within record i
            offset = 0
            for piece in self._pieces(i):
                lo, hi = max(at, offset), min(stop, offset + len(piece))
                if lo < hi:
                    out.append(piece[lo - offset : hi - offset])
                offset += len(piece)
            pos += stop - at
        return b"".join(out)


@dataclass
class _Entry:
    """One object as served: its bytes (or how to read them), ETag and modification time."""

    size: int
    etag: str
    mtime: float
    read: Callable[[int, int], bytes]


def _bytes_entry(data: bytes | bytearray | memoryview | VirtualObject) -> _Entry:
    if isinstance(data, bytes | bytearray | memoryview):
        blob = bytes(data)
        return _Entry(
            len(blob), f'"{hashlib.md5(blob).hexdigest()}"', time.time(), lambda a, b: blob[a:b]
        )
    etag = getattr(data, "etag", None) or f'"virtual-{id(data):x}-{time.time_ns():x}"'
    return _Entry(int(data.size), str(etag), time.time(), data.read)


def _file_entry(path: Path) -> _Entry:
    st = path.stat()
    tag = hashlib.md5(f"{st.st_ino}-{st.st_size}-{st.st_mtime_ns}".encode()).hexdigest()

    def read(start: int, end: int) -> bytes:
        with open(path, "rb") as f:
            f.seek(start)
            return f.read(end - start)

    return _Entry(st.st_size, f'"{tag}"', st.st_mtime, read)


# -- HTTP plumbing shared by the server and the proxy ---------------------------------------------


class _Unsatisfiable(ValueError):
    pass


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The ``[start, end)`` one ``Range`` header asks of an object of ``size`` bytes; None to
    serve the whole object (no header, several ranges, a malformed one: RFC 9110 lets a
    server ignore those). Raises ``ValueError`` when the range cannot be satisfied."""
    if not header:
        return None
    unit, _, spec = header.partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first, dash, last = spec.strip().partition("-")
    if not dash or not (first.isdigit() or last.isdigit()):
        return None
    if not first:  # -n: the last n bytes
        n = int(last)
        if n == 0 or size == 0:
            raise _Unsatisfiable(header)
        return max(0, size - n), size
    start = int(first)
    if last and not last.isdigit():
        return None
    end = int(last) + 1 if last else None
    if end is not None and end <= start:
        return None  # "5-2": malformed
    if start >= size:
        raise _Unsatisfiable(header)
    return start, size if end is None else min(end, size)


def _etags(header: str) -> list[str]:
    return [t.strip() for t in header.split(",") if t.strip()]


class _Stats:
    """Counters and a request log, safe across connection threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.requests = 0
            self.connections = 0
            self.bytes_sent = 0
            self.bytes_received = 0
            self.log: list[tuple[str, str, str | None]] = []

    def request(self, method: str, path: str, range_: str | None) -> None:
        with self._lock:
            self.requests += 1
            self.log.append((method, path, range_))

    def add(self, name: str, n: int) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + n)


class _ThreadedServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that knows its open connections and their threads, so that
    stopping it closes idle keep-alive connections and waits for their threads."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, handler: type[BaseHTTPRequestHandler], owner: _LoopbackServer) -> None:
        self.owner = owner
        self._open: dict[socket.socket, threading.Thread] = {}
        self._open_lock = threading.Lock()
        super().__init__((LOOPBACK, 0), handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.owner.stats.add("connections", 1)
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        thread = threading.Thread(
            target=self.process_request_thread, args=(request, client_address), daemon=True
        )
        with self._open_lock:
            self._open[request] = thread
        thread.start()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a client hanging up is no error
            super().handle_error(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.pop(request, None)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._open_lock:
            opened = list(self._open.items())
        for sock, _ in opened:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + STOP_GRACE
        for _, thread in opened:
            thread.join(max(0.0, deadline - time.monotonic()))


_Server = TypeVar("_Server", bound="_LoopbackServer")


class _LoopbackServer:
    """Start/stop, the base URL and the counters of a server on 127.0.0.1."""

    _handler: type[BaseHTTPRequestHandler]

    def __init__(self) -> None:
        self.stats = _Stats()
        self.stopping = threading.Event()
        self._httpd: _ThreadedServer | None = None
        self._thread: threading.Thread | None = None

    def start(self: _Server) -> _Server:
        if self._httpd is None:
            self.stopping.clear()
            self._httpd = _ThreadedServer(self._handler, self)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"{type(self).__name__}:{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self.stopping.set()
        httpd.shutdown()
        self._close_extra()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(STOP_GRACE)

    def drop_connections(self) -> None:
        """Close every open connection now (idle keep-alive ones included): clients must
        reconnect, as after a server restart or a load balancer's idle timeout."""
        if self._httpd is not None:
            self._httpd.close_connections()

    def _close_extra(self) -> None:
        """Close what the connection threads may block on besides their client sockets."""

    def __enter__(self: _Server) -> _Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return f"http://{LOOPBACK}:{self.port}"

    endpoint = base_url

    # the counters, per server, since start or the last reset_stats()
    @property
    def requests(self) -> int:
        return self.stats.requests

    @property
    def connections(self) -> int:
        return self.stats.connections

    @property
    def log(self) -> list[tuple[str, str, str | None]]:
        """``(method, path with query, Range header or None)`` of every request."""
        with self.stats._lock:
            return list(self.stats.log)

    def reset_stats(self) -> None:
        self.stats.reset()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 120  # an idle keep-alive connection is closed after this long
    server: _ThreadedServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        """The request's body (Content-Length or chunked), read whole so that the connection
        stays in step for the next request."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send_small(self, status: int, body: bytes, headers: Mapping[str, str] = {}) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self._write(body)

    def _write(self, data: bytes) -> bool:
        """Send ``data``; False when the client has gone (and the connection is given up)."""
        try:
            self.wfile.write(data)
            return True
        except OSError:
            self.close_connection = True
            return False


# -- the range server -----------------------------------------------------------------------------


class _RangeHandler(_Handler):
    def _send_small(self, status: int, body: bytes, headers: Mapping[str, str] = {}) -> None:
        super()._send_small(status, body, headers)
        if self.command != "HEAD" and status not in (204, 304) and not self.close_connection:
            self.server.owner.stats.add("bytes_sent", len(body))

    def do_GET(self) -> None:
        self._serve()

    do_HEAD = do_GET

    def _refuse(self) -> None:
        self._read_body()
        self._send_small(405, b"read-only server\n", {"Allow": "GET, HEAD"})

    do_PUT = do_POST = do_DELETE = do_PATCH = _refuse

    def _serve(self) -> None:
        owner: RangeHTTPServer = self.server.owner  # type: ignore[assignment]
        range_header = self.headers.get("Range")
        owner.stats.request(self.command, self.path, range_header)
        name = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        if name == "" or name.endswith("/"):
            self._listing(owner, name)
            return
        entry = owner._entry(name)
        if entry is None and any(n.startswith(name + "/") for n in owner.names()):
            self._listing(owner, name + "/")  # a folder named without its slash
            return
        if entry is None:
            self._send_small(404, f"{name} not found\n".encode(), {"Content-Type": "text/plain"})
            return
        common = {
            "ETag": entry.etag,
            "Last-Modified": email.utils.formatdate(entry.mtime, usegmt=True),
            "Accept-Ranges": "bytes",
        }
        if_match = self.headers.get("If-Match")
        if if_match is not None and not {"*", entry.etag} & set(_etags(if_match)):
            self._send_small(412, b"precondition failed\n", common)
            return
        if_none = self.headers.get("If-None-Match")
        if if_none is not None:
            tags = {t.removeprefix("W/") for t in _etags(if_none)}
            if {"*", entry.etag} & tags:
                self._send_small(304, b"", common)
                return
        if_range = self.headers.get("If-Range")
        if if_range is not None and if_range.strip() != entry.etag:
            range_header = None
        try:
            span = parse_range(range_header, entry.size)
        except _Unsatisfiable:
            self._send_small(416, b"", {**common, "Content-Range": f"bytes */{entry.size}"})
            return
        start, end = span or (0, entry.size)
        self.send_response(206 if span else 200)
        for key, value in common.items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(end - start))
        if span:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{entry.size}")
        self.end_headers()
        if self.command == "HEAD":
            return
        for pos in range(start, end, CHUNK):
            data = entry.read(pos, min(end, pos + CHUNK))
            if not self._write(data):
                return
            owner.stats.add("bytes_sent", len(data))

    def _listing(self, owner: RangeHTTPServer, prefix: str) -> None:
        names = sorted(
            {
                n[len(prefix) :].split("/")[0] + ("/" if "/" in n[len(prefix) :] else "")
                for n in owner.names()
                if n.startswith(prefix)
            }
        )
        if prefix and not names:
            self._send_small(404, f"{prefix} not found\n".encode(), {"Content-Type": "text/plain"})
            return
        links = "".join(
            f'<a href="/{html.escape(urllib.parse.quote(prefix + n))}">{html.escape(n)}</a>\n'
            for n in names
        )
        body = f"<html><body>\n{links}</body></html>\n".encode()
        self._send_small(200, body, {"Content-Type": "text/html; charset=utf-8"})


class RangeHTTPServer(_LoopbackServer):
    """A threaded HTTP/1.1 server of ``objects`` (``{name: bytes | VirtualObject}``, any
    mutable mapping; names may contain ``/``) and/or the files under ``root``; the mapping
    wins where both have a name.

    >>> with RangeHTTPServer({"a.tfrecord": data}) as server:   # doctest: +SKIP
    ...     fsspec.filesystem("http").cat_file(server.url("a.tfrecord"), start=0, end=12)

    Counters (since start or :meth:`reset_stats`): ``requests``, ``connections``,
    ``bytes_sent`` (body bytes), ``log``.
    """

    _handler = _RangeHandler

    def __init__(
        self,
        objects: MutableMapping[str, bytes | VirtualObject] | None = None,
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__()
        self.root = Path(root).resolve() if root is not None else None
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self.objects: MutableMapping[str, bytes | VirtualObject] = (
            objects if objects is not None else {}
        )
        for name, data in self.objects.items():
            self._entries[name] = _bytes_entry(data)

    def url(self, name: str) -> str:
        """The URL of object ``name``."""
        return f"{self.base_url}/{urllib.parse.quote(name.lstrip('/'), safe='/*')}"

    def put(self, name: str, data: bytes | VirtualObject) -> str:
        """Add or replace object ``name``; returns its (new) ETag."""
        entry = _bytes_entry(data)
        with self._lock:
            self.objects[name] = data
            self._entries[name] = entry
        return entry.etag

    def delete(self, name: str) -> None:
        with self._lock:
            self.objects.pop(name, None)
            self._entries.pop(name, None)

    def etag(self, name: str) -> str:
        entry = self._entry(name)
        if entry is None:
            raise KeyError(name)
        return entry.etag

    def names(self) -> list[str]:
        """Every object's name: the mapping's, then the files under ``root``."""
        with self._lock:
            names = set(self._entries)
        if self.root is not None:
            names.update(
                p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file()
            )
        return sorted(names)

    def _entry(self, name: str) -> _Entry | None:
        with self._lock:
            entry = self._entries.get(name)
            if entry is None and name in self.objects:  # put straight into the mapping
                entry = self._entries[name] = _bytes_entry(self.objects[name])
        if entry is not None or self.root is None:
            return entry
        path = (self.root / name).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            return None
        return _file_entry(path)

    @property
    def bytes_sent(self) -> int:
        return self.stats.bytes_sent


# -- the fault proxy ------------------------------------------------------------------------------

_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "expect",
}

_S3_ERRORS = {
    500: ("InternalError", "We encountered an internal error. Please try again."),
    503: ("SlowDown", "Please reduce your request rate."),
}


def _error_body(status: int) -> tuple[bytes, str]:
    code, message = _S3_ERRORS.get(status, (HTTPStatus(status).phrase.replace(" ", ""), ""))
    if status == 429:
        return b"Too Many Requests\n", "text/plain"
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message or code}</Message>"
        "<RequestId>faultproxy</RequestId></Error>"
    )
    return body.encode(), "application/xml"


@dataclass
class Fault:
    """A fault for the next ``times`` requests that match (``None``: until cleared).

    ``kind`` is ``"status"`` (answer ``status`` with ``body`` instead of forwarding),
    ``"drop"`` (forward the headers and ``after_bytes`` of the body, then close the
    connection) or ``"stall"`` (wait ``seconds`` before answering, or after ``after_bytes``
    of the body when that is set). Matching: ``method`` (e.g. ``"GET"``), ``ranged`` (True:
    only requests with a ``Range`` header, False: only without), ``path`` (a substring of the
    path and query). ``hits`` counts the requests it has been applied to.
    """

    kind: str
    times: int | None = 1
    status: int = 503
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    after_bytes: int | None = None
    seconds: float = 0.0
    method: str | None = None
    ranged: bool | None = None
    path: str | None = None
    hits: int = 0

    def matches(self, method: str, path: str, range_: str | None) -> bool:
        return (
            (self.times is None or self.hits < self.times)
            and (self.method is None or self.method.upper() == method)
            and (self.ranged is None or self.ranged == (range_ is not None))
            and (self.path is None or self.path in path)
        )


class _Bucket:
    """A token bucket shared by every connection: ``take(n)`` returns once ``n`` bytes fit
    the rate. Debt-based, so concurrent takers share the rate between them."""

    def __init__(self, stopping: threading.Event) -> None:
        self._lock = threading.Lock()
        self._stopping = stopping
        self.set_rate(None)

    def set_rate(self, rate: float | None) -> None:
        with self._lock:
            self.rate = rate
            self._tokens = 0.0
            self._last = time.monotonic()

    def take(self, n: int) -> None:
        with self._lock:
            rate = self.rate
            if not rate:
                return
            now = time.monotonic()
            burst = max(float(CHUNK), rate * 0.02)
            self._tokens = min(burst, self._tokens + (now - self._last) * rate) - n
            self._last = now
            wait = -self._tokens / rate
        if wait > 0:
            self._stopping.wait(wait)


class _ProxyHandler(_Handler):
    _upstream: HTTPConnection | None = None

    def do_GET(self) -> None:
        self._forward()

    do_HEAD = do_PUT = do_POST = do_DELETE = do_PATCH = do_OPTIONS = do_GET

    def finish(self) -> None:
        self._close_upstream()
        super().finish()

    def _close_upstream(self) -> None:
        conn, self._upstream = self._upstream, None
        if conn is not None:
            self.server.owner._forget(conn)  # type: ignore[attr-defined]
            conn.close()

    def _connection(self) -> HTTPConnection:
        if self._upstream is None:
            owner: FaultProxy = self.server.owner  # type: ignore[assignment]
            self._upstream = owner._connect()
        return self._upstream

    def _request(self, body: bytes) -> HTTPResponse:
        """Send this request upstream (again on a fresh connection if a kept-alive one turns
        out to have been closed by the upstream) and return its response."""
        owner: FaultProxy = self.server.owner  # type: ignore[assignment]
        target = owner._prefix + self.path
        for attempt in (0, 1):
            fresh = self._upstream is None
            conn = self._connection()
            try:
                conn.putrequest(self.command, target, skip_host=True, skip_accept_encoding=True)
                for name, value in self.headers.items():
                    if name.lower() not in _HOP_BY_HOP and name.lower() != "content-length":
                        conn.putheader(name, value)
                if body or self.command in ("PUT", "POST", "PATCH"):
                    conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body or None)
                return conn.getresponse()
            except (ConnectionError, HTTPException):
                self._close_upstream()
                if fresh or attempt:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _forward(self) -> None:
        owner: FaultProxy = self.server.owner  # type: ignore[assignment]
        range_header = self.headers.get("Range")
        owner.stats.request(self.command, self.path, range_header)
        body = self._read_body()
        owner.stats.add("bytes_received", len(body))
        fault = owner._take_fault(self.command, self.path, range_header)
        if owner.latency:
            owner.stopping.wait(owner.latency)
        owner._bucket.take(len(body))
        if fault is not None and fault.kind == "status":
            default_body, content_type = _error_body(fault.status)
            payload = default_body if fault.body is None else fault.body
            self._send_small(fault.status, payload, {"Content-Type": content_type, **fault.headers})
            return
        if fault is not None and fault.kind == "stall" and fault.after_bytes is None:
            owner.stopping.wait(fault.seconds)
        try:
            response = self._request(body)
        except (OSError, HTTPException) as exc:
            self._close_upstream()
            self._send_small(502, f"upstream: {exc}\n".encode(), {"Content-Type": "text/plain"})
            return
        self._relay(owner, response, fault)

    def _relay(self, owner: FaultProxy, response: HTTPResponse, fault: Fault | None) -> None:
        self.send_response_only(response.status, response.reason)
        length = response.getheader("Content-Length")
        no_body = self.command == "HEAD" or response.status in (204, 304) or response.status < 200
        for name, value in response.getheaders():
            if name.lower() not in _HOP_BY_HOP:
                self.send_header(name, value)
        chunked = not no_body and length is None
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if no_body:
            response.read()
            return
        cut = fault.after_bytes if fault is not None and fault.kind in ("drop", "stall") else None
        sent = 0
        try:
            while data := response.read1(CHUNK):
                if cut is not None and fault is not None and sent + len(data) >= cut:
                    head, data = data[: cut - sent], data[cut - sent :]
                    if head and not self._send_chunk(owner, head, chunked):
                        break
                    sent += len(head)
                    if fault.kind == "drop":
                        self._drop()
                        return
                    owner.stopping.wait(fault.seconds)
                    cut = None
                if data and not self._send_chunk(owner, data, chunked):
                    break
                sent += len(data)
        except (OSError, HTTPException):  # the upstream went away mid-body: so does the client
            self._drop()
            return
        if self.close_connection:  # the client went away mid-body
            self._close_upstream()
            return
        response.read()  # b"": marks the response done, so the connection can be reused
        if chunked:
            self._write(b"0\r\n\r\n")
        if response.will_close:
            self._close_upstream()

    def _send_chunk(self, owner: FaultProxy, data: bytes, chunked: bool) -> bool:
        owner._bucket.take(len(data))
        framed = b"%x\r\n%s\r\n" % (len(data), data) if chunked else data
        if not self._write(framed):
            return False
        owner.stats.add("bytes_sent", len(data))
        return True

    def _drop(self) -> None:
        """Close the client's connection now, mid-body, and the upstream one with it."""
        self.close_connection = True
        self._close_upstream()
        with contextlib.suppress(OSError):
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)


class FaultProxy(_LoopbackServer):
    """A reverse proxy on 127.0.0.1 in front of ``upstream`` (an ``http://host:port[/prefix]``
    URL): every request is forwarded (method, path, query, headers — ``Host`` included, as S3
    signatures need — and body) and the response streamed back in chunks.

    ``latency``: seconds added to every request. ``bandwidth``: bytes/s for all connections
    together (None: no cap); both may be changed while it runs. Faults: :meth:`fail`,
    :meth:`drop`, :meth:`stall`, :meth:`clear_faults`. Counters (since start or
    :meth:`reset_stats`): ``requests``, ``connections``, ``bytes_forwarded`` (response bodies),
    ``bytes_uploaded`` (request bodies), ``log``.
    """

    _handler = _ProxyHandler

    def __init__(
        self, upstream: str, *, latency: float = 0.0, bandwidth: float | None = None
    ) -> None:
        super().__init__()
        parts = urllib.parse.urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"FaultProxy forwards to http://host:port URLs, not {upstream!r}")
        self.upstream = upstream.rstrip("/")
        self._host, self._port = parts.hostname, parts.port or 80
        self._prefix = parts.path.rstrip("/")
        self.latency = latency
        self._bucket = _Bucket(self.stopping)
        self._bucket.set_rate(bandwidth)
        self._faults: list[Fault] = []
        self._faults_lock = threading.Lock()
        self._upstreams: set[HTTPConnection] = set()

    def url(self, path: str) -> str:
        """The proxied URL of ``path`` (relative to the upstream base URL)."""
        return f"{self.base_url}/{path.lstrip('/')}"

    @property
    def bandwidth(self) -> float | None:
        return self._bucket.rate

    @bandwidth.setter
    def bandwidth(self, rate: float | None) -> None:
        self._bucket.set_rate(rate)

    @property
    def bytes_forwarded(self) -> int:
        return self.stats.bytes_sent

    @property
    def bytes_uploaded(self) -> int:
        return self.stats.bytes_received

    # -- faults

    def _add(self, fault: Fault) -> Fault:
        with self._faults_lock:
            self._faults.append(fault)
        return fault

    def fail(
        self,
        status: int = 503,
        times: int | None = 1,
        *,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        method: str | None = None,
        ranged: bool | None = None,
        path: str | None = None,
    ) -> Fault:
        """Answer the next ``times`` matching requests with ``status`` (S3's XML error body for
        500 ``InternalError`` and 503 ``SlowDown`` unless ``body`` is given)."""
        return self._add(
            Fault(
                "status",
                times,
                status=status,
                body=body,
                headers=dict(headers or {}),
                method=method,
                ranged=ranged,
                path=path,
            )
        )

    def drop(
        self,
        after_bytes: int = 0,
        times: int | None = 1,
        *,
        method: str | None = None,
        ranged: bool | None = None,
        path: str | None = None,
    ) -> Fault:
        """Close the connection of the next ``times`` matching requests after the response's
        headers and ``after_bytes`` of its body."""
        return self._add(
            Fault("drop", times, after_bytes=after_bytes, method=method, ranged=ranged, path=path)
        )

    def stall(
        self,
        seconds: float,
        times: int | None = 1,
        *,
        after_bytes: int | None = None,
        method: str | None = None,
        ranged: bool | None = None,
        path: str | None = None,
    ) -> Fault:
        """Say nothing for ``seconds`` before answering the next ``times`` matching requests (or
        after ``after_bytes`` of the body), then carry on. Stopping the proxy ends a stall."""
        return self._add(
            Fault(
                "stall",
                times,
                seconds=seconds,
                after_bytes=after_bytes,
                method=method,
                ranged=ranged,
                path=path,
            )
        )

    def clear_faults(self) -> None:
        with self._faults_lock:
            self._faults.clear()

    def _take_fault(self, method: str, path: str, range_: str | None) -> Fault | None:
        with self._faults_lock:
            for fault in self._faults:
                if fault.matches(method, path, range_):
                    fault.hits += 1
                    return fault
        return None

    # -- upstream connections

    def _connect(self) -> HTTPConnection:
        conn = HTTPConnection(self._host, self._port, timeout=120)
        with self._faults_lock:
            self._upstreams.add(conn)
        return conn

    def _forget(self, conn: HTTPConnection) -> None:
        with self._faults_lock:
            self._upstreams.discard(conn)

    def _close_extra(self) -> None:
        with self._faults_lock:
            conns = list(self._upstreams)
        for conn in conns:
            with contextlib.suppress(OSError):
                if conn.sock is not None:
                    conn.sock.shutdown(socket.SHUT_RDWR)


# -- S3 -------------------------------------------------------------------------------------------

FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}
_AWS_UNSET = (
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
)


def forget_s3_filesystems() -> None:
    """Drop s3fs's cached filesystem instances (they keep the endpoint they were made with)."""
    import s3fs

    s3fs.S3FileSystem.clear_instance_cache()


_Env = TypeVar("_Env", bound="_EnvServer")


class _EnvServer:
    """A third-party server run in this process that sets environment variables while it runs
    (so client libraries find it): ``_set_env`` saves what it changes, and ``stop`` stops the
    server (``_server``, anything with ``stop()``) and puts them back. Subclasses define
    ``start``; a context manager."""

    def __init__(self) -> None:
        self._server: Any = None
        self._saved_env: dict[str, str | None] = {}

    def _set_env(self, values: Mapping[str, str], unset: tuple[str, ...] = ()) -> None:
        for name in (*values, *unset):
            self._saved_env.setdefault(name, os.environ.get(name))
        for name in unset:
            os.environ.pop(name, None)
        os.environ.update(values)

    def _restore_env(self) -> None:
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env.clear()

    def start(self: _Env) -> _Env:
        raise NotImplementedError

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.stop()
        self._restore_env()

    def __enter__(self: _Env) -> _Env:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _FsspecStore(_EnvServer):
    """A store server set up through an fsspec file system on it (``filesystem()``):
    buckets (containers) and objects made, read, removed and listed the same way."""

    def filesystem(self) -> Any:
        raise NotImplementedError

    def make_bucket(self, bucket: str) -> None:
        fs = self.filesystem()
        if not fs.exists(bucket):
            fs.mkdir(bucket)

    def put(self, bucket: str, key: str, data: bytes) -> None:
        """Store ``data`` (making the bucket if needed)."""
        self.make_bucket(bucket)
        self.filesystem().pipe_file(f"{bucket}/{key}", data)

    def get(self, bucket: str, key: str) -> bytes:
        return bytes(self.filesystem().cat_file(f"{bucket}/{key}"))

    def delete(self, bucket: str, key: str) -> None:
        self.filesystem().rm_file(f"{bucket}/{key}")

    def keys(self, bucket: str) -> list[str]:
        prefix = f"{bucket}/"
        return sorted(p[len(prefix) :] for p in self.filesystem().find(bucket))


class MotoS3(_EnvServer):
    """moto's S3 server on 127.0.0.1 (``moto.server.ThreadedMotoServer`` on a port the system
    picks), with fake credentials in ``os.environ`` while it runs (restored on stop).

    ``endpoint`` is its URL; ``client()`` a boto3 client for it; ``make_bucket``, ``put``,
    ``get``, ``delete``, ``etag`` for setting up; ``reset()`` empties every bucket (moto's
    ``/moto-api/reset``); ``filesystem(**kw)`` a fresh ``s3fs.S3FileSystem`` on it."""

    def __init__(self) -> None:
        super().__init__()
        self._client: Any = None
        self.endpoint = ""

    def start(self) -> MotoS3:
        if self._server is not None:
            return self
        import logging

        from moto.server import ThreadedMotoServer

        werkzeug = logging.getLogger("werkzeug")
        if werkzeug.level == logging.NOTSET:
            werkzeug.setLevel(logging.WARNING)  # no line per request on stderr
        self._set_env(FAKE_AWS_ENV, _AWS_UNSET)
        self._server = ThreadedMotoServer(ip_address=LOOPBACK, port=0, verbose=False)
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        return self

    def stop(self) -> None:
        super().stop()
        self._client = None

    def client(self) -> Any:
        """A boto3 S3 client on this server (made once; safe to share across threads)."""
        if self._client is None:
            import boto3

            self._client = boto3.client("s3", endpoint_url=self.endpoint)
        return self._client

    def reset(self) -> None:
        """Forget every bucket and object."""
        request = urllib.request.Request(f"{self.endpoint}/moto-api/reset", method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()

    def make_bucket(self, bucket: str) -> None:
        self.client().create_bucket(Bucket=bucket)

    def put(self, bucket: str, key: str, data: bytes) -> str:
        """Store ``data`` (making the bucket if needed); returns the object's ETag."""
        try:
            response = self.client().put_object(Bucket=bucket, Key=key, Body=data)
        except self.client().exceptions.NoSuchBucket:
            self.make_bucket(bucket)
            response = self.client().put_object(Bucket=bucket, Key=key, Body=data)
        return str(response["ETag"])

    def get(self, bucket: str, key: str) -> bytes:
        return bytes(self.client().get_object(Bucket=bucket, Key=key)["Body"].read())

    def delete(self, bucket: str, key: str) -> None:
        self.client().delete_object(Bucket=bucket, Key=key)

    def etag(self, bucket: str, key: str) -> str:
        return str(self.client().head_object(Bucket=bucket, Key=key)["ETag"])

    def keys(self, bucket: str) -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return [obj["Key"] for page in pages for obj in page.get("Contents", [])]

    def filesystem(self, endpoint: str | None = None, **kwargs: Any) -> Any:
        """A new ``s3fs.S3FileSystem`` on ``endpoint`` (default: this server), not cached."""
        import s3fs

        return s3fs.S3FileSystem(
            endpoint_url=endpoint or self.endpoint, skip_instance_cache=True, **kwargs
        )


# -- Google Cloud Storage -----------------------------------------------------------------------

# While the emulator runs: gcsfs talks to it, and Google's auth library finds no credentials
# and asks nothing beyond loopback (so gcsfs falls back to anonymous access, as it does for a
# user with no credentials). gcsfs's bucket-type lookup speaks gRPC, which the emulator does
# not: with it on, every operation would first wait for that call to time out (60 s).
GCS_TEST_ENV = {
    "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false",
    "NO_GCE_CHECK": "true",
    "GCE_METADATA_HOST": f"{LOOPBACK}:9",
    "GCE_METADATA_IP": f"{LOOPBACK}:9",
    "CLOUDSDK_CONFIG": os.devnull,
}
_GCS_UNSET = ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT")


def _serve_generations() -> None:
    """Make the emulator's media downloads honour ``generation`` as GCS does: a download of a
    generation that is not the object's current one is 404 (in a bucket without object
    versioning the old generation is gone). The emulator ignores the parameter and would send
    the newest bytes, which is what a pinned read must never get. Done once per process."""
    from gcp_storage_emulator import server
    from gcp_storage_emulator.exceptions import NotFound
    from gcp_storage_emulator.handlers import objects

    plain = objects.download

    def download(request: Any, response: Any, storage: Any, *args: Any, **kwargs: Any) -> Any:
        asked = request.query.get("generation")
        if asked:
            try:
                obj = storage.get_file_obj(
                    request.params["bucket_name"], request.params["object_id"]
                )
            except NotFound:
                obj = None
            if obj is None or str(obj.get("generation")) != asked[0]:
                response.status = HTTPStatus.NOT_FOUND
                return None
        return plain(request, response, storage, *args, **kwargs)

    for _regex, handlers in server.HANDLERS:
        if handlers.get(server.GET) is plain:
            handlers[server.GET] = download


def forget_gcs_filesystems() -> None:
    """Drop gcsfs's cached filesystem instances (they keep the endpoint they were made with)."""
    import gcsfs

    gcsfs.GCSFileSystem.clear_instance_cache()


class GcsEmulator(_FsspecStore):
    """``gcp-storage-emulator`` on 127.0.0.1 (a port the system picks, objects in memory), with
    ``STORAGE_EMULATOR_HOST`` and the settings above in ``os.environ`` while it runs.

    ``endpoint`` is its URL; ``put``, ``get``, ``delete``, ``keys`` for setting up and looking;
    ``reset()`` forgets every bucket and object; ``filesystem()`` a fresh gcsfs filesystem on
    it. gcsfs must be imported after ``start()`` (it picks its filesystem class from the
    environment when imported): the test suite sets the bucket-type switch for every worker
    in ``conftest``, before anything imports gcsfs."""

    def __init__(self) -> None:
        super().__init__()
        self.endpoint = ""

    def start(self) -> GcsEmulator:
        if self._server is not None:
            return self
        import logging

        from gcp_storage_emulator.server import create_server

        logging.getLogger("gcp_storage_emulator").setLevel(logging.WARNING)
        _serve_generations()
        self._set_env(GCS_TEST_ENV, _GCS_UNSET)
        server = create_server(LOOPBACK, 0, in_memory=True)
        server.start()
        # The emulator has no accessor for its HTTP server: the port it was given is there,
        # and the hook that prints a traceback when a client hangs up mid-answer (a reader
        # that has what it needs closes its connection; that is no error).
        httpd = server._api._httpd
        port = httpd.server_address[1]

        def handle_error(request: Any, client_address: Any) -> None:
            if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
                type(httpd).handle_error(httpd, request, client_address)

        httpd.handle_error = handle_error
        self._server = server
        self.endpoint = f"http://{LOOPBACK}:{port}"
        self._set_env({"STORAGE_EMULATOR_HOST": self.endpoint})
        return self

    def reset(self) -> None:
        """Forget every bucket and object."""
        self._server.wipe()

    def filesystem(self) -> Any:
        """A new gcsfs filesystem on this server, anonymous, not cached."""
        import gcsfs

        return gcsfs.GCSFileSystem(
            endpoint_url=self.endpoint, token="anon", skip_instance_cache=True
        )


# -- Azure Blob Storage ------------------------------------------------------------------------

# Azurite's development account: its name and key are public, fixed by the emulator.
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
# Where scripts/check.sh installs Azurite (npm, pinned); a copy on PATH is used otherwise.
AZURITE_HOME = Path(__file__).resolve().parent.parent / ".cache" / "node"
_AZURE_UNSET = (
    "AZURE_STORAGE_ACCOUNT_NAME",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_CLIENT_ID",
    "AZURE_STORAGE_CLIENT_SECRET",
    "AZURE_STORAGE_TENANT_ID",
)


def azurite_command() -> str | None:
    """The ``azurite-blob`` program: the one scripts/check.sh installed, else one on PATH."""
    import shutil

    local = AZURITE_HOME / "node_modules" / ".bin" / "azurite-blob"
    return str(local) if local.exists() else shutil.which("azurite-blob")


def forget_azure_filesystems() -> None:
    """Drop adlfs's cached filesystem instances (they keep the account they were made with)."""
    import adlfs

    adlfs.AzureBlobFileSystem.clear_instance_cache()


class _Process:
    """A child process that ``stop()`` ends (terminate, then kill)."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(STOP_GRACE)
        except Exception:
            self.proc.kill()
            self.proc.wait()


class Azurite(_FsspecStore):
    """Azurite's blob service on 127.0.0.1 (a free port, blobs in memory), with
    ``AZURE_STORAGE_CONNECTION_STRING`` set while it runs. ``endpoint`` is its account's URL;
    ``put``, ``get``, ``delete``, ``keys``, ``make_bucket`` (a container) and ``reset``
    like the other stores; ``filesystem()`` a fresh adlfs filesystem on it."""

    def __init__(self) -> None:
        super().__init__()
        self.endpoint = ""
        self.connection_string = ""

    def start(self) -> Azurite:
        if self._server is not None:
            return self
        import subprocess

        command = azurite_command()
        if command is None:
            raise RuntimeError(
                "Azurite is not installed: scripts/check.sh installs it (npm, under .cache/node)"
            )
        port = _free_port()
        proc = subprocess.Popen(
            [
                command,
                "--blobHost",
                LOOPBACK,
                "--blobPort",
                str(port),
                "--inMemoryPersistence",
                "--silent",
                "--skipApiVersionCheck",
                "--loose",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._server = _Process(proc)
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), 0.5):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                self.stop()
                raise RuntimeError(f"Azurite did not start: {err[-2000:]}")
            time.sleep(0.1)
        self.endpoint = f"http://{LOOPBACK}:{port}/{AZURITE_ACCOUNT}"
        self.connection_string = (
            f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
            f"AccountKey={AZURITE_KEY};BlobEndpoint={self.endpoint};"
        )
        self._set_env({"AZURE_STORAGE_CONNECTION_STRING": self.connection_string}, _AZURE_UNSET)
        return self

    def filesystem(self) -> Any:
        """A new adlfs filesystem on this server, not cached."""
        import adlfs

        return adlfs.AzureBlobFileSystem(
            connection_string=self.connection_string, skip_instance_cache=True
        )

    def reset(self) -> None:
        """Remove every container."""
        fs = self.filesystem()
        for container in fs.ls("", detail=False):
            fs.rm(container, recursive=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])
